#include "report/html.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "chart/chart.h"
#include "chart/svg.h"
#include "core/printable.h"
#include "report/failed_requests.h"
#include "report/format.h"
#include "report/html_figure.h"

namespace sb::report {
namespace {

using json = nlohmann::json;

constexpr std::array<std::string_view, 7> kStatuses = {"PASS",        "FAIL",  "EMPTY",  "LOOP",
                                                       "UNSUPPORTED", "ERROR", "TIMEOUT"};

std::string StatusClass(std::string_view status) {
  std::string s = "st-";
  for (char c : status) {
    s += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  return s;
}

std::string Header(const json& r) {
  const std::string model =
      PrintableLine(StringAt(r, {"target", "model"}).value_or("unknown model"));
  std::string out = fmt::format("<h1>servebench report: {}</h1>\n", XmlEscape(model));
  out += "<p class=\"meta\">" + XmlEscape(DescribeTarget(r)) + "</p>\n";
  out += fmt::format("<p class=\"meta\">Started {} · finished {} · servebench {}</p>\n",
                     XmlEscape(StringAt(r, {"started_at"}).value_or(std::string(kMissing))),
                     XmlEscape(StringAt(r, {"finished_at"}).value_or(std::string(kMissing))),
                     XmlEscape(StringAt(r, {"tool", "version"}).value_or("?")));
  if (auto cmd = StringAt(r, {"command"})) {
    out += "<p class=\"meta\">Command: <code>" + XmlEscape(*cmd) + "</code></p>\n";
  }
  if (const RunLabels labels = LabelsOf(r); !labels.empty()) {
    std::vector<std::string> parts;
    if (labels.label) {
      parts.push_back("<strong>" + XmlEscape(*labels.label) + "</strong>");
    }
    for (const std::string& tag : labels.tags) {
      parts.push_back("<code>" + XmlEscape(tag) + "</code>");
    }
    out += fmt::format("<p class=\"meta labels\">Label: {}</p>\n", fmt::join(parts, " · "));
  }
  const std::string status = StringAt(r, {"status"}).value_or("running");
  if (status != "complete") {
    const char* what = status == "interrupted" ? "Interrupted: partial results."
                       : status == "failed"    ? "Failed: partial results."
                                               : "Incomplete: partial results.";
    out += fmt::format("<p class=\"banner\" data-status=\"{}\">{}{}</p>\n", XmlEscape(status), what,
                       StringAt(r, {"stop_reason"}) ? " " + XmlEscape(*StringAt(r, {"stop_reason"}))
                                                    : std::string());
  }
  auto warnings = ArrayAt(r, {"warnings"});
  if (!warnings.empty()) {
    out += "<h2>Warnings</h2>\n<ul class=\"warnings\">\n";
    for (const json* w : warnings) {
      if (w->is_string()) {
        out += "<li>" + XmlEscape(w->get<std::string>()) + "</li>\n";
      }
    }
    out += "</ul>\n";
  }
  return out;
}

// The first screen: the run's key figures as cards, as the "At a glance" tables of hand-written
// reports open with them. Only figures the run measured; none: no cards.
std::string Glance(const json& r) {
  struct Card {
    std::string key, label, value, detail;
  };

  std::vector<Card> cards;
  if (auto v = NumberAt(r, {"perf", "decode", "decode_tok_s", "median"})) {
    cards.push_back(
        {"decode", "Decode speed", FormatFixed1(v) + " tok/s", "median, TTFT excluded"});
  }
  if (auto v = NumberAt(r, {"perf", "decode", "ttft_ms", "median"})) {
    cards.push_back({"ttft", "TTFT", FormatMs(v) + " ms", "median, decode prompt"});
  }
  std::optional<double> peak;
  std::optional<double> peak_at;
  for (const json* l : ArrayAt(r, {"perf", "concurrency", "levels"})) {
    auto v = NumberAt(*l, {"throughput_tok_s"});
    if (v && (!peak || *v > *peak)) {
      peak = v;
      peak_at = NumberAt(*l, {"concurrency"});
    }
  }
  if (peak) {
    cards.push_back({"peak_throughput", "Peak throughput", FormatFixed1(peak) + " tok/s",
                     peak_at ? FormatCount(peak_at) + " streams" : std::string()});
  }
  if (auto v = NumberAt(r, {"perf", "rate", "search", "best_rps"})) {
    cards.push_back(
        {"best_rate", "Highest rate meeting the SLOs", FormatFixed1(v) + " req/s", "rate search"});
  }
  if (NumberAt(r, {"summary", "total"}).value_or(0) > 0) {
    cards.push_back({"pass_rate", "Pass rate", FormatPercent(NumberAt(r, {"summary", "pass_rate"})),
                     fmt::format("{} of {} tests; {} excl. unsupported",
                                 FormatCount(NumberAt(r, {"summary", "pass"})),
                                 FormatCount(NumberAt(r, {"summary", "total"})),
                                 FormatPercent(NumberAt(r, {"summary", "effective_pass_rate"})))});
  }
  if (cards.empty()) {
    return "";
  }
  std::string out = "<section class=\"glance\" aria-label=\"At a glance\">\n";
  for (const Card& c : cards) {
    out += fmt::format(
        "<div class=\"card\" data-key=\"{}\"><span class=\"label\">{}</span><span "
        "class=\"value\">{}</span><span class=\"detail\">{}</span></div>\n",
        c.key, XmlEscape(c.label), XmlEscape(c.value), XmlEscape(c.detail));
  }
  return out + "</section>\n";
}

// The speed profiles' failed requests, as report.md lists them (the warnings point here).
std::string Errors(const json& r) {
  const std::vector<FailedRequest> failed = FailedRequests(r);
  if (failed.empty()) {
    return "";
  }
  std::string out =
      "<h2 id=\"errors\">Errors</h2>\n<table class=\"errors\">\n<thead><tr><th>Profile</th>"
      "<th>Request</th><th>Status</th><th>HTTP</th><th>Reason</th></tr></thead>\n<tbody>\n";
  for (const FailedRequest& f : failed) {
    out += fmt::format(
        "<tr data-profile=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td>{}</td></tr>\n",
        XmlEscape(f.profile), XmlEscape(f.profile), XmlEscape(f.request),
        XmlEscape(StringAt(*f.record, {"status"}).value_or("")),
        FormatCount(NumberAt(*f.record, {"http_status"})),
        XmlEscape(StringAt(*f.record, {"reason"}).value_or(std::string(kMissing))));
  }
  out += "</tbody>\n</table>\n";
  auto total = NumberAt(r, {"summary", "failed_requests"});
  if (total && *total > static_cast<double>(failed.size())) {
    out += fmt::format(
        "<p class=\"note\">These are the speed profiles' failed requests, {} of the {} in the "
        "summary; failed tests are in the Quality table, and samples.jsonl holds every "
        "request.</p>\n",
        failed.size(), FormatCount(total));
  }
  return out;
}

std::string Summary(const json& r) {
  auto n = [&](std::string_view k) { return NumberAt(r, {"summary", k}); };
  std::vector<std::pair<std::string, std::string>> rows;
  if (n("total").value_or(0) > 0) {
    rows.emplace_back("Tests", FormatCount(n("total")));
    rows.emplace_back(
        "Passed", fmt::format("{} ({})", FormatCount(n("pass")), FormatPercent(n("pass_rate"))));
    rows.emplace_back("Effective pass rate (excl. unsupported)",
                      FormatPercent(n("effective_pass_rate")));
  }
  rows.emplace_back("Requests", FormatCount(n("requests")));
  rows.emplace_back("Failed requests", FormatCount(n("failed_requests")));
  rows.emplace_back("Total tokens generated", FormatCount(n("completion_tokens")));
  auto wall = n("wall_time_s");
  rows.emplace_back("Total wall time", wall ? FormatSeconds(wall) + " s" : std::string(kMissing));
  rows.emplace_back("Average throughput", FormatFixed1(n("avg_tok_s")) + " tok/s");
  std::string out = "<h2>Results summary</h2>\n<table class=\"summary\">\n";
  for (const auto& [k, v] : rows) {
    out += "<tr><th>" + XmlEscape(k) + "</th><td class=\"num\">" + XmlEscape(v) + "</td></tr>\n";
  }
  return out + "</table>\n";
}

// Quality: tests per category stacked by status, then every test with its coloured status.
std::string Quality(const json& r, int& charts) {
  auto tests = ArrayAt(r, {"tests"});
  if (tests.empty()) {
    return "";
  }
  std::vector<std::string> categories;
  std::map<std::string, std::map<std::string, int>> counts;
  for (const json* t : tests) {
    const std::string cat = StringAt(*t, {"category"}).value_or("other");
    if (std::find(categories.begin(), categories.end(), cat) == categories.end()) {
      categories.push_back(cat);
    }
    ++counts[cat][StringAt(*t, {"status"}).value_or("ERROR")];
  }
  chart::BarChart c;
  c.id = "quality";
  c.title = "Tests by category, stacked by status";
  c.x_label = "Category";
  c.y = chart::Axis{.label = "Tests", .unit = "", .decimals = 0};
  c.stacked = true;
  for (const auto& cat : categories) {
    c.categories.push_back(CategoryName(cat));
  }
  for (std::string_view st : kStatuses) {
    chart::BarSeries s{.name = std::string(st), .values = {}, .css = StatusClass(st)};
    bool any = false;
    for (const auto& cat : categories) {
      const auto it = counts[cat].find(std::string(st));
      if (it != counts[cat].end() && it->second > 0) {
        s.values.push_back(it->second);
        any = true;
      } else {
        s.values.push_back(std::nullopt);
      }
    }
    if (any) {
      c.series.push_back(std::move(s));
    }
  }
  ++charts;
  std::string out = "<h2>Quality</h2>\n";
  std::string note = "Pass rate by category: ";
  for (std::size_t k = 0; k < categories.size(); ++k) {
    int total = 0;
    for (const auto& [st, count] : counts[categories[k]]) {
      total += count;
    }
    note += fmt::format("{}{} {}/{}", k ? " · " : "", XmlEscape(c.categories[k]),
                        counts[categories[k]]["PASS"], total);
  }
  out += html::Figure(c, note + ".");
  out +=
      "<table class=\"tests\">\n<thead><tr><th>Test</th><th>Category</th><th>Status</th>"
      "<th>Time (s)</th><th>Tokens</th><th>Notes</th></tr></thead>\n<tbody>\n";
  for (const json* t : tests) {
    const std::string status = StringAt(*t, {"status"}).value_or("ERROR");
    auto time_ms = NumberAt(*t, {"time_ms"});
    if (!time_ms) {
      time_ms = NumberAt(*t, {"e2e_ms"});
    }
    const std::string name = StringAt(*t, {"name"}).value_or(StringAt(*t, {"id"}).value_or("?"));
    std::string reason = StringAt(*t, {"reason"}).value_or("");
    if (reason.size() > 300) {
      reason = reason.substr(0, 300) + "…";
    }
    out += fmt::format(
        "<tr data-test=\"{}\" data-status=\"{}\"><td>{}</td><td>{}</td><td><span class=\"status "
        "{}\">{}</span></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        XmlEscape(StringAt(*t, {"id"}).value_or("")), XmlEscape(status), XmlEscape(name),
        XmlEscape(CategoryName(StringAt(*t, {"category"}).value_or("other"))), StatusClass(status),
        XmlEscape(status), time_ms ? FormatSeconds(*time_ms / 1000.0) : std::string(kMissing),
        FormatCount(NumberAt(*t, {"completion_tokens"})), XmlEscape(reason));
  }
  return out + "</tbody>\n</table>\n";
}

}  // namespace

std::string RenderHtml(const json& r) {
  const std::string model =
      PrintableLine(StringAt(r, {"target", "model"}).value_or("unknown model"));
  std::string body = Header(r) + Glance(r) + Summary(r);
  int charts = 0;
  body += Quality(r, charts);
  const std::string speed = html::SpeedSections(r, charts);
  if (!speed.empty()) {
    body += "<h2>Speed</h2>\n" + speed;
  }
  body += html::ResourcesSection(r, charts);
  body += Errors(r);
  body +=
      "<footer class=\"note\"><p>Every figure is defined in servebench's docs/metrics.md; "
      "report.md in this directory has the full tables, results.json every raw "
      "value.</p></footer>\n";
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">\n"
      "<title>servebench report: {}</title>\n<style>\n{}</style>\n</head>\n"
      "<body data-charts=\"{}\">\n{}</body>\n</html>\n",
      XmlEscape(model), html::Stylesheet(), charts, body);
}

std::string_view HtmlStylesheet() {
  return html::Stylesheet();
}

}  // namespace sb::report
