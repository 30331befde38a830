// `servebench perf --profile replay` end to end: a `servebench sim` child process with its
// prefix cache, the replay's samples.jsonl checked against what the trace file says, and a bad
// trace line stopping the run before anything is sent (exit 2, FILE:LINE).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <stdlib.h>

#include "support/mooncake_truth.h"
#include "support/sim_child.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sb::testing::Child;
using sb::testing::ProcessResult;
using sb::testing::ReadJsonl;
using sb::testing::RunProcess;
using sb::testing::TempDir;

const std::string kBin = SB_BINARY;

class Sim : public sb::testing::SimChild {
 public:
  explicit Sim(const std::vector<std::string>& extra)
      : SimChild({"--ttft-ms", "2", "--itl-ms", "0.5"}, extra) {}
};

TEST(WorkloadCliTest, ReplayOfAMooncakeTraceAgainstTheSimulatorsPrefixCache) {
  Sim sim({"--prefix-cache-tokens", "1000000", "--block-tokens", "16"});
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const std::string trace = std::string(SB_FIXTURES_DIR) + "/workloads/mooncake-200.jsonl";
  const ProcessResult r =
      RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "replay", "--trace", trace,
                  "--block-tokens", "16", "--time-scale", "0.5", "--max-requests", "60", "--out",
                  (dir.path() / "run").string()},
                 std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // What the trace says: leading blocks whose hash-id chain appeared earlier, x 16.
  const auto lines = sb::testing::ReadMooncakeTruth(trace, 16, 60);
  std::vector<json> samples;
  for (const json& s : ReadJsonl(dir.path() / "run" / "samples.jsonl")) {
    if (s["profile"] == "replay") {
      samples.push_back(s);
    }
  }
  ASSERT_EQ(samples.size(), 60U);
  ASSERT_EQ(lines.size(), 60U);
  std::sort(samples.begin(), samples.end(),
            [](const json& a, const json& b) { return a["id"] < b["id"]; });
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(samples[i]["input_tokens"], lines[i].input) << i;
    EXPECT_EQ(samples[i]["output_tokens"], lines[i].output) << i;
    EXPECT_EQ(samples[i]["cached_tokens"], lines[i].cached) << i;
    EXPECT_DOUBLE_EQ(samples[i]["scheduled_ms"].get<double>(), lines[i].timestamp_ms * 0.5);
  }
  std::ifstream results(dir.path() / "run" / "results.json");
  const json res = json::parse(results);
  EXPECT_EQ(res["perf"]["replay"]["sent"], 60);
  EXPECT_EQ(res["perf"]["replay"]["cache"]["reported"], true);
  // The simulator's /metrics counters over the replay's window say the same as the trace.
  long long cached = 0, prompt = 0;
  for (const auto& line : lines) {
    cached += line.cached;
    prompt += line.input;
  }
  const json& server = res["perf"]["replay"]["cache"]["server_metrics"];
  EXPECT_EQ(server["source"], "vllm");
  EXPECT_EQ(server["cached_tokens"], cached);
  EXPECT_EQ(server["prompt_tokens"], prompt);
  // report.html: the replay's section, its arrivals chart marks where results.json puts them,
  // the cached share, and a row per class.
  std::ifstream html_file(dir.path() / "run" / "report.html");
  const std::string html((std::istreambuf_iterator<char>(html_file)), {});
  const json& replay = res["perf"]["replay"];
  EXPECT_NE(html.find("<h3>Trace replay</h3>"), std::string::npos);
  ASSERT_FALSE(replay["arrivals"].empty());
  for (const json& a : replay["arrivals"]) {
    const std::string x = std::to_string(a["second"].get<long long>());
    for (const char* series : {"trace", "sent"}) {
      const std::string mark =
          std::string("data-series=\"") + series + "\" data-x=\"" + x + "\" data-y=\"" +
          std::to_string(a[std::string(series) + "_rps"].get<long long>()) + "\"";
      EXPECT_NE(html.find(mark), std::string::npos) << mark;
    }
  }
  const auto share_at = html.find("data-cache-share=\"");
  ASSERT_NE(share_at, std::string::npos);
  EXPECT_DOUBLE_EQ(std::stod(html.substr(share_at + 18)), replay["cache"]["share"].get<double>());
  const auto server_at = html.find("data-server-cache-share=\"");
  ASSERT_NE(server_at, std::string::npos);
  EXPECT_DOUBLE_EQ(std::stod(html.substr(server_at + 25)), server["share"].get<double>());
  const auto table = html.find("data-classes=\"replay\"");
  ASSERT_NE(table, std::string::npos);
  const std::string rows = html.substr(table, html.find("</table>", table) - table);
  std::size_t n = 0;
  for (auto p = rows.find("<tr><td>"); p != std::string::npos; p = rows.find("<tr><td>", p + 1)) {
    ++n;
  }
  EXPECT_EQ(n, replay["classes"].size());
  for (const json& c : replay["classes"]) {
    EXPECT_NE(rows.find("<tr><td>" + c["class"].get<std::string>() + "</td><td class=\"num\">" +
                        std::to_string(c["count"].get<long long>()) + "</td>"),
              std::string::npos)
        << c.dump();
  }
}

