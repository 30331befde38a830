#include "report/compare_charts.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chart/chart.h"
#include "chart/svg.h"
#include "report/compare.h"
#include "report/format.h"
#include "report/html_figure.h"

namespace sb::report {
namespace {

using json = nlohmann::json;

struct Row {
  std::string key;
  std::string label;  // short category label for the x axis
  std::vector<std::optional<double>> values;
};

std::optional<double> ValueAt(const json& row, std::size_t i) {
  const json* v = Find(row, {"values"});
  if (v == nullptr || !v->is_array() || i >= v->size() || !(*v)[i].is_number()) {
    return std::nullopt;
  }
  return (*v)[i].get<double>();
}

// A short x-axis label from a row's stable key (docs/compare.md): "decode", "c8", "len 256".
std::string ShortLabel(const std::string& key, const std::string& metric) {
  auto after = [&](std::string_view prefix) { return key.substr(prefix.size()); };
  if (key == "decode_tok_s") {
    return "decode";
  }
  if (key == "summary.avg_tok_s") {
    return "average";
  }
  if (key.starts_with("throughput_tok_s.c")) {
    return "c" + after("throughput_tok_s.c");
  }
  if (key.starts_with("tok_s.max_tokens_")) {
    return "len " + after("tok_s.max_tokens_");
  }
  if (key.starts_with("ttft_ms.")) {
    return after("ttft_ms.");
  }
  if (key == "score.total") {
    return "total";
  }
  if (key == "score.effective") {
    return "effective";
  }
  if (key.starts_with("score.category.")) {
    return CategoryName(after("score.category."));
  }
  return metric;
}

std::vector<Row> Rows(const json& doc, std::size_t runs, bool (*want)(const std::string&)) {
  std::vector<Row> rows;
  std::vector<const json*> all;
  for (const json* section : ArrayAt(doc, {"sections"})) {
    for (const json* r : ArrayAt(*section, {"rows"})) {
      all.push_back(r);
    }
  }
  for (const json* r : all) {
    const std::string key = StringAt(*r, {"key"}).value_or("");
    if (!want(key)) {
      continue;
    }
    Row row{key, ShortLabel(key, StringAt(*r, {"metric"}).value_or(key)), {}};
    bool any = false;
    for (std::size_t i = 0; i < runs; ++i) {
      row.values.push_back(ValueAt(*r, i));
      any = any || row.values.back().has_value();
    }
    if (any) {
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

bool SpeedKey(const std::string& k) {
  return k == "decode_tok_s" || k.starts_with("throughput_tok_s.c") ||
         k.starts_with("tok_s.max_tokens_") || k == "summary.avg_tok_s";
}

bool TtftKey(const std::string& k) {
  return k.starts_with("ttft_ms.");
}

bool ScoreKey(const std::string& k) {
  return k == "score.total" || k.starts_with("score.category.");
}

bool SpecKey(const std::string& k) {
  return k == "spec_decode.acceptance_rate";
}

chart::BarChart Grouped(const char* id, const char* title, const char* x_label, chart::Axis y,
                        const std::vector<Row>& rows, const std::vector<std::string>& labels) {
  chart::BarChart c;
  c.id = id;
  c.title = title;
  c.x_label = x_label;
  c.y = std::move(y);
  c.width =
      std::max(640.0, 120.0 + 60.0 * static_cast<double>(rows.size()) *
                                  std::max<double>(1, static_cast<double>(labels.size()) / 2));
  for (const Row& r : rows) {
    c.categories.push_back(r.label);
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    chart::BarSeries s{labels[i], {}, fmt::format("c{}", i % 8)};
    for (const Row& r : rows) {
      s.values.push_back(r.values[i]);
    }
    c.series.push_back(std::move(s));
  }
  return c;
}

}  // namespace

std::string CompareCharts(const json& doc, int& charts) {
  std::vector<std::string> labels;
  for (const json* r : ArrayAt(doc, {"runs"})) {
    labels.push_back(StringAt(*r, {"label"}).value_or("?"));
  }
  if (labels.empty()) {
    return "";
  }
  std::string out;
  const auto speed = Rows(doc, labels.size(), SpeedKey);
  if (!speed.empty()) {
    out +=
        html::Figure(Grouped("compare-speed", "Speed per metric and run", "Metric",
                             chart::Axis{"Speed", "tok/s", false, true, false, 1}, speed, labels),
                     "decode: single-stream decode (median); cN: combined throughput at N "
                     "streams; len N: tok/s at max_tokens N; average: the run's average.");
    ++charts;
  }
  const auto ttft = Rows(doc, labels.size(), TtftKey);
  if (!ttft.empty()) {
    out += html::Figure(Grouped("compare-ttft", "Time to first token per prompt and run", "Prompt",
                                chart::Axis{"TTFT", "ms", false, true, false, 1}, ttft, labels),
                        "Lower is better.");
    ++charts;
  }
  const auto score = Rows(doc, labels.size(), ScoreKey);
  if (!score.empty()) {
    out += html::Figure(Grouped("compare-score", "Pass rate per category and run", "Category",
                                chart::Axis{"Pass rate", "fraction", false, true, false, 2}, score,
                                labels));
    ++charts;
  }
  // Bare + speculative uplift: two runs, exactly one with speculative decoding measured.
  const auto spec = Rows(doc, labels.size(), SpecKey);
  if (labels.size() == 2 && !speed.empty()) {
    std::optional<std::size_t> with;
    if (!spec.empty() && spec[0].values[0].has_value() != spec[0].values[1].has_value()) {
      with = spec[0].values[0].has_value() ? 0 : 1;
    }
    if (with) {
      const std::size_t bare = 1 - *with;
      chart::BarChart c;
      c.id = "compare-spec";
      c.title = "Bare speed and speculative-decoding uplift";
      c.x_label = "Metric";
      c.y = chart::Axis{"Speed", "tok/s", false, true, false, 1};
      c.stacked = true;
      c.width = std::max(640.0, 120.0 + 60.0 * static_cast<double>(speed.size()));
      chart::BarSeries b{"bare (" + labels[bare] + ")", {}, "c0"};
      chart::BarSeries u{"speculative uplift (" + labels[*with] + ")", {}, "c5"};
      for (const Row& r : speed) {
        c.categories.push_back(r.label);
        b.values.push_back(r.values[bare]);
        if (r.values[bare] && r.values[*with] && *r.values[*with] > *r.values[bare]) {
          u.values.push_back(*r.values[*with] - *r.values[bare]);
        } else {
          u.values.push_back(std::nullopt);
        }
      }
      c.series = {std::move(b), std::move(u)};
      out += html::Figure(c,
                          "Each column is the speculative run's speed: the bare run's value, "
                          "and on top of it what speculative decoding added. No top segment: "
                          "the speculative run was not faster there.");
      ++charts;
    }
  }
  if (out.empty()) {
    return "";
  }
  return fmt::format("<section class=\"compare-charts\" data-charts=\"{}\">\n<h2>Charts</h2>\n",
                     charts) +
         out + "</section>\n";
}

std::string AddCompareCharts(std::string html, const json& compare_doc) {
  int charts = 0;
  const std::string section = CompareCharts(compare_doc, charts);
  if (section.empty()) {
    return html;
  }
  // The charts at the end of the body (the page's stylesheet, html::Stylesheet(), styles them).
  const std::string& body = section;
  if (auto end = html.rfind("</body>"); end != std::string::npos) {
    html.insert(end, body);
  } else {
    html += body;
  }
  return html;
}

}  // namespace sb::report
