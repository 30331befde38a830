#include "store/query.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/escape.h"
#include "core/profile_table.h"
#include "store/query_html.h"

namespace sb::store {

namespace {

using nlohmann::json;

std::optional<double> NumericPoint(const std::string& point) {
  try {
    std::size_t used = 0;
    const double v = std::stod(point, &used);
    return used == point.size() ? std::optional<double>(v) : std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
}

std::string Server(const RunRecord& r) {
  return r.server_version.empty() ? r.server_kind : r.server_kind + " " + r.server_version;
}

std::string Fixed(double v, const std::string& unit) {
  if (unit == "bytes") {
    constexpr double kMiB = 1024.0 * 1024;
    return v >= 1024 * kMiB ? fmt::format("{:.2f} GiB", v / (1024 * kMiB))
                            : fmt::format("{:.1f} MiB", v / kMiB);
  }
  if (unit == "J/token" || unit == "fraction") {
    return fmt::format("{:.3f}", v);
  }
  if (unit.empty()) {
    return std::fabs(v) < 10 ? fmt::format("{:.3f}", v) : fmt::format("{:.1f}", v);
  }
  return fmt::format("{:.1f}", v);
}

std::string Percent(double fraction) {
  return fmt::format("{:+.1f}%", fraction * 100);
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) {
    return s;
  }
  std::string out = "\"";
  for (char ch : s) {
    out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  }
  return out + "\"";
}

// A Markdown cell (core/escape.h: '|', '<', line breaks and control characters made safe).
std::string MdCell(const std::string& s) {
  return s.empty() ? "—" : MarkdownCell(s, std::string::npos);
}

// A table: header and rows of cells, rendered as Markdown or CSV (HTML: query_html.h).
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  std::string Markdown() const {
    std::string s = "|";
    for (const auto& h : header) {
      s += " " + MdCell(h) + " |";
    }
    s += "\n|";
    for (std::size_t i = 0; i < header.size(); ++i) {
      s += "---|";
    }
    s += "\n";
    for (const auto& r : rows) {
      s += "|";
      for (const auto& c : r) {
        s += " " + MdCell(c) + " |";
      }
      s += "\n";
    }
    return s;
  }

