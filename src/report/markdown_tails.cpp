#include "report/markdown_tails.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/format.h"
#include "report/table.h"

namespace sb::report::md {

using nlohmann::json;

namespace {

constexpr std::string_view kKeys[] = {"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"};

bool HasTails(const json& row) {
  // A level's ITL tail is new with issue 23: its presence says the row was written with tails.
  return NumberAt(row, {"itl_ms", "n"}).has_value();
}

}  // namespace

std::string TailCell(const json& row, std::string_view key) {
  const json* pct = Find(row, {key});
  if (pct == nullptr || !NumberAt(*pct, {"p50"})) {
    return "—";
  }
  return fmt::format("{} / {} / {}", FormatMs(NumberAt(*pct, {"p50"})),
                     FormatMs(NumberAt(*pct, {"p90"})), FormatMs(NumberAt(*pct, {"p99"})));
}

std::string ThreeMs(const json& row, std::string_view key) {
  return FormatMs(NumberAt(row, {key, "p50"})) + " / " + FormatMs(NumberAt(row, {key, "p90"})) +
         " / " + FormatMs(NumberAt(row, {key, "p99"}));
}

std::string LengthCell(const json& row, std::string_view key) {
  return FormatCount(NumberAt(row, {key, "p50"})) + " / " +
         FormatCount(NumberAt(row, {key, "p99"}));
}

void RenderTails(const std::vector<const json*>& rows, std::string_view level_key,
                 std::string_view level_header, std::string& out) {
  if (std::none_of(rows.begin(), rows.end(), [](const json* r) { return HasTails(*r); })) {
    return;
  }
  out +=
      "Latency tails per level, p50 / p90 / p99 in ms over the successful requests "
      "(ITL per token).\n\n";
  MarkdownTable t({{std::string(level_header), Align::kRight},
                   {"TTFT", Align::kRight},
                   {"ITL", Align::kRight},
                   {"TPOT", Align::kRight},
                   {"E2E", Align::kRight}});
  for (const json* r : rows) {
    std::vector<std::string> row = {FormatCount(NumberAt(*r, {level_key}))};
    for (std::string_view k : kKeys) {
      row.push_back(TailCell(*r, k));
    }
    t.AddRow(std::move(row));
  }
  out += t.Render() + "\n";
}

}  // namespace sb::report::md
