// The rate profile's options from the command line: --slo, --search-rate, and the checks of
// every RateOptions field before a run starts (docs/load.md).
#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "perf/profiles.h"
#include "perf/schedule.h"

namespace sb::perf {

namespace {

// Upper bound of requests in one point (memory: one response with its events each).
constexpr double kMaxRequestsPerPoint = 1e6;
constexpr int kMaxConcurrencyLimit = 4096;  // one thread per slot

Result<double> PositiveNumber(std::string_view text, std::string_view what) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v) || v <= 0) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("{}: '{}' is not a positive number", what, std::string(text)));
  }
  return v;
}

}  // namespace

Result<Slo> ParseSlo(const std::vector<std::string>& items) {
  Slo slo;
  for (const std::string& item : items) {
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    std::optional<double>* field = nullptr;
    if (key == "ttft_ms") {
      field = &slo.ttft_ms;
    } else if (key == "tpot_ms") {
      field = &slo.tpot_ms;
    } else if (key == "e2e_ms") {
      field = &slo.e2e_ms;
    }
    if (eq == std::string::npos || field == nullptr) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("--slo: '{}' is not KEY=MS with KEY one of ttft_ms, tpot_ms, "
                                   "e2e_ms",
                                   item));
    }
    if (field->has_value()) {
      return MakeError(ErrorCode::kUsage, fmt::format("--slo: {} is given twice", key));
    }
    auto v = PositiveNumber(std::string_view(item).substr(eq + 1), "--slo " + key);
    if (!v) {
      return v.error();
    }
    *field = v.value();
  }
  return slo;
}

Result<std::pair<double, double>> ParseRateRange(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("--search-rate: '{}' is not MIN:MAX (req/s)", std::string(text)));
  }
  auto lo = PositiveNumber(text.substr(0, colon), "--search-rate MIN");
  if (!lo) {
    return lo.error();
  }
  auto hi = PositiveNumber(text.substr(colon + 1), "--search-rate MAX");
  if (!hi) {
    return hi.error();
  }
  if (!(lo.value() < hi.value())) {
    return MakeError(ErrorCode::kUsage, fmt::format("--search-rate: MIN ({}) must be below MAX "
                                                    "({})",
                                                    lo.value(), hi.value()));
  }
  return std::pair<double, double>(lo.value(), hi.value());
}

Result<void> ValidateRateOptions(const RateOptions& o) {
  auto usage = [](std::string text) { return MakeError(ErrorCode::kUsage, std::move(text)); };
  if (o.rates.empty() && !o.search) {
    return usage("the rate profile needs --rates R1,R2,... or --search-rate MIN:MAX");
  }
  std::vector<double> all = o.rates;
  if (o.search) {
    all.push_back(o.search->first);
    all.push_back(o.search->second);
    if (!(o.search->first > 0 && o.search->first < o.search->second &&
          std::isfinite(o.search->second))) {
      return usage("--search-rate: need 0 < MIN < MAX");
    }
    if (o.slo.empty()) {
      return usage("--search-rate needs --slo (which requests count as good)");
    }
    if (o.search_steps < 0 || o.search_steps > 30) {
      return usage("--search-steps must be in 0..30");
    }
  }
  for (double r : all) {
    if (auto ok = ValidateArrivals({o.arrival, r, o.burstiness, o.seed}); !ok) {
      return usage("--rates/--burstiness: " + ok.error().message);
    }
  }
  if (!std::isfinite(o.duration_s) || o.duration_s < 0) {
    return usage("--duration-s must be >= 0");
  }
  if (o.duration_s == 0 && o.requests < 1) {
    return usage("--requests must be >= 1");
  }
  const double max_rate = *std::max_element(all.begin(), all.end());
  const double per_point =
      o.duration_s > 0 ? max_rate * o.duration_s : static_cast<double>(o.requests);
  if (per_point > kMaxRequestsPerPoint) {
    return usage(fmt::format("a rate point would send about {:.0f} requests; the limit is {:.0f}",
                             per_point, kMaxRequestsPerPoint));
  }
  if (o.tokens < 1) {
    return usage("--rate-tokens must be >= 1");
  }
  for (const auto* v : {&o.slo.ttft_ms, &o.slo.tpot_ms, &o.slo.e2e_ms}) {
    if (v->has_value() && !(std::isfinite(**v) && **v > 0)) {
      return usage("--slo values must be positive numbers of milliseconds");
    }
  }
  if (!(o.slo_fraction > 0 && o.slo_fraction <= 1)) {
    return usage("--slo-fraction must be in (0, 1]");
  }
  if (!(std::isfinite(o.late_ms) && o.late_ms > 0)) {
    return usage("--late-ms must be a positive number");
  }
  if (o.max_concurrency < 0 || o.max_concurrency > kMaxConcurrencyLimit) {
    return usage(fmt::format("--max-concurrency must be in 0..{}", kMaxConcurrencyLimit));
  }
  return {};
}

}  // namespace sb::perf