  std::string Csv() const {
    std::string s;
    auto line = [&s](const std::vector<std::string>& cells) {
      for (std::size_t i = 0; i < cells.size(); ++i) {
        s += (i ? "," : "") + CsvField(cells[i]);
      }
      s += "\n";
    };
    line(header);
    for (const auto& r : rows) {
      line(r);
    }
    return s;
  }
};

json Optional(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string SeriesKey(const RunRecord& r) {
  return r.model + "\n" + r.Config();
}

// What a `--by model` leaderboard groups by: the model, the server (kind and version), the
// recipe and the tags, so runs against another server or endpoint never replace each other.
std::string BoardKey(const RunRecord& r) {
  return r.model + "\n" + Server(r) + "\n" + r.Config();
}

struct BoardColumn {
  std::string title;
  MetricSpec spec;
};

// A figure as the HTML pages print it: thousands grouped, a pass rate in percent.
std::string HtmlFigure(double v, const MetricSpec& spec, const std::string& unit) {
  return spec.profile == "suite" ? fmt::format("{:.1f}%", v * 100) : html::Grouped(Fixed(v, unit));
}

// `leaderboard --format html`: the table with the ranked metric's 95% interval beside it, the
// columns no entry has left out, and the tie note only when there is a tie.
std::string LeaderboardHtml(const std::vector<const RunRecord*>& entries,
                            const std::vector<int>& rank, const std::vector<bool>& tie,
                            const std::vector<BoardColumn>& columns, const MetricSpec& spec,
                            const std::string& title, const std::string& intro,
                            const std::string& note) {
  html::Table t{.css = "leaderboard", .header = {}, .rows = {}};
  t.header = {"rank (" + spec.Name() + ")", "model", "configuration", "server", "servebench"};
  std::vector<std::size_t> keep = {0, 1, 2, 3, 4};
  for (const BoardColumn& c : columns) {
    t.header.push_back(c.title);
    if (c.spec.Name() == spec.Name()) {
      keep.push_back(t.header.size() - 1);
      t.header.push_back("95% CI");
    }
  }
  t.header.push_back("run");
  keep.push_back(t.header.size() - 1);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const RunRecord& r = *entries[i];
    std::vector<html::Cell> row = {{std::to_string(rank[i]) + (tie[i] ? "=" : ""), true},
                                   {r.model, false},
                                   {r.Config(), false},
                                   {Server(r), false},
                                   {r.tool_version, false}};
    for (const BoardColumn& c : columns) {
      const MetricRow* x = FindMetric(r, c.spec);
      row.push_back({x ? HtmlFigure(x->value, c.spec, x->unit) : "", true});
      if (c.spec.Name() == spec.Name()) {
        row.push_back({x && x->ci_lo && x->ci_hi ? HtmlFigure(*x->ci_lo, c.spec, x->unit) + "–" +
                                                       HtmlFigure(*x->ci_hi, c.spec, x->unit)
                                                 : "",
                       true});
      }
    }
    row.push_back({r.id, false});
    t.rows.push_back(std::move(row));
  }
  html::DropEmptyColumns(t, keep);
  std::string body = "<p class=\"meta\">" + XmlEscape(intro) + "</p>\n";
  if (!entries.empty()) {
    body += html::RenderTable(t);
  }
  if (std::find(tie.begin(), tie.end(), true) != tie.end()) {
    body += "<p class=\"note\">" + XmlEscape(note) + "</p>\n";
  }
  body +=
      "<p class=\"note\">Columns no entry measured are left out; — marks a figure an entry "
      "lacks. 95% CI: the interval of the ranked metric (docs/store.md).</p>\n";
  body += html::LeaderboardFrontier(entries);
  return html::Page(title, body);
}

// `history --format html`: the chart of the metric over time, then the table (its Markdown cells,
// numbers right-aligned and grouped in thousands) and the bridge lines.
std::string HistoryHtml(const Table& md, const MetricSpec& spec, const std::string& unit,
                        const std::vector<html::HistoryPoint>& points,
                        const std::vector<std::string>& bridge) {
  html::Table t{.css = "history", .header = md.header, .rows = {}};
  for (const auto& row : md.rows) {
    std::vector<html::Cell> cells;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool num = c == 0 || c >= 7;  // #, the value, its interval, the change
      cells.push_back({num && c > 0 ? html::Grouped(row[c]) : row[c], num});
    }
    if (cells.size() > 8) {  // the interval "lo–hi": both ends grouped
      const std::string& ci = row[8];
      if (const auto dash = ci.find("–"); dash != std::string::npos) {
        cells[8].text =
            html::Grouped(ci.substr(0, dash)) + "–" + html::Grouped(ci.substr(dash + 3));
      }
    }
    t.rows.push_back(std::move(cells));
  }
  std::string body =
      fmt::format("<p class=\"meta\">{} run{}</p>\n", points.size(), points.size() == 1 ? "" : "s");
  if (!points.empty()) {
    body += html::HistoryChart(spec.Name(), unit, points) + html::RenderTable(t);
  }
  for (const std::string& line : bridge) {
    body += "<p class=\"note\">" + XmlEscape(line) + "</p>\n";
  }
  return html::Page("history of " + spec.Name(), body);
}
}  // namespace

std::string MetricSpec::Name() const {
  return profile + "." + metric + (point.empty() ? "" : "@" + point);
}

