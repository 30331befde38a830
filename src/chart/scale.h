// Scales and ticks for the SVG charts (docs/reports.md): a value's position in pixels on a
// linear or a logarithmic axis, and "nice" tick values (1, 2 or 5 times a power of ten) with
// their labels. Pure arithmetic: no SVG here.
// Thread safety: value types and pure functions.
#pragma once

#include <string>
#include <vector>

namespace sb::chart {

// Tick values covering [lo, hi] with a step of 1, 2 or 5 × 10^k chosen so that about `target`
// intervals fit: NiceTicks(0, 97, 5) -> 0, 20, 40, 60, 80, 100. The first tick is <= lo and the
// last >= hi, so the ticks can serve as the axis' domain. lo == hi gives a small range around
// the value. REQUIRES: lo <= hi, both finite; target >= 1.
std::vector<double> NiceTicks(double lo, double hi, int target = 5);

// The step NiceTicks uses for [lo, hi]: 1, 2 or 5 × 10^k.
double NiceStep(double lo, double hi, int target = 5);

// Ticks of a log axis over [lo, hi] (lo > 0): the powers of ten inside it, plus 2× and 5× when
// the range spans less than three decades, plus lo and hi rounded to a nice value when fewer
// than two ticks would show. LogTicks(100, 128000) -> 100, 1000, 10000, 100000.
std::vector<double> LogTicks(double lo, double hi);

// A tick label: thousands grouped, as many decimals as `step` needs ("1,000", "0.25", "2.5"),
// large round values shortened ("10k", "1M") when `compact`.
std::string TickLabel(double value, double step, bool compact = false);

// Maps a domain [d0, d1] onto a pixel range [r0, r1] (r1 < r0 for a y axis: up is smaller).
class Scale {
 public:
  // Linear scale. REQUIRES: d0 != d1.
  static Scale Linear(double d0, double d1, double r0, double r1);
  // Logarithmic (base 10) scale. REQUIRES: 0 < d0 < d1.
  static Scale Log(double d0, double d1, double r0, double r1);

  // The pixel position of `v`. A log scale clamps v <= 0 to the domain's low end.
  double operator()(double v) const;

  bool log() const { return log_; }

  double d0() const { return d0_; }

  double d1() const { return d1_; }

  double r0() const { return r0_; }

  double r1() const { return r1_; }

 private:
  Scale(bool log, double d0, double d1, double r0, double r1);
  bool log_;
  double d0_, d1_, r0_, r1_;
};

}  // namespace sb::chart
