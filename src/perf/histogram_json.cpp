// Histogram <-> JSON (exact), and the percentile row every rate-profile table reports.
#include <limits>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perf/histogram.h"

namespace sb::perf {

using nlohmann::json;

json Histogram::ToJson() const {
  json buckets = json::array();
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] != 0) {
      buckets.push_back(json::array({i, counts_[i]}));
    }
  }
  // The sum of integer values is an integer; below 2^64 it is kept exactly (see sum_).
  json sum = sum_ < 18446744073709551615.0L ? json(static_cast<std::uint64_t>(sum_))
                                            : json(static_cast<double>(sum_));
  return json{{"digits", digits_}, {"count", count_}, {"min", Min()},
              {"max", Max()},      {"sum", sum},      {"buckets", std::move(buckets)}};
}

Result<Histogram> Histogram::FromJson(const json& j) {
  auto bad = [](const std::string& why) {
    return MakeError(ErrorCode::kSetup, "histogram: " + why);
  };
  if (!j.is_object()) {
    return bad("not a JSON object");
  }
  for (const char* key : {"digits", "count", "min", "max", "sum"}) {
    if (!j.contains(key) || !j[key].is_number()) {
      return bad(fmt::format("\"{}\" is missing or not a number", key));
    }
  }
  if (!j.contains("buckets") || !j["buckets"].is_array()) {
    return bad("\"buckets\" is missing or not an array");
  }
  const int digits = j["digits"].get<int>();
  if (digits < 1 || digits > 5) {
    return bad(fmt::format("digits {} is outside 1..5", digits));
  }
  Histogram h(digits);
  std::int64_t total = 0;
  // The bucket of the largest int64 value: no recorded value has a higher index.
  const std::size_t max_index = h.IndexOf(std::numeric_limits<std::int64_t>::max());
  for (const json& b : j["buckets"]) {
    if (!b.is_array() || b.size() != 2 || !b[0].is_number_unsigned() || !b[1].is_number_integer() ||
        b[1].get<std::int64_t>() <= 0) {
      return bad("a bucket is not [index, positive count]");
    }
    const auto index = b[0].get<std::size_t>();
    if (index > max_index) {
      return bad(fmt::format("bucket index {} is out of range", index));
    }
    if (index >= h.counts_.size()) {
      h.counts_.resize(index + 1, 0);
    }
    h.counts_[index] += b[1].get<std::int64_t>();
    total += b[1].get<std::int64_t>();
  }
  if (total != j["count"].get<std::int64_t>()) {
    return bad(fmt::format("the buckets hold {} values but count says {}", total,
                           j["count"].get<std::int64_t>()));
  }
  h.count_ = total;
  h.min_ = j["min"].get<std::int64_t>();
  h.max_ = j["max"].get<std::int64_t>();
  h.sum_ = j["sum"].is_number_unsigned() ? static_cast<long double>(j["sum"].get<std::uint64_t>())
                                         : static_cast<long double>(j["sum"].get<double>());
  if (total > 0 && (h.min_ < 0 || h.min_ > h.max_ || h.IndexOf(h.min_) >= h.counts_.size() ||
                    h.IndexOf(h.max_) >= h.counts_.size() || h.counts_[h.IndexOf(h.min_)] == 0 ||
                    h.counts_[h.IndexOf(h.max_)] == 0)) {
    return bad("min/max do not match the buckets");
  }
  return h;
}

json PercentilesJson(const Histogram& h, double unit_ns) {
  if (h.empty()) {
    return json{{"n", 0}};
  }
  auto v = [&](double ns) { return ns / unit_ns; };
  return json{{"n", h.count()},
              {"min", v(h.Min())},
              {"mean", h.Mean() / unit_ns},
              {"p50", v(h.ValueAtPercentile(50))},
              {"p90", v(h.ValueAtPercentile(90))},
              {"p95", v(h.ValueAtPercentile(95))},
              {"p99", v(h.ValueAtPercentile(99))},
              {"p99_9", v(h.ValueAtPercentile(99.9))},
              {"max", v(h.Max())}};
}

}  // namespace sb::perf
