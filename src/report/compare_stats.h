// The statistics behind `servebench compare` (docs/compare.md): a seeded percentile bootstrap of
// the ratio of two runs' figures over their raw samples, and the exact McNemar test on paired
// pass/fail outcomes. Deterministic: the same inputs and seed give the same interval on every
// platform (the generator is splitmix64 and resampling uses no std distribution).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace sb::report::stats {

// Resamples drawn for each interval.
inline constexpr int kResamples = 2000;

// The statistic of a sample: the q-quantile (0 < q < 1) by servebench's one percentile
// convention (sb::PercentileOfSorted, linear between the closest ranks), so q = 0.5 is the median
// of results.json's stats objects and q = 0.9 their p90. REQUIRES: !v.empty().
double Quantile(std::vector<double> v, double q);

struct RatioInterval {
  double ratio = 1;  // Quantile(a, q) / Quantile(b, q)
  double lo = 1;     // 2.5th percentile of the bootstrap ratios (the same convention)
  double hi = 1;     // 97.5th percentile
  int resamples = 0;
};

// 95% percentile-bootstrap interval of Quantile(a, q) / Quantile(b, q): each resample draws
// a.size() values from a and b.size() from b with replacement. nullopt when a or b has fewer
// than 2 values, or a figure of b (or a resample of it) is not positive.
std::optional<RatioInterval> BootstrapRatio(const std::vector<double>& a,
                                            const std::vector<double>& b, double q,
                                            std::uint64_t seed, int resamples = kResamples);

// A seed for a row: a fixed base mixed with the FNV-1a hash of the row's key, so one row's
// interval does not depend on which other rows exist.
std::uint64_t SeedFor(std::string_view key);

// Two-sided exact McNemar p-value: the binomial test of b against Binomial(b + c, 1/2), where b
// and c count the discordant pairs (pass in one run only). 1 when b + c == 0.
double McNemarExactP(int b, int c);

}  // namespace sb::report::stats
