#include "report/compare_stats.h"

#include <algorithm>
#include <cmath>

#include "core/rng.h"
#include "core/stats.h"

namespace sb::report::stats {

namespace {

// The fixed base seed of every interval (docs/compare.md).
constexpr std::uint64_t kBaseSeed = 0x5EB0'0C0A'1DA7'E5EDull;

// Uniform in [0, n) by the top 53 bits scaled to n (the bias is below 2^-30 for any sample
// count we see; kept rather than Rng::Below so that intervals stay as published).
std::size_t ScaledBelow(SplitMix64& rng, std::size_t n) {
  double u = static_cast<double>(rng.Next() >> 11) * 0x1.0p-53;
  return std::min(n - 1, static_cast<std::size_t>(u * static_cast<double>(n)));
}

// The q-quantile (0 < q < 1) of sorted values by the one convention (core/stats.h): linear
// interpolation between the closest ranks, so the median of an even count is the mean of the
// two middle values, as in results.json's stats objects.
double QuantileSorted(const std::vector<double>& s, double q) {
  return PercentileOfSorted(s, q * 100);
}

double ResampleStat(const std::vector<double>& v, double q, SplitMix64& rng,
                    std::vector<double>& scratch) {
  scratch.resize(v.size());
  for (double& x : scratch) {
    x = v[ScaledBelow(rng, v.size())];
  }
  std::sort(scratch.begin(), scratch.end());
  return QuantileSorted(scratch, q);
}

}  // namespace

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return QuantileSorted(v, q);
}

std::optional<RatioInterval> BootstrapRatio(const std::vector<double>& a,
                                            const std::vector<double>& b, double q,
                                            std::uint64_t seed, int resamples) {
  if (a.size() < 2 || b.size() < 2 || resamples < 1) {
    return std::nullopt;
  }
  double den = Quantile(b, q);
  if (!(den > 0)) {
    return std::nullopt;
  }
  RatioInterval out;
  out.ratio = Quantile(a, q) / den;
  out.resamples = resamples;
  SplitMix64 rng(seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<std::size_t>(resamples));
  std::vector<double> scratch;
  for (int i = 0; i < resamples; ++i) {
    double sa = ResampleStat(a, q, rng, scratch);
    double sb = ResampleStat(b, q, rng, scratch);
    if (!(sb > 0)) {
      return std::nullopt;
    }
    ratios.push_back(sa / sb);
  }
  std::sort(ratios.begin(), ratios.end());
  out.lo = QuantileSorted(ratios, 0.025);
  out.hi = QuantileSorted(ratios, 0.975);
  return out;
}

std::uint64_t SeedFor(std::string_view key) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : key) {
    h = (h ^ c) * 0x100000001b3ull;
  }
  return kBaseSeed ^ h;
}

double McNemarExactP(int b, int c) {
  int n = b + c;
  if (n <= 0) {
    return 1.0;
  }
  int k = std::min(b, c);
  // Σ_{i<=k} C(n, i) / 2^n, in logs so that large n does not overflow.
  double tail = 0;
  for (int i = 0; i <= k; ++i) {
    double log_term =
        std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0);
    tail += std::exp(log_term);
  }
  return std::min(1.0, 2 * tail);
}

}  // namespace sb::report::stats
