#include "report/html_figure.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "chart/svg.h"
#include "report/format.h"

namespace sb::report::html {
namespace {

std::string AxisTitle(const chart::Axis& a) {
  return a.unit.empty() ? a.label : a.label + " (" + a.unit + ")";
}

std::string Value(const chart::Axis& axis, std::optional<double> v) {
  return v ? chart::Readable(*v, axis.decimals) : std::string(kMissing);
}

std::string Wrap(const std::string& id, const std::string& svg, const std::string& table,
                 const std::string& note) {
  std::string out = fmt::format("<figure class=\"figure\" id=\"chart-{0}\" data-figure=\"{0}\">\n",
                                XmlEscape(id));
  out += "<div class=\"plot\">\n" + svg + "</div>\n" + table;
  if (!note.empty()) {
    out += "<figcaption>" + note + "</figcaption>\n";
  }
  out += "</figure>\n";
  return out;
}

}  // namespace

std::string Figure(const chart::XYChart& c, const std::string& note) {
  // Rows: every x value of any series, in increasing order.
  std::vector<double> xs;
  for (const auto& s : c.series) {
    for (const auto& p : s.points) {
      xs.push_back(p.x);
    }
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  std::string t = "<table class=\"data\">\n<thead><tr><th>" + XmlEscape(AxisTitle(c.x)) + "</th>";
  for (const auto& s : c.series) {
    t += "<th>" + XmlEscape(s.name) + (c.y.unit.empty() ? "" : " (" + XmlEscape(c.y.unit) + ")") +
         "</th>";
  }
  t += "</tr></thead>\n<tbody>\n";
  for (double x : xs) {
    t += "<tr><td class=\"num\">" + Value(c.x, x) + "</td>";
    for (const auto& s : c.series) {
      std::optional<double> y;
      for (const auto& p : s.points) {
        if (p.x == x) {
          y = p.y;
        }
      }
      t += "<td class=\"num\">" + Value(c.y, y) + "</td>";
    }
    t += "</tr>\n";
  }
  for (const auto& r : c.refs) {
    t += fmt::format(
        "<tr class=\"ref-row\"><td>{}</td><td class=\"num\" colspan=\"{}\">{}</td></tr>\n",
        XmlEscape(r.name), std::max<std::size_t>(c.series.size(), 1), Value(c.y, r.y));
  }
  t += "</tbody>\n</table>\n";
  return Wrap(c.id, chart::RenderXY(c), t, note);
}

std::string Figure(const chart::BarChart& c, const std::string& note) {
  std::string t = "<table class=\"data\">\n<thead><tr><th>" + XmlEscape(c.x_label) + "</th>";
  for (const auto& s : c.series) {
    t += "<th>" + XmlEscape(s.name) + (c.y.unit.empty() ? "" : " (" + XmlEscape(c.y.unit) + ")") +
         "</th>";
  }
  t += "</tr></thead>\n<tbody>\n";
  for (std::size_t k = 0; k < c.categories.size(); ++k) {
    t += "<tr><td>" + XmlEscape(c.categories[k]) + "</td>";
    for (const auto& s : c.series) {
      t += "<td class=\"num\">" + Value(c.y, k < s.values.size() ? s.values[k] : std::nullopt) +
           "</td>";
    }
    t += "</tr>\n";
  }
  for (const auto& r : c.refs) {
    t += fmt::format(
        "<tr class=\"ref-row\"><td>{}</td><td class=\"num\" colspan=\"{}\">{}</td></tr>\n",
        XmlEscape(r.name), std::max<std::size_t>(c.series.size(), 1), Value(c.y, r.y));
  }
  t += "</tbody>\n</table>\n";
  return Wrap(c.id, chart::RenderBars(c), t, note);
}

std::string TimeFigure(const chart::XYChart& c, const std::string& note) {
  // Rows: one per sample, in increasing x; the series' points at one x are matched in order (two
  // samples can share a time at the table's precision: both are rows). A NaN y (a sample that
  // did not read this value) is a "—" cell, as it is a gap in the line.
  std::map<std::pair<double, int>, std::vector<std::optional<double>>> rows;
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    std::map<double, int> seen;  // points of this series at each x so far
    for (const auto& p : c.series[k].points) {
      auto& row = rows[{p.x, seen[p.x]++}];
      row.resize(c.series.size());
      if (std::isfinite(p.y)) {
        row[k] = p.y;
      }
    }
  }
  std::string t = fmt::format(
      "<details class=\"samples\"><summary>The {} samples</summary>\n<table class=\"data\">\n"
      "<thead><tr><th>{}</th>",
      rows.size(), XmlEscape(AxisTitle(c.x)));
  for (const auto& s : c.series) {
    t += "<th>" + XmlEscape(s.name) + (c.y.unit.empty() ? "" : " (" + XmlEscape(c.y.unit) + ")") +
         "</th>";
  }
  t += "</tr></thead>\n<tbody>\n";
  for (auto& [key, ys] : rows) {
    ys.resize(c.series.size());
    t += "<tr><td>" + Value(c.x, key.first) + "</td>";
    for (const auto& y : ys) {
      t += "<td>" + Value(c.y, y) + "</td>";
    }
    t += "</tr>\n";
  }
  t += "</tbody>\n</table>\n</details>\n";
  return Wrap(c.id, chart::RenderXY(c), t, note);
}

std::string_view Stylesheet() {
  return R"css(:root { color-scheme: light dark; --fg: #1d2330; --bg: #ffffff; --muted: #5b6475;
  --grid: #e3e6ec; --border: #cfd4dd; --c0: #1f5fbf; --c1: #e07b00; --c2: #2e9e5b; --c3: #b23a8f;
  --c4: #6b5ca5; --c5: #0f8fa0; --c6: #9c6b30; --c7: #5f6b7a; --pass: #2e9e5b; --fail: #d23c3c;
  --empty: #e0a800; --loop: #8e5bd0; --unsupported: #8a93a3; --error: #8b1e1e; --timeout: #e07b00;
  --ref: #333a47; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e4e8ef; --bg: #14171d; --muted: #9aa3b2; --grid: #2b313c; --border: #3a414e;
    --c0: #6aa6ff; --c1: #ffa94d; --c2: #5fd08f; --c3: #e27bc8; --c4: #a99bea; --c5: #4fd0df;
    --c6: #d6a66a; --c7: #a7b1c0; --pass: #5fd08f; --fail: #ff6b6b; --empty: #ffd43b;
    --loop: #b794f4; --unsupported: #8a93a3; --error: #ff8787; --timeout: #ffa94d; --ref: #d0d6e0; }
}
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: var(--fg); background: var(--bg); margin: 2em auto; max-width: 1400px; padding: 0 1em;
  line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid var(--border); }
