// `servebench perf --dataset` end to end (issue 28 item 2): concurrency and rate runs against a
// `servebench sim` child send the dataset's prompts (read back from the simulator's
// --request-log), results.json counts --max-requests and --skip-bad-lines, and --allow-cache
// really leaves the per-request nonce out of the prompt.
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
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
const std::string kWorkloads = std::string(SB_FIXTURES_DIR) + "/workloads/";

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/servebench-dataset-XXXXXX";
    path = mkdtemp(tmpl);
  }

  ~TempDir() { fs::remove_all(path); }

  fs::path path;
};

struct Sim {
  explicit Sim(const fs::path& log) {
    child = std::make_unique<Child>(std::vector<std::string>{kBin, "sim", "--port", "0",
                                                             "--ttft-ms", "2", "--itl-ms", "0.5",
                                                             "--request-log", log.string()});
    const std::string line = child->ReadLine();
    if (line.rfind("listening on ", 0) == 0) {
      url = line.substr(13);
    }
  }

  std::unique_ptr<Child> child;
  std::string url;
};

// The simulator's request log: one "HASH\tTEXT" line per chat request, TEXT the first line of
// the last text part (at most 80 bytes).
std::vector<std::string> LoggedTexts(const fs::path& log) {
  std::vector<std::string> out;
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    const auto tab = line.find('\t');
    out.push_back(tab == std::string::npos ? line : line.substr(tab + 1));
  }
  return out;
}

// The text without the "[request N-M] " nonce servebench puts first unless --allow-cache.
std::string WithoutNonce(const std::string& text) {
  if (text.rfind("[request ", 0) == 0) {
    const auto end = text.find("] ");
    return end == std::string::npos ? text : text.substr(end + 2);
  }
  return text;
}

bool IsPrefixOfOne(const std::string& text, const std::set<std::string>& prompts) {
  for (const std::string& p : prompts) {
    if (!text.empty() && p.rfind(text, 0) == 0) {
      return true;
    }
  }
  return false;
}

std::set<std::string> ShareGptHumanTurns() {
  std::ifstream in(kWorkloads + "sharegpt.json");
  const json doc = json::parse(in);
  std::set<std::string> out;
  for (const json& entry : doc) {
    for (const json& turn : entry["conversations"]) {
      if (turn["from"] == "human") {
        out.insert(turn["value"].get<std::string>());
      }
    }
  }
  return out;
}

json ReadJson(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

std::string ReadText(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(DatasetCliTest, AConcurrencyRunSendsTheShareGptPromptsWithTheirNonce) {
  TempDir dir;
  Sim sim(dir.path / "requests.log");
  ASSERT_FALSE(sim.url.empty());
  const ProcessResult r =
      RunProcess({kBin, "perf", "--endpoint", sim.url, "--profile", "concurrency", "--levels", "2",
                  "--requests", "6", "--warmup", "0", "--dataset", kWorkloads + "sharegpt.json",
                  "--out", (dir.path / "run").string()},
                 std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::set<std::string> prompts = ShareGptHumanTurns();
  const auto texts = LoggedTexts(dir.path / "requests.log");
  int dataset_requests = 0;
  for (const std::string& t : texts) {
    if (t.rfind("[request ", 0) == 0 && IsPrefixOfOne(WithoutNonce(t), prompts)) {
      ++dataset_requests;
    }
  }
  EXPECT_EQ(dataset_requests, 6) << ReadText(dir.path / "requests.log");
  const json res = ReadJson(dir.path / "run" / "results.json");
  const json& ds = res["perf"]["concurrency"]["dataset"];
  EXPECT_EQ(ds["format"], "sharegpt") << res["perf"]["concurrency"].dump();
  EXPECT_EQ(ds["requests"], 6);
  EXPECT_EQ(ds["skipped_bad_lines"], 0);
  const std::string report = ReadText(dir.path / "run" / "report.md");
  EXPECT_NE(report.find("Prompts from dataset "), std::string::npos) << report;
  EXPECT_NE(report.find("(sharegpt, order file): 6 requests sent"), std::string::npos) << report;
}

TEST(DatasetCliTest, ARateRunCountsMaxRequestsAndSkippedLinesAndAllowCacheDropsTheNonce) {
  TempDir dir;
  Sim sim(dir.path / "requests.log");
  ASSERT_FALSE(sim.url.empty());
  const ProcessResult r = RunProcess({kBin,
                                      "perf",
                                      "--endpoint",
                                      sim.url,
                                      "--profile",
                                      "rate",
                                      "--rates",
                                      "50",
                                      "--requests",
                                      "4",
                                      "--warmup",
                                      "0",
                                      "--dataset",
                                      kWorkloads + "dataset-bad.jsonl",
                                      "--skip-bad-lines",
                                      "--max-requests",
                                      "2",
                                      "--allow-cache",
                                      "--out",
                                      (dir.path / "run").string()},
                                     std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // --max-requests 2 keeps the file's first two entries; --allow-cache sends them verbatim.
  const std::set<std::string> firstTwo = {"Name the largest planet of the solar system.",
                                          "Write a haiku about autumn rain."};
  const auto texts = LoggedTexts(dir.path / "requests.log");
  int dataset_requests = 0;
  for (const std::string& t : texts) {
    EXPECT_EQ(t.find("[request "), std::string::npos) << t;
    if (firstTwo.count(t) == 1) {
      ++dataset_requests;
    }
  }
  EXPECT_EQ(dataset_requests, 4) << ReadText(dir.path / "requests.log");
  const json res = ReadJson(dir.path / "run" / "results.json");
  const json& ds = res["perf"]["rate"]["dataset"];
  EXPECT_EQ(ds["format"], "jsonl") << res["perf"]["rate"].dump();
  EXPECT_EQ(ds["skipped_bad_lines"], 1);
  EXPECT_EQ(ds["used_entries"], 2);
  EXPECT_EQ(ds["requests"], 4);
  EXPECT_EQ(ds["wrapped"], 1);
  const std::string report = ReadText(dir.path / "run" / "report.md");
  EXPECT_NE(report.find("(jsonl, order file): 4 requests sent from 2 of its 4 entries (1 wrap); 1 "
                        "bad line skipped (--skip-bad-lines)"),
            std::string::npos)
      << report;
}

}  // namespace