// Against a server whose /tokenize takes plain text only (llama.cpp), the first prompt of a rate
// point sends a calibration request of its own; the point's calls used to be numbered around
// it, so the last answer was written past the end of the point's rows (heap corruption, "double
// free or corruption" at the point's end, seen against llama.cpp). Every prompt is still exact.
TEST(WorkloadCliTest, ARatePointAgainstAPlainTokenizerKeepsEveryRecordAndExactPrompts) {
  Sim sim({"--plain-tokenize"});
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const ProcessResult r = RunProcess(
      {kBin, "perf", "--endpoint", sim.url(), "--profile", "rate", "--rates", "20", "--requests",
       "12", "--input-tokens", "300", "--rate-tokens", "4", "--out", (dir.path() / "run").string()},
      std::chrono::seconds(60), {"SERVEBENCH_STORE=off", "MALLOC_CHECK_=3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int records = 0;
  for (const json& s : ReadJsonl(dir.path() / "run" / "samples.jsonl")) {
    if (s["profile"] == "rate") {
      ++records;
      EXPECT_EQ(s["input_tokens"], 300) << s.dump();
    }
  }
  EXPECT_EQ(records, 12);
  std::ifstream results(dir.path() / "run" / "results.json");
  const json res = json::parse(results);
  EXPECT_EQ(res["perf"]["rate"]["rates"][0]["requests"].size(), 12u);
}

// The same server for a replay: the calibration request used to take an id between the trace's
// calls, so every record named the next trace line (its input length the previous line's) and
// the last answer was dropped (19 records of 20).
TEST(WorkloadCliTest, AReplayAgainstAPlainTokenizerKeepsEveryRecordOnItsTraceLine) {
  Sim sim({"--plain-tokenize"});
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const std::string trace = std::string(SB_FIXTURES_DIR) + "/workloads/replay-1000.jsonl";
  const ProcessResult r =
      RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "replay", "--trace", trace,
                  "--max-requests", "20", "--out", (dir.path() / "run").string()},
                 std::chrono::seconds(60), {"SERVEBENCH_STORE=off", "MALLOC_CHECK_=3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<long long> lines;
  for (const json& s : ReadJsonl(dir.path() / "run" / "samples.jsonl")) {
    if (s["profile"] == "replay") {
      lines.insert(s["trace"]["line"].get<long long>());
      EXPECT_EQ(s["input_tokens"], s["trace"]["input_tokens"]) << s.dump();
      EXPECT_EQ(s["label"], "jsonl #" + std::to_string(s["trace"]["line"].get<long long>()));
    }
  }
  EXPECT_EQ(lines.size(), 20u);
  EXPECT_EQ(*lines.begin(), 1);
  EXPECT_EQ(*lines.rbegin(), 20);
}

// A small vocabulary (about 3 tokens a word, as llama.cpp's 260K test model): the trace's
// lengths are met to the token. The fitter stepped by the token difference as if a word were a
// token, overshot, and gave up after 4 counts, 4-90 tokens off.
TEST(WorkloadCliTest, AReplayIsExactOnASmallVocabulary) {
  Sim sim({"--chars-per-token", "2", "--plain-tokenize", "--apply-template"});
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const std::string trace = std::string(SB_FIXTURES_DIR) + "/workloads/mooncake-200.jsonl";
  const ProcessResult r = RunProcess(
      {kBin, "perf", "--endpoint", sim.url(), "--profile", "replay", "--trace", trace,
       "--max-requests", "30", "--time-scale", "0.2", "--out", (dir.path() / "run").string()},
      std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("could not be fitted"), std::string::npos) << r.err;
  int records = 0;
  for (const json& s : ReadJsonl(dir.path() / "run" / "samples.jsonl")) {
    if (s["profile"] == "replay") {
      ++records;
      EXPECT_EQ(s["input_tokens"], s["trace"]["input_tokens"]) << s.dump();
    }
  }
  EXPECT_EQ(records, 30);
}

TEST(WorkloadCliTest, ABadTraceLineIsAUsageErrorNamingFileAndLine) {
  TempDir dir;
  const fs::path trace = dir.path() / "bad.jsonl";
  std::ofstream(trace) << "{\"timestamp\": 0, \"input_length\": 50, \"output_length\": 4}\n"
                          "{\"timestamp\": 10, \"input_length\": -1, \"output_length\": 4}\n";
  const ProcessResult r =
      RunProcess({kBin, "perf", "--endpoint", "http://127.0.0.1:9/v1", "--profile", "replay",
                  "--trace", trace.string(), "--out", (dir.path() / "run").string()},
                 std::chrono::seconds(30), {"SERVEBENCH_STORE=off"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(trace.string() + ":2: \"input_length\""), std::string::npos) << r.err;
  const ProcessResult none =
      RunProcess({kBin, "perf", "--endpoint", "http://127.0.0.1:9/v1", "--profile", "replay"},
                 std::chrono::seconds(30), {"SERVEBENCH_STORE=off"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("--trace FILE"), std::string::npos) << none.err;
}

}  // namespace
