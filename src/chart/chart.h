// SVG charts for the HTML reports (docs/reports.md): line and dot charts on linear or log
// axes (also over time), grouped and stacked bars. Each chart is one <svg> element with a
// title, axis labels with units, a legend, and one mark per data point carrying
// data-series, data-x and data-y attributes (the exact value, so a test can compare the DOM
// with results.json) and a <title> that browsers show on hover. Colours are CSS classes
// (c0..c7 by series, or the class a series names) so the page's stylesheet decides them,
// dark mode included. Output is deterministic: the same input gives the same bytes.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sb::chart {

struct Axis {
  std::string label{};   // "Concurrency"
  std::string unit{};    // "streams": the axis reads "Concurrency (streams)"; empty: no unit
  bool log = false;      // base-10 log scale (values <= 0 are not drawn)
  bool zero = true;      // linear: the domain includes 0
  bool integer = false;  // linear: ticks on whole numbers only (run numbers, counts)
  int decimals = 1;      // decimals of the values in hover titles and reference labels
  // Linear, not integer: the domain ends exactly here (a time series' end: the run's end)
  // instead of at the next nice tick; ticks past it are left out. Unset: the nice tick.
  std::optional<double> end{};
};

struct Point {
  double x = 0;
  double y = 0;
  std::string tip{};    // the hover text; empty: "<series>: <x> <unit>, <y> <unit>"
  std::string label{};  // drawn beside the mark (a sweep's level, "c8"); empty: none
};

struct Series {
  std::string name{};
  std::vector<Point> points{};
  std::string css{};  // colour class; empty: c<index>
  bool line = true;   // join the points (in the given order); a NaN y is a gap in the line
                      // (no mark, and the line starts again at the next point)
  bool dots = true;   // a circle per point (the marks)
};

// A horizontal reference line (a median, an objective) with its label at the right end, or, when
// a mark of an XY chart lies under that place, the nearest place along the line (above or below
// it) where the label's box covers no mark.
struct RefLine {
  std::string name{};  // data-ref value: "median", "slo"
  double y = 0;
  std::string label{};  // drawn text, "median 198.7 tok/s"
};

struct XYChart {
  std::string id{};  // data-chart value, unique on the page
  std::string title{};
  Axis x, y;
  std::vector<Series> series{};
  std::vector<RefLine> refs{};
  double width = 640;
  double height = 320;
};

// A line chart (series with line = true) or a dot plot (line = false). A chart without any
// drawable point still renders its frame and says "no data".
std::string RenderXY(const XYChart& chart);

// A chart of values over time: x is "Time (s)" from 0, one line per series.
XYChart TimeSeriesChart(std::string id, std::string title, Axis y, std::vector<Series> series);

struct BarSeries {
  std::string name{};
  std::vector<std::optional<double>> values{};  // one per category; nullopt: no bar
  std::string css{};                            // colour class; empty: c<index>
};

struct BarChart {
  std::string id{};
  std::string title{};
  std::string x_label{};                  // what the categories are, "Category"
  std::vector<std::string> categories{};  // data-x of the bars, in order
  Axis y;                                 // linear; zero is always included
  std::vector<BarSeries> series{};
  bool stacked = false;  // false: bars side by side per category; true: one stacked column
  std::vector<RefLine> refs{};
  double width = 640;
  double height = 320;
};

// Grouped or stacked bars. A stacked segment's data-y is its own value, not the running sum.
std::string RenderBars(const BarChart& chart);

}  // namespace sb::chart
