// Internal to sb_chart: the parts every chart shares — title, legend, axes with ticks and
// labels, and the plot area they leave.
#pragma once

#include <string>
#include <vector>

#include "chart/chart.h"
#include "chart/scale.h"

namespace sb::chart::internal {

struct LegendItem {
  std::string name;
  std::string css;
};

// The plot area inside a width × height chart.
struct Frame {
  double left = 0, top = 0, right = 0, bottom = 0;  // pixel edges of the plot area
};

// Opens the <svg> and draws the title and the legend; returns the plot area left for the data.
Frame OpenChart(std::string& out, const std::string& id, const std::string& title, double width,
                double height, const std::vector<LegendItem>& legend);

// "Concurrency (streams)".
std::string AxisTitle(const Axis& axis);

// The y axis: grid lines and labels at `ticks`, the axis title rotated on the left.
void DrawYAxis(std::string& out, const Frame& f, const Scale& s, const std::vector<double>& ticks,
               const Axis& axis);

// The x axis of a numeric chart: ticks and labels along the bottom, the title under them.
void DrawXAxis(std::string& out, const Frame& f, const Scale& s, const std::vector<double>& ticks,
               const Axis& axis);

// The pixel centre of a mark (a circle of radius kMarkRadius) that a label must not cover.
struct MarkAt {
  double x = 0, y = 0;
};

inline constexpr double kMarkRadius = 4;

// Reference lines across the plot area, each with its label and a hover title. The label goes
// at the right end above the line unless its box would cover one of `marks`; then at the first
// place, right to left, above and below the line and further off, whose box covers none.
void DrawRefs(std::string& out, const Frame& f, const Scale& y, const std::vector<RefLine>& refs,
              const Axis& axis, const std::vector<MarkAt>& marks = {});

// Where a reference label goes (its text anchor is "end" at x, its baseline at y), and the box
// a label of `chars` characters is assumed to cover there (font size 11px; generous, so the
// real text fits inside it).
struct LabelBox {
  double left = 0, top = 0, right = 0, bottom = 0;
};

LabelBox RefLabelBox(double x_end, double baseline, std::size_t chars);

// The ticks and the scale of a numeric axis over the data range [lo, hi] onto [r0, r1].
struct AxisFit {
  std::vector<double> ticks;
  double d0 = 0, d1 = 1;
};

AxisFit FitAxis(const Axis& axis, double lo, double hi);

// "198.7 tok/s" for a value on `axis`.
std::string ValueText(const Axis& axis, double v);

std::string SeriesClass(const std::string& css, std::size_t index);

}  // namespace sb::chart::internal
