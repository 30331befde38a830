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

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <stdlib.h>

#include "support/subprocess.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sb::testing::Child;
using sb::testing::ProcessResult;
using sb::testing::RunProcess;

const std::string kBin = SB_BINARY;

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/servebench-sessions-XXXXXX";
    path = mkdtemp(tmpl);
  }

  ~TempDir() { fs::remove_all(path); }

  fs::path path;
};

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SessionsCliTest, EightSessionsOfFourTurnsGrowTheirHistoryAndHitThePrefixCache) {
  Child sim({kBin, "sim", "--port", "0", "--ttft-ms", "2", "--itl-ms", "0.5",
             "--prefix-cache-tokens", "1000000", "--block-tokens", "16"});
  const std::string line = sim.ReadLine();
  ASSERT_EQ(line.rfind("listening on ", 0), 0U) << line;
  const std::string url = line.substr(13);
  TempDir dir;
  const fs::path run = dir.path / "run";
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
  const json res = json::parse(Slurp(run / "results.json"));
  const json& turns = res["perf"]["sessions"]["turns"];
  ASSERT_EQ(turns.size(), 4U);
  const std::string md = Slurp(run / "report.md");
  EXPECT_NE(md.find("### Sessions"), std::string::npos);
  EXPECT_NE(md.find("| 4 | 8 | 0 | 0 |"), std::string::npos) << md;  // turn 4: 8 requests
  // report.html: TTFT by turn, each mark the value of results.json.
  const std::string html = Slurp(run / "report.html");
  EXPECT_NE(html.find("data-chart=\"sessions-ttft\""), std::string::npos);
  for (const json& t : turns) {
    const std::string mark =
        "data-series=\"TTFT p50\" data-x=\"" + std::to_string(t["turn"].get<int>()) + "\"";
    EXPECT_NE(html.find(mark), std::string::npos) << mark;
  }
}

TEST(SessionsCliTest, ABadSessionLineIsAUsageErrorNamingFileAndLine) {
  TempDir dir;
  const fs::path file = dir.path / "bad.jsonl";
  std::ofstream(file) << "{\"turns\": [\"hello\"]}\n"
                         "{\"turns\": [\"a\", \"b\"], \"think_ms\": [1]}\n";
  const ProcessResult r =
      RunProcess({kBin, "perf", "--endpoint", "http://127.0.0.1:9/v1", "--profile", "sessions",
                  "--sessions", file.string(), "--out", (dir.path / "run").string()},
                 std::chrono::seconds(30), {"SERVEBENCH_STORE=off"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(file.string() + ":2: think_ms has 1 values but the session has 2 turns"),
            std::string::npos)
      << r.err;
}

}  // namespace