Result<MetricSpec> ParseMetric(const std::string& text) {
  MetricSpec s;
  std::string rest = text;
  if (auto at = rest.find('@'); at != std::string::npos) {
    s.point = rest.substr(at + 1);
    rest = rest.substr(0, at);
  }
  const auto dot = rest.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == rest.size()) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("--metric {}: expected PROFILE.METRIC[@POINT], e.g. "
                                 "decode.decode_tok_s or concurrency.throughput_tok_s@8",
                                 text));
  }
  s.profile = ProfileDisplayName(rest.substr(0, dot));  // max_tokens (older docs) -> max-tokens
  s.metric = rest.substr(dot + 1);
  return s;
}

const MetricRow* FindMetric(const RunRecord& run, const MetricSpec& spec) {
  const MetricRow* best = nullptr;
  std::optional<double> best_point;
  for (const MetricRow& m : run.metrics) {
    if (m.profile != spec.profile || m.metric != spec.metric) {
      continue;
    }
    if (!spec.point.empty()) {
      if (m.point == spec.point) {
        return &m;
      }
      continue;
    }
    if (m.point.empty()) {
      return &m;
    }
    const auto p = NumericPoint(m.point);
    if (p && (!best_point || *p > *best_point)) {
      best = &m;
      best_point = p;
    }
  }
  return best;
}

bool HigherIsBetter(const MetricRow& row) {
  // Time, and what a result costs (memory, power, energy), are better smaller.
  return !(row.unit == "ms" || row.unit == "s" || row.unit == "us" || row.unit == "bytes" ||
           row.unit == "W" || row.unit == "J" || row.unit == "J/token");
}

std::vector<RunRecord> Select(const std::vector<RunRecord>& runs, const Filter& filter) {
  std::vector<RunRecord> out;
  for (const RunRecord& r : runs) {
    if (r.status != "complete") {
      continue;
    }
    if (!filter.model.empty() && r.model != filter.model) {
      continue;
    }
    if (!filter.since.empty() && r.started_at < filter.since) {
      continue;
    }
    bool tags_ok = true;
    for (const auto& [k, v] : filter.tags) {
      auto it = r.tags.find(k);
      tags_ok = tags_ok && it != r.tags.end() && it->second == v;
    }
    if (tags_ok) {
      out.push_back(r);
    }
  }
  return out;
}

std::string Sparkline(const std::vector<double>& values) {
  static const char* kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.empty()) {
    return "";
  }
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  // The height spans the values' range, but never less than 10% of their size, centred on them:
  // a -0.1% change moves a bar by at most one step instead of from the bottom to the top.
  const double span = std::max(*hi - *lo, 0.1 * std::max(std::fabs(*hi), std::fabs(*lo)));
  const double base = (*hi + *lo) / 2 - span / 2;
  std::string s;
  for (double v : values) {
    const int i = span > 0 ? static_cast<int>(std::lround((v - base) / span * 7)) : 3;
    s += kBars[std::clamp(i, 0, 7)];
  }
  return s;
}

