// Issue 24 item 30: one percentile convention. The same samples give the same p50/p90/p99 through
// every path that reports one: core's Summarize and Percentile (the `stats` objects), the rate
// profile's histogram and its results.json percentile object, and compare's statistic.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/stats.h"
#include "perf/histogram.h"
#include "report/compare_stats.h"

namespace sb {
namespace {

TEST(PercentileConventionTest, EveryPathGivesTheSameP50P90P99) {
  // Small integers, so the histogram (exact below 2,000 at 3 digits) adds no bucket error.
  const std::vector<std::int64_t> raw = {12, 7, 30, 18, 25, 9, 41, 15, 22, 11};
  const std::vector<double> values(raw.begin(), raw.end());
  perf::Histogram h;
  for (std::int64_t v : raw) {
    h.Record(v);
  }
  const nlohmann::json pct = perf::PercentilesJson(h, 1.0);
  const Summary s = Summarize(values);

  // numpy.percentile([7, 9, 11, 12, 15, 18, 22, 25, 30, 41], [50, 90, 99]): 16.5, 31.1, 40.01
  // (nearest rank would say 15, 30, 41).
  struct Case {
    double q;
    double summary;
    double expected;
    const char* key;
  };

  for (const Case& c : {Case{50, s.p50, 16.5, "p50"}, Case{90, s.p90, 31.1, "p90"},
                        Case{99, s.p99, 40.01, "p99"}}) {
    SCOPED_TRACE(c.key);
    EXPECT_NEAR(c.summary, c.expected, 1e-9);
    EXPECT_NEAR(Percentile(values, c.q), c.expected, 1e-9);
    EXPECT_NEAR(h.ValueAtPercentile(c.q), c.expected, 1e-9);
    EXPECT_NEAR(pct[c.key].get<double>(), c.expected, 1e-9);
    EXPECT_NEAR(report::stats::Quantile(values, c.q / 100), c.expected, 1e-9);
  }
  EXPECT_DOUBLE_EQ(s.median, 16.5);  // an even count: the mean of the two middle values
}

TEST(PercentileConventionTest, RankRule) {
  PercentileRank r = RankOfPercentile(10, 90);
  EXPECT_EQ(r.lo, 8u);
  EXPECT_EQ(r.hi, 9u);
  EXPECT_NEAR(r.frac, 0.1, 1e-12);
  r = RankOfPercentile(1001, 99.9);  // 999.0000000000001 in binary: rank 999 exactly
  EXPECT_EQ(r.lo, 999u);
  EXPECT_EQ(r.frac, 0.0);
  r = RankOfPercentile(1, 50);
  EXPECT_EQ(r.lo, 0u);
  EXPECT_EQ(r.hi, 0u);
  r = RankOfPercentile(5, 100);
  EXPECT_EQ(r.lo, 4u);
  EXPECT_EQ(r.hi, 4u);
}

}  // namespace
}  // namespace sb
