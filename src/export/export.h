// `servebench export RUN --format csv|junit|jsonl|md|html|json`: a run directory's results in the
// formats other tools read (docs/reports.md, "Exports"):
//   - csv: every speed table in long format (profile, level, metric, stat, value, unit), one
//     figure per row, RFC 4180, loadable as is by pandas, spreadsheets and `sqlite3 .import`;
//   - junit: the quality tests as JUnit XML (the Apache Ant schema that CI systems read): FAIL
//     and LOOP -> <failure>, ERROR and TIMEOUT -> <error>, UNSUPPORTED and EMPTY -> <skipped>,
//     each with the reason;
//   - jsonl: one JSON object per line: every measured request of samples.jsonl, then every test.
// Reads only; the run directory is never changed. Thread safety: pure functions.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/output_format.h"
#include "core/result.h"
#include "core/result_rows.h"
#include "report/compare.h"

namespace sb::exporter {

// The CSV header: profile,level,level_unit,metric,stat,value,unit
inline constexpr std::string_view kCsvHeader = "profile,level,level_unit,metric,stat,value,unit";

// Every numeric figure of results.json's "perf" tables, "spec_decode" and "roofline", as rows of
// the one result model (core/result_rows.h): every statistic of each, profile by profile in the
// table's order, then each profile's frontier points ("concurrency-frontier") and rate's search
// probes ("rate-search"). Raw request records and per-request values are left out (they are
// jsonl's).
std::vector<ResultRow> SpeedRows(const nlohmann::json& results);

// SpeedRows as CSV: profile,level,level_unit,metric,stat,value,unit (point, point_unit as level,
// level_unit). Header first, "\n" line ends, fields quoted when they hold a comma, a quote or a
// line break.
std::string ToCsv(const nlohmann::json& results);

// The JUnit XML of results.json's "tests": one <testsuite> per test category, in order of first
// appearance, inside <testsuites>; then, when the run had --fail-on-slo (results.json
// "gates"), a "gates" <testsuite> with one <testcase> per level or rate point the SLO gate
// checked (a <failure> naming what was missed). A run without tests or gates gives an empty
// <testsuites/>.
std::string ToJunit(const nlohmann::json& results);

// One line per measured request (samples.jsonl without warm-ups, superseded lines; failures
// kept), {"record": "sample", ...}, then one per test, {"record": "test", ...}.
std::string ToJsonl(const report::CompareRun& run);

// report.md as `run` writes it: the report (report/markdown.h), then the roofline and resource
// sections when results.json has them.
std::string ReportMarkdown(const nlohmann::json& results);

// The one exporter: loads RUN (a directory or its results.json) and renders it in `format`: csv,
// junit and jsonl as above; md and html as report.md and report.html (report/markdown.h,
// report/html.h); json as results.json itself (pretty-printed).
// Errors: as report::LoadCompareRun.
Result<std::string> ExportRun(const std::filesystem::path& run, OutputFormat format);

}  // namespace sb::exporter
