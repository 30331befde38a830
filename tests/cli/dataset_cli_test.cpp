// --dataset end to end (docs/workloads.md "Datasets"): concurrency and rate runs of the binary
// against a `servebench sim` child whose --request-log shows the prompts it was sent; the
// dataset's counts (--max-requests, --skip-bad-lines) in results.json and report.md; and
// --allow-cache sending the dataset's text without the unique nonce.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/sim_child.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sb::testing::ProcessResult;
using sb::testing::ReadFile;
using sb::testing::RunProcess;
using sb::testing::SimChild;
using sb::testing::TempDir;

const std::string kBin = SB_BINARY;
const std::string kFixtures = std::string(SB_FIXTURES_DIR) + "/workloads/";

struct Logged {
  std::string hash;
  std::string text;  // the start of the request's last text, as the simulator logged it
};

std::vector<Logged> ReadRequestLog(const fs::path& p) {
  std::vector<Logged> out;
  std::istringstream in(ReadFile(p));
  std::string line;
  while (std::getline(in, line)) {
    const auto tab = line.find('\t');
    out.push_back({line.substr(0, tab), tab == std::string::npos ? "" : line.substr(tab + 1)});
  }
  return out;
}

// The texts without their "[request SESSION-N] " nonce, cut to 50 characters (the log keeps 80
// with the nonce); fails the test when one lacks the nonce.
std::vector<std::string> WithoutNonces(const std::vector<Logged>& logged) {
  static const std::regex kNonce(R"(^\[request [0-9a-f]+-[0-9]+\] )");
  std::vector<std::string> out;
  for (const Logged& l : logged) {
    std::smatch m;
    EXPECT_TRUE(std::regex_search(l.text, m, kNonce)) << l.text;
    out.push_back((m.empty() ? l.text : l.text.substr(m.length(0))).substr(0, 50));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The first 50 characters of the first human turn of each ShareGPT conversation that has a reply,
// in file order.
std::vector<std::string> ShareGptPrompts() {
  std::vector<std::string> out;
  for (const json& c : json::parse(ReadFile(kFixtures + "sharegpt.json"))) {
    const json& turns = c["conversations"];
    for (std::size_t i = 0; i + 1 < turns.size(); ++i) {
      if (turns[i]["from"] == "human" && turns[i + 1]["from"] == "gpt") {
        out.push_back(turns[i]["value"].get<std::string>().substr(0, 50));
        break;
      }
    }
  }
  return out;
}

json ReadResults(const fs::path& run) {
  return json::parse(ReadFile(run / "results.json"));
}

TEST(DatasetCliTest, AConcurrencyRunSendsTheShareGptPromptsUpToMaxRequests) {
  TempDir dir;
  const fs::path log = dir.path() / "requests.log";
  SimChild sim({"--ttft-ms", "2", "--itl-ms", "0.5", "--request-log", log.string()});
  ASSERT_FALSE(sim.url().empty());
  const fs::path run = dir.path() / "run";
  const ProcessResult r =
      RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "concurrency", "--levels",
                  "4", "--warmup", "0", "--dataset", kFixtures + "sharegpt.json", "--max-requests",
                  "3", "--out", run.string()},
                 std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Four streams over the first three entries: the first entry twice (one wrap).
  const std::vector<std::string> prompts = ShareGptPrompts();
  ASSERT_GE(prompts.size(), 3U);
  std::vector<std::string> want = {prompts[0], prompts[1], prompts[2], prompts[0]};
  std::sort(want.begin(), want.end());
  const std::vector<Logged> logged = ReadRequestLog(log);
  EXPECT_EQ(WithoutNonces(logged), want);
  // The nonce makes even the repeated entry a different request.
  std::vector<std::string> hashes;
  for (const Logged& l : logged) {
    hashes.push_back(l.hash);
  }
  std::sort(hashes.begin(), hashes.end());
  EXPECT_EQ(std::unique(hashes.begin(), hashes.end()), hashes.end());

  const json d = ReadResults(run)["perf"]["concurrency"]["dataset"];
  EXPECT_EQ(d["format"], "sharegpt");
  EXPECT_EQ(d["requests"], 4);
  EXPECT_EQ(d["used_entries"], 3);
  EXPECT_EQ(d["max_requests"], 3);
  EXPECT_EQ(d["wrapped"], 1);
  EXPECT_EQ(d["skipped_without_reply"], 1);  // the fixture's conversation 8 has no reply
  const std::string md = ReadFile(run / "report.md");
  EXPECT_NE(md.find("4 requests from 3 of 11 entries (wrapped 1 times), --max-requests 3"),
            std::string::npos)
      << md;
}

TEST(DatasetCliTest, ARateRunSkipsAndCountsBadLinesAndSendsTheJsonlPrompts) {
  TempDir dir;
  const fs::path log = dir.path() / "requests.log";
  SimChild sim({"--ttft-ms", "2", "--itl-ms", "0.5", "--request-log", log.string()});
  ASSERT_FALSE(sim.url().empty());
  const fs::path run = dir.path() / "run";
  const std::vector<std::string> base = {kBin,         "perf",
                                         "--endpoint", sim.url(),
                                         "--profile",  "rate",
                                         "--rates",    "50",
                                         "--requests", "6",
                                         "--warmup",   "0",
                                         "--dataset",  kFixtures + "dataset-bad.jsonl",
                                         "--out"};
  // Without --skip-bad-lines the bad line stops the run before anything is sent.
  std::vector<std::string> strict = base;
  strict.push_back((dir.path() / "strict").string());
  const ProcessResult bad = RunProcess(strict, std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("dataset-bad.jsonl:3:"), std::string::npos) << bad.err;
  EXPECT_TRUE(ReadRequestLog(log).empty());

  std::vector<std::string> skip = base;
  skip.push_back(run.string());
  skip.push_back("--skip-bad-lines");
  const ProcessResult r = RunProcess(skip, std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The four good lines in file order, then the first two again.
  std::vector<std::string> good;
  std::istringstream in(ReadFile(kFixtures + "dataset-bad.jsonl"));
  std::string line;
  while (std::getline(in, line)) {
    const json j = json::parse(line, nullptr, false);
    if (!j.is_discarded()) {
      good.push_back(j["prompt"].get<std::string>().substr(0, 50));
    }
  }
  ASSERT_EQ(good.size(), 4U);
  std::vector<std::string> want = {good[0], good[1], good[2], good[3], good[0], good[1]};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(WithoutNonces(ReadRequestLog(log)), want);

  const json d = ReadResults(run)["perf"]["rate"]["dataset"];
  EXPECT_EQ(d["format"], "jsonl");
  EXPECT_EQ(d["skipped_bad_lines"], 1);
  EXPECT_EQ(d["requests"], 6);
  EXPECT_EQ(d["entries"], 4);
  const std::string md = ReadFile(run / "report.md");
  EXPECT_NE(md.find("6 requests from 4 of 4 entries (wrapped 1 times); 1 bad lines skipped"),
            std::string::npos)
      << md;
}

TEST(DatasetCliTest, AllowCacheSendsTheDatasetTextWithoutTheNonce) {
  TempDir dir;
  const fs::path log = dir.path() / "requests.log";
  SimChild sim({"--ttft-ms", "2", "--itl-ms", "0.5", "--request-log", log.string()});
  ASSERT_FALSE(sim.url().empty());
  const ProcessResult r =
      RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "concurrency", "--levels",
                  "2", "--warmup", "0", "--dataset", kFixtures + "dataset.jsonl", "--max-requests",
                  "1", "--allow-cache", "--out", (dir.path() / "run").string()},
                 std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<Logged> logged = ReadRequestLog(log);
  ASSERT_EQ(logged.size(), 2U);
  const std::string first =
      json::parse(ReadFile(kFixtures + "dataset.jsonl")
                      .substr(0, ReadFile(kFixtures + "dataset.jsonl").find('\n')))["prompt"];
  for (const Logged& l : logged) {
    EXPECT_EQ(l.text, first);  // the entry's text as it is: no "[request ...]" before it
  }
  EXPECT_EQ(logged[0].hash, logged[1].hash);  // the same messages, so a cache could serve them
}

// The simulator's truth of each measured request of `profile` in samples.jsonl: its cached
// prompt tokens, in send order.
std::vector<int> CachedTruth(const fs::path& run, const std::string& profile) {
  std::vector<std::pair<double, int>> by_send;
  for (const json& s : sb::testing::ReadJsonl(run / "samples.jsonl")) {
    if (s["profile"] == profile && !s.contains("warmup")) {
      by_send.emplace_back(s["sent_at_ms"].get<double>(),
                           s["server"]["sim"].value("cached_tokens", -1));
    }
  }
  std::sort(by_send.begin(), by_send.end());
  std::vector<int> out;
  for (const auto& [at, cached] : by_send) {
    out.push_back(cached);
  }
  return out;
}

// --shared-prefix 4:512 against the simulator's prefix cache with 16-token blocks: the first
// request of each group is a miss; every later one shares the group's prefix, which starts
// after the simulator's 4 template tokens, so floor((4 + 512) / 16) whole blocks are cached and
// nothing after them (the nonce follows the prefix).
constexpr int kLead = 4, kPrefix = 512, kBlock = 16, kGroups = 4;
constexpr int kHit = (kLead + kPrefix) / kBlock * kBlock;

// 12345 -> "12,345", as report.md groups counts.
std::string Grouped(long long v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return out;
}

// The cached share as report.md prints a fraction: one decimal of a percent ("23.2%", "50%").
std::string FormatCachedShare(const json& cache) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", cache["share"].get<double>() * 100);
  std::string s = buf;
  if (s.ends_with(".0")) {
    s.resize(s.size() - 2);
  }
  return s + "%";
}

