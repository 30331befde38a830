#include "store/query_html.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "chart/chart.h"
#include "chart/svg.h"
#include "core/escape.h"
#include "core/number_format.h"
#include "report/html.h"
#include "report/html_frontier.h"
#include "store/record.h"

namespace sb::store::html {

void DropEmptyColumns(Table& t, const std::vector<std::size_t>& keep) {
  for (std::size_t c = t.header.size(); c-- > 0;) {
    if (std::find(keep.begin(), keep.end(), c) != keep.end()) {
      continue;
    }
    const bool empty = std::all_of(t.rows.begin(), t.rows.end(), [&](const auto& row) {
      return c >= row.size() || row[c].text.empty();
    });
    if (!empty) {
      continue;
    }
    t.header.erase(t.header.begin() + static_cast<std::ptrdiff_t>(c));
    for (auto& row : t.rows) {
      if (c < row.size()) {
        row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
      }
    }
  }
}

std::string RenderTable(const Table& t) {
  std::string s = fmt::format("<table class=\"{}\">\n<thead><tr>", XmlEscape(t.css));
  for (std::size_t c = 0; c < t.header.size(); ++c) {
    // A column of numbers has its header right-aligned over them.
    const bool num = !t.rows.empty() && c < t.rows.front().size() && t.rows.front()[c].num;
    s += fmt::format("<th{}>{}</th>", num ? " class=\"num\"" : "", XmlEscape(t.header[c]));
  }
  s += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    s += "<tr>";
    for (const Cell& cell : row) {
      s += fmt::format("<td{}>{}</td>", cell.num ? " class=\"num\"" : "",
                       XmlEscape(cell.text.empty() ? "—" : cell.text));
    }
    s += "</tr>\n";
  }
  return s + "</tbody>\n</table>\n";
}

std::string Grouped(const std::string& number) {
  std::size_t start = number.starts_with('-') || number.starts_with('+') ? 1 : 0;
  std::size_t end = start;
  while (end < number.size() && std::isdigit(static_cast<unsigned char>(number[end]))) {
    ++end;
  }
  std::string digits = number.substr(start, end - start);
  std::string grouped;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      grouped += ',';
    }
    grouped += digits[i];
  }
  return number.substr(0, start) + grouped + number.substr(end);
}

std::string Page(const std::string& title, const std::string& body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">\n"
      "<title>servebench {0}</title>\n<style>\n{1}"
      "th.num {{ text-align: right; }}\ntd {{ white-space: nowrap; "
      "}}\n</style>\n</head>\n<body>\n<h1>servebench {0}</h1>\n{2}"
      "</body>\n</html>\n",
      XmlEscape(title), report::HtmlStylesheet(), body);
}

double IsoSeconds(const std::string& iso) {
  std::tm tm{};
  double sec = 0;
  if (std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &sec) != 6) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_sec = 0;
  return static_cast<double>(timegm(&tm)) + sec;
}

std::string HistoryChart(const std::string& metric, const std::string& unit,
                         const std::vector<HistoryPoint>& points) {
  double first = std::numeric_limits<double>::infinity(), last = -first;
  for (const HistoryPoint& p : points) {
    const double t = IsoSeconds(p.started_at);
    if (std::isfinite(t)) {
      first = std::min(first, t);
      last = std::max(last, t);
    }
  }
  if (!(first <= last)) {
    return "";
  }
  const bool days = last - first > 2 * 86400.0;
  const double per = days ? 86400.0 : 3600.0;
  chart::XYChart c;
  c.id = "history";
  c.title = metric + " over time";
  c.x = chart::Axis{
      .label = "Time since the first run", .unit = days ? "days" : "hours", .decimals = 2};
  c.y = chart::Axis{.label = metric, .unit = unit, .decimals = unit == "tok/s" ? 1 : 3};
  std::map<std::string, std::size_t> index;
  for (const HistoryPoint& p : points) {
    const double t = IsoSeconds(p.started_at);
    if (!std::isfinite(t)) {
      continue;
    }
    if (!index.contains(p.series)) {
      index[p.series] = c.series.size();
      c.series.push_back(chart::Series{.name = p.series, .points = {}, .css = "", .line = true});
    }
    const std::string tip =
        fmt::format("{}: {} {} (run {}, {})", p.series, p.value, unit, p.run, p.started_at);
    c.series[index[p.series]].points.push_back(chart::Point{(t - first) / per, p.value, tip});
  }
  return "<figure class=\"figure\" id=\"chart-history\"><div class=\"plot\">" + chart::RenderXY(c) +
         "</div><figcaption>One line per model and configuration, a dot per run (hover for its "
         "value, run and start time).</figcaption></figure>\n";
}

