// The sessions profile's summaries in results.json (perf.sessions, docs/results-schema.md):
// per turn index the prompt tokens, cached tokens and latencies of the turns' first requests
// (a turn's tool rounds are counted beside them), and per session its total time, turns, tool
// rounds and tokens.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sb::perf {

// One finished request of a session.
struct TurnFact {
  std::size_t session = 0;
  int turn = 0;        // from 1
  int tool_round = 0;  // 0: the turn's user message; k: after its k-th tool results
  bool ok = false;
  int prompt_tokens = -1, cached_tokens = -1, completion_tokens = -1;  // -1: not known
  std::optional<double> ttft_ms, e2e_ms, tpot_ms, decode_tok_s;
  std::vector<double> itl_ms;
};

// One session, when it ended.
struct SessionFact {
  std::size_t session = 0;
  std::string label;
  std::string status;  // "finished", "failed" (a request failed), "stopped" (the run stopped)
  int turns_planned = 0, turns = 0, tool_rounds = 0, capped_turns = 0, requests = 0;
  long long prompt_tokens = 0, completion_tokens = 0;
  double total_ms = 0;      // first send -> last token of its last request
  double start_lag_ms = 0;  // open loop: how late it started against its schedule
};

// What the calling thread gathers as a sessions run's requests finish.
struct SessionsTally {
  long long ok = 0, failed = 0, tokens = 0, sent = 0;
  std::int64_t ok_first = std::numeric_limits<std::int64_t>::max(), ok_last = 0;
  bool replayed = false;
  std::vector<TurnFact> turns;
  std::vector<SessionFact> ended;
};

struct SessionsOptions;

// perf.sessions (docs/results-schema.md) but its "resources": the options, the counts, the
// summaries of TurnsJson, SessionTotalsJson and PerSessionJson, and `records` as "requests".
// system_tokens: the synthetic system prompt's count (-1: none or not counted).
// gpus: --gpus, for the frontier point's total per GPU (0: unknown).
nlohmann::json SessionsJson(const SessionsOptions& so, std::size_t planned, int system_tokens,
                            SessionsTally& tally, nlohmann::json records, int gpus = 0);

// perf.sessions.levels: the run's one session-concurrency level, [{"session_concurrency",
// "concurrency", "requests", "ttft_ms", "itl_ms", "tpot_ms", "e2e_ms" (p50/p90/p99 over every
// successful request, tool rounds included), "per_stream_decode_tok_s", "throughput_tok_s"}],
// in the shape of a concurrency level so ConcurrencyFrontier reads it (issue 23 for sessions).
nlohmann::json SessionLevelsJson(const SessionsOptions& so, const SessionsTally& tally,
                                 const nlohmann::json& output_tok_s);

// [{"turn", "requests", "failed", "tool_round_requests", "prompt_tokens", "cached_tokens",
//   "ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"}] by turn index; each statistics object without its
//   values;
// cached_tokens is {"reported": false} when the server said nothing.
nlohmann::json TurnsJson(const std::vector<TurnFact>& facts);

// [{"session", "label", "status", ...}] in session order, and the statistics over them.
nlohmann::json PerSessionJson(const std::vector<SessionFact>& sessions);
nlohmann::json SessionTotalsJson(const std::vector<SessionFact>& sessions);

}  // namespace sb::perf
