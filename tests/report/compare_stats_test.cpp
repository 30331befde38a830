#include "report/compare_stats.h"

#include <vector>

#include <gtest/gtest.h>

namespace sb::report::stats {
namespace {

TEST(CompareStatsTest, QuantileMatchesResultsStats) {
  EXPECT_DOUBLE_EQ(Quantile({3, 1, 2}, 0.5), 2);
  EXPECT_DOUBLE_EQ(Quantile({4, 1, 3, 2}, 0.5), 2.5);  // the mean of the two middle values
  // The one convention (docs/metrics.md): linear between the closest ranks, as numpy; nearest
  // rank gave 9, 10, 1.
  std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_NEAR(Quantile(v, 0.9), 9.1, 1e-9);
  EXPECT_NEAR(Quantile(v, 0.99), 9.91, 1e-9);
  EXPECT_NEAR(Quantile(v, 0.1), 1.9, 1e-9);
}

TEST(CompareStatsTest, BootstrapOfConstantSamplesIsThePoint) {
  auto r = BootstrapRatio({200, 200, 200}, {100, 100}, 0.5, 1);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->ratio, 2);
  EXPECT_DOUBLE_EQ(r->lo, 2);
  EXPECT_DOUBLE_EQ(r->hi, 2);
  EXPECT_EQ(r->resamples, kResamples);
}

TEST(CompareStatsTest, BootstrapIntervalStaysInsideTheSamplesRange) {
  std::vector<double> a = {10, 11, 12, 13, 14, 15, 16};
  std::vector<double> b = {5, 6, 7};
  auto r = BootstrapRatio(a, b, 0.5, 42);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->ratio, 13.0 / 6.0);
  EXPECT_GE(r->lo, 10.0 / 7.0);
  EXPECT_LE(r->hi, 16.0 / 5.0);
  EXPECT_LT(r->lo, r->ratio);
  EXPECT_GT(r->hi, r->ratio);
}

TEST(CompareStatsTest, BootstrapIsDeterministicPerSeed) {
  std::vector<double> a = {10, 11, 13, 17, 19, 23};
  std::vector<double> b = {9, 12, 14, 15, 18};
  auto x = BootstrapRatio(a, b, 0.5, 7);
  auto y = BootstrapRatio(a, b, 0.5, 7);
  ASSERT_TRUE(x && y);
  EXPECT_EQ(x->lo, y->lo);
  EXPECT_EQ(x->hi, y->hi);
  EXPECT_EQ(SeedFor("decode_tok_s"), SeedFor("decode_tok_s"));
  EXPECT_NE(SeedFor("decode_tok_s"), SeedFor("ttft_ms.short"));
}

TEST(CompareStatsTest, BootstrapNeedsTwoValuesAndAPositiveDenominator) {
  EXPECT_FALSE(BootstrapRatio({1}, {1, 2}, 0.5, 1).has_value());
  EXPECT_FALSE(BootstrapRatio({1, 2}, {3}, 0.5, 1).has_value());
  EXPECT_FALSE(BootstrapRatio({1, 2}, {0, 0}, 0.5, 1).has_value());
}

TEST(CompareStatsTest, McNemarExact) {
  EXPECT_DOUBLE_EQ(McNemarExactP(0, 0), 1.0);
  // b = 0, c = 5: 2 · (1/2)^5.
  EXPECT_NEAR(McNemarExactP(0, 5), 2.0 / 32.0, 1e-12);
  EXPECT_NEAR(McNemarExactP(5, 0), 2.0 / 32.0, 1e-12);
  // b = 1, c = 9: 2 · (1 + 10) / 1024.
  EXPECT_NEAR(McNemarExactP(1, 9), 22.0 / 1024.0, 1e-12);
  EXPECT_DOUBLE_EQ(McNemarExactP(3, 3), 1.0);
  // Large counts do not overflow.
  double p = McNemarExactP(400, 600);
  EXPECT_GT(p, 0);
  EXPECT_LT(p, 1e-9);
}

}  // namespace
}  // namespace sb::report::stats
