// report.html's "Resources over the run" (docs/reports.md): results.json "resources.series" as
// small time-series charts (one unit each), the sources, and the figures per speed row (the
// table report.md's "## Resources" has). A sample that did not read a value is null in the
// series and a gap in its line, never a zero; a chart appears only when its column has a value.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chart/chart.h"
#include "chart/svg.h"
#include "report/format.h"
#include "report/html_figure.h"
#include "report/resource_rows.h"

namespace sb::report::html {
namespace {

using json = nlohmann::json;
using chart::Axis;
using chart::Point;
using chart::Series;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMiB = 1024.0 * 1024;
constexpr double kGiB = kMiB * 1024;

// A column of resources.series as numbers, NaN where the sample has null (or the column is
// shorter than t_s); empty when the column is absent.
std::vector<double> Column(const json& series, const char* name, std::size_t n) {
  const json* col = Find(series, {name});
  if (col == nullptr || !col->is_array()) {
    return {};
  }
  std::vector<double> out(n, kNaN);
  for (std::size_t i = 0; i < n && i < col->size(); ++i) {
    if ((*col)[i].is_number()) {
      out[i] = (*col)[i].get<double>();
    }
  }
  return out;
}

bool AnyValue(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// One series: a point per sample, NaN kept (the gap), each value times `scale`.
Series Line(std::string name, std::string css, const std::vector<double>& t,
            const std::vector<double>& v, double scale = 1) {
  Series s{
      .name = std::move(name), .points = {}, .css = std::move(css), .line = true, .dots = false};
  for (std::size_t i = 0; i < t.size() && i < v.size(); ++i) {
    s.points.push_back(Point{t[i], std::isfinite(v[i]) ? v[i] * scale : kNaN, ""});
  }
  return s;
}

// The request records of the speed profiles (each with a send time on the series' clock).
std::vector<const json*> SpeedRequests(const json& r) {
  std::vector<const json*> out;
  const json* perf = Find(r, {"perf"});
  if (perf == nullptr || !perf->is_object()) {
    return out;
  }
  auto take = [&](const std::vector<const json*>& v) { out.insert(out.end(), v.begin(), v.end()); };
  take(ArrayAt(*perf, {"decode", "runs"}));
  for (const json* l : ArrayAt(*perf, {"concurrency", "levels"})) {
    take(ArrayAt(*l, {"requests"}));
  }
  for (const json* l : ProfileRows(*perf, ProfileId::kMaxTokens)) {
    take(ArrayAt(*l, {"runs"}));
  }
  for (const json* p : ArrayAt(*perf, {"ttft", "prompts"})) {
    take(ArrayAt(*p, {"runs"}));
  }
  for (const json* row : ArrayAt(*perf, {"context", "rows"})) {
    if (const json* q = Find(*row, {"request"}); q != nullptr && q->is_object()) {
      out.push_back(q);
    }
  }
  for (const json* p : ArrayAt(*perf, {"rate", "rates"})) {
    take(ArrayAt(*p, {"requests"}));
  }
  for (const json* p : ArrayAt(*perf, {"rate", "search", "points"})) {
    take(ArrayAt(*p, {"requests"}));
  }
  return out;
}

// A request's completion tokens, spread evenly over its decode window (send + TTFT to send +
// E2E; a one-token request at its first token), added to the sampling intervals (t[k-1], t[k]]
// it overlaps. Tokens outside the samples' span are not drawn. False when it lacks a figure.
bool AddTokens(const json& q, const std::vector<double>& t, std::vector<double>& tokens) {
  auto sent = NumberAt(q, {"sent_at_ms"});
  auto ttft = NumberAt(q, {"ttft_ms"});
  auto e2e = NumberAt(q, {"e2e_ms"});
  auto n = NumberAt(q, {"completion_tokens"});
  if (!sent || !ttft || !e2e || !n || *n <= 0) {
    return false;
  }
  const double a = (*sent + *ttft) / 1000.0, b = (*sent + *e2e) / 1000.0;
  // The first interval k (t[k-1], t[k]] that can hold a.
  const auto first = static_cast<std::size_t>(std::lower_bound(t.begin(), t.end(), a) - t.begin());
  if (b <= a) {
    if (first > 0 && first < t.size()) {
      tokens[first] += *n;
    }
    return true;
  }
  for (std::size_t k = std::max<std::size_t>(first, 1); k < t.size() && t[k - 1] < b; ++k) {
    const double overlap = std::min(b, t[k]) - std::max(a, t[k - 1]);
    if (overlap > 0) {
      tokens[k] += *n * overlap / (b - a);
    }
  }
  return true;
}

// Output tok/s per sampling interval (t[i-1], t[i]], at t[i], of every request that produced
// tokens: the speed profiles' successful requests and every attempt of a quality test that
// received its answer (a test's "attempts", each with its send time; ERROR and TIMEOUT attempts
// have no token count). Empty when no request has the times. Requests replayed from the journal
// by --resume ran before this run's samples and fall outside them.
std::vector<double> OutputTokS(const json& r, const std::vector<double>& t) {
  std::vector<double> tokens(t.size(), 0);
  bool any = false;
  for (const json* q : SpeedRequests(r)) {
    if (BoolAt(*q, {"replayed"}).value_or(false) ||
        StringAt(*q, {"status"}).value_or("ok") != "ok") {
      continue;
    }
    any = AddTokens(*q, t, tokens) || any;
  }
  for (const json* test : ArrayAt(r, {"tests"})) {
    for (const json* attempt : ArrayAt(*test, {"attempts"})) {
      any = AddTokens(*attempt, t, tokens) || any;
    }
  }
  if (!any || t.size() < 2) {
    return {};
  }
  std::vector<double> out(t.size(), kNaN);
  for (std::size_t k = 1; k < t.size(); ++k) {
    if (t[k] > t[k - 1]) {
      out[k] = tokens[k] / (t[k] - t[k - 1]);
    }
  }
  return out;
}

std::string Bytes(std::optional<double> v) {
  if (!v) {
    return std::string(kMissing);
  }
  return *v >= kGiB ? fmt::format("{:.2f} GiB", *v / kGiB) : fmt::format("{:.1f} MiB", *v / kMiB);
}

std::string Fixed(std::optional<double> v, const char* fmt_str, double scale = 1) {
  return v ? fmt::format(fmt::runtime(fmt_str), *v * scale) : std::string(kMissing);
}

struct FigureColumn {
  const char* header;
  std::function<std::string(const json&)> cell;
};

const std::vector<FigureColumn>& FigureColumns() {
  static const std::vector<FigureColumn> columns = {
      {"Peak memory",
       [](const json& f) {
         std::string s = Bytes(NumberAt(f, {"memory_bytes", "peak"}));
         return s != kMissing && StringAt(f, {"memory_source"}) == "server_rss" ? s + " (RSS)" : s;
       }},
      {"Mean power",
       [](const json& f) {
         return Fixed(NumberAt(f, {"power_w", "mean"}), "{:.1f} W");
       }},
      {"Energy", [](const json& f) { return Fixed(NumberAt(f, {"energy_j"}), "{:.1f} J"); }},
      {"J/token", [](const json& f) { return Fixed(NumberAt(f, {"j_per_token"}), "{:.3f}"); }},
      {"tokens/J", [](const json& f) { return Fixed(NumberAt(f, {"tokens_per_j"}), "{:.2f}"); }},
      {"Peak KV",
       [](const json& f) {
         return Fixed(NumberAt(f, {"kv_cache_usage", "peak"}), "{:.1f}%", 100);
       }},
      {"Peak server RSS",
       [](const json& f) {
         return Bytes(NumberAt(f, {"server_rss_bytes", "peak"}));
       }},
      {"Mean server CPU",
       [](const json& f) {
         return Fixed(NumberAt(f, {"server_cpu_pct", "mean"}), "{:.1f}%");
       }},
  };
  return columns;
}

// The whole run's figures and those of every speed row, as one table of the columns some row
// has ("—" where a row lacks one).
std::string FiguresTable(const json& r, const json& res) {
  std::vector<ResourceRow> rows;
  if (const json* run = Find(res, {"run"}); run != nullptr && run->is_object()) {
    rows.push_back(ResourceRow{"whole run", "every sample, idle gaps included", "run", run});
  }
  for (ResourceRow& row : ResourceRows(r)) {
    rows.push_back(std::move(row));
  }
  if (rows.empty()) {
    return "";
  }
  std::vector<const FigureColumn*> shown;
  for (const FigureColumn& c : FigureColumns()) {
    if (std::any_of(rows.begin(), rows.end(),
                    [&](const ResourceRow& row) { return c.cell(*row.figures) != kMissing; })) {
      shown.push_back(&c);
    }
  }
  if (shown.empty()) {
    return "<p class=\"note\">No speed row has a resource figure: no available source measured "
           "memory, power or KV-cache usage (sources above).</p>\n";
  }
  std::string t = "<table class=\"resources\">\n<thead><tr><th>Profile</th><th>Row</th>";
  for (const FigureColumn* c : shown) {
    t += fmt::format("<th>{}</th>", c->header);
  }
  t += "</tr></thead>\n<tbody>\n";
  for (const ResourceRow& row : rows) {
    t += fmt::format("<tr data-row=\"{}\"><td>{}</td><td>{}</td>", XmlEscape(row.key),
                     XmlEscape(row.profile), XmlEscape(row.label));
    for (const FigureColumn* c : shown) {
      t += "<td class=\"num\">" + XmlEscape(c->cell(*row.figures)) + "</td>";
    }
    t += "</tr>\n";
  }
  return t +
         "</tbody>\n</table>\n<p class=\"note\">Columns no row has are left out; — marks a "
         "figure a row lacks (its source did not read it).</p>\n";
}

std::string SourcesTable(const json& res) {
  auto sources = ArrayAt(res, {"sources"});
  if (sources.empty()) {
    return "";
  }
  std::string t =
      "<table class=\"sources\">\n<thead><tr><th>Source</th><th>Status</th><th>What / why "
      "not</th></tr></thead>\n<tbody>\n";
  for (const json* s : sources) {
    const bool ok = BoolAt(*s, {"available"}).value_or(false);
    std::string what =
        ok ? StringAt(*s, {"detail"}).value_or("") : StringAt(*s, {"reason"}).value_or("");
    if (ok && NumberAt(*s, {"failed_reads"}).value_or(0) > 0) {
      what += fmt::format(
          " ({} of {} reads failed; last: {})", FormatCount(NumberAt(*s, {"failed_reads"})),
          FormatCount(NumberAt(*s, {"reads"})), StringAt(*s, {"last_error"}).value_or(""));
    }
    t += fmt::format("<tr data-source=\"{0}\"><td>{0}</td><td>{1}</td><td>{2}</td></tr>\n",
                     XmlEscape(StringAt(*s, {"name"}).value_or("?")),
                     ok ? "available" : "not available", XmlEscape(what));
  }
  return t + "</tbody>\n</table>\n";
}

}  // namespace

std::string ResourcesSection(const json& r, int& charts) {
  const json* res = Find(r, {"resources"});
  if (res == nullptr || !res->is_object()) {
    return "";
  }
  std::string body;
  const json* series = Find(*res, {"series"});
  std::vector<double> t;
  if (series != nullptr && series->is_object()) {
    for (const json* v : ArrayAt(*series, {"t_s"})) {
      t.push_back(v->is_number() ? v->get<double>() : kNaN);
    }
  }
  if (std::any_of(t.begin(), t.end(), [](double x) { return std::isnan(x); })) {
    t.clear();  // a time that is not a number: no axis to plot against
  }
  const std::size_t n = t.size();
  const bool merged = series != nullptr && BoolAt(*series, {"merged"}).value_or(false);
  const std::string every =
      merged ? fmt::format(
                   "{} points: the run's {} samples merged in consecutive groups (memory, KV usage "
                   "and requests: the group's peak; power: its mean)",
                   n, FormatCount(NumberAt(*res, {"samples"})))
             : fmt::format("a sample every {} ms", FormatCount(NumberAt(*res, {"period_ms"})));
  // Sample times to the period's precision: 0.25 s, 0.05 s, 0.005 s.
  const double period = NumberAt(*res, {"period_ms"}).value_or(1000);
  const int time_decimals = period >= 10 ? 2 : 3;
  auto figure = [&](chart::XYChart c, const std::string& note, bool sampled = true) {
    c.x.decimals = time_decimals;
    c.x.end = t.back();  // the axis ends with the run (its last sample), not at a rounder time
    ++charts;
    body += TimeFigure(c, sampled ? note + " Gaps are samples that did not read the value." : note);
  };

  if (n > 0) {
    if (auto tok = OutputTokS(r, t); AnyValue(tok)) {
      figure(chart::TimeSeriesChart("res-tok-s", "Output tokens per second over the run",
                                    Axis{.label = "Output", .unit = "tok/s", .decimals = 1},
                                    {Line("output tok/s", "c0", t, tok)}),
             "Derived from the requests in results.json (the speed profiles' and the quality "
             "tests'): each request's tokens spread evenly from its first token to its last, "
             "summed per sampling interval.",
             false);
    }
    const auto gpu_mem = Column(*series, "gpu_memory_used_bytes", n);
    const auto rss = Column(*series, "server_rss_bytes", n);
    // GPU memory (tens of GiB) and the server's RSS (often tens of MiB) get a chart each, so
    // that neither is a flat line at the bottom of the other's axis.
    auto memory = [&](const char* id, const char* title, const char* name,
                      const std::vector<double>& v, const char* note) {
      double peak = 0;
      for (double x : v) {
        peak = std::isfinite(x) ? std::max(peak, x) : peak;
      }
      const bool gib = peak >= kGiB;
      figure(chart::TimeSeriesChart(
                 id, title,
                 Axis{.label = "Memory", .unit = gib ? "GiB" : "MiB", .decimals = gib ? 2 : 1},
                 {Line(name, "c0", t, v, 1 / (gib ? kGiB : kMiB))}),
             note);
    };
    if (AnyValue(gpu_mem)) {
      memory("res-gpu-memory", "GPU memory over the run", "GPU memory used", gpu_mem,
             "Used memory of every GPU, summed (NVML).");
    }
    if (AnyValue(rss)) {
      memory("res-server-memory", "Server memory over the run", "server RSS", rss,
             "Resident memory of the launched server's process tree (/proc).");
    }
    const auto power = Column(*series, "gpu_power_w", n);
    const auto power_cmd = Column(*series, "power_cmd_w", n);
    if (AnyValue(power) || AnyValue(power_cmd)) {
      std::vector<Series> s;
      if (AnyValue(power)) {
        s.push_back(Line("GPU power", "c0", t, power));
      }
      if (AnyValue(power_cmd)) {
        s.push_back(Line("--power-cmd", "c1", t, power_cmd));
      }
      figure(
          chart::TimeSeriesChart("res-power", "Power over the run",
                                 Axis{.label = "Power", .unit = "W", .decimals = 1}, std::move(s)),
          "GPU power: NVML, all GPUs summed; --power-cmd: the command's reading.");
    }
    const auto kv = Column(*series, "kv_cache_usage", n);
    if (AnyValue(kv)) {
      figure(chart::TimeSeriesChart("res-kv", "KV-cache usage over the run",
                                    Axis{.label = "KV-cache usage", .unit = "%", .decimals = 1},
                                    {Line("KV-cache usage", "c0", t, kv, 100)}),
             "The server's own gauge (GET /metrics).");
    }
    const auto running = Column(*series, "requests_running", n);
    const auto waiting = Column(*series, "requests_waiting", n);
    if (AnyValue(running) || AnyValue(waiting)) {
      std::vector<Series> s;
      if (AnyValue(running)) {
        s.push_back(Line("running", "c0", t, running));
      }
      if (AnyValue(waiting)) {
        s.push_back(Line("waiting", "c1", t, waiting));
      }
      figure(
          chart::TimeSeriesChart(
              "res-requests", "Requests in the server over the run",
              Axis{.label = "Requests", .unit = "", .integer = true, .decimals = 0}, std::move(s)),
          "The server's own gauges (GET /metrics): requests it is running and requests "
          "queued.");
    }
  }
  std::string intro = fmt::format(
      "<p class=\"note\">Sampled beside every measurement window ({}; definitions in "
      "docs/metrics.md "
      "\"Resources\"). Each chart is drawn only when a source measured its value.</p>\n",
      n > 0 ? every : "no time series in results.json");
  return "<h2>Resources over the run</h2>\n" + intro + SourcesTable(*res) + body +
         FiguresTable(r, *res);
}

}  // namespace sb::report::html
