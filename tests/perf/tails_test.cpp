// Tails at every level (issue 23 item 2): each concurrency level and max-tokens length reports
// p50/p90/p99 of TTFT, ITL, TPOT and E2E, and the figures agree with the simulator's known step
// times (TTFT 20 ms, ITL 2 ms × (1 + 0.5 × (streams − 1))).
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perf/profiles.h"
#include "perf/profiles_fixture.h"

namespace sb::perf {
namespace {

using fixture::Fixture;
using fixture::Quiet;
using nlohmann::json;

void ExpectOrderedTail(const json& pct, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(pct.contains("p50")) << pct.dump();
  ASSERT_TRUE(pct.contains("p90"));
  ASSERT_TRUE(pct.contains("p99"));
  EXPECT_GT(pct["n"].get<long long>(), 0);
  EXPECT_LE(pct["p50"].get<double>(), pct["p90"].get<double>());
  EXPECT_LE(pct["p90"].get<double>(), pct["p99"].get<double>());
}

TEST(TailsTest, EveryConcurrencyLevelHasTailsOfTtftItlTpotAndE2e) {
  Fixture f(Quiet());
  Session s = f.MakeSession();
  ProfileOptions o;
  o.tokens = 32;
  o.args.SetInts("--levels", {1, 4});
  o.warmup = 0;
  json c = s.Concurrency(o);
  ASSERT_EQ(c["levels"].size(), 2u);
  for (const json& l : c["levels"]) {
    const int n = l["concurrency"].get<int>();
    for (const char* key : {"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"}) {
      ExpectOrderedTail(l[key], std::string(key) + " at c" + std::to_string(n));
    }
    // One TPOT and one E2E per stream; one ITL per token after the first.
    EXPECT_EQ(l["tpot_ms"]["n"], n);
    EXPECT_EQ(l["e2e_ms"]["n"], n);
    EXPECT_EQ(l["itl_ms"]["n"], n * 31);
    // The simulator's step: 2 ms at one stream, 2 × (1 + 0.5 × 3) = 5 ms at four.
    const double step = 2.0 * (1 + 0.5 * (n - 1));
    EXPECT_NEAR(l["tpot_ms"]["p50"].get<double>(), step, step * 0.5);
    EXPECT_NEAR(l["itl_ms"]["p50"].get<double>(), step, step * 0.5);
    // E2E = TTFT + 31 steps: far more than TTFT alone.
    EXPECT_GT(l["e2e_ms"]["p50"].get<double>(), l["ttft_ms"]["p50"].get<double>() + 20 * step);
  }
  // More streams, slower steps: the four-stream level's TPOT tail is above the single stream's.
  EXPECT_GT(c["levels"][1]["tpot_ms"]["p50"].get<double>(),
            c["levels"][0]["tpot_ms"]["p99"].get<double>());
}

TEST(TailsTest, EveryMaxTokensLengthHasTailsOfTtftItlTpotAndE2e) {
  Fixture f(Quiet());
  Session s = f.MakeSession();
  ProfileOptions o;
  o.args.SetInts("--lengths", {16, 64});
  o.args.SetInts("--length-runs", {3});
  o.warmup = 0;
  json m = s.MaxTokens(o);
  ASSERT_EQ(m["lengths"].size(), 2u);
  for (const json& l : m["lengths"]) {
    for (const char* key : {"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"}) {
      ExpectOrderedTail(l[key], key);
    }
    EXPECT_EQ(l["e2e_ms"]["n"], 3);
    EXPECT_NEAR(l["ttft_ms"]["p50"].get<double>(), 20.0, 15.0);
    EXPECT_NEAR(l["tpot_ms"]["p50"].get<double>(), 2.0, 1.0);
  }
  // 64 tokens take longer end to end than 16: the tails are per length, not pooled.
  EXPECT_GT(m["lengths"][1]["e2e_ms"]["p50"].get<double>(),
            m["lengths"][0]["e2e_ms"]["p99"].get<double>());
}

}  // namespace
}  // namespace sb::perf
