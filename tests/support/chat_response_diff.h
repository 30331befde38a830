// The first field in which two ChatResponses differ, "" when they are the same. Used to check
// the client's chunk fast path against the full JSON parser (tests/client/chunk_scan_test.cpp,
// fuzz/chunk_fuzz.cpp). Header-only: the fuzz targets compile it without a test library.
#pragma once

#include <string>

#include "client/chat.h"

namespace sb::testing {

inline std::string ChatResponseDiff(const client::ChatResponse& a, const client::ChatResponse& b) {
  const auto num = [](auto x) { return std::to_string(x); };
#define SB_DIFF_FIELD(f, show)                                      \
  if (!(a.f == b.f)) {                                              \
    return std::string(#f) + ": " + show(a.f) + " vs " + show(b.f); \
  }
  const auto str = [](const std::string& s) { return "'" + s + "'"; };
  const auto outcome = [](client::Outcome o) { return std::string(client::OutcomeName(o)); };
  SB_DIFF_FIELD(outcome, outcome)
  SB_DIFF_FIELD(reason, str)
  SB_DIFF_FIELD(error_body, str)
  SB_DIFF_FIELD(answer, str)
  SB_DIFF_FIELD(reasoning, str)
  SB_DIFF_FIELD(finish_reason, str)
  SB_DIFF_FIELD(server_model, str)
  SB_DIFF_FIELD(timings_json, str)
  SB_DIFF_FIELD(sim_json, str)
  SB_DIFF_FIELD(timings_predicted_n, num)
  SB_DIFF_FIELD(stream_done, num)
  SB_DIFF_FIELD(invalid_utf8, num)
  SB_DIFF_FIELD(usage.prompt_tokens, num)
  SB_DIFF_FIELD(usage.completion_tokens, num)
  SB_DIFF_FIELD(usage.reasoning_tokens, num)
  SB_DIFF_FIELD(usage.cached_tokens, num)
  SB_DIFF_FIELD(events.size(), num)
  SB_DIFF_FIELD(tool_calls.size(), num)
#undef SB_DIFF_FIELD
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    const client::TokenEvent& x = a.events[i];
    const client::TokenEvent& y = b.events[i];
    if (x.t_ns != y.t_ns || x.tokens != y.tokens || x.kinds != y.kinds ||
        x.answer_end != y.answer_end || x.reasoning_end != y.reasoning_end) {
      return "events[" + num(i) + "]: tokens " + num(x.tokens) + " vs " + num(y.tokens) +
             ", kinds " + num(x.kinds) + " vs " + num(y.kinds);
    }
  }
  for (std::size_t i = 0; i < a.tool_calls.size(); ++i) {
    const client::ToolCall& x = a.tool_calls[i];
    const client::ToolCall& y = b.tool_calls[i];
    if (x.id != y.id || x.name != y.name || x.arguments != y.arguments) {
      return "tool_calls[" + num(i) + "]";
    }
  }
  return "";
}

}  // namespace sb::testing
