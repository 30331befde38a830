// Per-request metrics derived from raw client facts (docs/metrics.md is the prose version of this
// file; each definition is pinned by a test in tests/perf/metrics_test.cpp). Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "client/chat.h"

namespace sb::perf {

struct RequestMetrics {
  std::optional<double> ttft_ms;       // first token-bearing event − send
  std::optional<double> ttfa_ms;       // first answer-text event − send
  std::optional<double> e2e_ms;        // last token-bearing event − send
  std::optional<double> decode_tok_s;  // (completion_tokens − 1) / (last token − first token)
  std::optional<double> tpot_ms;       // (e2e − ttft) / (completion_tokens − 1)
  std::optional<double> wall_tok_s;    // completion_tokens / e2e (includes TTFT)
  int completion_tokens = 0;           // server usage, else token-bearing events (estimated)
  bool tokens_estimated = false;
  int chunks = 0;  // token-bearing events
};

// A stream request answered with one JSON body (a server that ignored stream=true): one event at
// the body's arrival, so no first token or speed can be read from it.
bool CameAsOneBody(const client::ChatResponse& r);

// An answer that came as one JSON body instead of a stream (ChatResponse::streamed false) has
// only e2e_ms and the token count: no TTFT, decode speed, TPOT or tok/s.
RequestMetrics ComputeMetrics(const client::ChatResponse& r);

// Combined throughput of requests run together: Σ completion tokens / (last token of any
// request − first send of any request), in tok/s, over the requests that succeeded only (a failed
// stream contributes neither tokens nor time). Empty when no request succeeded with a token.
std::optional<double> CombinedThroughput(std::span<const client::ChatResponse> responses);

}  // namespace sb::perf
