// report.html: the run's report as one self-contained page (docs/reports.md "report.html"):
// inline CSS and inline SVG charts drawn by sb_chart, no script, no external reference of any
// kind, readable with JavaScript off, printable, dark mode by prefers-color-scheme. Rendered
// from a results.json document alone (the data report.md reads); each chart appears only when
// its data exists, with its data table beside it. Never throws on odd input.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace sb::report {

inline constexpr std::string_view kHtmlReportFile = "report.html";

std::string RenderHtml(const nlohmann::json& results);

}  // namespace sb::report
