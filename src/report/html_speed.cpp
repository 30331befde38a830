// The speed charts of report.html (docs/reports.md "report.html"): one figure per chart whose
// data exists. Every plotted value is read from results.json as is (no recomputation), so a
// mark's data-y equals the field it names.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chart/chart.h"
#include "chart/svg.h"
#include "core/number_format.h"
#include "core/profile_table.h"
#include "report/format.h"
#include "report/html_figure.h"
#include "report/html_frontier.h"
#include "report/html_tails.h"
#include "report/profile_rows.h"

namespace sb::report::html {
namespace {

using json = nlohmann::json;
using chart::Axis;
using chart::BarChart;
using chart::BarSeries;
using chart::Point;
using chart::RefLine;
using chart::Series;
using chart::XYChart;

const json* Object(const json& j, std::initializer_list<std::string_view> path) {
  const json* v = Find(j, path);
  return v != nullptr && v->is_object() ? v : nullptr;
}

Axis TokS(std::string label = "Decode speed") {
  return Axis{.label = std::move(label), .unit = "tok/s", .decimals = 1};
}

Axis Ms(std::string label) {
  return Axis{.label = std::move(label), .unit = "ms", .decimals = 1};
}

std::string Section(const std::string& title, const std::string& body) {
  return "<section class=\"speed\">\n<h3>" + XmlEscape(title) + "</h3>\n" + body + "</section>\n";
}

// Decode tok/s per run: each run a dot (x = its position in perf.decode.runs, from 1), the
// median (perf.decode.decode_tok_s.median) a dashed line.
std::string Decode(const json& d, int& charts) {
  XYChart c;
  c.id = "decode";
  c.title = "Decode speed per run (single stream, excl. TTFT)";
  c.x = Axis{.label = "Run", .unit = "", .zero = false, .integer = true, .decimals = 0};
  c.y = TokS();
  Series runs{.name = "run", .points = {}, .css = "c0", .line = false};
  int i = 0;
  for (const json* r : ArrayAt(d, {"runs"})) {
    ++i;
    if (auto v = NumberAt(*r, {"decode_tok_s"})) {
      runs.points.push_back(
          Point{static_cast<double>(i), *v, fmt::format("run {}: {} tok/s", i, FormatFixed1(v))});
    }
  }
  if (i == 0) {
    return "";
  }
  c.series.push_back(std::move(runs));
  if (auto m = NumberAt(d, {"decode_tok_s", "median"})) {
    c.refs.push_back(RefLine{.name = "median", .y = *m, .label = ""});
  }
  ++charts;
  const int failed = i - static_cast<int>(c.series[0].points.size());
  return Section(
      "Decode speed",
      Figure(c, failed > 0 ? fmt::format("{} of {} runs failed and have no dot.", failed, i) : ""));
}

// A line chart of a profile's sweep, declared as data: x is each row's place (the table's dim,
// in its unit), one line per field of the rows (the median of a statistics object, or the
// number itself), y in tok/s.
struct LineSpec {
  std::string_view name;   // the series' name in the legend
  std::string_view field;  // "throughput_tok_s"
  std::string_view stat;   // "median"; "": the field is a number
};

struct SweepChartSpec {
  ProfileId profile;
  std::string_view title;  // the chart's and its section's
  bool log_x;              // a log x axis (lengths that double), else linear from 0
  std::string_view y_label;
  std::array<LineSpec, 2> lines;
  std::string_view caption;
};

// Combined throughput and per-request decode speed (median) per concurrency level.
constexpr SweepChartSpec kConcurrencyChart = {
    ProfileId::kConcurrency,
    "Throughput vs concurrency",
    false,
    "Throughput",
    {{{"combined", "throughput_tok_s", ""},
      {"per request (median)", "per_stream_decode_tok_s", "median"}}},
    "Combined: all streams' tokens over the level's wall time. Per request: each stream's decode "
    "speed, median over the streams."};

// tok/s (incl. TTFT) and decode tok/s (medians) per max_tokens, log x.
constexpr SweepChartSpec kMaxTokensChart = {
    ProfileId::kMaxTokens,
    "Speed vs output length",
    true,
    "Speed",
    {{{"tok/s (incl. TTFT)", "tok_s", "median"}, {"decode tok/s", "decode_tok_s", "median"}}},
    "Medians per length. Short outputs pay TTFT over few tokens, so tok/s incl. TTFT rises with "
    "length towards the decode speed."};

std::string SweepChart(const SweepChartSpec& spec, const json& section, int& charts) {
  const ProfileSpec& p = Profile(spec.profile);
  XYChart c;
  c.id = std::string(p.name);
  c.title = std::string(spec.title);
  c.x = Axis{.label = DimHeader(p),
             .unit = std::string(p.dim_unit),
             .log = spec.log_x,
             .zero = true,
             .integer = !spec.log_x,
             .decimals = 0};
  c.y = TokS(std::string(spec.y_label));
  bool any = false;
  for (std::size_t i = 0; i < spec.lines.size(); ++i) {
    const LineSpec& line = spec.lines[i];
    Series s{.name = std::string(line.name), .points = {}, .css = fmt::format("c{}", i)};
    for (const json* row : ArrayAt(section, {p.rows})) {
      auto x = NumberAt(*row, {p.dim});
      auto y = line.stat.empty() ? NumberAt(*row, {line.field})
                                 : NumberAt(*row, {line.field, line.stat});
      if (x && y) {
        s.points.push_back(Point{*x, *y, ""});
        any = true;
      }
    }
    c.series.push_back(std::move(s));
  }
  if (!any) {
    return "";
  }
  ++charts;
  return Section(std::string(spec.title), Figure(c, std::string(spec.caption)));
}

// TTFT median per prompt type (bars).
std::string Ttft(const json& t, int& charts) {
  BarChart c;
  c.id = "ttft";
  c.title = "Time to first token by prompt (median)";
  c.x_label = "Prompt";
  c.y = Ms("TTFT");
  BarSeries med{.name = "TTFT median", .values = {}, .css = "c0"};
  for (const json* p : ArrayAt(t, {"prompts"})) {
    c.categories.push_back(StringAt(*p, {"name"}).value_or("?"));
    med.values.push_back(NumberAt(*p, {"ttft_ms", "median"}));
  }
  if (c.categories.empty()) {
    return "";
  }
  c.series.push_back(std::move(med));
  ++charts;
  return Section("Time to first token by prompt", Figure(c));
}

// TTFT and prefill tok/s vs the prompt's size in tokens (prompt_tokens), log x.
std::string Context(const json& ctx, int& charts) {
  Series ttft{.name = "TTFT", .points = {}, .css = "c0"};
  Series prefill{.name = "prefill", .points = {}, .css = "c1"};
  int skipped = 0;
  for (const json* r : ArrayAt(ctx, {"rows"})) {
    if (Find(*r, {"skipped"}) != nullptr) {
      ++skipped;
      continue;
    }
    auto n = NumberAt(*r, {"prompt_tokens"});
    if (!n) {
      continue;
    }
    if (auto v = NumberAt(*r, {"ttft_ms"})) {
      ttft.points.push_back(Point{*n, *v, ""});
    }
    if (auto v = NumberAt(*r, {"prefill_tok_s"})) {
      prefill.points.push_back(Point{*n, *v, ""});
    }
  }
  if (ttft.points.empty() && prefill.points.empty()) {
    return "";
  }
  const Axis x{.label = "Context", .unit = "prompt tokens", .log = true, .decimals = 0};
  XYChart a;
  a.id = "context-ttft";
  a.title = "TTFT vs context size";
  a.x = x;
  a.y = Ms("TTFT");
  a.series.push_back(std::move(ttft));
  XYChart b;
  b.id = "context-prefill";
  b.title = "Prefill speed vs context size";
  b.x = x;
  b.y = TokS("Prefill speed");
  b.series.push_back(std::move(prefill));
  charts += 2;
  const std::string note =
      skipped > 0
          ? fmt::format("{} size(s) over the server's max model length were skipped.", skipped)
          : "";
  return Section("Context scaling", Figure(a, note) + Figure(b));
}

// Rate: TTFT (from the scheduled send) and ITL percentiles vs offered rate, the SLO lines;
// throughput and goodput vs offered rate.
// Throughput and goodput against the offered rate; `has_goodput` says whether any point has one.
XYChart RateGoodputChart(const std::vector<const json*>& points, const Axis& x, bool& has_goodput) {
  XYChart g;
  g.id = "rate-goodput";
  g.title = "Throughput and goodput vs offered rate";
  g.x = x;
  g.y = Axis{.label = "Requests", .unit = "req/s", .decimals = 2};
  Series thr{.name = "throughput", .points = {}, .css = "c0"};
  Series good{.name = "goodput", .points = {}, .css = "c2"};
  for (const json* p : points) {
    auto rx = NumberAt(*p, {"offered_rate_rps"});
    if (!rx) {
      continue;
    }
    if (auto v = NumberAt(*p, {"throughput_rps"})) {
      thr.points.push_back(Point{*rx, *v, ""});
    }
    if (auto v = NumberAt(*p, {"goodput", "goodput_rps"})) {
      good.points.push_back(Point{*rx, *v, ""});
    }
  }
  g.series.push_back(std::move(thr));
  // Read before the move below: a moved-from vector's emptiness says nothing.
  has_goodput = !good.points.empty();
  if (has_goodput) {
    g.series.push_back(std::move(good));
  }
  return g;
}

// The lines above the rate charts: the rate asked for beside the rate offered, and the rate
// search's answer, as report.md gives them.
std::string RateNotes(const json& rate, const std::vector<const json*>& points) {
  // The x axis is the rate each point achieved; the rate asked for goes beside it, as in
  // report.md's Rate | Offered columns (a short Poisson draw can offer 20% above the nominal).
  std::vector<std::string> asked;
  for (const json* p : points) {
    auto nominal = NumberAt(*p, {"rate_rps"});
    auto offered = NumberAt(*p, {"offered_rate_rps"});
    if (nominal && offered) {
      asked.push_back(
          fmt::format("<span data-nominal-rps=\"{}\" data-offered-rps=\"{}\">{} "
                      "&rarr; {}</span>",
                      *nominal, *offered, FixedGrouped(*nominal, 2), FixedGrouped(*offered, 2)));
    }
  }
  std::string offered_line =
      asked.empty() ? std::string()
                    : fmt::format(
                          "<p class=\"offered\">Offered rate on the x axes is the rate "
                          "each point achieved; asked &rarr; offered, req/s: {}.</p>\n",
                          fmt::join(asked, ", "));
  // The rate search's answer, as report.md gives it, above its charts.
  std::string search;
  if (Find(rate, {"search", "points"}) != nullptr) {
    auto best = NumberAt(rate, {"search", "best_rps"});
    search = fmt::format(
        "<p class=\"search\" data-best-rps=\"{}\">Highest rate meeting the SLOs: "
        "<strong>{}</strong> req/s ({}).</p>\n",
        best ? fmt::format("{}", *best) : "", best ? FormatFixed1(*best) : std::string(kMissing),
        XmlEscape(StringAt(rate, {"search", "result"}).value_or("?")));
  }
  return search + offered_line;
}

std::string Rate(const json& rate, int& charts) {
  std::vector<const json*> points = ArrayAt(rate, {"rates"});
  for (const json* p : ArrayAt(rate, {"search", "points"})) {
    points.push_back(p);
  }
  std::stable_sort(points.begin(), points.end(), [](const json* a, const json* b) {
    return NumberAt(*a, {"offered_rate_rps"}).value_or(0) <
           NumberAt(*b, {"offered_rate_rps"}).value_or(0);
  });
  const Axis x{.label = "Offered rate", .unit = "req/s", .zero = true, .decimals = 2};
  auto percentiles = [&](const char* id, const char* title, Axis y,
                         std::initializer_list<std::string_view> field) {
    XYChart c;
    c.id = id;
    c.title = title;
    c.x = x;
    c.y = std::move(y);
    int k = 0;
    for (const char* pct : {"p50", "p90", "p99"}) {
      Series s{.name = pct, .points = {}, .css = fmt::format("c{}", k++)};
      for (const json* p : points) {
        auto rx = NumberAt(*p, {"offered_rate_rps"});
        const json* stats = p;
        for (auto f : field) {
          stats = stats != nullptr ? Find(*stats, {f}) : nullptr;
        }
        auto v = stats != nullptr ? NumberAt(*stats, {pct}) : std::nullopt;
        if (rx && v) {
          s.points.push_back(Point{*rx, *v, ""});
        }
      }
      c.series.push_back(std::move(s));
    }
    return c;
  };
  XYChart t = percentiles("rate-ttft", "TTFT vs offered rate (from the scheduled send)", Ms("TTFT"),
                          {"from_scheduled", "ttft_ms"});
  if (auto slo = NumberAt(rate, {"slo", "ttft_ms"})) {
    t.refs.push_back(RefLine{
        .name = "slo", .y = *slo, .label = fmt::format("TTFT objective {} ms", FormatMs(slo))});
  }
  XYChart i = percentiles("rate-itl", "Inter-token latency vs offered rate", Ms("ITL"), {"itl_ms"});
  // Each objective on the chart of its own figure: TPOT is per request, ITL per token gap.
  XYChart tpot =
      percentiles("rate-tpot", "Time per output token vs offered rate", Ms("TPOT"), {"tpot_ms"});
  if (auto slo = NumberAt(rate, {"slo", "tpot_ms"})) {
    tpot.refs.push_back(RefLine{
        .name = "slo", .y = *slo, .label = fmt::format("TPOT objective {} ms", FormatMs(slo))});
  }
  XYChart e2e = percentiles("rate-e2e",
                            "End-to-end latency vs offered rate (from the scheduled "
                            "send)",
                            Ms("E2E"), {"from_scheduled", "e2e_ms"});
  if (auto slo = NumberAt(rate, {"slo", "e2e_ms"})) {
    e2e.refs.push_back(RefLine{
        .name = "slo", .y = *slo, .label = fmt::format("E2E objective {} ms", FormatMs(slo))});
  }
  bool has_goodput = false;
  XYChart g = RateGoodputChart(points, x, has_goodput);
  if (points.empty()) {
    return "";
  }
  charts += 5;
  return Section("Open-loop load",
                 RateNotes(rate, points) +
                     Figure(t,
                            "Latency counted from the scheduled send (no coordinated omission); "
                            "percentiles over successful requests.") +
                     Figure(e2e) + Figure(i) + Figure(tpot) +
                     Figure(g, has_goodput ? "Goodput: requests per second that met every "
                                             "objective."
                                           : "No --slo was given: no goodput."));
}

// Acceptance per draft position (the staircase) of the run's speculative decoding.
std::string Spec(const json& s, const json* perf, int& charts) {
  BarChart c;
  c.id = "spec-acceptance";
  c.title = "Acceptance per draft position";
  c.x_label = "Draft position";
  c.y = Axis{.label = "Acceptance", .unit = "fraction of drafts", .decimals = 2};
  BarSeries acc{.name = "acceptance", .values = {}, .css = "c0"};
  int i = 0;
  for (const json* v : ArrayAt(s, {"per_position"})) {
    c.categories.push_back(std::to_string(++i));
    acc.values.push_back(v->is_number() ? std::optional<double>(v->get<double>()) : std::nullopt);
  }
  const auto len = NumberAt(s, {"mean_acceptance_length"});
  const auto rate = NumberAt(s, {"acceptance_rate"});
  std::string note = fmt::format(
      "Mean acceptance length <b data-value=\"mean_acceptance_length\">"
      "{}</b> tokens per draft; acceptance rate {}.",
      FormatFixed2(len), FormatPercent(rate));
  std::string figures;
  if (c.categories.empty()) {
    figures = "<p class=\"note\">" + note + "</p>\n";
  } else {
    c.series.push_back(std::move(acc));
    ++charts;
    figures = Figure(c, note);
  }
  // Mean acceptance length per concurrency level, when the levels carry their own counters.
  XYChart l;
  l.id = "spec-length";
  l.title = "Mean acceptance length vs concurrency";
  l.x =
      Axis{.label = "Concurrency", .unit = "streams", .zero = true, .integer = true, .decimals = 0};
  l.y = Axis{.label = "Mean acceptance length", .unit = "tokens", .decimals = 2};
  Series per{.name = "mean acceptance length", .points = {}, .css = "c0"};
  if (perf != nullptr) {
    for (const json* lv : ArrayAt(*perf, {"concurrency", "levels"})) {
      auto n = NumberAt(*lv, {"concurrency"});
      auto v = NumberAt(*lv, {"spec_decode", "mean_acceptance_length"});
      if (n && v) {
        per.points.push_back(Point{*n, *v, ""});
      }
    }
  }
  if (!per.points.empty()) {
    l.series.push_back(std::move(per));
    if (len) {
      l.refs.push_back(RefLine{.name = "run",
                               .y = *len,
                               .label = fmt::format("whole run {} tokens", FormatFixed2(len))});
    }
    ++charts;
    figures += Figure(l,
                      "Each level's own counters (its measurement window). Drafts compete "
                      "with more streams for the batch as concurrency rises.");
  }
  return Section("Speculative decoding", figures);
}

}  // namespace

std::string SpeedSections(const json& r, int& charts) {
  std::string out;
  if (const json* perf = Object(r, {"perf"})) {
    if (const json* d = Object(*perf, {"decode"})) {
      out += Decode(*d, charts);
    }
    if (const json* c = Object(*perf, {"concurrency"})) {
      out += SweepChart(kConcurrencyChart, *c, charts);
      out += TailsTable(ArrayAt(*c, {"levels"}), "concurrency", "concurrency", "Concurrency");
    }
    const ProfileSpec& mt = Profile(ProfileId::kMaxTokens);
    if (const json* m = Object(*perf, {mt.key})) {
      out += SweepChart(kMaxTokensChart, *m, charts);
      out += TailsTable(ArrayAt(*m, {mt.rows}), mt.name, mt.dim, "Max tokens");
    }
    out += FrontierSection(r, charts);
    if (const json* t = Object(*perf, {"ttft"})) {
      out += Ttft(*t, charts);
    }
    if (const json* c = Object(*perf, {"context"})) {
      out += Context(*c, charts);
    }
    if (const json* rt = Object(*perf, {"rate"})) {
      out += Rate(*rt, charts);
    }
    if (const json* rp = Object(*perf, {"replay"})) {
      out += ReplaySection(*rp, charts);
    }
    if (const json* ss = Object(*perf, {"sessions"})) {
      out += SessionsSection(*ss, charts);
      out += TailsTable(ArrayAt(*ss, {"levels"}), "sessions", "concurrency", "Session concurrency");
    }
    for (const ProfileSpec& p : Profiles()) {  // the profiles drawn from their rows
      if (const json* section = Object(*perf, {p.key}); section != nullptr && DrawnFromRows(p)) {
        out += RowsSection(p, *section, charts);
      }
    }
  }
  if (const json* s = Object(r, {"spec_decode"})) {
    out += Spec(*s, Object(r, {"perf"}), charts);
  }
  return out;
}

}  // namespace sb::report::html
