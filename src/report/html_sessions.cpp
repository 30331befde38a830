// report.html's sessions chart (docs/sessions.md): TTFT p50 / p90 / p99 by turn index, read from
// perf.sessions.turns as is, so a mark's data-y equals the field it names. Does the prefix
// cache keep later turns (longer histories) fast?
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chart/chart.h"
#include "core/escape.h"
#include "report/format.h"
#include "report/html_figure.h"

namespace sb::report::html {

std::string SessionsSection(const nlohmann::json& s, int& charts) {
  chart::XYChart c;
  c.id = "sessions-ttft";
  c.title = "TTFT by turn index";
  c.x = chart::Axis{.label = "Turn", .unit = "", .zero = false, .integer = true, .decimals = 0};
  c.y = chart::Axis{.label = "TTFT", .unit = "ms", .decimals = 1};
  const char* keys[] = {"p50", "p90", "p99"};
  for (int k = 0; k < 3; ++k) {
    chart::Series series{
        .name = std::string("TTFT ") + keys[k], .points = {}, .css = "c" + std::to_string(k)};
    for (const nlohmann::json* row : ArrayAt(s, {"turns"})) {
      const auto turn = NumberAt(*row, {"turn"});
      const auto v = NumberAt(*row, {"ttft_ms", keys[k]});
      if (turn && v) {
        series.points.push_back(chart::Point{*turn, *v, ""});
      }
    }
    c.series.push_back(std::move(series));
  }
  ++charts;
  return "<section class=\"speed\">\n<h3>" + XmlEscape("Sessions") + "</h3>\n" +
         Figure(c,
                "Each turn resends the whole history; a server whose prefix cache holds it "
                "prefills only the new tokens, so later turns stay fast.") +
         "</section>\n";
}

}  // namespace sb::report::html
