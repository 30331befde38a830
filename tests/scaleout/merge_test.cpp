// `servebench merge` without processes (run/merge.h): shards built from seeded random samples
// merge to exactly the percentiles one histogram over the union of all samples gives, counts add
// up, and shards that do not belong together are refused with the difference named.
#include "scaleout/merge.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perf/histogram.h"

namespace sb::scaleout {
namespace {

using nlohmann::json;
using perf::Histogram;

// The histograms a rate point carries (perf/rate.cpp), by name.
const std::vector<std::string> kNames = {
    "ttft_from_scheduled", "ttft_from_send", "e2e_from_scheduled", "e2e_from_send", "itl", "tpot",
    "schedule_lag",        "event_delay"};

struct Shard {
  json results;
  std::vector<std::vector<std::int64_t>> values;  // per kNames entry, per point
};

// One shard's results.json with `n` requests at each of two rates, values drawn from `rng`:
// heavy-tailed nanosecond latencies, so the percentiles land in many buckets.
json MakeShard(int index, int count, int n, std::mt19937_64& rng,
               std::vector<std::vector<Histogram>>& union_hist) {
  std::lognormal_distribution<double> latency(17.0, 1.2);  // e^17 ns ~ 24 ms
  json rates = json::array();
  for (int point = 0; point < 2; ++point) {
    json hist = {{"unit", "ns"}};
    for (std::size_t k = 0; k < kNames.size(); ++k) {
      Histogram h;
      for (int i = 0; i < n; ++i) {
        const auto v = static_cast<std::int64_t>(latency(rng));
        h.Record(v);
        union_hist[point][k].Record(v);
      }
      hist[kNames[k]] = h.ToJson();
    }
    rates.push_back({{"phase", "sweep"},
                     {"rate_rps", point == 0 ? 2.5 : 5.0},
                     {"scheduled", n},
                     {"sent", n},
                     {"ok", n - index},  // shard k lost k requests
                     {"failed", index},
                     {"unsent", 0},
                     {"late_sends", index == 2 ? 1 : 0},
                     {"offered_rate_rps", 2.4},
                     {"achieved_rate_rps", 2.3},
                     {"window_s", 10.0 + index},
                     {"output_tokens", 16 * (n - index)},
                     {"goodput", {{"good", std::max(0, n - index - 1)}}},
                     {"self_check", {{"client_bound", index == 3}, {"reasons", {"slow"}}}},
                     {"requests", json::array({{{"status", "ok"},
                                                {"class", "synthetic"},
                                                {"ttft_ms", 10.0 * (index + 1)},
                                                {"input_tokens", 100},
                                                {"cached_tokens", 10 * index}}})},
                     {"histograms", hist}});
  }
  return {{"status", "complete"},
          {"host", "node" + std::to_string(index % 2)},
          {"started_at", "2026-05-01T12:00:0" + std::to_string(index) + "Z"},
          {"finished_at", "2026-05-01T12:01:0" + std::to_string(index) + "Z"},
          {"target", {{"endpoint", "http://gpu:8000/v1"}, {"model", "m"}}},
          {"config", {{"profiles", {"rate"}}}},
          {"summary",
           {{"requests", 2 * n}, {"failed_requests", 2 * index}, {"completion_tokens", 100}}},
          {"perf", {{"rate", {{"arrival", "poisson"}, {"requests", n}, {"rates", rates}}}}},
          {"shard",
           {{"index", index},
            {"count", count},
            {"host", "node" + std::to_string(index % 2)},
            {"clock", {{"offset_s", 0.001 * index}, {"uncertainty_s", 0.0005}}}}}};
}

TEST(MergeTest, PercentilesAreExactlyThoseOfTheUnionOfSamples) {
  std::mt19937_64 rng(20261204);
  std::vector<std::vector<Histogram>> union_hist(2, std::vector<Histogram>(kNames.size()));
  std::vector<json> shards;
  const int sizes[] = {397, 1, 250, 1024};  // unequal on purpose
  for (int i = 0; i < 4; ++i) {
    shards.push_back(MakeShard(i, 4, sizes[i], rng, union_hist));
  }
  // Any order in, shard order out.
  std::swap(shards[0], shards[3]);
  auto merged = MergeShardResults(shards, "servebench merge a b c d --out m");
  ASSERT_TRUE(merged) << merged.error().message;
  const json& m = merged.value();
  const json& points = m["perf"]["rate"]["rates"];
  ASSERT_EQ(points.size(), 2u);
  for (std::size_t point = 0; point < 2; ++point) {
    const json& p = points[point];
    SCOPED_TRACE(point);
    // Bit-identical: the same function over the same histogram gives the same doubles.
    EXPECT_EQ(p["from_scheduled"]["ttft_ms"], perf::PercentilesJson(union_hist[point][0], 1e6));
    EXPECT_EQ(p["from_send"]["ttft_ms"], perf::PercentilesJson(union_hist[point][1], 1e6));
    EXPECT_EQ(p["from_scheduled"]["e2e_ms"], perf::PercentilesJson(union_hist[point][2], 1e6));
    EXPECT_EQ(p["from_send"]["e2e_ms"], perf::PercentilesJson(union_hist[point][3], 1e6));
    EXPECT_EQ(p["itl_ms"], perf::PercentilesJson(union_hist[point][4], 1e6));
    EXPECT_EQ(p["tpot_ms"], perf::PercentilesJson(union_hist[point][5], 1e6));
    EXPECT_EQ(p["self_check"]["schedule_lag_us"], perf::PercentilesJson(union_hist[point][6], 1e3));
    for (std::size_t k = 0; k < kNames.size(); ++k) {
      EXPECT_EQ(p["histograms"][kNames[k]], union_hist[point][k].ToJson()) << kNames[k];
    }
    EXPECT_EQ(p["from_scheduled"]["ttft_ms"]["n"], 397 + 1 + 250 + 1024);
    // Counts are sums; rates are sums of the shards' shares; the window is the longest.
    EXPECT_EQ(p["sent"], 397 + 1 + 250 + 1024);
    EXPECT_EQ(p["failed"], 0 + 1 + 2 + 3);
    EXPECT_EQ(p["ok"], 397 + 0 + 248 + 1021);
    EXPECT_EQ(p["late_sends"], 1);
    EXPECT_DOUBLE_EQ(p["rate_rps"].get<double>(), point == 0 ? 10.0 : 20.0);
    EXPECT_DOUBLE_EQ(p["window_s"].get<double>(), 13.0);
    EXPECT_EQ(p["output_tokens"], 16 * (397 + 0 + 248 + 1021));
    EXPECT_DOUBLE_EQ(p["output_tok_s"].get<double>(), 16.0 * (397 + 0 + 248 + 1021) / 13.0);
    EXPECT_EQ(p["goodput"]["good"], 396 + 0 + 247 + 1020);
    EXPECT_EQ(p["self_check"]["client_bound"], true);  // one shard was
    EXPECT_EQ(p["requests"].size(), 4u);
    EXPECT_EQ(p["requests"][3]["shard"], 3);
    // Classes and the cached share over every shard's request records.
    ASSERT_TRUE(p["classes"].is_array());
    EXPECT_EQ(p["classes"][0]["class"], "cache hit");  // shards 1-3 cached 10, 20, 30
    EXPECT_EQ(p["classes"][0]["count"], 3);
    EXPECT_EQ(p["cache"]["cached_tokens"], 60);
    EXPECT_EQ(p["cache"]["prompt_tokens"], 400);
    EXPECT_EQ(p["cache"]["ttft_uncached_ms"]["n"], 1);
  }
  EXPECT_EQ(m["summary"]["requests"], 2 * (397 + 1 + 250 + 1024));
  EXPECT_EQ(m["summary"]["failed_requests"], 2 * (0 + 1 + 2 + 3));
  EXPECT_EQ(m["shards"]["count"], 4);
  EXPECT_DOUBLE_EQ(m["shards"]["clock_spread_s"].get<double>(), 0.003);
  EXPECT_EQ(m["shards"]["shards"][0]["index"], 0);
  EXPECT_EQ(m["shards"]["shards"][3]["index"], 3);
  EXPECT_EQ(m["host"], "node0,node1");
  EXPECT_EQ(m["started_at"], "2026-05-01T12:00:00Z");
  EXPECT_EQ(m["finished_at"], "2026-05-01T12:01:03Z");
  EXPECT_EQ(m["status"], "complete");
  EXPECT_FALSE(m.contains("shard"));
  EXPECT_EQ(m["command"], "servebench merge a b c d --out m");
}

TEST(MergeTest, AFailedShardMakesTheMergedRunFailedWithItsReason) {
  std::mt19937_64 rng(1);
  std::vector<std::vector<Histogram>> u(2, std::vector<Histogram>(kNames.size()));
  std::vector<json> shards = {MakeShard(0, 2, 5, rng, u), MakeShard(1, 2, 5, rng, u)};
  shards[1]["status"] = "interrupted";
  shards[1]["stop_reason"] = "SIGINT";
  auto merged = MergeShardResults(shards, "merge");
  ASSERT_TRUE(merged) << merged.error().message;
  EXPECT_EQ(merged.value()["status"], "interrupted");
  EXPECT_EQ(merged.value()["stop_reason"], "shard 1: SIGINT");
}

// Each refusal names what is wrong.
TEST(MergeTest, ShardsThatDoNotBelongTogetherAreRefused) {
  std::mt19937_64 rng(2);
  std::vector<std::vector<Histogram>> u(2, std::vector<Histogram>(kNames.size()));
  const json a = MakeShard(0, 3, 5, rng, u);
  const json b = MakeShard(1, 3, 5, rng, u);
  const json c = MakeShard(2, 3, 5, rng, u);
  auto refused = [](std::vector<json> in, const std::string& words) {
    auto r = MergeShardResults(in, "merge");
    ASSERT_FALSE(r) << words;
    EXPECT_EQ(r.error().code, ErrorCode::kUsage);
    EXPECT_NE(r.error().message.find(words), std::string::npos) << r.error().message;
  };
  refused({}, "at least one shard");
  refused({a, b}, "split into 3 shards but 2 were given (missing: shard 2)");
  refused({a, b, b}, "shard 1 is given twice");
  json not_shard = c;
  not_shard.erase("shard");
  refused({a, b, not_shard}, "input 3 is not a shard's run");
  json other_model = c;
  other_model["target"]["model"] = "other";
  refused({a, b, other_model}, "shard 2 differs from shard 0 in its model");
  json other_rates = c;
  other_rates["perf"]["rate"]["rates"][1]["rate_rps"] = 7.0;
  refused({a, b, other_rates}, "shard 2 ran the rates");
  json decode = c;
  decode["perf"]["decode"] = json::object();
  refused({a, b, decode}, "holds the decode profile");
  json no_hist = c;
  no_hist["perf"]["rate"]["rates"][0].erase("histograms");
  refused({a, b, no_hist}, "no histograms");
  // A damaged histogram is a setup error naming the shard, the point and the histogram.
  json bad = c;
  bad["perf"]["rate"]["rates"][0]["histograms"]["itl"]["count"] = 999999;
  auto r = MergeShardResults({a, b, bad}, "merge");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kSetup);
  EXPECT_NE(r.error().message.find("shard 2, rate point 1, itl"), std::string::npos)
      << r.error().message;
}

TEST(HistogramJsonTest, RoundTripsExactlyAndRejectsInconsistentInput) {
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> d(12.0, 2.0);
  for (int digits : {1, 3, 5}) {
    Histogram h(digits);
    for (int i = 0; i < 5000; ++i) {
      h.Record(static_cast<std::int64_t>(d(rng)));
    }
    auto back = Histogram::FromJson(json::parse(h.ToJson().dump()));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back.value(), h);
    EXPECT_EQ(back->Mean(), h.Mean());
    EXPECT_EQ(back->ValueAtPercentile(99.9), h.ValueAtPercentile(99.9));
  }
  auto empty = Histogram::FromJson(Histogram().ToJson());
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  Histogram h;
  h.Record(1000);
  h.Record(5000);
  const json good = h.ToJson();
  auto broken = [&](const char* key, json value) {
    json j = good;
    j[key] = std::move(value);
    return Histogram::FromJson(j);
  };
  EXPECT_FALSE(broken("digits", 9));
  EXPECT_FALSE(broken("count", 3));
  EXPECT_FALSE(broken("min", 4000));  // not in a non-empty bucket
  EXPECT_FALSE(broken("buckets", json::array({json::array({1, -2})})));
  EXPECT_FALSE(broken("buckets", json::array({json::array({1u << 30, 2})})));
  EXPECT_FALSE(Histogram::FromJson(json::array()));
  EXPECT_FALSE(Histogram::FromJson(json{{"digits", 3}}));
}

}  // namespace
}  // namespace sb::scaleout
