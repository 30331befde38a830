#include "report/markdown_sessions.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/format.h"
#include "report/table.h"

namespace sb::report::md {

using nlohmann::json;

namespace {

// Sessions listed one by one up to this many; beyond, only the statistics over them.
constexpr std::size_t kMaxSessionRows = 50;

std::string Three(const json& j, std::string_view key) {
  return FormatMs(NumberAt(j, {key, "p50"})) + " / " + FormatMs(NumberAt(j, {key, "p90"})) + " / " +
         FormatMs(NumberAt(j, {key, "p99"}));
}

std::string Tokens(const json& j, std::string_view key) {
  if (!BoolAt(j, {key, "reported"}).value_or(true)) {
    return "not reported";
  }
  return FormatCount(NumberAt(j, {key, "p50"})) + " / " + FormatCount(NumberAt(j, {key, "p90"})) +
         " / " + FormatCount(NumberAt(j, {key, "p99"}));
}

void PerTurn(const json& s, std::string& out) {
  MarkdownTable t({{"Turn", Align::kRight},
                   {"Requests", Align::kRight},
                   {"Failed", Align::kRight},
                   {"Tool rounds", Align::kRight},
                   {"Prompt tokens p50 / p90 / p99", Align::kRight},
                   {"Cached tokens p50 / p90 / p99", Align::kRight},
                   {"TTFT p50 / p90 / p99 (ms)", Align::kRight},
                   {"ITL p50 / p90 / p99 (ms)", Align::kRight},
                   {"E2E p50 / p90 / p99 (ms)", Align::kRight}});
  for (const json* row : ArrayAt(s, {"turns"})) {
    t.AddRow({FormatCount(NumberAt(*row, {"turn"})), FormatCount(NumberAt(*row, {"requests"})),
              FormatCount(NumberAt(*row, {"failed"})),
              FormatCount(NumberAt(*row, {"tool_round_requests"})), Tokens(*row, "prompt_tokens"),
              Tokens(*row, "cached_tokens"), Three(*row, "ttft_ms"), Three(*row, "itl_ms"),
              Three(*row, "e2e_ms")});
  }
  out += t.Render() + "\n";
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
              FormatCount(NumberAt(*row, {"requests"})), Three(*row, "ttft_ms"),
              Three(*row, "itl_ms"), Three(*row, "tpot_ms"), Three(*row, "e2e_ms"),
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
                     totals != nullptr ? Three(*totals, "total_ms") : "—",
                     FormatCount(NumberAt(s, {"session_totals", "tool_rounds", "p50"})));
  MarkdownTable t({{"Session"},
                   {"Status"},
                   {"Turns", Align::kRight},
                   {"Tool rounds", Align::kRight},
                   {"Requests", Align::kRight},
                   {"Prompt tokens", Align::kRight},
                   {"Output tokens", Align::kRight},
                   {"Total (ms)", Align::kRight}});
  std::size_t shown = 0;
  for (const json* row : rows) {
    if (shown++ == kMaxSessionRows) {
      break;
    }
    t.AddRow({MarkdownCell(StringAt(*row, {"label"}).value_or("?")),
              MarkdownCell(StringAt(*row, {"status"}).value_or("?")),
              FormatCount(NumberAt(*row, {"turns"})) + " of " +
                  FormatCount(NumberAt(*row, {"turns_planned"})),
              FormatCount(NumberAt(*row, {"tool_rounds"})),
              FormatCount(NumberAt(*row, {"requests"})),
              FormatCount(NumberAt(*row, {"prompt_tokens"})),
              FormatCount(NumberAt(*row, {"completion_tokens"})),
              FormatMs(NumberAt(*row, {"total_ms"}))});
  }
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
