// The prefix-cache profile against the simulator's prefix cache, whose truth is known: a cold
// prompt pays ttft_ms + prefill for every prompt token, a warm one only for the tokens past the
// cached blocks, and usage says how many were cached.
#include <memory>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "core/clock.h"
#include "perf/profiles.h"
#include "sim/sim_server.h"

namespace sb::perf {
namespace {

using nlohmann::json;

struct Outcome {
  json result;
  std::vector<Sample> samples;
  std::vector<std::string> warnings;
};

Outcome RunPrefixCache(int cache_tokens, std::string sizes, std::int64_t max_model_len = 0) {
  sim::SimOptions so;
  so.ttft_ms = 2;
  so.itl_ms = 0.2;
  so.jitter_ms = 0;
  so.prefill_us_per_token = 100;  // 2,000 tokens: 200 ms cold
  so.prefix_cache_tokens = cache_tokens;
  auto sim = std::move(sim::SimServer::Start(so).value());
  client::ClientOptions co;
  co.endpoint = sim->base_url();
  client::Client client(co);
  Outcome out;
  Session s(
      client, {"sim-model", client::ServerKind::kSim, max_model_len},
      [&out](Sample smp) { out.samples.push_back(std::move(smp)); }, nullptr, std::stop_token(),
      ToNanos(std::chrono::steady_clock::now()));
  ProfileOptions po;
  po.warmup = 0;
  po.runs = 2;
  po.args.Set("--prefix-sizes", std::move(sizes));
  po.args.Set("--prefix-hits", "2");
  out.result = s.Run("prefix-cache", po);
  out.warnings = s.warnings();
  return out;
}

TEST(PrefixCacheProfile, AWarmPrefixSkipsItsPrefillAndTheServerSaysHowMuchWasCached) {
  const Outcome r = RunPrefixCache(1 << 20, "500,2000");
  const json& rows = r.result["prefixes"];
  ASSERT_EQ(rows.size(), 2u) << r.result.dump();
  EXPECT_EQ(r.result["hits"], 2);
  for (const json& row : rows) {
    const int size = row["prefix_tokens"];
    EXPECT_EQ(row["errors"], 0) << row.dump();
    EXPECT_EQ(row["prefix_counted"], size) << "the prefix fitted to the server's tokenizer";
    // The whole cold prompt: the prefix, the question and the template's 4 tokens per message.
    EXPECT_GT(row["prompt_tokens"].get<double>(), size + 4) << row.dump();
    EXPECT_LT(row["prompt_tokens"].get<double>(), size + 40) << row.dump();
    EXPECT_EQ(row["cold_ttft_ms"]["n"], 2);  // --runs 2: a new prefix each time
    EXPECT_EQ(row["warm_ttft_ms"]["n"], 4);  // 2 hits per prefix
    EXPECT_EQ(row["runs"].size(), 6u);
    // Cold: the whole prompt's prefill (the truth: 2 ms + 0.1 ms per prompt token).
    const double cold_truth = 2 + 0.1 * size;
    EXPECT_GE(row["cold_ttft_ms"]["median"].get<double>(), cold_truth * 0.95) << row.dump();
    EXPECT_LE(row["cold_ttft_ms"]["median"].get<double>(), cold_truth + 40) << row.dump();
    // Warm: the prefix's full 16-token blocks came from the cache, said by usage.
    const double cached = row["cached_tokens"]["median"];
    EXPECT_GE(cached, size - 16) << row.dump();
    EXPECT_LE(cached, size + 32) << row.dump();
    EXPECT_GT(row["speedup"].get<double>(), size >= 2000 ? 5.0 : 2.0) << row.dump();
  }
  // Every request is a sample, the cold and warm ones named.
  ASSERT_EQ(r.samples.size(), 12u);
  EXPECT_EQ(r.samples[0].record.profile, "prefix_cache");
  EXPECT_EQ(r.samples[0].record.label, "500 run 1 cold");
  EXPECT_EQ(r.samples[1].record.label, "500 run 1 warm 1");
  EXPECT_TRUE(r.warnings.empty());
}

TEST(PrefixCacheProfile, WithoutACacheWarmIsColdAndNothingIsClaimed) {
  const Outcome r = RunPrefixCache(0, "1000");
  const json& row = r.result["prefixes"][0];
  EXPECT_TRUE(row["cached_tokens"].is_null()) << row.dump();  // the server said nothing
  EXPECT_TRUE(r.warnings.empty());  // nothing said is not "0 cached": no warning
  const double speedup = row["speedup"];
  EXPECT_GT(speedup, 0.7) << row.dump();
  EXPECT_LT(speedup, 1.4) << row.dump();
}

TEST(PrefixCacheProfile, APrefixTheContextCannotHoldIsSkippedWithTheReason) {
  const Outcome r = RunPrefixCache(1 << 20, "500,4000", /*max_model_len=*/2048);
  const json& rows = r.result["prefixes"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].contains("skipped"));
  EXPECT_EQ(rows[1]["skipped"], "over the server's max model length (2048 tokens)");
  EXPECT_TRUE(rows[1]["runs"].empty());
  EXPECT_EQ(r.samples.size(), 6u);
}

}  // namespace
}  // namespace sb::perf
