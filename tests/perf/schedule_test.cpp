// Arrival schedules: exact constant spacing without drift, Poisson and gamma gaps with the mean
// and spread theory gives (bounds of five standard errors at the sample sizes used, so a wrong
// distribution fails and a right one passes with overwhelming probability for any seed --
// and the seeds here are fixed anyway), and determinism per seed.
#include "perf/schedule.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace sb::perf {
namespace {

std::vector<double> GapsSeconds(const std::vector<std::int64_t>& offsets) {
  std::vector<double> gaps;
  gaps.reserve(offsets.size());
  for (std::size_t i = 1; i < offsets.size(); ++i) {
    gaps.push_back(static_cast<double>(offsets[i] - offsets[i - 1]) / 1e9);
  }
  return gaps;
}

struct Moments {
  double mean = 0, variance = 0;
};

Moments MomentsOf(const std::vector<double>& x) {
  Moments m;
  for (double v : x) {
    m.mean += v;
  }
  m.mean /= static_cast<double>(x.size());
  for (double v : x) {
    m.variance += (v - m.mean) * (v - m.mean);
  }
  m.variance /= static_cast<double>(x.size() - 1);
  return m;
}

TEST(ScheduleTest, ConstantArrivalsAreExactlySpacedWithoutDrift) {
  auto a = ArrivalOffsets({Arrival::kConstant, 1000.0, 1.0, 1}, 10'000);
  ASSERT_EQ(a.size(), 10'000u);
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i], static_cast<std::int64_t>(i) * 1'000'000) << i;
  }
  // A rate whose period is not a whole number of nanoseconds: each offset is the rounding of
  // its own ideal time, so the error never accumulates (summing rounded gaps would drift by
  // 1/3 ns per request, 33 µs after 100,000 requests).
  auto b = ArrivalOffsets({Arrival::kConstant, 3.0, 1.0, 1}, 100'000);
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double ideal = static_cast<double>(i) * 1e9 / 3.0;
    ASSERT_LE(std::abs(static_cast<double>(b[i]) - ideal), 0.5) << i;
  }
  EXPECT_EQ(b[99'999], 33'333'000'000'000);  // 99,999 / 3 s, to the nanosecond
  EXPECT_DOUBLE_EQ(*OfferedRate(b), 3.0);
}

TEST(ScheduleTest, PoissonGapsHaveTheExponentialMeanAndVariance) {
  const double rate = 50.0;
  const std::size_t n = 200'001;
  auto offsets = ArrivalOffsets({Arrival::kPoisson, rate, 1.0, 7}, n);
  ASSERT_EQ(offsets.size(), n);
  EXPECT_EQ(offsets[0], 0);
  std::vector<double> gaps = GapsSeconds(offsets);
  const double count = static_cast<double>(gaps.size());
  Moments m = MomentsOf(gaps);
  // Exponential(rate): mean 1/rate, variance 1/rate^2, fourth central moment 9/rate^4.
  const double mean = 1.0 / rate;
  const double var = mean * mean;
  EXPECT_NEAR(m.mean, mean, 5 * mean / std::sqrt(count));
  EXPECT_NEAR(m.variance, var, 5 * var * std::sqrt(8.0 / count));
  // The shape, not just two moments: P(gap > mean) = 1/e for an exponential (a uniform or a
  // normal with the same mean and variance gives about 0.5 and 0.5).
  double above = 0;
  for (double g : gaps) {
    above += g > mean ? 1 : 0;
  }
  const double p = std::exp(-1.0);
  EXPECT_NEAR(above / count, p, 5 * std::sqrt(p * (1 - p) / count));
  // Counts per second of a Poisson process are Poisson: variance / mean = 1 (0 for constant
  // arrivals). 4,000 windows: standard error of the ratio about sqrt(2/4000) = 0.022.
  std::vector<double> per_window(static_cast<std::size_t>(offsets.back() / 1'000'000'000), 0.0);
  for (std::int64_t o : offsets) {
    const auto w = static_cast<std::size_t>(o / 1'000'000'000);
    if (w < per_window.size()) {
      per_window[w] += 1;
    }
  }
  Moments c = MomentsOf(per_window);
  EXPECT_NEAR(c.mean, rate, 5 * std::sqrt(rate / static_cast<double>(per_window.size())));
  EXPECT_NEAR(c.variance / c.mean, 1.0,
              5 * std::sqrt(2.0 / static_cast<double>(per_window.size())));
}

TEST(ScheduleTest, GammaGapsHaveCoefficientOfVariationOneOverSqrtBurstiness) {
  const double rate = 20.0;
  const std::size_t n = 200'001;
  for (double b : {0.25, 0.5, 2.0, 4.0}) {
    auto offsets = ArrivalOffsets({Arrival::kGamma, rate, b, 11}, n);
    std::vector<double> gaps = GapsSeconds(offsets);
    const double count = static_cast<double>(gaps.size());
    Moments m = MomentsOf(gaps);
    const double mean = 1.0 / rate;
    const double cv = std::sqrt(m.variance) / m.mean;
    // Standard errors: of the mean, sd/sqrt(count) = mean/sqrt(b × count); of the CV (delta
    // method, gamma excess kurtosis 6/b), cv/2 × sqrt((2 + 6/b)/count).
    EXPECT_NEAR(m.mean, mean, 5 * mean / std::sqrt(b * count)) << b;
    const double expected_cv = 1.0 / std::sqrt(b);
    EXPECT_NEAR(cv, expected_cv, 5 * expected_cv / 2 * std::sqrt((2 + 6 / b) / count)) << b;
  }
  // Burstiness 1 is Poisson: the same draws, so the same schedule.
  EXPECT_EQ(ArrivalOffsets({Arrival::kGamma, rate, 1.0, 5}, 1000),
            ArrivalOffsets({Arrival::kPoisson, rate, 1.0, 5}, 1000));
}

TEST(ScheduleTest, SchedulesAreDeterministicPerSeed) {
  const ArrivalProcess p{Arrival::kGamma, 10.0, 0.5, 3};
  auto a = ArrivalOffsets(p, 5000);
  EXPECT_EQ(a, ArrivalOffsets(p, 5000));
  ArrivalProcess other = p;
  other.seed = 4;
  EXPECT_NE(a, ArrivalOffsets(other, 5000));
  // A shorter schedule is a prefix of a longer one; cutting by time gives the same arrivals.
  auto head = ArrivalOffsets(p, 100);
  EXPECT_TRUE(std::equal(head.begin(), head.end(), a.begin()));
  auto within = ArrivalOffsetsWithin(p, std::chrono::seconds(60));
  ASSERT_FALSE(within.empty());
  EXPECT_LT(within.back(), 60'000'000'000);
  EXPECT_TRUE(std::equal(within.begin(), within.end(), a.begin()));
  EXPECT_GE(a[within.size()], 60'000'000'000);
  // Same seed, twice the rate: the same pattern in half the time (common random numbers, so
  // sweep points differ by rate only).
  ArrivalProcess faster = p;
  faster.rate_rps = 20.0;
  auto f = ArrivalOffsets(faster, 5000);
  for (std::size_t i = 0; i < f.size(); ++i) {
    ASSERT_NEAR(static_cast<double>(f[i]), static_cast<double>(a[i]) / 2, 1.0) << i;
  }
}

TEST(ScheduleTest, TheSchedulesOfSeedOneArePinned) {
  // Our own generator and samplers: the same offsets on every machine and standard library.
  // A change here changes every published schedule; it must be deliberate.
  EXPECT_EQ(ArrivalOffsets({Arrival::kPoisson, 1.0, 1.0, 1}, 4),
            (std::vector<std::int64_t>{0, 352'509'584, 1'005'596'750, 1'560'538'503}));
  EXPECT_EQ(ArrivalOffsets({Arrival::kGamma, 1.0, 0.5, 1}, 4),
            (std::vector<std::int64_t>{0, 370'315'013, 4'581'022'658, 8'496'757'481}));
}

TEST(ScheduleTest, DurationModeStopsAtTheDuration) {
  auto c = ArrivalOffsetsWithin({Arrival::kConstant, 10.0, 1.0, 1}, std::chrono::seconds(2));
  EXPECT_EQ(c.size(), 20u);  // 0, 0.1, ..., 1.9 s
  EXPECT_TRUE(ArrivalOffsetsWithin({Arrival::kConstant, 10.0, 1.0, 1}, std::chrono::nanoseconds(0))
                  .empty());
  EXPECT_TRUE(ArrivalOffsets({Arrival::kPoisson, 10.0, 1.0, 1}, 0).empty());
}

TEST(ScheduleTest, ValidationNamesTheProblem) {
  EXPECT_TRUE(ValidateArrivals({Arrival::kPoisson, 5.0, 1.0, 1}));
  EXPECT_TRUE(ValidateArrivals({Arrival::kGamma, 5.0, 0.3, 1}));
  auto zero = ValidateArrivals({Arrival::kPoisson, 0.0, 1.0, 1});
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code, ErrorCode::kUsage);
  EXPECT_NE(zero.error().message.find("rate"), std::string::npos);
  EXPECT_FALSE(ValidateArrivals({Arrival::kPoisson, std::nan(""), 1.0, 1}));
  EXPECT_FALSE(ValidateArrivals({Arrival::kPoisson, INFINITY, 1.0, 1}));
  EXPECT_FALSE(ValidateArrivals({Arrival::kGamma, 5.0, 0.0, 1}));
  auto b = ValidateArrivals({Arrival::kPoisson, 5.0, 2.0, 1});
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("gamma"), std::string::npos);
  EXPECT_EQ(ParseArrival("gamma"), Arrival::kGamma);
  EXPECT_EQ(ParseArrival("constant"), Arrival::kConstant);
  EXPECT_EQ(ParseArrival("poisson"), Arrival::kPoisson);
  EXPECT_FALSE(ParseArrival("Poisson"));
  EXPECT_EQ(ArrivalName(Arrival::kGamma), "gamma");
  EXPECT_FALSE(OfferedRate({5}));
}

}  // namespace
}  // namespace sb::perf
