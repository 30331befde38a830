// results.json's frontier (issue 23 item 1) against the simulator: one point per concurrency
// level and per rate, tok/s per user against total tok/s, per GPU with --gpus.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perf/profiles.h"
#include "perf/profiles_fixture.h"

namespace sb::perf {
namespace {

using fixture::Fixture;
using fixture::Quiet;
using nlohmann::json;

TEST(FrontierSimTest, AConcurrencySweepHasAPointPerLevelPerGpu) {
  Fixture f(Quiet());
  Session s = f.MakeSession();
  ProfileOptions o;
  o.tokens = 32;
  o.args.SetInts("--levels", {1, 2, 4});
  o.warmup = 0;
  o.gpus = 2;
  json c = s.Concurrency(o);
  EXPECT_EQ(c["gpus"], 2);
  const json& fr = c["frontier"];
  ASSERT_EQ(fr.size(), 3u) << c.dump();
  for (std::size_t i = 0; i < 3; ++i) {
    const json& l = c["levels"][i];
    const json& p = fr[i];
    EXPECT_EQ(p["level"], l["concurrency"]);
    EXPECT_EQ(p["label"], "c" + std::to_string(l["concurrency"].get<int>()));
    EXPECT_DOUBLE_EQ(p["tok_s_per_user"].get<double>(),
                     l["per_stream_decode_tok_s"]["median"].get<double>());
    EXPECT_DOUBLE_EQ(p["total_tok_s"].get<double>(), l["throughput_tok_s"].get<double>());
    EXPECT_DOUBLE_EQ(p["total_tok_s_per_gpu"].get<double>(), p["total_tok_s"].get<double>() / 2);
    EXPECT_NEAR(p["tok_s_per_user_tpot"].get<double>(), 1000.0 / l["tpot_ms"]["p50"].get<double>(),
                1e-9);
  }
  // The simulator slows each stream by half a step per extra stream: per-user speed falls and
  // total rises with the level, so every level is on the Pareto front.
  EXPECT_GT(fr[0]["tok_s_per_user"].get<double>(), fr[2]["tok_s_per_user"].get<double>());
  EXPECT_LT(fr[0]["total_tok_s"].get<double>(), fr[2]["total_tok_s"].get<double>());
  for (const json& p : fr) {
    EXPECT_TRUE(p["pareto"].get<bool>()) << p.dump();
  }
}

TEST(FrontierSimTest, ARateSweepHasAPointPerRateWithoutGpusNoPerGpuFigure) {
  Fixture f(Quiet());
  Session s = f.MakeSession();
  ProfileOptions o;
  o.warmup = 0;
  o.rate.rates = {20, 40};
  o.rate.requests = 20;
  o.rate.tokens = 16;
  o.rate.seed = 3;
  json r = s.Rate(o);
  EXPECT_TRUE(r["gpus"].is_null());
  ASSERT_EQ(r["frontier"].size(), 2u) << r["frontier"].dump();
  EXPECT_EQ(r["frontier"][1]["label"], "40 req/s");
  EXPECT_TRUE(r["frontier"][1]["total_tok_s_per_gpu"].is_null());
  EXPECT_DOUBLE_EQ(r["frontier"][1]["total_tok_s"].get<double>(),
                   r["rates"][1]["output_tok_s"].get<double>());
  // Per user: about one token per 2 ms step, slower under load, never faster.
  EXPECT_GT(r["frontier"][0]["tok_s_per_user"].get<double>(), 100.0);
  EXPECT_LT(r["frontier"][0]["tok_s_per_user"].get<double>(), 600.0);
}

}  // namespace
}  // namespace sb::perf
