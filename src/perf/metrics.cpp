#include "perf/metrics.h"

#include <algorithm>
#include <limits>

namespace sb::perf {

namespace {

double Ms(std::int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

int CompletionTokens(const client::ChatResponse& r, bool* estimated) {
  if (r.usage.completion_tokens >= 0) {
    *estimated = false;
    return r.usage.completion_tokens;
  }
  // No usage: count tokens per event where the server said, else one token per event.
  int n = 0;
  for (const auto& e : r.events) {
    n += e.tokens > 0 ? e.tokens : 1;
  }
  *estimated = true;
  return n;
}

}  // namespace

bool CameAsOneBody(const client::ChatResponse& r) {
  return !r.streamed && r.first_byte_ns != 0 && r.events.size() == 1;
}

RequestMetrics ComputeMetrics(const client::ChatResponse& r) {
  RequestMetrics m;
  m.chunks = static_cast<int>(r.events.size());
  m.completion_tokens = CompletionTokens(r, &m.tokens_estimated);
  if (r.events.empty() || r.send_ns == 0) {
    return m;
  }
  std::int64_t first = r.events.front().t_ns;
  std::int64_t last = r.events.back().t_ns;
  m.e2e_ms = Ms(last - r.send_ns);
  if (CameAsOneBody(r)) {
    // The answer came as one JSON body (a server that ignored stream=true): its arrival is no
    // first token, and no speed can be read from one instant. Only the end-to-end time is real.
    return m;
  }
  m.ttft_ms = Ms(first - r.send_ns);
  for (const auto& e : r.events) {
    if (e.kinds & client::TokenEvent::kAnswer) {
      m.ttfa_ms = Ms(e.t_ns - r.send_ns);
      break;
    }
  }
  int n = m.completion_tokens;
  if (n > 1 && last > first) {
    m.decode_tok_s = static_cast<double>(n - 1) / (static_cast<double>(last - first) / 1e9);
    m.tpot_ms = (*m.e2e_ms - *m.ttft_ms) / static_cast<double>(n - 1);
  }
  if (n > 0 && last > r.send_ns) {
    m.wall_tok_s = static_cast<double>(n) / (static_cast<double>(last - r.send_ns) / 1e9);
  }
  return m;
}

std::optional<double> CombinedThroughput(std::span<const client::ChatResponse> responses) {
  std::int64_t first_send = std::numeric_limits<std::int64_t>::max();
  std::int64_t last_token = std::numeric_limits<std::int64_t>::min();
  long long tokens = 0;
  for (const auto& r : responses) {
    // Only streams that finished count: a failed stream's partial tokens and its time would
    // make up a throughput nobody measured (all streams failed -> no figure at all).
    if (r.outcome != client::Outcome::kOk || CameAsOneBody(r)) {
      continue;  // ... nor does an answer that came as one body (no stream to time)
    }
    if (r.send_ns != 0) {
      first_send = std::min(first_send, r.send_ns);
    }
    if (!r.events.empty()) {
      last_token = std::max(last_token, r.events.back().t_ns);
      bool estimated = false;
      tokens += CompletionTokens(r, &estimated);
    }
  }
  if (tokens == 0 || last_token <= first_send) {
    return std::nullopt;
  }
  return static_cast<double>(tokens) / (static_cast<double>(last_token - first_send) / 1e9);
}

}  // namespace sb::perf
