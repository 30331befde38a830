#include "report/html_frontier.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chart/chart.h"
#include "core/escape.h"
#include "core/frontier.h"
#include "report/compare.h"
#include "report/format.h"

namespace sb::report::html {

namespace {

using nlohmann::json;

// Stored points, or (concurrency only, a run without the array) points derived from the levels.
std::vector<FrontierPoint> PointsOf(const json& perf, std::string_view profile) {
  std::vector<FrontierPoint> out;
  if (const json* fr = Find(perf, {profile, "frontier"}); fr != nullptr && fr->is_array()) {
    for (const json* p : ArrayAt(perf, {profile, "frontier"})) {
      FrontierPoint q;
      q.level = NumberAt(*p, {"level"}).value_or(0);
      q.label = StringAt(*p, {"label"}).value_or("");
      auto x = NumberAt(*p, {"tok_s_per_user"});
      auto y = NumberAt(*p, {"total_tok_s"});
      if (!x || !y) {
        continue;
      }
      q.per_user = *x;
      q.total = *y;
      q.per_user_tpot = NumberAt(*p, {"tok_s_per_user_tpot"});
      q.total_per_gpu = NumberAt(*p, {"total_tok_s_per_gpu"});
      q.pareto = BoolAt(*p, {"pareto"}).value_or(false);
      out.push_back(std::move(q));
    }
    return out;
  }
  if (profile != "concurrency") {
    return out;
  }
  std::vector<FrontierInput> in;
  for (const json* l : ArrayAt(perf, {"concurrency", "levels"})) {
    if (auto n = NumberAt(*l, {"concurrency"})) {
      in.push_back({*n, fmt::format("c{}", FormatCount(n)),
                    NumberAt(*l, {"per_stream_decode_tok_s", "median"}),
                    NumberAt(*l, {"tpot_ms", "p50"}), NumberAt(*l, {"throughput_tok_s"})});
    }
  }
  const int gpus = static_cast<int>(NumberAt(perf, {"concurrency", "gpus"}).value_or(0));
  return BuildFrontier(in, gpus);
}

std::vector<FrontierSweep> SweepsOf(const json& results) {
  std::vector<FrontierSweep> out;
  const json* perf = Find(results, {"perf"});
  if (perf == nullptr) {
    return out;
  }
  for (const char* profile : {"concurrency", "rate", "sessions"}) {
    auto pts = PointsOf(*perf, profile);
    if (!pts.empty()) {
      out.push_back({profile, std::move(pts)});
    }
  }
  return out;
}

std::string Y(const FrontierPoint& p, bool per_gpu) {
  return FormatFixed1(per_gpu ? p.total_per_gpu : std::optional<double>(p.total));
}

}  // namespace

std::string FrontierFigure(const std::vector<FrontierRun>& runs, const std::string& id,
                           const std::string& note) {
  bool per_gpu = true;
  for (const FrontierRun& d : runs) {
    for (const FrontierSweep& s : d.sweeps) {
      for (const FrontierPoint& p : s.points) {
        per_gpu = per_gpu && p.total_per_gpu.has_value();
      }
    }
  }
  chart::XYChart c;
  c.id = id;
  c.title = per_gpu ? "Throughput per GPU vs interactivity" : "Throughput vs interactivity";
  c.x = chart::Axis{.label = "Per user", .unit = "tok/s", .log = true, .decimals = 1};
  c.y = chart::Axis{.label = per_gpu ? "Total output per GPU" : "Total output",
                    .unit = "tok/s",
                    .log = true,
                    .decimals = 1};
  std::string table =
      "<table class=\"data\">\n<thead><tr>" +
      std::string(runs.size() > 1 || !runs[0].label.empty() ? "<th>Run</th>" : "") +
      "<th>Sweep</th><th>Level</th><th>Tok/s per user</th><th>1000 / TPOT</th><th>Total "
      "tok/s</th><th>Per GPU</th><th>Pareto</th></tr></thead>\n<tbody>\n";
  int colour = 0;
  for (const FrontierRun& d : runs) {
    for (const FrontierSweep& s : d.sweeps) {
      const std::string name = d.label.empty() ? s.name : d.label + " · " + s.name;
      const std::string css = fmt::format("c{}", colour++ % 8);
      chart::Series all{.name = name, .points = {}, .css = css, .line = false};
      chart::Series front{
          .name = name + " (Pareto)", .points = {}, .css = css, .line = true, .dots = false};
      for (const FrontierPoint& p : s.points) {
        const double y = per_gpu ? *p.total_per_gpu : p.total;
        all.points.push_back(chart::Point{
            p.per_user, y,
            fmt::format("{}{}: {} tok/s per user, {} tok/s{}", d.label.empty() ? "" : d.label + " ",
                        p.label, FormatFixed1(p.per_user), FormatFixed1(y),
                        per_gpu ? " per GPU" : ""),
            p.label});
        if (p.pareto) {
          front.points.push_back(chart::Point{p.per_user, y, "", ""});
        }
        table += fmt::format(
            "<tr data-pareto=\"{}\">{}<td>{}</td><td>{}</td><td class=\"num\">{}</td><td "
            "class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td>"
            "</tr>\n",
            p.pareto ? "true" : "false",
            runs.size() > 1 || !d.label.empty() ? "<td>" + XmlEscape(d.label) + "</td>" : "",
            XmlEscape(s.name), XmlEscape(p.label), FormatFixed1(p.per_user),
            FormatFixed1(p.per_user_tpot), FormatFixed1(p.total), Y(p, true),
            p.pareto ? "yes" : "");
      }
      // Along the front, per-user speed falls as total rises: join in order of x.
      std::sort(front.points.begin(), front.points.end(),
                [](const chart::Point& a, const chart::Point& b) { return a.x < b.x; });
      c.series.push_back(std::move(all));
      c.series.push_back(std::move(front));
    }
  }
  table += "</tbody>\n</table>\n";
  std::string out = fmt::format(
      "<figure class=\"figure\" id=\"chart-{0}\" data-figure=\"{0}\">\n<div class=\"plot\">\n",
      XmlEscape(id));
  out += chart::RenderXY(c) + "</div>\n" + table;
  out += "<figcaption>" + note + "</figcaption>\n</figure>\n";
  return out;
}

const char* const kFrontierNote =
    "Each point is one level of a sweep (its label): x is the median per-stream decode speed "
    "(what one user sees), y the level's total output tok/s (per GPU with --gpus). The line joins "
    "the Pareto-optimal levels: no other level is faster per user and higher in total. Up and to "
    "the right is better; log axes.";

std::string FrontierSection(const json& results, int& charts) {
  std::vector<FrontierRun> runs = {{"", SweepsOf(results)}};
  if (runs[0].sweeps.empty()) {
    return "";
  }
  ++charts;
  return "<section class=\"speed\">\n<h3>Throughput vs interactivity (frontier)</h3>\n" +
         FrontierFigure(runs, "frontier", kFrontierNote) + "</section>\n";
}

std::string CompareFrontierSection(const std::vector<const json*>& runs,
                                   const std::vector<std::string>& labels) {
  std::vector<FrontierRun> drawn;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto sweeps = SweepsOf(*runs[i]);
    if (!sweeps.empty()) {
      drawn.push_back(
          {i < labels.size() ? labels[i] : fmt::format("run {}", i + 1), std::move(sweeps)});
    }
  }
  if (drawn.size() < 2) {
    return "";
  }
  return "<section class=\"compare-frontier\">\n<h2>Throughput vs interactivity</h2>\n" +
         FrontierFigure(drawn, "compare-frontier", kFrontierNote) + "</section>\n";
}

}  // namespace sb::report::html

namespace sb::report {

std::string AddCompareFrontier(std::string page, const std::vector<CompareRun>& runs,
                               const Comparison& c) {
  std::vector<const nlohmann::json*> docs;
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    docs.push_back(&runs[i].results);
    labels.push_back(i < c.runs.size() ? c.runs[i].label : "");
  }
  const std::string section = html::CompareFrontierSection(docs, labels);
  if (section.empty()) {
    return page;
  }
  if (auto end = page.rfind("</body>"); end != std::string::npos) {
    page.insert(end, section);
  } else {
    page += section;
  }
  return page;
}

}  // namespace sb::report
