#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sb {

namespace {

double PercentileSorted(const std::vector<double>& sorted, double q) {
  if (sorted.size() == 1) {
    return sorted[0];
  }
  double rank = q / 100.0 * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(rank));
  auto hi = std::min(lo + 1, sorted.size() - 1);
  double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

double Percentile(std::span<const double> values, double q) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return PercentileSorted(sorted, std::clamp(q, 0.0, 100.0));
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
  s.p50 = s.median = PercentileSorted(sorted, 50);
  s.p90 = PercentileSorted(sorted, 90);
  s.p99 = PercentileSorted(sorted, 99);
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
