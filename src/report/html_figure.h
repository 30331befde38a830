// Internal to sb_report's HTML writers: a chart with its data table beside it, and the page's
// shared pieces (stylesheet, escaping). The table is built from the same chart input as the
// SVG, so the two can never disagree.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "chart/chart.h"

namespace sb::report::html {

// <figure class="figure" data-chart=ID> the SVG, then a <table class="data"> of the same
// values (x, one column per series), and an optional note under both.
std::string Figure(const chart::XYChart& c, const std::string& note = "");
std::string Figure(const chart::BarChart& c, const std::string& note = "");

// A time series (up to 2,000 samples a series): the SVG, and the same values as a compact table
// folded in a <details> (one row per sample time; "—" where a series has NaN, its gap).
std::string TimeFigure(const chart::XYChart& c, const std::string& note = "");

// report.html's "Resources over the run" section (docs/reports.md) from results.json
// "resources": a chart per measured quantity over time, and the figures per speed row.
// "" without "resources"; `charts` counts the charts written.
std::string ResourcesSection(const nlohmann::json& results, int& charts);

// The charts of the speed profiles and speculative decoding, as <section>s; `charts` counts
// the charts written.
std::string SpeedSections(const nlohmann::json& results, int& charts);

// The sessions profile's chart, TTFT by turn index (html_sessions.cpp), as a <section>.
std::string SessionsSection(const nlohmann::json& sessions, int& charts);

// The replay profile's section (html_replay.cpp): summary, arrivals chart, classes table.
std::string ReplaySection(const nlohmann::json& replay, int& charts);

// The page's stylesheet (light and dark palettes, print rules).
std::string_view Stylesheet();

}  // namespace sb::report::html