.meta, figcaption, .note { color: var(--muted); }
.banner { padding: .5em 1em; border-left: 4px solid var(--fail); font-weight: bold; }
.glance { display: flex; flex-wrap: wrap; gap: 1em; margin: 1em 0; }
.glance .card { border: 1px solid var(--border); border-radius: 6px; padding: .6em 1em;
  min-width: 11em; }
.glance .label { display: block; color: var(--muted); font-size: .9em; }
.glance .value { display: block; font-size: 1.6em; font-weight: bold;
  font-variant-numeric: tabular-nums; }
.glance .detail { display: block; color: var(--muted); font-size: .85em; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border: 1px solid var(--border); padding: 3px 8px; vertical-align: top; }
th { text-align: left; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.figure { display: flex; flex-wrap: wrap; gap: 1em 2em; align-items: flex-start; margin: 1em 0 2em;
  break-inside: avoid; page-break-inside: avoid; }
.figure figcaption { flex-basis: 100%; }
.plot { flex: 0 1 640px; min-width: 320px; }
svg.chart { width: 100%; height: auto; max-width: 640px; font-size: 11px; color: var(--fg); }
svg.chart text { fill: currentColor; }
svg.chart .chart-title { font-size: 14px; font-weight: bold; }
svg.chart .axis-title { font-size: 12px; }
svg.chart .tick, svg.chart .no-data { fill: var(--muted); }
svg.chart .grid { stroke: var(--grid); }
svg.chart .axis-line, svg.chart .tick-mark { stroke: var(--muted); }
svg.chart .line { fill: none; stroke-width: 2; }
svg.chart .ref line { stroke: var(--ref); stroke-dasharray: 6 4; stroke-width: 1.5; }
svg.chart .ref text { font-size: 11px; }
svg.chart .mark { stroke: var(--bg); stroke-width: 1; }
svg.chart .point-label { font-size: 10px; stroke: none; }
details.samples td { text-align: right; font-variant-numeric: tabular-nums; }
)css"
         R"css(.c0 { fill: var(--c0); stroke: var(--c0); } .c1 { fill: var(--c1); stroke: var(--c1); }
.c2 { fill: var(--c2); stroke: var(--c2); } .c3 { fill: var(--c3); stroke: var(--c3); }
.c4 { fill: var(--c4); stroke: var(--c4); } .c5 { fill: var(--c5); stroke: var(--c5); }
.c6 { fill: var(--c6); stroke: var(--c6); } .c7 { fill: var(--c7); stroke: var(--c7); }
.st-pass { fill: var(--pass); } .st-fail { fill: var(--fail); } .st-empty { fill: var(--empty); }
.st-loop { fill: var(--loop); } .st-unsupported { fill: var(--unsupported); }
.st-error { fill: var(--error); } .st-timeout { fill: var(--timeout); }
.status { font-weight: bold; padding: 0 .4em; border-radius: 3px; color: #fff; }
.status.st-pass { background: var(--pass); } .status.st-fail { background: var(--fail); }
.status.st-empty { background: var(--empty); color: #000; }
.status.st-loop { background: var(--loop); } .status.st-unsupported { background: var(--unsupported); }
.status.st-error { background: var(--error); } .status.st-timeout { background: var(--timeout); }
@media print {
  body { margin: 0; max-width: none; font-size: 10pt; }
  h2 { break-after: avoid; page-break-after: avoid; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  table.data { font-size: 9pt; }
}
)css";
}

}  // namespace sb::report::html