void ExpectSharedPrefixCached(const fs::path& run, const std::string& profile, int requests) {
  const std::vector<int> cached = CachedTruth(run, profile);
  ASSERT_EQ(cached.size(), static_cast<std::size_t>(requests));
  long long total = 0;
  for (int i = 0; i < requests; ++i) {
    EXPECT_EQ(cached[i], i < kGroups ? 0 : kHit) << i;
    total += cached[i];
  }
  EXPECT_EQ(total, static_cast<long long>(requests - kGroups) * kHit);
  // Each record carries the workload fields, cached_tokens as the server reported it, and its
  // class names its group: the k-th request sent (from 0) has group k mod 4, named from 1.
  std::vector<std::pair<double, std::string>> classes;
  long long prompt_tokens = 0;
  for (const json& s : sb::testing::ReadJsonl(run / "samples.jsonl")) {
    if (s["profile"] == profile && !s.contains("warmup")) {
      EXPECT_EQ(s["cached_tokens"], s["server"]["sim"]["cached_tokens"]) << s.dump();
      EXPECT_EQ(s["input_tokens"], s["prompt_tokens"]);
      EXPECT_EQ(s["output_tokens"], 4);
      EXPECT_TRUE(s["scheduled_ms"].is_number() && s["sent_ms"].is_number()) << s.dump();
      classes.emplace_back(s["sent_at_ms"].get<double>(), s["class"].get<std::string>());
      prompt_tokens += s["input_tokens"].get<long long>();
    }
  }
  std::sort(classes.begin(), classes.end());
  ASSERT_EQ(classes.size(), static_cast<std::size_t>(requests));
  for (int i = 0; i < requests; ++i) {
    EXPECT_EQ(classes[i].second, "shared-prefix:" + std::to_string(i % kGroups + 1)) << i;
  }
  // The level's (rate point's) rows per class and cache outcome, and the cached share.
  const json results = ReadResults(run);
  const json& row = profile == "rate" ? results["perf"]["rate"]["rates"][0]
                                      : results["perf"]["concurrency"]["levels"][0];
  std::map<std::string, int> counts;
  for (const json& c : row["classes"]) {
    counts[c["class"].get<std::string>()] = c["count"].get<int>();
  }
  EXPECT_EQ(counts["cache miss"], kGroups) << row["classes"].dump();
  EXPECT_EQ(counts["cache hit"], requests - kGroups);
  EXPECT_EQ(counts.count("cache not reported"), 0u);
  for (int g = 1; g <= kGroups; ++g) {
    // Requests g-1, g-1+4, ...: ceil((requests - (g-1)) / 4) of them.
    EXPECT_EQ(counts["shared-prefix:" + std::to_string(g)], (requests - g + kGroups) / kGroups)
        << g;
  }
  const json& cache = row["cache"];
  EXPECT_EQ(cache["reported"], true);
  EXPECT_EQ(cache["cached_tokens"], static_cast<long long>(requests - kGroups) * kHit);
  EXPECT_EQ(cache["prompt_tokens"], prompt_tokens);
  EXPECT_DOUBLE_EQ(cache["share"].get<double>(),
                   static_cast<double>((requests - kGroups) * kHit) / prompt_tokens);
  EXPECT_EQ(cache["ttft_cached_ms"]["n"], requests - kGroups);
  EXPECT_EQ(cache["ttft_uncached_ms"]["n"], kGroups);
  // The simulator's /metrics (vLLM's prefix-cache counters) over the window agree with the
  // answers' own fields, token for token: the warm-up is outside the window.
  const json& server = cache["server_metrics"];
  EXPECT_EQ(server["source"], "vllm") << cache.dump();
  EXPECT_EQ(server["cached_tokens"], cache["cached_tokens"]);
  EXPECT_EQ(server["prompt_tokens"], cache["prompt_tokens"]);
  const json sp = ReadResults(run)["perf"][profile]["shared_prefix"];
  EXPECT_EQ(sp["groups"], kGroups);
  EXPECT_EQ(sp["requests"], requests);
  EXPECT_EQ(sp["prefix_tokens"], json::array({kPrefix, kPrefix, kPrefix, kPrefix}));
  const std::string md = ReadFile(run / "report.md");
  EXPECT_NE(md.find("Shared prefixes: 4 groups of 512 tokens"), std::string::npos) << md;
  EXPECT_NE(md.find("Requests by class and by cache outcome"), std::string::npos) << md;
  EXPECT_NE(md.find("| shared-prefix:4 | " + std::to_string(requests / kGroups) + " |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| " + FormatCachedShare(cache) + " | " + Grouped((requests - kGroups) * kHit) +
                    " / " + Grouped(prompt_tokens) + " |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| " + FormatCachedShare(cache) + " (" + Grouped((requests - kGroups) * kHit) +
                    " / " + Grouped(prompt_tokens) + ") |"),
            std::string::npos)
      << md;  // the /metrics column
}

