#include "chart/frame.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "chart/svg.h"

namespace sb::chart::internal {
namespace {

constexpr double kMarginLeft = 72;
constexpr double kMarginRight = 24;
constexpr double kMarginBottom = 48;
constexpr double kTitleY = 18;
constexpr double kLegendRow = 16;
constexpr double kCharWidth = 6.5;  // approximate width of a 11px sans-serif character

}  // namespace

std::string SeriesClass(const std::string& css, std::size_t index) {
  return css.empty() ? fmt::format("c{}", index % 8) : css;
}

Frame OpenChart(std::string& out, const std::string& id, const std::string& title, double width,
                double height, const std::vector<LegendItem>& legend) {
  out += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"{}\" "
      "viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\">\n",
      XmlEscape(id), Px(width), Px(height), Px(width), Px(height), XmlEscape(title));
  out += fmt::format("<text class=\"chart-title\" x=\"{}\" y=\"{}\">{}</text>\n", Px(kMarginLeft),
                     Px(kTitleY), XmlEscape(title));
  // The legend: one row of swatches, wrapped when it does not fit.
  double x = kMarginLeft;
  double y = kTitleY + kLegendRow;
  int rows = legend.empty() ? 0 : 1;
  if (!legend.empty()) {
    out += "<g class=\"legend\">\n";
  }
  for (std::size_t i = 0; i < legend.size(); ++i) {
    const double w = 14 + kCharWidth * static_cast<double>(legend[i].name.size()) + 14;
    if (x + w > width - kMarginRight && x > kMarginLeft) {
      x = kMarginLeft;
      y += kLegendRow;
      ++rows;
    }
    out += fmt::format(
        "<g class=\"legend-item\" data-series=\"{0}\"><rect class=\"swatch {1}\" x=\"{2}\" "
        "y=\"{3}\" width=\"10\" height=\"10\"/><text x=\"{4}\" y=\"{5}\">{0}</text></g>\n",
        XmlEscape(legend[i].name), legend[i].css, Px(x), Px(y - 9), Px(x + 14), Px(y));
    x += w;
  }
  if (!legend.empty()) {
    out += "</g>\n";
  }
  Frame f;
  f.left = kMarginLeft;
  f.right = width - kMarginRight;
  f.top = kTitleY + 14 + rows * kLegendRow;
  f.bottom = height - kMarginBottom;
  return f;
}

std::string AxisTitle(const Axis& axis) {
  return axis.unit.empty() ? axis.label : fmt::format("{} ({})", axis.label, axis.unit);
}

void DrawYAxis(std::string& out, const Frame& f, const Scale& s, const std::vector<double>& ticks,
               const Axis& axis) {
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  out += "<g class=\"axis y-axis\">\n";
  for (double t : ticks) {
    const double y = s(t);
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/>"
        "<text class=\"tick\" x=\"{3}\" y=\"{4}\" text-anchor=\"end\">{5}</text>\n",
        Px(f.left), Px(f.right), Px(y), Px(f.left - 6), Px(y + 4),
        XmlEscape(TickLabel(t, axis.log ? t : step, axis.log)));
  }
  out += fmt::format(
      "<line class=\"axis-line\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>\n"
      "<text class=\"axis-title\" transform=\"translate({3} {4}) rotate(-90)\" "
      "text-anchor=\"middle\">{5}</text>\n</g>\n",
      Px(f.left), Px(f.top), Px(f.bottom), Px(16), Px((f.top + f.bottom) / 2),
      XmlEscape(AxisTitle(axis)));
}

void DrawXAxis(std::string& out, const Frame& f, const Scale& s, const std::vector<double>& ticks,
               const Axis& axis) {
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  out += "<g class=\"axis x-axis\">\n";
  for (double t : ticks) {
    const double x = s(t);
    out += fmt::format(
        "<line class=\"tick-mark\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>"
        "<text class=\"tick\" x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        Px(x), Px(f.bottom), Px(f.bottom + 4), Px(f.bottom + 17),
        XmlEscape(TickLabel(t, axis.log ? t : step, axis.log)));
  }
  out += fmt::format(
      "<line class=\"axis-line\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/>\n"
      "<text class=\"axis-title\" x=\"{3}\" y=\"{4}\" text-anchor=\"middle\">{5}</text>\n</g>\n",
      Px(f.left), Px(f.right), Px(f.bottom), Px((f.left + f.right) / 2), Px(f.bottom + 38),
      XmlEscape(AxisTitle(axis)));
}

