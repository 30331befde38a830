// `servebench perf --profile sessions` end to end against a `servebench sim` child with its
// prefix cache (issue 22's done-when): 8 synthetic sessions x 4 turns at concurrency 4, every
// turn's prompt the previous prompt + answer + new user message (the simulator's template adds 4
// tokens per message, docs/simulator.md), cached tokens the previous prompt's full blocks, and
// report.md / report.html showing the turns. A bad session file line stops the run before
// anything is sent (exit 2, FILE:LINE).
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <stdlib.h>

#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sb::testing::Child;
using sb::testing::ProcessResult;
using sb::testing::ReadFile;
using sb::testing::RunProcess;
using sb::testing::TempDir;

const std::string kBin = SB_BINARY;

TEST(SessionsCliTest, EightSessionsOfFourTurnsGrowTheirHistoryAndHitThePrefixCache) {
  Child sim({kBin, "sim", "--port", "0", "--ttft-ms", "2", "--itl-ms", "0.5",
             "--prefix-cache-tokens", "1000000", "--block-tokens", "16"});
  const std::string line = sim.ReadLine();
  ASSERT_EQ(line.rfind("listening on ", 0), 0U) << line;
  const std::string url = line.substr(13);
  TempDir dir;
  const fs::path run = dir.path() / "run";
  const ProcessResult r = RunProcess({kBin,
                                      "perf",
                                      "--endpoint",
                                      url,
                                      "--profile",
                                      "sessions",
                                      "--turns",
                                      "4",
                                      "--turn-input-tokens",
                                      "uniform:20-40",
                                      "--output-tokens",
                                      "uniform:10-30",
                                      "--system-prompt-tokens",
                                      "32",
                                      "--think-ms",
                                      "5",
                                      "--session-concurrency",
                                      "4",
                                      "--max-sessions",
                                      "8",
                                      "--out",
                                      run.string()},
                                     std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<int, std::vector<json>> by;
  std::ifstream in(run / "samples.jsonl");
  std::string l;
  while (std::getline(in, l)) {
    const json s = json::parse(l);
    if (s["profile"] == "sessions") {
      by[s["session"].get<int>()].push_back(s);
    }
  }
  ASSERT_EQ(by.size(), 8U);
  for (auto& [session, recs] : by) {
    ASSERT_EQ(recs.size(), 4U);
    std::sort(recs.begin(), recs.end(),
              [](const json& a, const json& b) { return a["turn"] < b["turn"]; });
    for (std::size_t k = 1; k < 4; ++k) {
      const int prev = recs[k - 1]["prompt_tokens"];
      EXPECT_EQ(recs[k]["prompt_tokens"].get<int>(),
                prev + 4 + recs[k - 1]["completion_tokens"].get<int>() + 4 +
                    recs[k]["user_tokens"].get<int>())
          << session << " turn " << k + 1;
      EXPECT_EQ(recs[k]["cached_tokens"].get<int>(), (prev - 1) / 16 * 16)
          << session << " turn " << k + 1;
    }
  }
  const json res = json::parse(ReadFile(run / "results.json"));
  const json& turns = res["perf"]["sessions"]["turns"];
  ASSERT_EQ(turns.size(), 4U);
  const std::string md = ReadFile(run / "report.md");
  EXPECT_NE(md.find("### Sessions"), std::string::npos);
  EXPECT_NE(md.find("| 4 | 8 | 0 | 0 |"), std::string::npos) << md;  // turn 4: 8 requests
  // The session-concurrency level: 32 requests, its tails and its frontier point.
  EXPECT_NE(md.find("TPOT p50 / p90 / p99 (ms)"), std::string::npos) << md;
  EXPECT_NE(md.find("| 4 | 32 |"), std::string::npos) << md;
  ASSERT_EQ(res["perf"]["sessions"]["frontier"].size(), 1U);
  EXPECT_EQ(res["perf"]["sessions"]["frontier"][0]["level"], 4.0);
  // report.html: TTFT by turn, each mark the value of results.json.
  const std::string html = ReadFile(run / "report.html");
  EXPECT_NE(html.find("data-chart=\"sessions-ttft\""), std::string::npos);
  for (const json& t : turns) {
    const std::string mark =
        "data-series=\"TTFT p50\" data-x=\"" + std::to_string(t["turn"].get<int>()) + "\"";
    EXPECT_NE(html.find(mark), std::string::npos) << mark;
  }
  // ... and the session level's point on the frontier chart, where results.json puts it.
  const json& point = res["perf"]["sessions"]["frontier"][0];
  const std::string mark =
      fmt::format("data-series=\"sessions\" data-x=\"{}\" data-y=\"{}\"",
                  point["tok_s_per_user"].get<double>(), point["total_tok_s"].get<double>());
  EXPECT_NE(html.find("data-figure=\"frontier\""), std::string::npos);
  EXPECT_NE(html.find(mark), std::string::npos) << mark;
  EXPECT_NE(html.find("data-series=\"sessions\">c4</text>"), std::string::npos);
  // The level's tails table, as for a concurrency level.
  EXPECT_NE(html.find("data-tails=\"sessions\""), std::string::npos);
  // The CSV export has the point, its level counted in sessions.
  const ProcessResult csv = RunProcess({kBin, "export", run.string(), "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find("\nsessions-frontier,4,sessions,tok_s_per_user,value,"), std::string::npos)
      << csv.out;
}

TEST(SessionsCliTest, ABadSessionLineIsAUsageErrorNamingFileAndLine) {
  TempDir dir;
  const fs::path file = dir.path() / "bad.jsonl";
  std::ofstream(file) << "{\"turns\": [\"hello\"]}\n"
                         "{\"turns\": [\"a\", \"b\"], \"think_ms\": [1]}\n";
  const ProcessResult r =
      RunProcess({kBin, "perf", "--endpoint", "http://127.0.0.1:9/v1", "--profile", "sessions",
                  "--sessions", file.string(), "--out", (dir.path() / "run").string()},
                 std::chrono::seconds(30), {"SERVEBENCH_STORE=off"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(file.string() + ":2: think_ms has 1 values but the session has 2 turns"),
            std::string::npos)
      << r.err;
}

struct ImageRun {
  ProcessResult r;
  json results;
  std::vector<json> samples;
  std::string md;
};

ImageRun RunImages(const std::vector<std::string>& sim_flags,
                   const std::vector<std::string>& perf) {
  std::vector<std::string> argv = {kBin, "sim", "--port", "0", "--ttft-ms", "2", "--itl-ms", "0.5"};
  argv.insert(argv.end(), sim_flags.begin(), sim_flags.end());
  Child sim(argv);
  const std::string line = sim.ReadLine();
  EXPECT_EQ(line.rfind("listening on ", 0), 0U) << line;
  TempDir dir;
  const fs::path run = dir.path() / "run";
  std::vector<std::string> cmd = {
      kBin, "perf",         "--endpoint", line.substr(13), "--images-per-request",
      "2",  "--image-size", "64x48",      "--out",         run.string()};
  cmd.insert(cmd.end(), perf.begin(), perf.end());
  ImageRun out;
  out.r = RunProcess(cmd, std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  if (fs::exists(run / "results.json")) {
    out.results = json::parse(ReadFile(run / "results.json"));
  }
  std::ifstream in(run / "samples.jsonl");
  std::string l;
  while (std::getline(in, l)) {
    out.samples.push_back(json::parse(l));
  }
  out.md = ReadFile(run / "report.md");
  return out;
}

TEST(SessionsCliTest, TwoImagesPerRequestAreLoadForConcurrencyAndSessions) {
  const ImageRun run =
      RunImages({}, {"--profile", "concurrency,sessions", "--levels", "2", "--tokens", "8",
                     "--turns", "2", "--max-sessions", "2", "--output-tokens", "8"});
  ASSERT_EQ(run.r.exit_code, 0) << run.r.err;
  int sessions = 0, concurrency = 0;
  for (const json& s : run.samples) {
    if (s.value("warmup", false)) {
      continue;
    }
    ASSERT_EQ(s["status"], "ok") << s.dump();
    // A concurrency request carries its two images; a session's request carries every image of
    // its history: two per turn so far.
    const int turns = s["profile"] == "sessions" ? s["turn"].get<int>() : 1;
    EXPECT_EQ(s["images"], 2 * turns) << s["profile"];
    EXPECT_GT(s["image_bytes"].get<long long>(), 200 * turns);  // two PNGs per turn
    sessions += s["profile"] == "sessions" ? 1 : 0;
    concurrency += s["profile"] == "concurrency" ? 1 : 0;
    if (s["profile"] == "sessions" && s["turn"] == 1) {
      // The simulator counts 64 tokens per image part (docs/simulator.md).
      EXPECT_EQ(s["prompt_tokens"].get<int>(), 2 + 4 + s["user_tokens"].get<int>() + 2 * 64);
    }
  }
  EXPECT_EQ(sessions, 4);
  EXPECT_EQ(concurrency, 2);
}

// A session file's "images" go with their turn's user message and stay in the history: the
// simulator counts 64 prompt tokens per image part, so each turn's prompt grows by them.
TEST(SessionsCliTest, SessionFileImagesGoWithTheirTurnAndStayInTheHistory) {
  TempDir dir;
  {
    std::ofstream(dir.path() / "dot.png", std::ios::binary) << "\x89PNG\r\n\x1a\nxyz";
    std::ofstream(dir.path() / "s.jsonl")
        << R"({"turns": ["look at this", "and this one", "thanks"],)"
        << R"( "images": [["dot.png"], ["dot.png", "dot.png"], []], "output_tokens": 4})"
        << "\n";
  }
  Child sim({kBin, "sim", "--port", "0", "--ttft-ms", "2", "--itl-ms", "0.5"});
  const std::string line = sim.ReadLine();
  ASSERT_EQ(line.rfind("listening on ", 0), 0U) << line;
  const fs::path run = dir.path() / "run";
  ProcessResult r =
      RunProcess({kBin, "perf", "--endpoint", line.substr(13), "--profile", "sessions",
                  "--sessions", (dir.path() / "s.jsonl").string(), "--out", run.string()},
                 std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> turns;
  std::ifstream in(run / "samples.jsonl");
  for (std::string l; std::getline(in, l);) {
    json s = json::parse(l);
    if (!s.value("warmup", false) && s["profile"] == "sessions") {
      turns.push_back(std::move(s));
    }
  }
  ASSERT_EQ(turns.size(), 3U);
  const int want_images[] = {1, 3, 3};  // in the request's whole history
  for (std::size_t i = 0; i < turns.size(); ++i) {
    EXPECT_EQ(turns[i]["turn"], static_cast<int>(i) + 1);
    EXPECT_EQ(turns[i]["images"], want_images[i]) << turns[i].dump();
    EXPECT_EQ(turns[i]["image_bytes"], 11 * want_images[i]);  // the 11-byte file each time
  }
  // Turn 2's prompt holds turn 1's prompt, its answer, the new message and two more images.
  const int p1 = turns[0]["prompt_tokens"].get<int>(), p2 = turns[1]["prompt_tokens"].get<int>();
  const int a1 = turns[0]["completion_tokens"].get<int>();
  EXPECT_GE(p2 - p1 - a1, 2 * 64) << p1 << " " << p2;
}

TEST(SessionsCliTest, AServerWithoutVisionRefusesImagesAsUnsupportedNotThroughput) {
  const ImageRun run = RunImages({"--reject", "image"},
                                 {"--profile", "concurrency", "--levels", "2", "--tokens", "8"});
  EXPECT_EQ(run.r.exit_code, 3) << run.r.err;  // every request failed: no throughput
  bool warned = false;
  for (const json& w : run.results["warnings"]) {
    warned = warned || w.get<std::string>().rfind("UNSUPPORTED: the server refused image", 0) == 0;
  }
  EXPECT_TRUE(warned) << run.results["warnings"].dump();
  EXPECT_NE(run.md.find("UNSUPPORTED: the server refused image input (HTTP 400: At most 0 image"),
            std::string::npos)
      << run.md;
  EXPECT_EQ(run.results["summary"]["completion_tokens"], 0) << run.results["summary"].dump();
  EXPECT_EQ(run.results["summary"]["failed_requests"], run.results["summary"]["requests"]);
}

}  // namespace
