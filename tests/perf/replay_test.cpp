// The replay profile against the simulator (a real HTTP server in this process) with its prefix
// cache: every request of a Mooncake trace is sent, its prompt is exactly the trace's length by
// the server's count, and the cached tokens the server reports equal what the trace's hash_ids
// say (computed here from the trace file itself). Also: BurstGPT and plain JSONL traces, the
// schedule (scheduled_ms is the trace time x --time-scale; late sends counted), bad options.
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perf/profiles.h"
#include "profiles_fixture.h"
#include "support/mooncake_truth.h"

namespace sb::perf {
namespace {

using fixture::Fixture;
using nlohmann::json;

std::string Fixture_(const std::string& name) {
  return std::string(SB_FIXTURES_DIR) + "/workloads/" + name;
}

sim::SimOptions Caching() {
  sim::SimOptions o = fixture::Quiet();
  o.ttft_ms = 2;
  o.prefill_us_per_token = 10;
  o.itl_ms = 0.5;
  o.concurrency_slowdown = 0;
  o.prefix_cache_tokens = 1'000'000;
  o.block_tokens = 16;
  return o;
}

TEST(ReplayTest, MooncakeHashIdsBecomeTheServersCachedTokensExactly) {
  Fixture f(Caching());
  Session s = f.MakeSession();
  ProfileOptions po;
  po.warmup = 0;
  po.replay.trace = Fixture_("mooncake-200.jsonl");
  po.replay.block_tokens = 16;
  po.replay.time_scale = 0.5;  // 20 ms apart: each request ends before the next is sent
  ASSERT_TRUE(PrepareReplay(po.replay));
  const json out = s.Run("replay", po);
  const auto want = ::sb::testing::ReadMooncakeTruth(po.replay.trace, 16);
  ASSERT_EQ(want.size(), 200U);
  EXPECT_EQ(out["sent"], 200);
  EXPECT_EQ(out["ok"], 200);
  EXPECT_EQ(out["unsent"], 0);
  ASSERT_EQ(out["requests"].size(), 200U);
  long long cached = 0, prompt = 0, hits = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const json& r = out["requests"][i];
    EXPECT_EQ(r["status"], "ok") << i;
    EXPECT_EQ(r["input_tokens"], want[i].input) << "request " << i;
    EXPECT_EQ(r["output_tokens"], want[i].output) << "request " << i;
    EXPECT_EQ(r["cached_tokens"], want[i].cached) << "request " << i;
    EXPECT_EQ(r["class"], "trace:mooncake");
    EXPECT_DOUBLE_EQ(r["scheduled_ms"].get<double>(), 20.0 * static_cast<double>(i));
    EXPECT_GE(r["sent_ms"].get<double>(), r["scheduled_ms"].get<double>());
    cached += want[i].cached;
    prompt += want[i].input;
    hits += want[i].cached > 0 ? 1 : 0;
  }
  ASSERT_GT(hits, 100);  // the trace does share prefixes
  ASSERT_LT(hits, 200);
  EXPECT_EQ(out["cache"]["cached_tokens"], cached);
  EXPECT_EQ(out["cache"]["prompt_tokens"], prompt);
  // The samples stream carries the same records.
  ASSERT_EQ(f.samples.size(), 200U);
  EXPECT_EQ(f.samples[5]["cached_tokens"], want[5].cached);
  std::map<std::string, int> classes;
  for (const json& c : out["classes"]) {
    classes[c["class"]] = c["count"];
  }
  EXPECT_EQ(classes["trace:mooncake"], 200);
  EXPECT_EQ(classes["cache hit"], hits);
  EXPECT_EQ(classes["cache miss"], 200 - hits);
}

TEST(ReplayTest, BurstGptReplaysAtTraceTimesWithExactLengthsAndCountsFailures) {
  sim::SimOptions o = Caching();
  o.prefix_cache_tokens = 0;  // nothing reported: the share says so, never 0
  Fixture f(o);
  Session s = f.MakeSession();
  ProfileOptions po;
  po.warmup = 0;
  po.replay.trace = Fixture_("burstgpt.csv");
  po.replay.time_scale = 0.01;           // seconds of trace -> tens of ms
  const json out = s.Run("replay", po);  // reads the trace itself
  EXPECT_EQ(out["format"], "burstgpt");
  EXPECT_EQ(out["skipped_failures"], 2);
  EXPECT_EQ(out["sent"], 18);
  EXPECT_EQ(out["cache"]["share"], "not reported");
  long long late = 0;
  for (const json& r : out["requests"]) {
    EXPECT_EQ(r["input_tokens"], r["trace"]["input_tokens"]);
    EXPECT_EQ(r["output_tokens"], r["trace"]["output_tokens"]);
    EXPECT_TRUE(r["cached_tokens"].is_null());
    late += r["schedule_lag_ms"].get<double>() > po.rate.late_ms ? 1 : 0;
  }
  EXPECT_EQ(out["late"], late);
  // Each send is scheduled at its trace time x --time-scale, from the trace's first request.
  const auto trace = workload::ReadTrace(po.replay.trace, std::nullopt);
  ASSERT_TRUE(trace);
  ASSERT_EQ(out["requests"].size(), trace->requests.size());
  for (std::size_t i = 0; i < trace->requests.size(); ++i) {
    EXPECT_NEAR(out["requests"][i]["scheduled_ms"].get<double>(),
                static_cast<double>(trace->requests[i].at_us) / 1e3 * 0.01, 1e-6);
    EXPECT_EQ(out["requests"][i]["trace"]["line"], trace->requests[i].line);
  }
}

TEST(ReplayTest, PlainJsonlSendsItsPromptsAndMessages) {
  Fixture f(Caching());
  Session s = f.MakeSession();
  ProfileOptions po;
  po.warmup = 0;
  po.replay.trace = Fixture_("plain.jsonl");
  po.replay.time_scale = 0.05;
  const json out = s.Run("replay", po);
  ASSERT_EQ(out["sent"], 5);
  const json& reqs = out["requests"];
  EXPECT_EQ(reqs[0]["input_tokens"], 120);  // generated text, fitted
  EXPECT_EQ(reqs[3]["input_tokens"], 300);
  // Given text is sent as is: "Summarise the plot of Hamlet in two sentences." = 9 + 6.
  EXPECT_EQ(reqs[1]["input_tokens"], 15);
  // System + user messages: (4 + 4) + (4 + 4) + 2 ("You are terse." and "Name three
  // primes." are 4 tokens each).
  EXPECT_EQ(reqs[2]["input_tokens"], 18);
  EXPECT_DOUBLE_EQ(reqs[1]["scheduled_ms"].get<double>(), 250.5 * 0.05);
}

TEST(ReplayTest, BadOptionsAndBadTracesAreUsageErrors) {
  ReplayOptions o;
  EXPECT_NE(PrepareReplay(o).error().message.find("--trace"), std::string::npos);
  o.trace = Fixture_("plain.jsonl");
  o.time_scale = 0;
  EXPECT_NE(PrepareReplay(o).error().message.find("--time-scale"), std::string::npos);
  o.time_scale = 1;
  o.format = "sharegpt";
  EXPECT_NE(PrepareReplay(o).error().message.find("--trace-format"), std::string::npos);
  o.format = "mooncake";  // the wrong layout for this file: its first line names the field
  const auto wrong = PrepareReplay(o);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("plain.jsonl:1: \"timestamp\""), std::string::npos)
      << wrong.error().message;
  o.format = "";
  o.max_requests = 2;
  ASSERT_TRUE(PrepareReplay(o));
  EXPECT_EQ(o.loaded->requests.size(), 2U);
}

}  // namespace
}  // namespace sb::perf