std::vector<std::string> BridgeCheck(const std::vector<RunRecord>& runs, const MetricSpec& spec,
                                     const std::vector<std::string>& involving) {
  std::vector<std::string> lines;
  std::map<std::string, const RunRecord*> last;  // series -> its previous run with the metric
  std::set<std::string> seen;
  for (const RunRecord& r : runs) {
    if (r.status != "complete" || !seen.insert(r.id).second) {
      continue;
    }
    const MetricRow* m = FindMetric(r, spec);
    if (m == nullptr) {
      continue;
    }
    const std::string key = SeriesKey(r);
    const RunRecord* prev = last.contains(key) ? last[key] : nullptr;
    last[key] = &r;
    if (prev == nullptr) {
      continue;
    }
    const bool engine_changed = Server(*prev) != Server(r);
    const bool tool_changed = prev->tool_version != r.tool_version;
    if (!engine_changed && !tool_changed) {
      continue;
    }
    if (!involving.empty() &&
        std::find(involving.begin(), involving.end(), prev->id) == involving.end() &&
        std::find(involving.begin(), involving.end(), r.id) == involving.end()) {
      continue;
    }
    const MetricRow* pm = FindMetric(*prev, spec);
    if (pm->value == 0) {
      continue;
    }
    const double change = (m->value - pm->value) / pm->value;
    const std::string what =
        engine_changed ? fmt::format("{} -> {}", Server(*prev), Server(r))
                       : fmt::format("servebench {} -> {}", prev->tool_version, r.tool_version);
    const std::string head =
        fmt::format("bridge: {} ({}) {}, {}: ", r.model, r.Config(), spec.Name(), what);
    auto half = [](const MetricRow& x) -> std::optional<double> {
      if (!x.ci_lo || !x.ci_hi || x.value == 0) {
        return std::nullopt;
      }
      return (*x.ci_hi - *x.ci_lo) / 2 / std::fabs(x.value);
    };
    const auto ha = half(*pm);
    const auto hb = half(*m);
    if (!ha || !hb) {
      lines.push_back(head + fmt::format("re-measured {} ({} -> {}); the noise is unknown (no "
                                         "interval: measure with --runs 3 or more)",
                                         Percent(change), Fixed(pm->value, m->unit),
                                         Fixed(m->value, m->unit)));
      continue;
    }
    const double noise = std::sqrt(*ha * *ha + *hb * *hb);
    if (std::fabs(change) <= noise) {
      lines.push_back(head + fmt::format("re-measured within {:.1f}% (noise ±{:.1f}%): numbers "
                                         "compare across the builds ({} -> {})",
                                         std::fabs(change) * 100, noise * 100,
                                         Fixed(pm->value, m->unit), Fixed(m->value, m->unit)));
    } else {
      lines.push_back(head + fmt::format("SHIFT of {} is larger than the runs' noise (±{:.1f}%): "
                                         "numbers do not compare directly across the builds "
                                         "({} -> {})",
                                         Percent(change), noise * 100, Fixed(pm->value, m->unit),
                                         Fixed(m->value, m->unit)));
    }
  }
  return lines;
}

