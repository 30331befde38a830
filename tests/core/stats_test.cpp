#include "core/stats.h"

#include <vector>

#include <gtest/gtest.h>

namespace sb {
namespace {

TEST(StatsTest, PercentileInterpolatesLinearlyLikeNumpy) {
  std::vector<double> v = {15, 20, 35, 40, 50};
  // numpy.percentile([15,20,35,40,50], q) with linear interpolation.
  EXPECT_DOUBLE_EQ(Percentile(v, 0), 15);
  EXPECT_DOUBLE_EQ(Percentile(v, 40), 29);
  EXPECT_DOUBLE_EQ(Percentile(v, 50), 35);
  EXPECT_DOUBLE_EQ(Percentile(v, 90), 46);
  EXPECT_DOUBLE_EQ(Percentile(v, 100), 50);
}

TEST(StatsTest, PercentileDoesNotNeedSortedInput) {
  std::vector<double> v = {50, 15, 40, 20, 35};
  EXPECT_DOUBLE_EQ(Percentile(v, 40), 29);
}

TEST(StatsTest, MedianOfEvenCountIsMidpoint) {
  std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(Median(v), 2.5);
}

TEST(StatsTest, SummarizeReportsEveryField) {
  std::vector<double> v = {107.3, 98.0, 108.3};
  Summary s = Summarize(v);
  EXPECT_EQ(s.n, 3u);
  EXPECT_DOUBLE_EQ(s.min, 98.0);
  EXPECT_DOUBLE_EQ(s.max, 108.3);
  EXPECT_DOUBLE_EQ(s.median, 107.3);
  EXPECT_DOUBLE_EQ(s.p50, 107.3);
  EXPECT_NEAR(s.mean, (107.3 + 98.0 + 108.3) / 3, 1e-12);
  EXPECT_NEAR(s.stddev, 5.680082, 1e-5);  // sample standard deviation (n - 1)
  EXPECT_NEAR(s.p90, 108.1, 1e-9);
}

TEST(StatsTest, SummarizeOfNothingIsEmpty) {
  std::vector<double> v;
  Summary s = Summarize(v);
  EXPECT_EQ(s.n, 0u);
  EXPECT_EQ(s.median, 0.0);
}

TEST(StatsTest, PassAtKMatchesClosedForm) {
  // n=10, c=3, k=1 -> c/n.
  EXPECT_NEAR(PassAtK(10, 3, 1), 0.3, 1e-12);
  // n=5, c=2, k=2 -> 1 - C(3,2)/C(5,2) = 1 - 3/10.
  EXPECT_NEAR(PassAtK(5, 2, 2), 0.7, 1e-12);
  EXPECT_DOUBLE_EQ(PassAtK(5, 0, 3), 0.0);
  EXPECT_DOUBLE_EQ(PassAtK(5, 4, 2), 1.0);
}

}  // namespace
}  // namespace sb
