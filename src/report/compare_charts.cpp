#include "report/compare_charts.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chart/chart.h"
#include "chart/svg.h"
#include "core/profile_table.h"
#include "report/compare.h"
#include "report/format.h"
#include "report/html_figure.h"
#include "report/profile_rows.h"

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
  if (key.starts_with("rate.")) {  // rate.4.00.output_tok_s -> "4.00 req/s"
    const std::string rest = after("rate.");
    const auto dot = rest.find('.', rest.find('.') + 1);
    return rest.substr(0, dot) + " req/s";
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
  // A profile compared from its rows: "TTFT, turn 3" -> "turn 3".
  if (const auto comma = metric.find(", "); comma != std::string::npos) {
    return metric.substr(comma + 2);
  }
  return metric;
}

std::vector<Row> Rows(const json& doc, std::size_t runs,
                      const std::function<bool(const std::string&)>& want) {
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

// One panel per kind of figure, so no run's bars vanish beside a larger kind's (single-stream
// decode beside the combined throughput of 64 streams).
bool DecodeKey(const std::string& k) {
  return k == "decode_tok_s" || k == "summary.avg_tok_s";
}

bool ConcurrencyKey(const std::string& k) {
  return k.starts_with("throughput_tok_s.c");
}

bool MaxTokensKey(const std::string& k) {
  return k.starts_with("tok_s.max_tokens_");
}

bool RateOutputKey(const std::string& k) {
  return k.starts_with("rate.") && k.ends_with(".output_tok_s");
}

bool RateTtftKey(const std::string& k) {
  return k.starts_with("rate.") && k.ends_with(".ttft_ms.p99");
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

chart::BarChart Grouped(const std::string& id, const std::string& title, const std::string& x_label,
                        chart::Axis y, const std::vector<Row>& rows,
                        const std::vector<std::string>& labels) {
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

// What else differs between the bare and the speculative run: the uplift chart credits the
// whole gap to speculative decoding, which holds only for the same model on the same server.
std::string OtherDifferences(const json& doc, std::size_t bare, std::size_t with) {
  auto runs = ArrayAt(doc, {"runs"});
  if (bare >= runs.size() || with >= runs.size()) {
    return "";
  }
  std::vector<std::string> diffs;
  for (const char* field : {"model", "server_kind", "server_version", "endpoint"}) {
    auto a = StringAt(*runs[bare], {field}).value_or("?");
    auto b = StringAt(*runs[with], {field}).value_or("?");
    if (a != b) {
      std::string name = field;
      std::replace(name.begin(), name.end(), '_', ' ');
      diffs.push_back(fmt::format("{} {} vs {}", name, a, b));
    }
  }
  if (diffs.empty()) {
    return "";
  }
  return fmt::format(
      " Caution: the two runs differ in more than speculative decoding ({}), so part of the "
      "gap may come from that.",
      fmt::join(diffs, "; "));
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
  const chart::Axis tok_s{"Speed", "tok/s", false, true, false, 1};
  auto panel = [&](const std::string& id, const std::string& title, const std::string& x_label,
                   chart::Axis y, const std::function<bool(const std::string&)>& want,
                   const std::string& note) {
    const auto rows = Rows(doc, labels.size(), want);
    if (!rows.empty()) {
      out += html::Figure(Grouped(id, title, x_label, std::move(y), rows, labels), note);
      ++charts;
    }
  };
  panel("compare-decode", "Decode speed per run", "Metric", tok_s, DecodeKey,
        "decode: single-stream decode, TTFT excluded (median); average: the run's suite "
        "average.");
  panel("compare-concurrency", "Combined throughput per concurrency and run", "Streams", tok_s,
        ConcurrencyKey, "cN: the combined output tok/s of N concurrent streams.");
  panel("compare-max-tokens", "Speed per output length and run", "Output length", tok_s,
        MaxTokensKey, "len N: tok/s (TTFT included) at max_tokens N.");
  panel("compare-rate", "Output throughput per offered rate and run", "Offered rate", tok_s,
        RateOutputKey, "Output tok/s of the successful requests at each offered rate.");
  panel("compare-rate-ttft", "TTFT p99 per offered rate and run", "Offered rate",
        chart::Axis{"TTFT p99", "ms", false, true, false, 1}, RateTtftKey,
        "From the scheduled send; lower is better.");
  // A profile compared from its rows (profile_rows.h): its first metric at each place.
  for (const ProfileSpec& p : Profiles()) {
    if (!ComparedFromRows(p)) {
      continue;
    }
    const MetricSpec& m = p.metrics.front();
    const std::string prefix = fmt::format("{}.", p.name);
    const std::string suffix = fmt::format(".{}", m.field);
    std::string dim = DimHeader(p);
    std::transform(dim.begin(), dim.end(), dim.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    panel(
        fmt::format("compare-{}", p.name), fmt::format("{} per {} and run", m.label, dim),
        DimHeader(p),
        chart::Axis{std::string(m.label), m.unit == "x" ? "" : std::string(m.unit), false, true,
                    false, m.unit == "tokens" ? 0 : 1},
        [&](const std::string& k) { return k.starts_with(prefix) && k.ends_with(suffix); },
        fmt::format("{} at each {}; {}.", m.label, dim,
                    m.better < 0   ? "lower is better"
                    : m.better > 0 ? "higher is better"
                                   : "neither higher nor lower is better"));
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
                          "the speculative run was not faster there." +
                              OtherDifferences(doc, bare, *with));
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
