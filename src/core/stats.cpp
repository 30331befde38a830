#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sb {

PercentileRank RankOfPercentile(std::size_t n, double q) {
  PercentileRank r;
  if (n <= 1) {
    return r;
  }
  // The product carries the binary rounding of q (99.9 / 100 × 1000 = 999.0000000000001): a
  // fraction within 1e-9 of a whole rank is that rank.
  const double h = std::clamp(q, 0.0, 100.0) / 100.0 * static_cast<double>(n - 1);
  double whole = std::floor(h);
  double frac = h - whole;
  if (frac > 1 - 1e-9) {
    whole += 1;
    frac = 0;
  } else if (frac < 1e-9) {
    frac = 0;
  }
  r.lo = std::min(static_cast<std::size_t>(whole), n - 1);
  r.hi = std::min(r.lo + 1, n - 1);
  r.frac = frac;
  return r;
}

double PercentileOfSorted(std::span<const double> sorted, double q) {
  const PercentileRank r = RankOfPercentile(sorted.size(), q);
  const double lo = sorted[r.lo];
  return r.frac == 0 ? lo : lo + (sorted[r.hi] - lo) * r.frac;
}

double Percentile(std::span<const double> values, double q) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return PercentileOfSorted(sorted, q);
}

double Median(std::span<const double> values) {
  return Percentile(values, 50.0);
}

Summary Summarize(std::span<const double> values) {
  Summary s;
  s.n = values.size();
  if (values.empty()) {
    return s;
  }
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(s.n);
  double ss = 0;
  for (double v : sorted) {
    ss += (v - s.mean) * (v - s.mean);
  }
  s.stddev = s.n > 1 ? std::sqrt(ss / static_cast<double>(s.n - 1)) : 0.0;
  s.p50 = s.median = PercentileOfSorted(sorted, 50);
  s.p90 = PercentileOfSorted(sorted, 90);
  s.p99 = PercentileOfSorted(sorted, 99);
  return s;
}

double PassAtK(int n, int c, int k) {
  if (n - c < k) {
    return 1.0;
  }
  // 1 - C(n-c, k) / C(n, k), computed as a stable product.
  double prod = 1.0;
  for (int i = n - c + 1; i <= n; ++i) {
    prod *= 1.0 - static_cast<double>(k) / static_cast<double>(i);
  }
  return 1.0 - prod;
}

}  // namespace sb
