// The one shape of a run's numbers (docs/architecture.md "Result rows"): one figure per row, in
// long format - where it was measured (profile, place), what it is (metric, statistic), its
// value and unit, and for a median its n and 95% interval. The CSV export writes every row; the
// run store keeps the medians, the p50/p99 of percentile objects and the plain numbers. Both
// read figures out of results.json with WalkFigures below, so a figure's name, unit, statistics
// and interval are read one way. Thread safety: plain data, pure functions.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sb {

struct ResultRow {
  // What the figure was in results.json.
  enum Kind {
    kNumber,       // a plain number
    kFlag,         // true/false (value 1/0)
    kStats,        // a member of a statistics object ({"n", "median", "values", ...})
    kPercentiles,  // a member of a percentile object ({"n", "p50", "p99", ...}, no median)
  };

  // Where: the profile as users name it ("decode", "max-tokens"; "concurrency-frontier",
  // "rate-search", "suite", "resources" for the figures beside the profiles' own rows) ...
  std::string profile;
  std::string dim;    // ... the field naming the row ("concurrency", "level"; "" for none)
  std::string point;  // ... the row ("8", "short"; "" for a profile-wide figure)
  // What: the results.json key, nested objects joined with dots ("goodput.fraction").
  std::string metric;
  double value = 0;
  std::string unit;            // from the key (core/units.h); "count" for n, "bool" for a flag
  std::optional<long long> n;  // the statistics or percentile object's n
  std::optional<double> ci_lo, ci_hi;  // on a median: its 95% interval (MedianInterval)
  // Which statistic: "value" for a number or a flag, else the statistics or percentile object's
  // member ("median", "p99", "n", ...).
  std::string stat = "value";
  Kind kind = kNumber;
  std::string point_unit;  // the unit of `point` ("streams", "tokens"; "" for none)
};

// How WalkFigures walks an object.
struct FigureWalk {
  // Keys left out with everything below them (settings, request records, raw values); null
  // leaves nothing out.
  std::function<bool(std::string_view key)> skip;
  // Called for each array met (its key, the array, the dotted metric prefix of the object that
  // holds it); null leaves arrays out.
  std::function<void(std::string_view key, const nlohmann::json& array, const std::string& prefix)>
      array;
};

// Emits one row per figure below `object`, in its key order: a number (stat "value"), a flag
// (1/0, unit "bool"), each numeric member of a statistics or percentile object (stat = the
// member, metric = the object's key; the median carries the object's n and the 95% interval of
// its "values"), and the figures of nested objects under dotted names. Metric names start with
// `prefix` + "." when `prefix` is not empty. Sets what the rows are (metric, stat, value, unit,
// kind, n, interval); the caller sets where (profile, dim, point, point_unit).
void WalkFigures(const nlohmann::json& object, const std::string& prefix, const FigureWalk& how,
                 const std::function<void(ResultRow)>& emit);

// The distribution-free 95% interval of the median of `values` (order statistics; [min, max]
// when there are too few values for 95%); nullopt for fewer than two values.
std::optional<std::pair<double, double>> MedianInterval(std::vector<double> values);

}  // namespace sb
