#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "chart/chart.h"
#include "chart/frame.h"
#include "chart/svg.h"

namespace sb::chart {
namespace {

using internal::Frame;

bool Drawable(const Axis& axis, double v) {
  return std::isfinite(v) && (!axis.log || v > 0);
}

}  // namespace

std::string RenderXY(const XYChart& c) {
  std::vector<internal::LegendItem> legend;
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    legend.push_back({c.series[i].name, internal::SeriesClass(c.series[i].css, i)});
  }
  std::string out;
  const Frame f = internal::OpenChart(out, c.id, c.title, c.width, c.height, legend);

  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo;
  double ylo = xlo, yhi = -xlo;
  for (const Series& s : c.series) {
    for (const Point& p : s.points) {
      if (Drawable(c.x, p.x) && Drawable(c.y, p.y)) {
        xlo = std::min(xlo, p.x);
        xhi = std::max(xhi, p.x);
        ylo = std::min(ylo, p.y);
        yhi = std::max(yhi, p.y);
      }
    }
  }
  const bool empty = !(xlo <= xhi);
  if (empty) {
    xlo = c.x.log ? 1 : 0;
    xhi = c.x.log ? 10 : 1;
    ylo = c.y.log ? 1 : 0;
    yhi = c.y.log ? 10 : 1;
  }
  for (const RefLine& r : c.refs) {
    if (Drawable(c.y, r.y)) {
      ylo = std::min(ylo, r.y);
      yhi = std::max(yhi, r.y * (c.y.log ? 1 : 1.05));
    }
  }
  const internal::AxisFit fx = internal::FitAxis(c.x, xlo, xhi);
  const internal::AxisFit fy = internal::FitAxis(c.y, ylo, yhi);
  const Scale sx = c.x.log ? Scale::Log(fx.d0, fx.d1, f.left, f.right)
                           : Scale::Linear(fx.d0, fx.d1, f.left, f.right);
  const Scale sy = c.y.log ? Scale::Log(fy.d0, fy.d1, f.bottom, f.top)
                           : Scale::Linear(fy.d0, fy.d1, f.bottom, f.top);
  internal::DrawYAxis(out, f, sy, fy.ticks, c.y);
  internal::DrawXAxis(out, f, sx, fx.ticks, c.x);
  if (empty) {
    out += fmt::format(
        "<text class=\"no-data\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">no "
        "data</text>\n",
        Px((f.left + f.right) / 2), Px((f.top + f.bottom) / 2));
  }
  std::vector<internal::MarkAt> marks;  // the circles a reference label must not cover
  for (const Series& s : c.series) {
    for (const Point& p : s.points) {
      if (s.dots && Drawable(c.x, p.x) && Drawable(c.y, p.y)) {
        marks.push_back({sx(p.x), sy(p.y)});
      }
    }
  }
  internal::DrawRefs(out, f, sy, c.refs, c.y, marks);

  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    const std::string cls = internal::SeriesClass(s.css, i);
    const std::string name = XmlEscape(s.name);
    out += fmt::format("<g class=\"series {}\" data-series=\"{}\">\n", cls, name);
    if (s.line) {
      // A point whose y is not a number (NaN: a missing sample) ends the line there: the gap
      // shows, and the next drawable point starts a new polyline.
      std::string pts;
      auto flush = [&] {
        if (!pts.empty()) {
          out += fmt::format("<polyline class=\"line\" points=\"{}\"/>\n", pts);
          pts.clear();
        }
      };
      for (const Point& p : s.points) {
        if (std::isnan(p.y)) {
          flush();
        } else if (Drawable(c.x, p.x) && Drawable(c.y, p.y)) {
          pts += (pts.empty() ? "" : " ") + Px(sx(p.x)) + "," + Px(sy(p.y));
        }
      }
      flush();
    }
    if (s.dots) {
      for (const Point& p : s.points) {
        if (!Drawable(c.x, p.x) || !Drawable(c.y, p.y)) {
          continue;
        }
        const std::string tip =
            p.tip.empty() ? fmt::format("{}: {}, {}", s.name, internal::ValueText(c.x, p.x),
                                        internal::ValueText(c.y, p.y))
                          : p.tip;
        out += fmt::format(
            "<circle class=\"mark\" cx=\"{}\" cy=\"{}\" r=\"{}\" data-series=\"{}\" "
            "data-x=\"{}\" data-y=\"{}\"><title>{}</title></circle>\n",
            Px(sx(p.x)), Px(sy(p.y)), Px(internal::kMarkRadius), name, Num(p.x), Num(p.y),
            XmlEscape(tip));
        if (!p.label.empty()) {
          out += fmt::format(
              "<text class=\"point-label\" x=\"{}\" y=\"{}\" data-series=\"{}\">{}</text>\n",
              Px(sx(p.x) + internal::kMarkRadius + 2), Px(sy(p.y) - internal::kMarkRadius - 2),
              name, XmlEscape(p.label));
        }
      }
    }
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

XYChart TimeSeriesChart(std::string id, std::string title, Axis y, std::vector<Series> series) {
  XYChart c;
  c.id = std::move(id);
  c.title = std::move(title);
  c.x = Axis{
      .label = "Time", .unit = "s", .log = false, .zero = true, .integer = false, .decimals = 1};
  c.y = std::move(y);
  for (Series& s : series) {
    s.line = true;
  }
  c.series = std::move(series);
  return c;
}

}  // namespace sb::chart
