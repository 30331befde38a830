// Internal to sb_report: a profile drawn from its rows alone. A profile whose table entry has
// metrics and a title (core/profile_table.h) gets its compare rows from them; when it has no
// sections of its own, its report.md table and its report.html chart too, all read through the
// table: adding such a profile needs no code in src/report (docs/architecture.md "The profile
// table").
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/profile_table.h"

namespace sb::report {

// True when compare draws p from its rows (metrics and a title in its entry).
bool ComparedFromRows(const ProfileSpec& p);

// True when report.md and report.html draw p from its rows here: compared from them, and no
// sections of its own.
bool DrawnFromRows(const ProfileSpec& p);

// A metric's value in a row: the median of its statistics object, or the number itself;
// nullopt when missing, null or not a number.
std::optional<double> MetricValue(const nlohmann::json& row, const MetricSpec& m);

// The samples behind it (a statistics object's "values"; empty otherwise), for compare's
// intervals.
std::vector<double> MetricSamples(const nlohmann::json& row, const MetricSpec& m);

// v in the metric's unit, as the reports write it: "41" (ms), "198.7" (tok/s), "3.9×" (x),
// "4,096" (tokens), "90.9%" (%); kMissing for nullopt.
std::string FormatMetric(std::optional<double> v, std::string_view unit);

// As FormatMetric, with the unit where a table header does not carry it: "41 ms",
// "198.7 tok/s", "4,096 tokens", "3.9×", "90.9%".
std::string FormatMetricWithUnit(std::optional<double> v, std::string_view unit);

// A column header: the label, and the unit in brackets for ms and tok/s ("TTFT warm (ms)").
std::string MetricHeader(const MetricSpec& m);

// Where a row sits in the sweep, as text: its dim field, a count ("4,000") or a name; kMissing
// when absent.
std::string RowPlace(const nlohmann::json& row, const ProfileSpec& p);

// A row's place as a phrase and as a key, from its dim field (a number or a name): a quantity
// is followed by its unit ("1,024 tokens", key "1024"); a place that names its own unit (the
// dim is its unit: turn, class) follows it ("turn 3", "class cache hit", keys "3",
// "cache_hit": a name's characters other than letters, digits, '-' and '_' become '_').
// nullopt when the row has no such field.
struct Place {
  std::string phrase;
  std::string key;
};

std::optional<Place> PlaceOf(const nlohmann::json& row, const ProfileSpec& p);

// text with its first letter upper-case ("" stays ""): a table entry's summary as a sentence.
std::string Capitalized(std::string_view text);

// The dim's header: "prefix_tokens" -> "Prefix tokens".
std::string DimHeader(const ProfileSpec& p);

namespace md {
// "### <title>", the summary, and a table: the dim, one column per metric, the errors when a
// row has any, each skipped row's reason under it.
void RenderRows(const ProfileSpec& p, const nlohmann::json& section, std::string& out);
}  // namespace md

namespace html {
// REQUIRES: DrawnFromRows(p). A <section> with one chart: the metrics sharing the first metric's
// unit against the dim (lines over a numeric dim, bars over named rows); "" when no row has a
// value.
std::string RowsSection(const ProfileSpec& p, const nlohmann::json& section, int& charts);
}  // namespace html

}  // namespace sb::report
