#include "perf/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include <fmt/format.h>

#include "core/rng.h"

namespace sb::perf {

namespace {

double StandardNormal(Rng& g) {  // Box-Muller, one value per pair of uniforms
  const double u1 = g.OpenUniform();
  const double u2 = g.Uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// Gamma(shape, 1), mean = shape. Marsaglia & Tsang (2000) for shape >= 1; for shape < 1,
// Gamma(shape + 1) × U^(1/shape) (their section 6).
double StandardGamma(double shape, Rng& g) {
  if (shape < 1.0) {
    const double u = g.OpenUniform();
    return StandardGamma(shape + 1.0, g) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0;
    double v = 0;
    do {
      x = StandardNormal(g);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = g.OpenUniform();
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) {
      return d * v;
    }
    if (std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) {
      return d * v;
    }
  }
}

// Gaps of mean 1 (in units of 1/rate).
class UnitGaps {
 public:
  explicit UnitGaps(const ArrivalProcess& p)
      : exponential_(p.arrival == Arrival::kPoisson || p.burstiness == 1.0),
        shape_(p.burstiness),
        generator_(p.seed) {}

  double Next() {
    if (exponential_) {
      return -std::log(generator_.OpenUniform());
    }
    return StandardGamma(shape_, generator_) / shape_;
  }

 private:
  bool exponential_;
  double shape_;
  Rng generator_;
};

// Calls emit(offset) for each arrival in order until it returns false.
template <typename Emit>
void Generate(const ArrivalProcess& p, Emit emit) {
  const double ns_per_unit = 1e9 / p.rate_rps;
  if (p.arrival == Arrival::kConstant) {
    for (std::int64_t i = 0;; ++i) {
      if (!emit(std::llround(static_cast<double>(i) * ns_per_unit))) {
        return;
      }
    }
  }
  UnitGaps gaps(p);
  double units = 0;
  for (;;) {
    if (!emit(std::llround(units * ns_per_unit))) {
      return;
    }
    units += gaps.Next();
  }
}

}  // namespace

std::string_view ArrivalName(Arrival arrival) {
  switch (arrival) {
    case Arrival::kConstant:
      return "constant";
    case Arrival::kPoisson:
      return "poisson";
    case Arrival::kGamma:
      return "gamma";
  }
  return "poisson";
}

std::optional<Arrival> ParseArrival(std::string_view name) {
  for (Arrival a : {Arrival::kConstant, Arrival::kPoisson, Arrival::kGamma}) {
    if (name == ArrivalName(a)) {
      return a;
    }
  }
  return std::nullopt;
}

Result<void> ValidateArrivals(const ArrivalProcess& p) {
  if (!std::isfinite(p.rate_rps) || p.rate_rps <= 0) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("arrival rate must be a positive number of requests per second, "
                                 "not {}",
                                 p.rate_rps));
  }
  if (!std::isfinite(p.burstiness) || p.burstiness <= 0) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("burstiness must be a positive number, not {}", p.burstiness));
  }
  if (p.burstiness != 1.0 && p.arrival != Arrival::kGamma) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("burstiness {} needs gamma arrivals (--arrival gamma); {} "
                                 "arrivals have none",
                                 p.burstiness, ArrivalName(p.arrival)));
  }
  return {};
}

std::vector<std::int64_t> ArrivalOffsets(const ArrivalProcess& process, std::size_t count) {
  std::vector<std::int64_t> out;
  out.reserve(count);
  if (count == 0) {
    return out;
  }
  Generate(process, [&](std::int64_t offset) {
    out.push_back(offset);
    return out.size() < count;
  });
  return out;
}

std::vector<std::int64_t> ArrivalOffsetsWithin(const ArrivalProcess& process,
                                               std::chrono::nanoseconds duration) {
  std::vector<std::int64_t> out;
  if (duration.count() <= 0) {
    return out;
  }
  out.reserve(static_cast<std::size_t>(
      std::max(1.0, process.rate_rps * static_cast<double>(duration.count()) / 1e9 * 1.1)));
  Generate(process, [&](std::int64_t offset) {
    if (offset >= duration.count()) {
      return false;
    }
    out.push_back(offset);
    return true;
  });
  return out;
}

std::optional<double> OfferedRate(const std::vector<std::int64_t>& offsets) {
  if (offsets.size() < 2 || offsets.back() <= offsets.front()) {
    return std::nullopt;
  }
  return static_cast<double>(offsets.size() - 1) /
         (static_cast<double>(offsets.back() - offsets.front()) / 1e9);
}

}  // namespace sb::perf
