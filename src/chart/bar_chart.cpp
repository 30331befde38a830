#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "chart/chart.h"
#include "chart/frame.h"
#include "chart/svg.h"

namespace sb::chart {

std::string RenderBars(const BarChart& c) {
  std::vector<internal::LegendItem> legend;
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    legend.push_back({c.series[i].name, internal::SeriesClass(c.series[i].css, i)});
  }
  std::string out;
  const internal::Frame f = internal::OpenChart(out, c.id, c.title, c.width, c.height, legend);

  // The value range: each bar (grouped) or each column's sum (stacked).
  double hi = 0;
  double lo = 0;
  for (std::size_t k = 0; k < c.categories.size(); ++k) {
    double sum = 0;
    for (const BarSeries& s : c.series) {
      if (k < s.values.size() && s.values[k] && std::isfinite(*s.values[k])) {
        const double v = *s.values[k];
        if (c.stacked) {
          sum += std::max(v, 0.0);
        } else {
          hi = std::max(hi, v);
          lo = std::min(lo, v);
        }
      }
    }
    hi = std::max(hi, sum);
  }
  for (const RefLine& r : c.refs) {
    hi = std::max(hi, r.y * 1.05);
  }
  if (hi == lo) {
    hi = lo + 1;
  }
  Axis y = c.y;
  y.log = false;
  y.zero = true;
  const internal::AxisFit fy = internal::FitAxis(y, lo, hi);
  const Scale sy = Scale::Linear(fy.d0, fy.d1, f.bottom, f.top);
  internal::DrawYAxis(out, f, sy, fy.ticks, y);

  // Categories: equal bands; labels under each band.
  const std::size_t n = std::max<std::size_t>(c.categories.size(), 1);
  const double band = (f.right - f.left) / static_cast<double>(n);
  const double inner = band * 0.7;
  out += "<g class=\"axis x-axis\">\n";
  for (std::size_t k = 0; k < c.categories.size(); ++k) {
    const double cx = f.left + band * (static_cast<double>(k) + 0.5);
    out += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       Px(cx), Px(f.bottom + 17), XmlEscape(c.categories[k]));
  }
  out += fmt::format(
      "<line class=\"axis-line\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/>\n"
      "<text class=\"axis-title\" x=\"{3}\" y=\"{4}\" text-anchor=\"middle\">{5}</text>\n</g>\n",
      Px(f.left), Px(f.right), Px(sy(0)), Px((f.left + f.right) / 2), Px(f.bottom + 38),
      XmlEscape(c.x_label));
  if (c.categories.empty()) {
    out += fmt::format(
        "<text class=\"no-data\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">no "
        "data</text>\n",
        Px((f.left + f.right) / 2), Px((f.top + f.bottom) / 2));
  }
  internal::DrawRefs(out, f, sy, c.refs, y);

  const double ns = static_cast<double>(std::max<std::size_t>(c.series.size(), 1));
  std::vector<double> stack(c.categories.size(), 0.0);
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const BarSeries& s = c.series[i];
    const std::string name = XmlEscape(s.name);
    out += fmt::format("<g class=\"series {}\" data-series=\"{}\">\n",
                       internal::SeriesClass(s.css, i), name);
    for (std::size_t k = 0; k < c.categories.size() && k < s.values.size(); ++k) {
      if (!s.values[k] || !std::isfinite(*s.values[k])) {
        continue;
      }
      const double v = *s.values[k];
      const double x0 = f.left + band * static_cast<double>(k) + (band - inner) / 2;
      double x = x0;
      double w = inner;
      double base = 0;
      if (c.stacked) {
        base = stack[k];
        stack[k] += std::max(v, 0.0);
      } else {
        w = inner / ns;
        x = x0 + w * static_cast<double>(i);
      }
      const double top = c.stacked ? sy(base + std::max(v, 0.0)) : sy(std::max(v, 0.0));
      const double bottom = c.stacked ? sy(base) : sy(std::min(v, 0.0));
      out += fmt::format(
          "<rect class=\"mark\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" data-series=\"{}\" "
          "data-x=\"{}\" data-y=\"{}\"><title>{}: {}, {}</title></rect>\n",
          Px(x), Px(top), Px(std::max(w - 1, 1.0)), Px(std::max(bottom - top, 0.0)), name,
          XmlEscape(c.categories[k]), Num(v), name, XmlEscape(c.categories[k]),
          XmlEscape(internal::ValueText(y, v)));
    }
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace sb::chart
