// The log-linear histogram against exact answers: percentiles of random data spanning ten
// decades checked against the sorted values (sb::Percentile's convention), at every precision;
// Merge checked against recording everything into one histogram.
#include "perf/histogram.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/stats.h"

namespace sb::perf {
namespace {

// The exact percentile of the values by servebench's one convention (sb::Percentile, linear
// between the closest ranks), computed on the raw values without any histogram.
double ExactPercentile(const std::vector<std::int64_t>& sorted, double p) {
  std::vector<double> v(sorted.begin(), sorted.end());
  return sb::Percentile(v, p);
}

// Latency-like data: log-uniform from 1 ns to 100 s, plus a dense cluster (many equal-bucket
// values) and some exact small integers.
std::vector<std::int64_t> RandomValues(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> exponent(0.0, 11.0);
  std::normal_distribution<double> cluster(5e6, 2e4);
  std::uniform_int_distribution<int> small(0, 3000);
  std::vector<std::int64_t> v;
  v.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (i % 4) {
      case 0:
      case 1:
        v.push_back(std::llround(std::pow(10.0, exponent(rng))));
        break;
      case 2:
        v.push_back(std::max<std::int64_t>(0, std::llround(cluster(rng))));
        break;
      default:
        v.push_back(small(rng));
    }
  }
  return v;
}

const std::vector<double> kPercentiles = {0,  0.1, 1,  5,    10,   25,    50,     75,
                                          90, 95,  99, 99.5, 99.9, 99.99, 99.999, 100};

TEST(HistogramTest, PercentilesAreWithinTheRelativeErrorBoundOfTheExactValues) {
  for (int digits = 1; digits <= 4; ++digits) {
    const double bound = std::pow(10.0, -digits);
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      std::vector<std::int64_t> values = RandomValues(seed, 20'000);
      Histogram h(digits);
      for (std::int64_t v : values) {
        h.Record(v);
      }
      std::sort(values.begin(), values.end());
      ASSERT_EQ(h.count(), 20'000);
      for (double p : kPercentiles) {
        const double exact = ExactPercentile(values, p);
        const double got = h.ValueAtPercentile(p);
        // Never below the exact value (the bucket's highest value is reported), and above it
        // by at most the precision.
        EXPECT_GE(got, exact) << "digits " << digits << " p" << p;
        EXPECT_LE((got - exact), bound * exact)
            << "digits " << digits << " p" << p << " exact " << exact << " got " << got;
      }
    }
  }
}

TEST(HistogramTest, ThreeDigitsMeansAtMostOneTenthOfAPercent) {
  // The default precision, at many percentiles of many random sets: the worst relative error
  // seen must stay within 0.1%, and the histogram must actually be approximating (a histogram
  // that kept every value would pass the bound trivially, so check it is not exact everywhere).
  double worst = 0;
  int inexact = 0;
  for (std::uint64_t seed = 10; seed < 20; ++seed) {
    std::vector<std::int64_t> values = RandomValues(seed, 5'000);
    Histogram h;
    EXPECT_EQ(h.significant_digits(), 3);
    for (std::int64_t v : values) {
      h.Record(v);
    }
    std::sort(values.begin(), values.end());
    for (double p = 0.5; p < 100; p += 0.5) {
      const double exact = ExactPercentile(values, p);
      const double got = h.ValueAtPercentile(p);
      if (exact > 0) {
        worst = std::max(worst, (got - exact) / static_cast<double>(exact));
      }
      inexact += got != exact ? 1 : 0;
    }
  }
  EXPECT_LE(worst, 1e-3);
  EXPECT_GT(worst, 1e-4);  // values above 2048 share buckets: the error is real, and bounded
  EXPECT_GT(inexact, 0);
}

TEST(HistogramTest, SmallValuesAreExactAndMinMaxMeanAreExact) {
  Histogram h;
  std::vector<std::int64_t> values = {5, 0, 2047, 17, 1999, 3};
  long double sum = 0;
  for (std::int64_t v : values) {
    h.Record(v);
    sum += v;
  }
  EXPECT_EQ(h.Min(), 0);
  EXPECT_EQ(h.Max(), 2047);
  EXPECT_DOUBLE_EQ(h.Mean(), static_cast<double>(sum / values.size()));
  std::sort(values.begin(), values.end());
  for (double p : kPercentiles) {
    EXPECT_DOUBLE_EQ(h.ValueAtPercentile(p), ExactPercentile(values, p)) << p;  // below 2·10^3
  }
  // Large values: min, max and mean stay exact although buckets are coarse there.
  Histogram big;
  big.Record(123'456'789'123);
  big.Record(987'654'321'987);
  EXPECT_EQ(big.Min(), 123'456'789'123);
  EXPECT_EQ(big.Max(), 987'654'321'987);
  EXPECT_DOUBLE_EQ(big.Mean(), (123'456'789'123.0 + 987'654'321'987.0) / 2);
  EXPECT_EQ(big.ValueAtPercentile(100), 987'654'321'987);
  EXPECT_EQ(big.ValueAtPercentile(0), 123'456'789'123);
}

TEST(HistogramTest, BucketsCoverTheWholeInt64RangeWithTheirPrecision) {
  Histogram h;
  for (std::int64_t v :
       {std::int64_t{0}, std::int64_t{1}, std::int64_t{2047}, std::int64_t{2048},
        std::int64_t{4095}, std::int64_t{1} << 40, std::numeric_limits<std::int64_t>::max()}) {
    const std::int64_t lo = h.LowestEquivalent(v);
    const std::int64_t hi = h.HighestEquivalent(v);
    EXPECT_LE(lo, v);
    EXPECT_GE(hi, v);
    EXPECT_LE(static_cast<double>(hi - lo), 1e-3 * static_cast<double>(lo) + 0.5) << v;
  }
  EXPECT_EQ(h.LowestEquivalent(2049), 2048);  // width 2 from 2048
  EXPECT_EQ(h.HighestEquivalent(2048), 2049);
  h.Record(std::numeric_limits<std::int64_t>::max());
  h.Record(-5);  // negative: recorded as 0
  EXPECT_EQ(h.Min(), 0);
  EXPECT_EQ(h.ValueAtPercentile(100), std::numeric_limits<std::int64_t>::max());
}

// Issue 24 item 30: the histogram used nearest rank (p50 of 1..1000 was 500) where every other
// path interpolates; now it is the one convention, numpy's.
TEST(HistogramTest, LinearConventionAtExactBoundaries) {
  Histogram h;
  for (int v = 1; v <= 1000; ++v) {
    h.Record(v);
  }
  EXPECT_DOUBLE_EQ(h.ValueAtPercentile(50), 500.5);  // numpy.percentile(range(1, 1001), 50)
  EXPECT_NEAR(h.ValueAtPercentile(90), 900.1, 1e-9);
  EXPECT_NEAR(h.ValueAtPercentile(99), 990.01, 1e-9);
  EXPECT_NEAR(h.ValueAtPercentile(99.9), 999.001, 1e-9);  // 99.9 is inexact in binary
  EXPECT_NEAR(h.ValueAtPercentile(0.1), 1.999, 1e-9);
  EXPECT_DOUBLE_EQ(h.ValueAtPercentile(-3), 1);
  EXPECT_DOUBLE_EQ(h.ValueAtPercentile(250), 1000);
  Histogram one;
  one.Record(42);
  EXPECT_DOUBLE_EQ(one.ValueAtPercentile(99), 42);
}

TEST(HistogramTest, RecordWithCountEqualsRepeatedRecords) {
  Histogram a, b;
  a.Record(123'456, 7);
  a.Record(9, 0);  // nothing
  for (int i = 0; i < 7; ++i) {
    b.Record(123'456);
  }
  EXPECT_TRUE(a == b);
  EXPECT_EQ(a.count(), 7);
}

TEST(HistogramTest, MergeEqualsRecordingEverything) {
  std::vector<std::int64_t> values = RandomValues(42, 30'000);
  Histogram all;
  std::vector<Histogram> parts(3);
  for (std::size_t i = 0; i < values.size(); ++i) {
    all.Record(values[i]);
    // Uneven split, one part holding the largest values only: exercises growing on merge.
    parts[values[i] > 1'000'000'000 ? 2 : i % 2].Record(values[i]);
  }
  Histogram merged;
  for (const auto& p : parts) {
    merged.Merge(p);
  }
  merged.Merge(Histogram());  // an empty one changes nothing
  EXPECT_TRUE(merged == all);
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.Min(), all.Min());
  EXPECT_EQ(merged.Max(), all.Max());
  EXPECT_DOUBLE_EQ(merged.Mean(), all.Mean());
  for (double p : kPercentiles) {
    EXPECT_EQ(merged.ValueAtPercentile(p), all.ValueAtPercentile(p)) << p;
  }
  // Into a histogram that already holds values, in the other order: the same.
  Histogram other_order = parts[2];
  other_order.Merge(parts[1]);
  other_order.Merge(parts[0]);
  EXPECT_TRUE(other_order == all);
  // And the comparison itself can fail.
  other_order.Record(1);
  EXPECT_FALSE(other_order == all);
}

TEST(HistogramTest, MergeAcrossPrecisionsKeepsTheCoarserBound) {
  std::vector<std::int64_t> values = RandomValues(7, 10'000);
  Histogram fine(3), coarse(2);
  for (std::size_t i = 0; i < values.size(); ++i) {
    (i % 2 ? fine : coarse).Record(values[i]);
  }
  coarse.Merge(fine);
  ASSERT_EQ(coarse.count(), 10'000);
  std::sort(values.begin(), values.end());
  for (double p : kPercentiles) {
    const double exact = ExactPercentile(values, p);
    const double got = coarse.ValueAtPercentile(p);
    // Each fine value moved up by at most 0.1%, then by at most 1/128 (two digits: 128
    // sub-buckets per half power of two): below 1% in all.
    EXPECT_GE(got, exact) << p;
    EXPECT_LE((got - exact), 1e-2 * exact) << p;
  }
}

TEST(HistogramTest, EmptyHistogramAnswersZero) {
  Histogram h;
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.count(), 0);
  EXPECT_EQ(h.Min(), 0);
  EXPECT_EQ(h.Max(), 0);
  EXPECT_EQ(h.Mean(), 0.0);
  EXPECT_EQ(h.ValueAtPercentile(50), 0);
}

}  // namespace
}  // namespace sb::perf
