#include "chart/scale.h"

#include <algorithm>
#include <cmath>

#include "chart/svg.h"

namespace sb::chart {

double NiceStep(double lo, double hi, int target) {
  target = std::max(target, 1);
  double span = hi - lo;
  if (!(span > 0)) {
    span = std::abs(lo) > 0 ? std::abs(lo) : 1.0;
  }
  const double raw = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;  // in [1, 10)
  double nice = 10;
  if (norm <= 1.0 + 1e-9) {
    nice = 1;
  } else if (norm <= 2.0 + 1e-9) {
    nice = 2;
  } else if (norm <= 5.0 + 1e-9) {
    nice = 5;
  }
  return nice * mag;
}

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (lo == hi) {
    const double pad = lo != 0 ? std::abs(lo) * 0.1 : 1.0;
    lo -= pad;
    hi += pad;
  }
  const double step = NiceStep(lo, hi, target);
  // Work in integer multiples of the step so that 0.1 + 0.2 never shows up as a tick.
  const long long first = static_cast<long long>(std::floor(lo / step + 1e-9));
  const long long last = static_cast<long long>(std::ceil(hi / step - 1e-9));
  std::vector<double> ticks;
  for (long long i = first; i <= last && ticks.size() < 100; ++i) {
    double t = static_cast<double>(i) * step;
    // Round away binary noise: the tick is a multiple of step, so it has few digits.
    const double digits = std::max(0.0, -std::floor(std::log10(step))) + 1;
    const double k = std::pow(10.0, digits);
    t = std::round(t * k) / k;
    ticks.push_back(t == 0 ? 0.0 : t);
  }
  return ticks;
}

std::vector<double> LogTicks(double lo, double hi) {
  std::vector<double> ticks;
  if (!(lo > 0) || !(hi >= lo)) {
    return ticks;
  }
  const int e0 = static_cast<int>(std::floor(std::log10(lo)));
  const int e1 = static_cast<int>(std::ceil(std::log10(hi)));
  const bool fine = (std::log10(hi) - std::log10(lo)) < 3;
  for (int e = e0; e <= e1; ++e) {
    const double p = std::pow(10.0, e);
    for (double m : {1.0, 2.0, 5.0}) {
      if (m != 1.0 && !fine) {
        continue;
      }
      const double t = m * p;
      if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9)) {
        ticks.push_back(t);
      }
    }
  }
  if (ticks.size() < 2) {
    ticks = {lo, hi};
  }
  return ticks;
}

std::string TickLabel(double value, double step, bool compact) {
  if (compact && std::abs(value) >= 1000) {
    const double a = std::abs(value);
    if (a >= 1e6 && std::fmod(a, 1e5) == 0) {
      return Readable(value / 1e6, std::fmod(a, 1e6) == 0 ? 0 : 1) + "M";
    }
    if (std::fmod(a, 100) == 0) {
      return Readable(value / 1e3, std::fmod(a, 1e3) == 0 ? 0 : 1) + "k";
    }
  }
  int decimals = 0;
  if (step > 0 && step < 1) {
    decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
    // 0.25-style steps never come from NiceStep, but a value such as 2.5 may: show it whole.
    while (decimals < 6 && std::abs(std::round(value * std::pow(10.0, decimals)) -
                                    value * std::pow(10.0, decimals)) > 1e-6) {
      ++decimals;
    }
  }
  return Readable(value, decimals);
}

Scale::Scale(bool log, double d0, double d1, double r0, double r1)
    : log_(log), d0_(d0), d1_(d1), r0_(r0), r1_(r1) {}

Scale Scale::Linear(double d0, double d1, double r0, double r1) {
  return Scale(false, d0, d1, r0, r1);
}

Scale Scale::Log(double d0, double d1, double r0, double r1) {
  return Scale(true, d0, d1, r0, r1);
}

double Scale::operator()(double v) const {
  double t = 0;
  if (log_) {
    v = std::max(v, d0_);
    t = (std::log10(v) - std::log10(d0_)) / (std::log10(d1_) - std::log10(d0_));
  } else {
    t = (v - d0_) / (d1_ - d0_);
  }
  return r0_ + t * (r1_ - r0_);
}

}  // namespace sb::chart
