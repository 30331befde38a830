#include "report/markdown_sessions.h"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/columns.h"
#include "report/format.h"
#include "report/markdown_tails.h"
#include "report/table.h"

namespace sb::report::md {

using nlohmann::json;

namespace {

// Sessions listed one by one up to this many; beyond, only the statistics over them.
constexpr std::size_t kMaxSessionRows = 50;

// Token counts p50 / p90 / p99, or "not reported" when the server's answers carried none.
std::string Tokens(const json& j, std::string_view key) {
  if (!BoolAt(j, {key, "reported"}).value_or(true)) {
    return "not reported";
  }
  return FormatCount(NumberAt(j, {key, "p50"})) + " / " + FormatCount(NumberAt(j, {key, "p90"})) +
         " / " + FormatCount(NumberAt(j, {key, "p99"}));
}

constexpr ColumnSpec kTurnColumns[] = {
    {.header = "Turn", .format = CellFormat::kLevel},
    {"Requests", {"requests"}},
    {"Failed", {"failed"}},
    {"Tool rounds", {"tool_round_requests"}},
    {.header = "Prompt tokens p50 / p90 / p99",
     .cell = [](const json& r, std::size_t) { return Tokens(r, "prompt_tokens"); }},
    {.header = "Cached tokens p50 / p90 / p99",
     .cell = [](const json& r, std::size_t) { return Tokens(r, "cached_tokens"); }},
    {"TTFT p50 / p90 / p99 (ms)", {"ttft_ms"}, CellFormat::kMs, kTailStats},
    {"ITL p50 / p90 / p99 (ms)", {"itl_ms"}, CellFormat::kMs, kTailStats},
    {"E2E p50 / p90 / p99 (ms)", {"e2e_ms"}, CellFormat::kMs, kTailStats},
};

constexpr ColumnSpec kSessionColumns[] = {
    {.header = "Session",
     .align = Align::kLeft,
     .cell = [](const json& r,
                std::size_t) { return MarkdownCell(StringAt(r, {"label"}).value_or("?")); }},
    {.header = "Status",
     .align = Align::kLeft,
     .cell = [](const json& r,
                std::size_t) { return MarkdownCell(StringAt(r, {"status"}).value_or("?")); }},
    {.header = "Turns",
     .cell =
         [](const json& r, std::size_t) {
           return FormatCount(NumberAt(r, {"turns"})) + " of " +
                  FormatCount(NumberAt(r, {"turns_planned"}));
         }},
    {"Tool rounds", {"tool_rounds"}},
    {"Requests", {"requests"}},
    {"Prompt tokens", {"prompt_tokens"}},
    {"Output tokens", {"completion_tokens"}},
    {"Total (ms)", {"total_ms"}, CellFormat::kMs},
};

void PerTurn(const json& s, std::string& out) {
  const ProfileSpec& p = Profile(ProfileId::kSessions);
  out += ColumnsTable(p, ArrayAt(s, {p.rows}), kTurnColumns).Render() + "\n";
}

// The session-concurrency level over all its requests (tool rounds included), and its point on
// the throughput-interactivity frontier.
void Level(const json& s, std::string& out) {
  const auto levels = ArrayAt(s, {"levels"});
  if (levels.empty()) {
    return;  // a run written before sessions had levels
  }
  MarkdownTable t({{"Session concurrency", Align::kRight},
                   {"Requests", Align::kRight},
                   {"TTFT p50 / p90 / p99 (ms)", Align::kRight},
                   {"ITL p50 / p90 / p99 (ms)", Align::kRight},
                   {"TPOT p50 / p90 / p99 (ms)", Align::kRight},
                   {"E2E p50 / p90 / p99 (ms)", Align::kRight},
                   {"tok/s per user", Align::kRight},
                   {"Total tok/s", Align::kRight}});
  const auto frontier = ArrayAt(s, {"frontier"});
  for (const json* row : levels) {
    t.AddRow({FormatCount(NumberAt(*row, {"session_concurrency"})),
              FormatCount(NumberAt(*row, {"requests"})), ThreeMs(*row, "ttft_ms"),
              ThreeMs(*row, "itl_ms"), ThreeMs(*row, "tpot_ms"), ThreeMs(*row, "e2e_ms"),
              FormatFixed1(frontier.empty() ? std::nullopt
                                            : NumberAt(*frontier.front(), {"tok_s_per_user"})),
              FormatFixed1(NumberAt(*row, {"throughput_tok_s"}))});
  }
  out += "All requests (tool rounds included) at the session concurrency:\n\n" + t.Render() + "\n";
}

void PerSession(const json& s, std::string& out) {
  const auto rows = ArrayAt(s, {"per_session"});
  const json* totals = Find(s, {"session_totals"});
  out += fmt::format("Per session: total time p50 / p90 / p99 {} ms; tool rounds p50 {}.\n\n",
                     totals != nullptr ? ThreeMs(*totals, "total_ms") : "—",
                     FormatCount(NumberAt(s, {"session_totals", "tool_rounds", "p50"})));
  const std::vector<const json*> shown(rows.begin(),
                                       rows.begin() + std::min(rows.size(), kMaxSessionRows));
  const MarkdownTable t = ColumnsTable(Profile(ProfileId::kSessions), shown, kSessionColumns);
  out += t.Render();
  if (rows.size() > kMaxSessionRows) {
    out += fmt::format("\n({} more sessions in results.json, perf.sessions.per_session.)\n",
                       rows.size() - kMaxSessionRows);
  }
  out += "\n";
}

}  // namespace

void RenderSessions(const json& s, std::string& out) {
  out += "### Sessions\n\n";
  const auto rate = NumberAt(s, {"session_rate"});
  out += fmt::format(
      "{} sessions from {}, {}; each turn resends the whole history. {} finished, {} failed; "
      "{} requests ({} failed); at most {} tool rounds a turn; output {} tok/s.\n\n",
      FormatCount(NumberAt(s, {"sessions"})), MarkdownCell(StringAt(s, {"source"}).value_or("?")),
      rate ? fmt::format("started at {} per second (open loop), at most {} in flight",
                         FormatFixed2(rate), FormatCount(NumberAt(s, {"session_concurrency"})))
           : fmt::format("{} in flight (closed loop)",
                         FormatCount(NumberAt(s, {"session_concurrency"}))),
      FormatCount(NumberAt(s, {"finished"})), FormatCount(NumberAt(s, {"failed_sessions"})),
      FormatCount(NumberAt(s, {"requests_sent"})), FormatCount(NumberAt(s, {"failed"})),
      FormatCount(NumberAt(s, {"max_tool_rounds"})), FormatFixed1(NumberAt(s, {"output_tok_s"})));
  out +=
      "Per turn index (the turn's first request; its tool rounds are counted beside it). Cached "
      "tokens are the server's own figure (usage.prompt_tokens_details.cached_tokens).\n\n";
  PerTurn(s, out);
  Level(s, out);
  PerSession(s, out);
}

}  // namespace sb::report::md