namespace {

// "model (configuration)" or the run's --label, as the leaderboard's legend names an entry.
std::string EntryName(const RunRecord& r) {
  std::string name = r.label.empty() ? r.model : r.label;
  const std::string config = r.Config();
  if (config != "-") {
    name += " (" + config + ")";
  }
  return name;
}

// The stored label of a frontier point: "c8" for a concurrency or sessions level, "4 req/s" for
// a rate (as results.json's frontier labels them).
std::string PointLabel(const std::string& profile, double level) {
  return profile == "rate" ? fmt::format("{:g} req/s", level)
                           : "c" + FixedGrouped(level, level == std::floor(level) ? 0 : 2);
}

}  // namespace

std::string LeaderboardFrontier(const std::vector<const RunRecord*>& entries) {
  std::vector<report::html::FrontierRun> runs;
  std::vector<std::string> without;
  for (const RunRecord* r : entries) {
    // profile -> level (ascending) -> point.
    std::map<std::string, std::map<double, FrontierPoint>> sweeps;
    for (const MetricRow& m : r->metrics) {
      if (m.dim != "level" || !m.metric.starts_with("frontier.")) {
        continue;
      }
      char* end = nullptr;
      const double level = std::strtod(m.point.c_str(), &end);
      if (end == m.point.c_str()) {
        continue;
      }
      FrontierPoint& p = sweeps[m.profile][level];
      p.level = level;
      p.label = PointLabel(m.profile, level);
      const std::string f = m.metric.substr(9);
      if (f == "tok_s_per_user") {
        p.per_user = m.value;
      } else if (f == "tok_s_per_user_tpot") {
        p.per_user_tpot = m.value;
      } else if (f == "total_tok_s") {
        p.total = m.value;
      } else if (f == "total_tok_s_per_gpu") {
        p.total_per_gpu = m.value;
      } else if (f == "pareto") {
        p.pareto = m.value != 0;
      }
    }
    report::html::FrontierRun run{EntryName(*r) + " · " + r->id.substr(0, 12), {}};
    for (auto& [profile, points] : sweeps) {
      report::html::FrontierSweep sweep{profile, {}};
      for (auto& [level, p] : points) {
        if (p.per_user > 0 && p.total > 0) {
          sweep.points.push_back(p);
        }
      }
      if (!sweep.points.empty()) {
        run.sweeps.push_back(std::move(sweep));
      }
    }
    if (run.sweeps.empty()) {
      without.push_back(r->id);
    } else {
      runs.push_back(std::move(run));
    }
  }
  if (runs.empty()) {
    return "";
  }
  std::string out =
      "<section class=\"leaderboard-frontier\">\n<h2>Throughput vs interactivity</h2>\n" +
      report::html::FrontierFigure(runs, "leaderboard-frontier", report::html::kFrontierNote);
  if (!without.empty()) {
    out +=
        "<p class=\"note\">Without frontier points (no concurrency, rate or sessions sweep, or "
        "stored before the store kept them): " +
        XmlEscape(fmt::format("{}", fmt::join(without, ", "))) + ".</p>\n";
  }
  return out + "</section>\n";
}

}  // namespace sb::store::html
