// Internal to sb_store: the HTML pages of `leaderboard --format html` and `history --format
// html` (docs/store.md), styled with report.html's stylesheet (light and dark, print), numbers
// right-aligned with thousands separators, and history's chart of the metric over time (an SVG
// drawn by sb_chart). Self-contained like report.html: no script, no external reference.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

namespace sb::store {
struct RunRecord;
}  // namespace sb::store

namespace sb::store::html {

struct Cell {
  std::string text;  // "" prints "—"
  bool num = false;  // right-aligned, tabular figures
};

struct Table {
  std::string css;  // the <table>'s class
  std::vector<std::string> header;
  std::vector<std::vector<Cell>> rows;
};

// Drops every column whose cells are all empty ("—" in every row), header included; `keep`
// names columns kept even when empty (indices into header).
void DropEmptyColumns(Table& t, const std::vector<std::size_t>& keep);

std::string RenderTable(const Table& t);

// "1119.8" -> "1,119.8", "-12345" -> "-12,345", "3.2 GiB" -> "3.2 GiB": the leading integer
// digits grouped in thousands, the rest kept.
std::string Grouped(const std::string& number);

// The whole page: <head> with report.html's stylesheet and its Content-Security-Policy, <h1>
// title, then `body` (already HTML).
std::string Page(const std::string& title, const std::string& body);

// One run's value for history's chart.
struct HistoryPoint {
  std::string series;  // "model (configuration)"
  std::string started_at;
  std::string run;
  double value = 0;
};

// The metric over time: one line with a dot per run for each series, x the time since the first
// run (hours, or days past two days), y the metric in `unit`. "" when no started_at parses.
std::string HistoryChart(const std::string& metric, const std::string& unit,
                         const std::vector<HistoryPoint>& points);

// The leaderboard's frontier section: one series per entry whose stored run kept frontier
// points (metrics "frontier.*" at dim "level", record.cpp), each sweep of it its own series,
// drawn with report.html's frontier figure; the entries without points are named below it.
// "" when no entry has a point.
std::string LeaderboardFrontier(const std::vector<const RunRecord*>& entries);

// Seconds since the epoch of an ISO 8601 UTC time ("2026-12-02T09:00:00Z", fractions allowed);
// nullopt-like NaN when it does not parse.
double IsoSeconds(const std::string& iso);

}  // namespace sb::store::html
