// report.html: the run's report as one self-contained page (docs/reports.md "report.html"):
// inline CSS and inline SVG charts drawn by sb_chart, no script, no external reference of any
// kind, readable with JavaScript off, printable, dark mode by prefers-color-scheme. Rendered
// from a results.json document alone (the data report.md reads); each chart appears only when
// its data exists, with its data table beside it. Never throws on odd input.
// Thread safety: pure functions.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"

namespace sb::report {

inline constexpr std::string_view kHtmlReportFile = "report.html";

std::string RenderHtml(const nlohmann::json& results);

// report.html's stylesheet (light and dark palettes, print rules, tables with right-aligned
// `td.num`, charts), for the other servebench pages that should look the same (the store's
// leaderboard and history pages).
std::string_view HtmlStylesheet();

// `servebench report RUN`: (re)writes report.html for a saved run from its results.json
// (`run` is the run directory or its results.json). `out` empty: RUN's directory/report.html;
// "-": nothing is written (the caller prints the page). Returns the page and where it went.
// Errors: those of LoadResults (kIo, kSetup), kIo when the file cannot be written.
struct HtmlWrite {
  std::string html;
  std::filesystem::path path;  // empty for "-"
};

Result<HtmlWrite> WriteHtmlReport(const std::filesystem::path& run,
                                  const std::filesystem::path& out = {});

}  // namespace sb::report