std::string RenderHistory(const std::vector<RunRecord>& runs, const MetricSpec& spec,
                          OutputFormat format) {
  struct Entry {
    const RunRecord* run;
    const MetricRow* m;
    std::optional<double> change;
  };

  std::vector<Entry> entries;
  std::map<std::string, const MetricRow*> prev;
  std::map<std::string, std::vector<double>> series;
  std::vector<std::string> series_order;
  std::string unit;
  for (const RunRecord& r : runs) {
    const MetricRow* m = FindMetric(r, spec);
    if (m == nullptr) {
      continue;
    }
    unit = m->unit;
    const std::string key = SeriesKey(r);
    std::optional<double> change;
    if (auto it = prev.find(key); it != prev.end() && it->second->value != 0) {
      change = (m->value - it->second->value) / it->second->value;
    }
    prev[key] = m;
    if (!series.contains(key)) {
      series_order.push_back(key);
    }
    series[key].push_back(m->value);
    entries.push_back({&r, m, change});
  }
  const std::vector<std::string> bridge = BridgeCheck(runs, spec);
  if (format == OutputFormat::kJson) {
    json out = {{"metric", spec.Name()},
                {"unit", unit},
                {"runs", json::array()},
                {"series", json::array()},
                {"bridge", bridge}};
    for (const Entry& e : entries) {
      out["runs"].push_back({{"id", e.run->id},
                             {"started_at", e.run->started_at},
                             {"model", e.run->model},
                             {"config", e.run->Config()},
                             {"server", Server(*e.run)},
                             {"servebench", e.run->tool_version},
                             {"label", e.run->label},
                             {"tags", e.run->tags},
                             {"point", e.m->point},
                             {"value", e.m->value},
                             {"n", e.m->n ? json(*e.m->n) : json(nullptr)},
                             {"ci_lo", Optional(e.m->ci_lo)},
                             {"ci_hi", Optional(e.m->ci_hi)},
                             {"change", Optional(e.change)}});
    }
    for (const auto& key : series_order) {
      const auto nl = key.find('\n');
      out["series"].push_back({{"model", key.substr(0, nl)},
                               {"config", key.substr(nl + 1)},
                               {"values", series[key]},
                               {"sparkline", Sparkline(series[key])}});
    }
    return out.dump(2) + "\n";
  }
  Table t;
  t.header = {
      "#",      "started", "run",        "model",
      "config", "server",  "servebench", spec.Name() + (unit.empty() ? "" : " (" + unit + ")"),
      "95% CI", "change"};
  int i = 0;
  for (const Entry& e : entries) {
    const bool md = format == OutputFormat::kMarkdown || format == OutputFormat::kHtml;
    const std::string ci = e.m->ci_lo && e.m->ci_hi
                               ? (md ? Fixed(*e.m->ci_lo, unit) + "–" + Fixed(*e.m->ci_hi, unit)
                                     : fmt::format("{} {}", *e.m->ci_lo, *e.m->ci_hi))
                               : "";
    t.rows.push_back({std::to_string(++i), e.run->started_at, e.run->id, e.run->model,
                      e.run->Config(), Server(*e.run), e.run->tool_version,
                      md ? Fixed(e.m->value, unit) : fmt::format("{}", e.m->value), ci,
                      e.change ? (md ? Percent(*e.change) : fmt::format("{}", *e.change)) : ""});
  }
  if (format == OutputFormat::kCsv) {
    return t.Csv();
  }
  if (format == OutputFormat::kHtml) {
    std::vector<html::HistoryPoint> points;
    for (const Entry& e : entries) {
      points.push_back(
          {e.run->model + " (" + e.run->Config() + ")", e.run->started_at, e.run->id, e.m->value});
    }
    return HistoryHtml(t, spec, unit, points, bridge);
  }
  std::string s = fmt::format("history of {}: {} run{}\n\n", spec.Name(), entries.size(),
                              entries.size() == 1 ? "" : "s");
  if (entries.empty()) {
    return s;
  }
  s += t.Markdown() + "\n";
  for (const auto& key : series_order) {
    const auto nl = key.find('\n');
    const auto& v = series[key];
    s += fmt::format("{} ({}): {}  min {} · max {}\n", key.substr(0, nl), key.substr(nl + 1),
                     Sparkline(v), Fixed(*std::min_element(v.begin(), v.end()), unit),
                     Fixed(*std::max_element(v.begin(), v.end()), unit));
  }
  for (const auto& line : bridge) {
    s += line + "\n";
  }
  return s;
}

Result<std::string> ParseGroupBy(const std::string& text) {
  if (text == "model" || text == "recipe" || (text.starts_with("tag:") && text.size() > 4)) {
    return text;
  }
  return MakeError(ErrorCode::kUsage,
                   fmt::format("--by {}: expected model, recipe or tag:KEY", text));
}

namespace {

// One entry per group: its latest run that measured the ranking metric, best first (ties
// broken by run id).
std::vector<const RunRecord*> BoardEntries(const std::vector<RunRecord>& runs,
                                           const MetricSpec& spec, const std::string& by) {
  std::map<std::string, const RunRecord*> latest;
  for (const RunRecord& r : runs) {
    if (FindMetric(r, spec) == nullptr) {
      continue;
    }
    std::string key;
    if (by == "model") {
      key = BoardKey(r);
    } else if (by == "recipe") {
      key = r.recipe.empty() ? "-" : r.recipe;
    } else {
      auto it = r.tags.find(by.substr(4));
      key = it == r.tags.end() ? "-" : it->second;
    }
    latest[key] = &r;  // runs are in time order: the last one wins
  }
  std::vector<const RunRecord*> entries;
  for (const auto& [k, r] : latest) {
    entries.push_back(r);
  }
  const MetricRow* any = entries.empty() ? nullptr : FindMetric(*entries.front(), spec);
  const bool higher = any == nullptr || HigherIsBetter(*any);
  std::stable_sort(entries.begin(), entries.end(), [&](const RunRecord* a, const RunRecord* b) {
    const double va = FindMetric(*a, spec)->value;
    const double vb = FindMetric(*b, spec)->value;
    if (va != vb) {
      return higher ? va > vb : va < vb;
    }
    return a->id < b->id;
  });
  return entries;
}

// Ranks: a neighbour whose interval overlaps the one above shares its rank (both marked tie).
void BoardRanks(const std::vector<const RunRecord*>& entries, const MetricSpec& spec,
                std::vector<int>& rank, std::vector<bool>& tie) {
  rank.assign(entries.size(), 0);
  tie.assign(entries.size(), false);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    rank[i] = static_cast<int>(i) + 1;
    if (i == 0) {
      continue;
    }
    const MetricRow* a = FindMetric(*entries[i - 1], spec);
    const MetricRow* b = FindMetric(*entries[i], spec);
    const bool overlap = (a->ci_lo && a->ci_hi && b->ci_lo && b->ci_hi)
                             ? (*a->ci_lo <= *b->ci_hi && *b->ci_lo <= *a->ci_hi)
                             : a->value == b->value;
    if (overlap) {
      rank[i] = rank[i - 1];
      tie[i] = tie[i - 1] = true;
    }
  }
}

