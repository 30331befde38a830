// Descriptive statistics over raw samples. Every raw value is kept by the caller; these functions
// only summarise. Percentiles use linear interpolation between closest ranks (numpy's default),
// so they agree with the Python harnesses people compare against.
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

// q in [0, 100]. REQUIRES: values non-empty. Values need not be sorted.
double Percentile(std::span<const double> values, double q);

double Median(std::span<const double> values);

// Summary of values; n == 0 gives an all-zero summary.
Summary Summarize(std::span<const double> values);

// Unbiased estimate of pass@k from n attempts with c passes (Chen et al. 2021).
double PassAtK(int n, int c, int k);

}  // namespace sb
