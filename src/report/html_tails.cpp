#include "report/html_tails.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/escape.h"
#include "report/format.h"
#include "report/markdown_tails.h"

namespace sb::report::html {

using nlohmann::json;

std::string TailsTable(const std::vector<const json*>& rows, std::string_view id,
                       std::string_view level_key, std::string_view level_header) {
  if (std::none_of(rows.begin(), rows.end(), [](const json* r) {
        return NumberAt(*r, {"itl_ms", "n"}).has_value();
      })) {
    return "";
  }
  std::string out = fmt::format(
      "<table class=\"tails\" data-tails=\"{}\">\n<caption>Latency tails per level: p50 / p90 / "
      "p99 in ms over the successful requests (ITL per token)</caption>\n<thead><tr><th>{}</th>"
      "<th>TTFT</th><th>ITL</th><th>TPOT</th><th>E2E</th></tr></thead>\n<tbody>\n",
      XmlEscape(id), XmlEscape(level_header));
  for (const json* r : rows) {
    out += fmt::format("<tr><td class=\"num\">{}</td>", FormatCount(NumberAt(*r, {level_key})));
    for (std::string_view k : {"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"}) {
      out += fmt::format("<td class=\"num\">{}</td>", XmlEscape(md::TailCell(*r, k)));
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

}  // namespace sb::report::html
