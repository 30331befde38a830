// The metric names a store holds: `--list-metrics`, and the check that a --metric names one of
// them (a misspelt metric is a usage error, never an empty leaderboard).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "store/query.h"

namespace sb::store {

namespace {

struct Known {
  std::string unit;
  std::set<std::string> points;  // "" for a figure without a point
};

// "profile.metric" -> its unit and points, over every run.
std::map<std::string, Known> Catalogue(const std::vector<RunRecord>& runs) {
  std::map<std::string, Known> out;
  for (const RunRecord& r : runs) {
    for (const MetricRow& m : r.metrics) {
      Known& k = out[m.profile + "." + m.metric];
      k.unit = m.unit;
      k.points.insert(m.point);
    }
  }
  return out;
}

// Points in their natural order: numbers by value, then names.
std::vector<std::string> Ordered(const std::set<std::string>& points) {
  std::vector<std::string> v;
  for (const auto& p : points) {
    if (!p.empty()) {
      v.push_back(p);
    }
  }
  auto num = [](const std::string& s) -> std::optional<double> {
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    return end != s.c_str() && *end == '\0' ? std::optional<double>(d) : std::nullopt;
  };
  std::stable_sort(v.begin(), v.end(), [&](const std::string& a, const std::string& b) {
    auto x = num(a);
    auto y = num(b);
    if (x && y) {
      return *x < *y;
    }
    return x.has_value() && !y.has_value();
  });
  return v;
}

std::string PointList(const std::set<std::string>& points) {
  std::vector<std::string> v = Ordered(points);
  for (auto& p : v) {
    p = "@" + p;
  }
  return fmt::format("{}", fmt::join(v, ", "));
}

}  // namespace

Result<void> CheckMetric(const std::vector<RunRecord>& runs, const MetricSpec& spec) {
  const auto known = Catalogue(runs);
  if (known.empty()) {
    return {};
  }
  const std::string name = spec.profile + "." + spec.metric;
  auto it = known.find(name);
  if (it == known.end()) {
    std::vector<std::string> same_profile;
    for (const auto& [k, _] : known) {
      if (k.starts_with(spec.profile + ".")) {
        same_profile.push_back(k);
      }
    }
    std::string hint =
        same_profile.empty()
            ? fmt::format("no stored run has a {} profile", spec.profile)
            : fmt::format("{} has: {}", spec.profile,
                          fmt::join(same_profile.begin(),
                                    same_profile.begin() + static_cast<long>(std::min<std::size_t>(
                                                               same_profile.size(), 12)),
                                    ", "));
    if (same_profile.size() > 12) {
      hint += fmt::format(", ... ({} in all)", same_profile.size());
    }
    return MakeError(ErrorCode::kUsage,
                     fmt::format("--metric {}: no stored run measured it ({}); --list-metrics "
                                 "lists all {} metrics in the store",
                                 spec.Name(), hint, known.size()));
  }
  const std::set<std::string>& points = it->second.points;
  if (spec.point.empty()) {
    if (!points.contains("")) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("--metric {}: it is measured per point; name one with "
                                   "@POINT (stored: {})",
                                   spec.Name(), PointList(points)));
    }
    return {};
  }
  if (!points.contains(spec.point)) {
    return MakeError(ErrorCode::kUsage,
                     points.size() == 1 && points.contains("")
                         ? fmt::format("--metric {}: {} has no points; leave out @{}", spec.Name(),
                                       name, spec.point)
                         : fmt::format("--metric {}: no stored run measured {} at @{} (stored: {})",
                                       spec.Name(), name, spec.point, PointList(points)));
  }
  return {};
}

std::string ListMetrics(const std::vector<RunRecord>& runs) {
  const auto known = Catalogue(runs);
  std::size_t width = 0;
  for (const auto& [k, _] : known) {
    width = std::max(width, k.size());
  }
  std::string out;
  for (const auto& [k, v] : known) {
    std::string line = fmt::format("{:<{}}  {}", k, width, v.unit.empty() ? "-" : v.unit);
    if (const std::string pts = PointList(v.points); !pts.empty()) {
      line += "  " + pts;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace sb::store