TEST(SharedPrefixCliTest, ConcurrencyRequestsShareTheirGroupsPrefixInTheSimulatorsCache) {
  TempDir dir;
  SimChild sim({"--ttft-ms", "2", "--itl-ms", "0.5", "--prefix-cache-tokens", "1000000",
                "--block-tokens", "16"});
  ASSERT_FALSE(sim.url().empty());
  const fs::path run = dir.path() / "run";
  // One stream: each request finishes before the next starts, so no group's first request
  // races its second.
  const ProcessResult r = RunProcess(
      {kBin, "perf", "--endpoint", sim.url(), "--profile", "concurrency", "--levels", "1",
       "--requests", "20", "--tokens", "4", "--shared-prefix", "4:512", "--out", run.string()},
      std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectSharedPrefixCached(run, "concurrency", 20);
}

TEST(SharedPrefixCliTest, RateRequestsShareTheirGroupsPrefixInTheSimulatorsCache) {
  TempDir dir;
  SimChild sim({"--ttft-ms", "2", "--itl-ms", "0.5", "--prefill-us-per-token", "1",
                "--prefix-cache-tokens", "1000000", "--block-tokens", "16"});
  ASSERT_FALSE(sim.url().empty());
  const fs::path run = dir.path() / "run";
  // 100 ms apart, each request done in a few ms: the arrivals never overlap.
  const ProcessResult r =
      RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "rate", "--rates", "10",
                  "--arrival", "constant", "--requests", "10", "--rate-tokens", "4",
                  "--shared-prefix", "4:512", "--out", run.string()},
                 std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectSharedPrefixCached(run, "rate", 10);
}

