#include "report/profile_rows.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chart/chart.h"
#include "core/escape.h"
#include "report/format.h"
#include "report/html_figure.h"
#include "report/table.h"

namespace sb::report {

using nlohmann::json;

bool ComparedFromRows(const ProfileSpec& p) {
  return !p.metrics.empty() && !p.title.empty();
}

bool DrawnFromRows(const ProfileSpec& p) {
  return ComparedFromRows(p) && !p.own_sections;
}

std::optional<double> MetricValue(const json& row, const MetricSpec& m) {
  const json* v = Find(row, {m.field});
  if (v != nullptr && v->is_object()) {
    return NumberAt(*v, {"median"});
  }
  return NumberAt(row, {m.field});
}

std::vector<double> MetricSamples(const json& row, const MetricSpec& m) {
  return NumbersAt(row, {m.field, "values"});
}

std::string FormatMetric(std::optional<double> v, std::string_view unit) {
  if (!v) {
    return std::string(kMissing);
  }
  if (unit == "ms") {
    return FormatMs(v);
  }
  if (unit == "tok/s") {
    return FormatFixed1(v);
  }
  if (unit == "x") {
    return *v >= 1 ? FormatRatio(*v) : FormatFixed2(v) + "×";
  }
  if (unit == "tokens") {
    return FormatCount(v);
  }
  if (unit == "%") {
    return FormatPercent(v);
  }
  return FormatFixed2(v);
}

std::string FormatMetricWithUnit(std::optional<double> v, std::string_view unit) {
  std::string text = FormatMetric(v, unit);
  if (v && (unit == "ms" || unit == "tok/s" || unit == "tokens")) {
    text += fmt::format(" {}", unit);
  }
  return text;
}

std::string MetricHeader(const MetricSpec& m) {
  if (m.unit == "ms" || m.unit == "tok/s") {
    return fmt::format("{} ({})", m.label, m.unit);
  }
  return std::string(m.label);
}

std::string RowPlace(const json& row, const ProfileSpec& p) {
  if (auto n = NumberAt(row, {p.dim})) {
    return FormatCount(n);
  }
  if (auto s = StringAt(row, {p.dim})) {
    return *s;
  }
  return std::string(kMissing);
}

std::optional<Place> PlaceOf(const json& row, const ProfileSpec& p) {
  const json* v = Find(row, {p.dim});
  if (v == nullptr || !(v->is_number() || v->is_string())) {
    return std::nullopt;
  }
  Place out;
  std::string at;
  if (v->is_number()) {
    const double x = v->get<double>();
    at = FormatCount(x);
    out.key = std::floor(x) == x ? fmt::format("{:.0f}", x) : fmt::format("{}", x);
  } else {
    at = v->get<std::string>();
    out.key = at;
    for (char& ch : out.key) {
      if (std::isalnum(static_cast<unsigned char>(ch)) == 0 && ch != '-' && ch != '_') {
        ch = '_';
      }
    }
  }
  if (p.dim_unit.empty()) {
    out.phrase = at;
  } else if (p.dim == p.dim_unit) {
    out.phrase = fmt::format("{} {}", p.dim_unit, at);
  } else {
    out.phrase = fmt::format("{} {}", at, p.dim_unit);
  }
  return out;
}

std::string Capitalized(std::string_view text) {
  std::string out(text);
  if (!out.empty()) {
    out.front() = static_cast<char>(std::toupper(static_cast<unsigned char>(out.front())));
  }
  return out;
}

std::string DimHeader(const ProfileSpec& p) {
  std::string out = Capitalized(p.dim.empty() ? std::string_view("Row") : p.dim);
  std::replace(out.begin(), out.end(), '_', ' ');
  return out;
}

namespace md {

void RenderRows(const ProfileSpec& p, const json& section, std::string& out) {
  const auto rows = ArrayAt(section, {p.rows});
  if (rows.empty()) {
    return;
  }
  out += fmt::format("### {}\n\n", p.title);
  out += fmt::format("{}. Medians; results.json `perf.{}` has every statistic.\n\n",
                     Capitalized(p.summary), p.key);
  const bool errors = std::any_of(rows.begin(), rows.end(), [](const json* r) {
    return NumberAt(*r, {"errors"}).value_or(0) > 0;
  });
  std::vector<Column> cols = {{DimHeader(p), Align::kRight}};
  for (const MetricSpec& m : p.metrics) {
    cols.push_back({MetricHeader(m), Align::kRight});
  }
  if (errors) {
    cols.push_back({"Errors", Align::kRight});
  }
  MarkdownTable t(cols);
  for (const json* r : rows) {
    std::vector<std::string> cells = {MarkdownCell(RowPlace(*r, p))};
    for (const MetricSpec& m : p.metrics) {
      cells.push_back(FormatMetric(MetricValue(*r, m), m.unit));
    }
    if (errors) {
      cells.push_back(FormatCount(NumberAt(*r, {"errors"}).value_or(0)));
    }
    t.AddRow(std::move(cells));
  }
  out += t.Render() + "\n";
  bool skipped = false;
  for (const json* r : rows) {
    if (auto why = StringAt(*r, {"skipped"})) {
      out +=
          fmt::format("- {}: not sent, {}.\n", MarkdownCell(RowPlace(*r, p)), MarkdownCell(*why));
      skipped = true;
    }
  }
  out += skipped ? "\n" : "";
}

}  // namespace md

namespace html {

std::string RowsSection(const ProfileSpec& p, const json& section, int& charts) {
  const auto rows = ArrayAt(section, {p.rows});
  const std::string_view unit = p.metrics.front().unit;
  std::vector<const MetricSpec*> shown;
  for (const MetricSpec& m : p.metrics) {
    if (m.unit == unit) {
      shown.push_back(&m);
    }
  }
  const bool numeric = !rows.empty() && std::all_of(rows.begin(), rows.end(), [&](const json* r) {
    return NumberAt(*r, {p.dim}).has_value();
  });
  const chart::Axis y{.label = std::string(p.metrics.front().label),
                      .unit = unit == "x" ? "" : std::string(unit),
                      .decimals = unit == "tokens" ? 0 : 1};
  std::string figure;
  bool any = false;
  if (numeric) {
    chart::XYChart c;
    c.id = std::string(p.name);
    c.title = std::string(p.title);
    const auto [lo, hi] =
        std::minmax_element(rows.begin(), rows.end(), [&p](const json* a, const json* b) {
          return *NumberAt(*a, {p.dim}) < *NumberAt(*b, {p.dim});
        });
    const double x_min = *NumberAt(**lo, {p.dim});
    const double x_max = *NumberAt(**hi, {p.dim});
    c.x = chart::Axis{.label = DimHeader(p),
                      .unit = std::string(p.dim_unit),
                      .log = x_min > 0 && x_max >= 10 * x_min,
                      .decimals = 0};
    c.y = y;
    int css = 0;
    for (const MetricSpec* m : shown) {
      chart::Series s{
          .name = std::string(m->label), .points = {}, .css = fmt::format("c{}", css++)};
      for (const json* r : rows) {
        if (auto v = MetricValue(*r, *m)) {
          s.points.push_back(chart::Point{*NumberAt(*r, {p.dim}), *v, ""});
          any = true;
        }
      }
      c.series.push_back(std::move(s));
    }
    figure = any ? Figure(c, "Medians per row.") : "";
  } else {
    chart::BarChart c;
    c.id = std::string(p.name);
    c.title = std::string(p.title);
    c.x_label = DimHeader(p);
    c.y = y;
    for (const json* r : rows) {
      c.categories.push_back(RowPlace(*r, p));
    }
    int css = 0;
    for (const MetricSpec* m : shown) {
      chart::BarSeries s{
          .name = std::string(m->label), .values = {}, .css = fmt::format("c{}", css++)};
      for (const json* r : rows) {
        s.values.push_back(MetricValue(*r, *m));
        any = any || s.values.back().has_value();
      }
      c.series.push_back(std::move(s));
    }
    figure = any ? Figure(c, "Medians per row.") : "";
  }
  if (!any) {
    return "";
  }
  ++charts;
  return "<section class=\"speed\">\n<h3>" + XmlEscape(p.title) + "</h3>\n" + figure +
         "</section>\n";
}

}  // namespace html

}  // namespace sb::report
