#include "perf/sessions_summary.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "perf/frontier.h"
#include "perf/profiles.h"
#include "perf/sessions.h"

namespace sb::perf {

using nlohmann::json;

json TurnsJson(const std::vector<TurnFact>& facts) {
  struct Acc {
    long long requests = 0, failed = 0, tool_rounds = 0, reported = 0;
    std::vector<double> prompt, cached, ttft, itl, tpot, e2e;
  };

  std::map<int, Acc> by;
  for (const TurnFact& f : facts) {
    Acc& a = by[f.turn];
    if (f.tool_round > 0) {
      ++a.tool_rounds;
      continue;
    }
    ++a.requests;
    a.failed += f.ok ? 0 : 1;
    if (!f.ok) {
      continue;
    }
    if (f.prompt_tokens >= 0) {
      a.prompt.push_back(f.prompt_tokens);
    }
    if (f.cached_tokens >= 0) {
      ++a.reported;
      a.cached.push_back(f.cached_tokens);
    }
    if (f.ttft_ms) {
      a.ttft.push_back(*f.ttft_ms);
    }
    if (f.e2e_ms) {
      a.e2e.push_back(*f.e2e_ms);
    }
    if (f.tpot_ms) {
      a.tpot.push_back(*f.tpot_ms);
    }
    a.itl.insert(a.itl.end(), f.itl_ms.begin(), f.itl_ms.end());
  }
  json out = json::array();
  for (const auto& [turn, a] : by) {
    json cached = a.reported > 0 ? SummaryStatsJson(a.cached) : json{{"reported", false}};
    if (a.reported > 0) {
      cached["reported"] = true;
    }
    out.push_back({{"turn", turn},
                   {"requests", a.requests},
                   {"failed", a.failed},
                   {"tool_round_requests", a.tool_rounds},
                   {"prompt_tokens", SummaryStatsJson(a.prompt)},
                   {"cached_tokens", std::move(cached)},
                   {"ttft_ms", SummaryStatsJson(a.ttft)},
                   {"itl_ms", SummaryStatsJson(a.itl)},
                   {"tpot_ms", SummaryStatsJson(a.tpot)},
                   {"e2e_ms", SummaryStatsJson(a.e2e)}});
  }
  return out;
}

json PerSessionJson(const std::vector<SessionFact>& sessions) {
  json out = json::array();
  for (const SessionFact& s : sessions) {
    out.push_back({{"session", s.session + 1},
                   {"label", s.label},
                   {"status", s.status},
                   {"turns", s.turns},
                   {"turns_planned", s.turns_planned},
                   {"tool_rounds", s.tool_rounds},
                   {"capped_turns", s.capped_turns},
                   {"requests", s.requests},
                   {"prompt_tokens", s.prompt_tokens},
                   {"completion_tokens", s.completion_tokens},
                   {"total_ms", s.total_ms},
                   {"start_lag_ms", s.start_lag_ms}});
  }
  return out;
}

json SessionTotalsJson(const std::vector<SessionFact>& sessions) {
  std::vector<double> total, turns, rounds, tokens;
  for (const SessionFact& s : sessions) {
    total.push_back(s.total_ms);
    turns.push_back(s.turns);
    rounds.push_back(s.tool_rounds);
    tokens.push_back(static_cast<double>(s.completion_tokens));
  }
  return {{"total_ms", SummaryStatsJson(total)},
          {"turns", SummaryStatsJson(turns)},
          {"tool_rounds", SummaryStatsJson(rounds)},
          {"completion_tokens", SummaryStatsJson(tokens)}};
}

json SessionLevelsJson(const SessionsOptions& so, const SessionsTally& t,
                       const json& output_tok_s) {
  std::vector<double> ttft, itl, tpot, e2e, decode;
  long long ok = 0;
  for (const TurnFact& f : t.turns) {
    if (!f.ok) {
      continue;
    }
    ++ok;
    const auto add = [](std::vector<double>& v, const std::optional<double>& x) {
      if (x) {
        v.push_back(*x);
      }
    };
    add(ttft, f.ttft_ms);
    add(tpot, f.tpot_ms);
    add(e2e, f.e2e_ms);
    add(decode, f.decode_tok_s);
    itl.insert(itl.end(), f.itl_ms.begin(), f.itl_ms.end());
  }
  json row = {{"session_concurrency", so.concurrency},
              {"concurrency", so.concurrency},
              {"session_rate", so.rate > 0 ? json(so.rate) : json(nullptr)},
              {"requests", ok},
              {"ttft_ms", SummaryStatsJson(ttft)},
              {"itl_ms", SummaryStatsJson(itl)},
              {"tpot_ms", SummaryStatsJson(tpot)},
              {"e2e_ms", SummaryStatsJson(e2e)},
              {"per_stream_decode_tok_s", SummaryStatsJson(decode)},
              {"throughput_tok_s", output_tok_s}};
  return json::array({std::move(row)});
}

json SessionsJson(const SessionsOptions& so, std::size_t planned, int system_tokens,
                  SessionsTally& t, json records, int gpus) {
  std::sort(t.ended.begin(), t.ended.end(),
            [](const SessionFact& a, const SessionFact& b) { return a.session < b.session; });
  long long finished = 0, failed_sessions = 0;
  for (const SessionFact& s : t.ended) {
    finished += s.status == "finished" ? 1 : 0;
    failed_sessions += s.status == "failed" ? 1 : 0;
  }
  const bool timed = t.ok > 0 && t.ok_last > t.ok_first;
  const json tok_s = timed ? json(static_cast<double>(t.tokens) /
                                  (static_cast<double>(t.ok_last - t.ok_first) / 1e9))
                           : json(nullptr);
  json levels = SessionLevelsJson(so, t, tok_s);
  json frontier = ConcurrencyFrontier(levels, gpus);
  return {{"source", so.file.empty() ? json("synthetic") : json(so.file)},
          {"sessions", planned},
          {"started", t.ended.size()},
          {"finished", finished},
          {"failed_sessions", failed_sessions},
          {"session_concurrency", so.concurrency},
          {"session_rate", so.rate > 0 ? json(so.rate) : json(nullptr)},
          {"max_tool_rounds", so.max_tool_rounds},
          {"system_prompt_tokens", system_tokens >= 0 ? json(system_tokens) : json(nullptr)},
          {"keep_reasoning", so.keep_reasoning},
          {"requests_sent", t.sent},
          {"ok", t.ok},
          {"failed", t.failed},
          {"output_tok_s", tok_s},
          {"levels", std::move(levels)},
          {"frontier", std::move(frontier)},
          {"turns", TurnsJson(t.turns)},
          {"session_totals", SessionTotalsJson(t.ended)},
          {"per_session", PerSessionJson(t.ended)},
          {"requests", std::move(records)}};
}

}  // namespace sb::perf