// The store keeps a replay's summary like any profile's: imported from the run directory, its
// figures show in `history`.
TEST(ReplayStoreCliTest, AReplayRunImportsIntoTheStoreAndShowsInHistory) {
  TempDir dir;
  SimChild sim({"--ttft-ms", "2", "--itl-ms", "0.5"});
  ASSERT_FALSE(sim.url().empty());
  const fs::path run = dir.path() / "run";
  const ProcessResult r = RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "replay",
                                      "--trace", kFixtures + "plain.jsonl", "--out", run.string()},
                                     std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string store = (dir.path() / "store.sqlite").string();
  const ProcessResult imported =
      RunProcess({kBin, "store", "import", "--store", store, run.string()},
                 std::chrono::seconds(30), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("1 added"), std::string::npos) << imported.out;
  const ProcessResult history =
      RunProcess({kBin, "history", "--store", store, "--metric", "replay.sent", "--format", "csv"},
                 std::chrono::seconds(30), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(history.exit_code, 0) << history.err;
  // The header names the metric; the one row ends with the 5 requests the trace has.
  EXPECT_NE(history.out.find(",replay.sent,"), std::string::npos) << history.out;
  EXPECT_NE(history.out.find(",sim-model,"), std::string::npos) << history.out;
  EXPECT_NE(history.out.find(",5,,"), std::string::npos) << history.out;
}