LabelBox RefLabelBox(double x_end, double baseline, std::size_t chars) {
  // 7.2 px a character and 11 px above the baseline to 3.5 below hold an 11px sans-serif label
  // (DejaVu Sans digits are 7.0 px wide), so the box the browser draws lies inside this one.
  constexpr double kLabelCharWidth = 7.2;
  return LabelBox{x_end - kLabelCharWidth * static_cast<double>(chars) - 2, baseline - 11,
                  x_end + 1, baseline + 3.5};
}

namespace {

std::size_t CodePoints(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
}

bool Covers(const LabelBox& b, const MarkAt& m) {
  const double r = kMarkRadius + 1.5;  // the circle, its outline and a pixel of air
  return m.x + r > b.left && m.x - r < b.right && m.y + r > b.top && m.y - r < b.bottom;
}

// The label's place: (x of its right end, baseline). The right end above the line when no mark
// is under it, else the first free place sliding left, above then below the line, then
// further off; the right end above the line when there is none.
std::pair<double, double> PlaceRefLabel(const Frame& f, double py, std::size_t chars,
                                        const std::vector<MarkAt>& marks) {
  const double width = RefLabelBox(0, 0, chars).right - RefLabelBox(0, 0, chars).left;
  for (double off : {0.0, 4.0, 12.0, 24.0}) {
    for (double x = f.right; x - width >= f.left - 1e-9; x -= 8) {
      for (double baseline : {py - 4 - off, py + 14 + off}) {
        const LabelBox b = RefLabelBox(x, baseline, chars);
        if (b.top < f.top - 2 || b.bottom > f.bottom) {
          continue;  // out of the plot area
        }
        if (std::none_of(marks.begin(), marks.end(),
                         [&](const MarkAt& m) { return Covers(b, m); })) {
          return {x, baseline};
        }
      }
    }
  }
  return {f.right, py - 4};
}

}  // namespace

void DrawRefs(std::string& out, const Frame& f, const Scale& y, const std::vector<RefLine>& refs,
              const Axis& axis, const std::vector<MarkAt>& marks) {
  for (const RefLine& r : refs) {
    const double py = y(r.y);
    const std::string label = r.label.empty() ? r.name + " " + ValueText(axis, r.y) : r.label;
    const auto [lx, ly] = PlaceRefLabel(f, py, CodePoints(label), marks);
    out += fmt::format(
        "<g class=\"ref\" data-ref=\"{0}\" data-y=\"{1}\"><line x1=\"{2}\" x2=\"{3}\" y1=\"{4}\" "
        "y2=\"{4}\"><title>{5}</title></line><text x=\"{6}\" y=\"{7}\" "
        "text-anchor=\"end\">{5}</text></g>\n",
        XmlEscape(r.name), Num(r.y), Px(f.left), Px(f.right), Px(py), XmlEscape(label), Px(lx),
        Px(ly));
  }
}

AxisFit FitAxis(const Axis& axis, double lo, double hi) {
  AxisFit fit;
  if (axis.log) {
    lo = std::max(lo, 1e-12);
    hi = std::max(hi, lo);
    const double d0 = lo / 1.3;
    const double d1 = hi * 1.3;
    fit.ticks = LogTicks(d0, d1);
    fit.d0 = d0;
    fit.d1 = d1;
    return fit;
  }
  if (axis.zero) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
  }
  if (axis.integer) {
    const double step = std::max(1.0, NiceStep(lo, hi, 6));
    for (double t = std::ceil(lo / step) * step; t <= hi + 1e-9; t += step) {
      fit.ticks.push_back(t);
    }
    fit.d0 = axis.zero ? lo : lo - 0.5;
    fit.d1 = hi + 0.5;
    if (fit.ticks.empty()) {
      fit.ticks = {lo};
    }
    return fit;
  }
  if (axis.end && std::isfinite(*axis.end) && *axis.end > lo) {
    // The domain ends at `end` (or at the data, should any lie past it); no tick beyond.
    const double d1 = std::max(*axis.end, hi);
    for (double t : NiceTicks(lo, d1, 5)) {
      if (t <= d1 * (1 + 1e-12) + 1e-12) {
        fit.ticks.push_back(t);
      }
    }
    fit.d0 = std::min(fit.ticks.front(), lo);
    fit.d1 = d1;
    return fit;
  }
  fit.ticks = NiceTicks(lo, hi, 5);
  fit.d0 = fit.ticks.front();
  fit.d1 = fit.ticks.back();
  return fit;
}

std::string ValueText(const Axis& axis, double v) {
  std::string s = Readable(v, axis.decimals);
  return axis.unit.empty() ? s : s + " " + axis.unit;
}

}  // namespace sb::chart::internal
