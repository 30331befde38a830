#include "core/result_rows.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/units.h"

namespace sb {

namespace {

using nlohmann::json;

// {"n", "median", ...} or {"n", "p50", ...}: a statistics or a percentile object.
std::optional<ResultRow::Kind> StatsKind(const json& v) {
  if (!v.is_object() || !v.contains("n")) {
    return std::nullopt;
  }
  if (v.contains("median")) {
    return ResultRow::kStats;
  }
  if (v.contains("p50")) {
    return ResultRow::kPercentiles;
  }
  return std::nullopt;
}

void EmitStats(const json& stats, ResultRow::Kind kind, const std::string& metric,
               std::string_view key, const FigureWalk& how,
               const std::function<void(ResultRow)>& emit) {
  std::optional<long long> n;
  if (const auto it = stats.find("n"); it != stats.end() && it->is_number()) {
    n = static_cast<long long>(it->get<double>());
  }
  const std::string unit = UnitOfKey(key);
  for (auto it = stats.begin(); it != stats.end(); ++it) {
    const std::string& member = it.key();
    if (!it->is_number() || (how.skip && how.skip(member))) {
      continue;
    }
    ResultRow r;
    r.metric = metric;
    r.stat = member;
    r.value = it->get<double>();
    r.unit = member == "n" ? "count" : unit;
    r.kind = kind;
    r.n = n;
    if (member == "median") {
      std::vector<double> values;
      if (const auto v = stats.find("values"); v != stats.end() && v->is_array()) {
        for (const json& x : *v) {
          if (x.is_number()) {
            values.push_back(x.get<double>());
          }
        }
      }
      if (auto ci = MedianInterval(std::move(values))) {
        r.ci_lo = ci->first;
        r.ci_hi = ci->second;
      }
    }
    emit(std::move(r));
  }
}

}  // namespace

void WalkFigures(const json& object, const std::string& prefix, const FigureWalk& how,
                 const std::function<void(ResultRow)>& emit) {
  if (!object.is_object()) {
    return;
  }
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& k = it.key();
    const json& v = it.value();
    if (how.skip && how.skip(k)) {
      continue;
    }
    const std::string metric = prefix.empty() ? k : prefix + "." + k;
    if (v.is_number() || v.is_boolean()) {
      ResultRow r;
      r.metric = metric;
      r.kind = v.is_boolean() ? ResultRow::kFlag : ResultRow::kNumber;
      r.value = v.is_boolean() ? (v.get<bool>() ? 1 : 0) : v.get<double>();
      r.unit = v.is_boolean() ? "bool" : UnitOfKey(k);
      emit(std::move(r));
    } else if (auto kind = StatsKind(v)) {
      EmitStats(v, *kind, metric, k, how, emit);
    } else if (v.is_object()) {
      WalkFigures(v, metric, how, emit);
    } else if (v.is_array() && how.array) {
      how.array(k, v, prefix);
    }
  }
}

std::optional<std::pair<double, double>> MedianInterval(std::vector<double> values) {
  const std::size_t n = values.size();
  if (n < 2) {
    return std::nullopt;
  }
  std::sort(values.begin(), values.end());
  // The largest j with P(Binomial(n, 1/2) < j) <= 2.5%: then [x(j), x(n-j+1)] (1-based) covers
  // the median with at least 95%. log-space binomial terms: n can be in the thousands.
  double cdf = 0;
  std::size_t j = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double log_term =
        std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k) + 1) -
        std::lgamma(static_cast<double>(n - k) + 1) - static_cast<double>(n) * std::log(2.0);
    cdf += std::exp(log_term);
    if (cdf > 0.025) {
      break;
    }
    j = k + 1;  // P(B <= k) <= 2.5%: x(k+1) is a valid lower end
  }
  if (j == 0) {
    return std::pair{values.front(), values.back()};
  }
  return std::pair{values[j - 1], values[n - j]};
}

}  // namespace sb