// A small vocabulary (the simulator cutting words into 2-character tokens, as a 512-entry
// vocabulary spends ~4 tokens on a word) behind a plain /tokenize (as llama.cpp's): each group's
// prefix is still exactly the asked tokens. The fitter used to assume a token per word and
// stopped near 4x the size (989-1010 tokens for 256 against llama.cpp).
TEST(SharedPrefixCliTest, PrefixesAreExactOnASmallVocabularyBehindAPlainTokenizer) {
  TempDir dir;
  SimChild sim({"--ttft-ms", "2", "--itl-ms", "0.5", "--chars-per-token", "2", "--plain-tokenize"});
  ASSERT_FALSE(sim.url().empty());
  const fs::path run = dir.path() / "run";
  const ProcessResult r = RunProcess(
      {kBin, "perf", "--endpoint", sim.url(), "--profile", "concurrency", "--levels", "1",
       "--requests", "4", "--tokens", "4", "--shared-prefix", "4:256", "--out", run.string()},
      std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json results = ReadResults(run);
  EXPECT_EQ(results["perf"]["concurrency"]["shared_prefix"]["prefix_tokens"],
            json::array({256, 256, 256, 256}));
  for (const json& w : results["warnings"]) {
    EXPECT_EQ(w.get<std::string>().find("--shared-prefix"), std::string::npos) << w;
  }
}

// The drawn lengths of the two tests below, and their check: a concurrency level of 8 requests
// whose --input-tokens are drawn from these lengths (with `profiles`, `extra` arguments); every
// measured request's prompt is one of them, to the token, with no --input-tokens warning.
const std::set<long long> kDrawnLengths = {298, 336, 349, 537};

void ExpectDrawnLengthsExact(const TempDir& dir, const std::string& url,
                             const std::string& profiles, std::vector<std::string> extra = {}) {
  const fs::path lengths = dir.path() / "lengths.txt";
  {
    std::ofstream out(lengths);
    for (const long long n : kDrawnLengths) {
      out << n << "\n";
    }
  }
  const fs::path run = dir.path() / "run";
  std::vector<std::string> args = {kBin,
                                   "perf",
                                   "--endpoint",
                                   url,
                                   "--profile",
                                   profiles,
                                   "--levels",
                                   "2",
                                   "--requests",
                                   "8",
                                   "--tokens",
                                   "4",
                                   "--input-tokens",
                                   "file:" + lengths.string(),
                                   "--out",
                                   run.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  const ProcessResult r = RunProcess(args, std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int measured = 0;
  for (const json& s : sb::testing::ReadJsonl(run / "samples.jsonl")) {
    if (s["profile"] == "concurrency" && !s.contains("warmup")) {
      ++measured;
      EXPECT_EQ(kDrawnLengths.count(s["input_tokens"].get<long long>()), 1u) << s.dump();
    }
  }
  EXPECT_EQ(measured, 8);
  for (const json& w : ReadResults(run)["warnings"]) {
    EXPECT_EQ(w.get<std::string>().find("--input-tokens"), std::string::npos) << w;
  }
}

// The same small vocabulary for whole prompts: a drawn --input-tokens length is met to the token.
// The filler's last gap used to be padded with " and", two tokens there, so each prompt missed
// by 1-2 tokens (298 asked, 299 sent; 349 asked, 347 sent).
TEST(DatasetCliTest, DrawnPromptLengthsAreExactOnASmallVocabulary) {
  TempDir dir;
  SimChild sim({"--ttft-ms", "2", "--itl-ms", "0.5", "--chars-per-token", "2"});
  ASSERT_FALSE(sim.url().empty());
  ExpectDrawnLengthsExact(dir, sim.url(), "concurrency");
}

// A server with llama.cpp's /apply-template (the simulator's --apply-template) is counted
// through it, the template applied by the server itself: no calibration request is sent, and
// the drawn lengths are exact on a small vocabulary behind a plain /tokenize. (Against
// llama.cpp a plain /tokenize plus a measured template share missed by 1-2 tokens when the text
// began with a lowercase word: its tokenizer reads a text's start differently.)
TEST(DatasetCliTest, AServerWithApplyTemplateIsCountedThroughIt) {
  TempDir dir;
  SimChild sim({"--ttft-ms", "2", "--itl-ms", "0.5", "--chars-per-token", "2", "--plain-tokenize",
                "--apply-template"});
  ASSERT_FALSE(sim.url().empty());
  ExpectDrawnLengthsExact(dir, sim.url(), "concurrency,context", {"--sizes", "500"});
  const fs::path run = dir.path() / "run";
  for (const json& s : sb::testing::ReadJsonl(run / "samples.jsonl")) {
    EXPECT_NE(s.value("label", ""), "tokenizer calibration") << s.dump();
  }
  EXPECT_EQ(ReadResults(run)["perf"]["context"]["counted_by"], "apply-template+tokenize");
}

TEST(SharedPrefixCliTest, ABadValueIsAUsageError) {
  for (const std::string v : {"4", "0:512", "4:0", "a:b", "4:512x"}) {
    const ProcessResult r = RunProcess({kBin, "perf", "--endpoint", "http://127.0.0.1:9/v1",
                                        "--profile", "rate", "--shared-prefix", v},
                                       std::chrono::seconds(30), {"SERVEBENCH_STORE=off"});
    EXPECT_EQ(r.exit_code, 2) << v;
    EXPECT_NE(r.err.find("--shared-prefix must be GROUPS:TOKENS"), std::string::npos) << r.err;
  }
}

}  // namespace