// The combined throughput at the highest concurrency every entry that has it measured.
std::optional<MetricSpec> CombinedThroughput(const std::vector<const RunRecord*>& entries) {
  std::optional<std::set<double>> common;
  for (const RunRecord* r : entries) {
    std::set<double> levels;
    for (const MetricRow& m : r->metrics) {
      if (m.profile == "concurrency" && m.metric == "throughput_tok_s") {
        if (auto p = NumericPoint(m.point)) {
          levels.insert(*p);
        }
      }
    }
    if (levels.empty()) {
      continue;
    }
    if (!common) {
      common = levels;
    } else {
      std::set<double> both;
      std::set_intersection(common->begin(), common->end(), levels.begin(), levels.end(),
                            std::inserter(both, both.begin()));
      common = both;
    }
  }
  if (common && !common->empty()) {
    return MetricSpec{"concurrency", "throughput_tok_s", fmt::format("{}", *common->rbegin())};
  }
  return std::nullopt;
}

// The board's columns: decode, combined throughput, TTFT, the pass rates, what a result cost
// (when some entry has it), and the ranked metric first when none of those is it.
std::vector<BoardColumn> BoardColumns(const std::vector<const RunRecord*>& entries,
                                      const MetricSpec& spec) {
  using Column = BoardColumn;
  std::vector<Column> columns = {{"decode tok/s", {"decode", "decode_tok_s", ""}}};
  if (auto combined = CombinedThroughput(entries)) {
    columns.push_back({"combined tok/s @c" + combined->point, *combined});
  }
  columns.push_back({"TTFT ms", {"decode", "ttft_ms", ""}});
  columns.push_back({"effective pass rate", {"suite", "effective_pass_rate", ""}});
  columns.push_back({"pass rate", {"suite", "pass_rate", ""}});
  // What a result cost (the whole run): only when some entry was sampled with that figure.
  for (Column c : {Column{"peak memory", {"resources", "peak_memory_bytes", ""}},
                   Column{"J/token", {"resources", "j_per_token", ""}}}) {
    if (std::any_of(entries.begin(), entries.end(),
                    [&](const RunRecord* r) { return FindMetric(*r, c.spec) != nullptr; })) {
      columns.push_back(std::move(c));
    }
  }
  const bool ranked_shown = std::any_of(columns.begin(), columns.end(), [&](const Column& c) {
    return c.spec.Name() == spec.Name();
  });
  if (!ranked_shown) {
    columns.insert(columns.begin(), {spec.Name(), spec});
  }
  return columns;
}

