// report.html's trace replay section (docs/workloads.md): the replay's summary, the trace's
// arrivals against the sends per second (read from perf.replay.arrivals as is, so a mark's data-y
// equals the field it names), the cached share and the table per request class.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chart/chart.h"
#include "core/escape.h"
#include "report/format.h"
#include "report/html_figure.h"
#include "report/markdown_classes.h"
#include "report/markdown_tails.h"

namespace sb::report::html {

namespace {

using nlohmann::json;

std::string Summary(const json& r) {
  std::string out = fmt::format(
      "<p>{} trace <code>{}</code>, each request sent at its trace time × {}; latency from the "
      "scheduled send. Sent {} of {} ({} failed, {} late by more than {} ms; send lag p50 / p99 "
      "{} / {} ms); trace rate {} req/s, achieved {} req/s.</p>\n",
      XmlEscape(StringAt(r, {"format"}).value_or("?")),
      XmlEscape(StringAt(r, {"trace"}).value_or("?")), FormatFixed2(NumberAt(r, {"time_scale"})),
      FormatCount(NumberAt(r, {"sent"})), FormatCount(NumberAt(r, {"scheduled"})),
      FormatCount(NumberAt(r, {"failed"})), FormatCount(NumberAt(r, {"late"})),
      FormatFixed1(NumberAt(r, {"late_ms"})), FormatFixed2(NumberAt(r, {"send_lag_ms", "p50"})),
      FormatFixed2(NumberAt(r, {"send_lag_ms", "p99"})),
      FormatFixed1(NumberAt(r, {"trace_rate_rps"})),
      FormatFixed1(NumberAt(r, {"achieved_rate_rps"})));
  if (BoolAt(r, {"cache", "reported"}).value_or(false)) {
    out += fmt::format(
        "<p data-cache-share=\"{}\">Prompt tokens served from the server's cache (as it reports "
        "them): <strong>{}</strong> ({} of {}). TTFT p50 / p90 / p99 with cached tokens {} ms, "
        "without {} ms.</p>\n",
        NumberAt(r, {"cache", "share"}).value_or(0), FormatPercent(NumberAt(r, {"cache", "share"})),
        FormatCount(NumberAt(r, {"cache", "cached_tokens"})),
        FormatCount(NumberAt(r, {"cache", "prompt_tokens"})),
        XmlEscape(md::TailCell(*Find(r, {"cache"}), "ttft_cached_ms")),
        XmlEscape(md::TailCell(*Find(r, {"cache"}), "ttft_uncached_ms")));
  } else {
    out +=
        "<p data-cache-share=\"not reported\">Prompt tokens served from the server's cache: not "
        "reported (the server's answers carry no cached-token field).</p>\n";
  }
  if (const json* cache = Find(r, {"cache"}); cache != nullptr) {
    if (const std::string text = md::ServerCacheSentence(*cache, false); !text.empty()) {
      out +=
          fmt::format("<p data-server-cache-share=\"{}\">{}</p>\n",
                      NumberAt(*cache, {"server_metrics", "share"}).value_or(-1), XmlEscape(text));
    }
  }
  return out;
}

std::string ClassesTable(const json& r) {
  std::string out =
      "<table class=\"classes\" data-classes=\"replay\">\n<caption>Per request class and cache "
      "outcome: p50 / p99 tokens, p50 / p90 / p99 ms</caption>\n<thead><tr><th>Class</th>"
      "<th>Requests</th><th>Input</th><th>Output</th><th>TTFT</th><th>ITL</th><th>E2E</th></tr>"
      "</thead>\n<tbody>\n";
  for (const json* c : ArrayAt(r, {"classes"})) {
    out += fmt::format(
        "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}"
        "</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
        XmlEscape(StringAt(*c, {"class"}).value_or("?")), FormatCount(NumberAt(*c, {"count"})),
        XmlEscape(md::LengthCell(*c, "input_tokens")),
        XmlEscape(md::LengthCell(*c, "output_tokens")), XmlEscape(md::TailCell(*c, "ttft_ms")),
        XmlEscape(md::TailCell(*c, "itl_ms")), XmlEscape(md::TailCell(*c, "e2e_ms")));
  }
  return out + "</tbody>\n</table>\n";
}

}  // namespace

std::string ReplaySection(const json& replay, int& charts) {
  std::string out = "<section class=\"speed\">\n<h3>Trace replay</h3>\n" + Summary(replay);
  chart::XYChart c;
  c.id = "replay-arrivals";
  c.title = "Arrivals per second: the trace against the sends";
  c.x = chart::Axis{.label = "Second of the replay", .unit = "s", .integer = true, .decimals = 0};
  c.y = chart::Axis{.label = "Requests", .unit = "req/s", .decimals = 0};
  chart::Series trace{.name = "trace", .points = {}, .css = "c0"};
  chart::Series sent{.name = "sent", .points = {}, .css = "c1"};
  for (const json* a : ArrayAt(replay, {"arrivals"})) {
    const auto second = NumberAt(*a, {"second"});
    const auto t = NumberAt(*a, {"trace_rps"});
    const auto s = NumberAt(*a, {"sent_rps"});
    if (second && t && s) {
      trace.points.push_back(chart::Point{*second, *t, ""});
      sent.points.push_back(chart::Point{*second, *s, ""});
    }
  }
  if (!trace.points.empty()) {
    c.series.push_back(std::move(trace));
    c.series.push_back(std::move(sent));
    ++charts;
    out += Figure(c,
                  "Requests per second as the trace has them (times --time-scale) and as they "
                  "were sent: the two lines match when the client kept the schedule.");
  }
  return out + ClassesTable(replay) + "</section>\n";
}

}  // namespace sb::report::html
