// Descriptive statistics over raw samples. Every raw value is kept by the caller; these functions
// only summarise. Percentiles use linear interpolation between closest ranks (numpy's default),
// so they agree with the Python harnesses people compare against (RankOfPercentile).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace sb {

struct Summary {
  std::size_t n = 0;
  double min = 0, max = 0, mean = 0, median = 0, stddev = 0;
  double p50 = 0, p90 = 0, p99 = 0;
};

// The one percentile convention of servebench (docs/metrics.md "Percentiles"): the q-th
// percentile of n sorted values lies at 0-based rank h = q/100 × (n − 1), between the values of
// ranks lo = floor(h) and hi = min(lo + 1, n − 1), a fraction frac of the way from one to the
// other (numpy's default, "linear"). Every path that reports a percentile uses it: Summarize,
// the rate profile's histograms (perf/histogram.h, over bucket values) and compare's intervals.
struct PercentileRank {
  std::size_t lo = 0;
  std::size_t hi = 0;
  double frac = 0;
};

// q is clamped to [0, 100]. REQUIRES: n >= 1.
PercentileRank RankOfPercentile(std::size_t n, double q);

// q in [0, 100] (clamped). REQUIRES: sorted non-empty and ascending.
double PercentileOfSorted(std::span<const double> sorted, double q);

// q in [0, 100]. REQUIRES: values non-empty. Values need not be sorted.
double Percentile(std::span<const double> values, double q);

double Median(std::span<const double> values);

// Summary of values; n == 0 gives an all-zero summary.
Summary Summarize(std::span<const double> values);

// Unbiased estimate of pass@k from n attempts with c passes (Chen et al. 2021).
double PassAtK(int n, int c, int k);

}  // namespace sb