std::string LeaderboardJson(const std::vector<const RunRecord*>& entries,
                            const std::vector<int>& rank, const std::vector<bool>& tie,
                            const std::vector<BoardColumn>& columns, const MetricSpec& spec,
                            const std::string& by) {
  json out = {{"metric", spec.Name()}, {"by", by}, {"entries", json::array()}};
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const RunRecord& r = *entries[i];
    json e = {{"rank", rank[i]},     {"tie", tie[i]},
              {"model", r.model},    {"config", r.Config()},
              {"server", Server(r)}, {"servebench", r.tool_version},
              {"run", r.id},         {"started_at", r.started_at}};
    const MetricRow* m = FindMetric(r, spec);
    e["value"] = m->value;
    e["ci_lo"] = Optional(m->ci_lo);
    e["ci_hi"] = Optional(m->ci_hi);
    json cols = json::object();
    for (const BoardColumn& c : columns) {
      const MetricRow* x = FindMetric(r, c.spec);
      cols[c.spec.Name()] = x ? json(x->value) : json(nullptr);
    }
    e["columns"] = cols;
    out["entries"].push_back(e);
  }
  return out.dump(2) + "\n";
}

// The board as a table: full-precision values for CSV (`raw`), formatted ones otherwise.
Table LeaderboardTable(const std::vector<const RunRecord*>& entries, const std::vector<int>& rank,
                       const std::vector<bool>& tie, const std::vector<BoardColumn>& columns,
                       const MetricSpec& spec, bool raw) {
  Table t;
  t.header = {"rank (" + spec.Name() + ")", "model", "configuration", "server", "servebench"};
  for (const BoardColumn& c : columns) {
    t.header.push_back(c.title);
  }
  t.header.push_back("run");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const RunRecord& r = *entries[i];
    std::vector<std::string> row = {std::to_string(rank[i]) + (tie[i] ? "=" : ""), r.model,
                                    r.Config(), Server(r), r.tool_version};
    for (const BoardColumn& c : columns) {
      const MetricRow* x = FindMetric(r, c.spec);
      if (x == nullptr) {
        row.push_back("");
      } else if (raw) {
        row.push_back(fmt::format("{}", x->value));
      } else if (c.spec.profile == "suite") {
        row.push_back(fmt::format("{:.1f}%", x->value * 100));
      } else {
        row.push_back(Fixed(x->value, x->unit));
      }
    }
    row.push_back(r.id);
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

std::string RenderLeaderboard(const std::vector<RunRecord>& runs, const MetricSpec& spec,
                              const std::string& by, OutputFormat format) {
  const std::vector<const RunRecord*> entries = BoardEntries(runs, spec, by);
  std::vector<int> rank;
  std::vector<bool> tie;
  BoardRanks(entries, spec, rank, tie);
  const std::vector<BoardColumn> columns = BoardColumns(entries, spec);
  if (format == OutputFormat::kJson) {
    return LeaderboardJson(entries, rank, tie, columns, spec, by);
  }
  const Table t = LeaderboardTable(entries, rank, tie, columns, spec, format == OutputFormat::kCsv);
  if (format == OutputFormat::kCsv) {
    return t.Csv();
  }
  const std::string title = fmt::format("leaderboard by {}", spec.Name());
  const std::string note =
      "= marks a tie: the 95% intervals of neighbours overlap, so their order is noise.";
  // Say what an entry is: a run that is not shown was replaced by a later one of its group.
  const std::string group = by == "model"    ? "model, server and configuration"
                            : by == "recipe" ? "recipe"
                                             : "value of " + by;
  const std::string intro = fmt::format("{} entr{} (the latest run of each {})", entries.size(),
                                        entries.size() == 1 ? "y" : "ies", group);
  if (format == OutputFormat::kHtml) {
    return LeaderboardHtml(entries, rank, tie, columns, spec, title, intro, note);
  }
  std::string s = fmt::format("{}: {}\n\n", title, intro);
  if (entries.empty()) {
    return s;
  }
  s += t.Markdown();
  if (std::find(tie.begin(), tie.end(), true) != tie.end()) {
    s += "\n" + note + "\n";
  }
  return s;
}

}  // namespace sb::store
