// What one chat response may hold and claim (docs/bounds.md "Per request"), checked as its
// events arrive: a stream past the caller's token cap is stopped (a server that ignores
// max_tokens), text past the keep cap is dropped (counts and timestamps are kept), a usage that
// disagrees wildly with what arrived is refused, and a 2xx stream without a single chunk (only
// "data: [DONE]") is no answer. Internal to src/client (http_client.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "client/chat.h"

namespace sb::client::detail {

// usage.completion_tokens is implausible when it is over both of these: kUsageFloor tokens, and
// kUsagePerObserved tokens per token event and byte of text that arrived. Hidden reasoning
// (counted, not streamed) stays far below; 10^15 does not.
inline constexpr std::int64_t kUsageFloor = 1'000'000;
inline constexpr std::int64_t kUsagePerObserved = 1'000;

// True when an SSE data payload is a chunk: not blank (a keep-alive) and not "[DONE]".
bool IsChunkPayload(std::string_view data);

// The reason usage.completion_tokens is refused ("usage.completion_tokens 2147483647 or more
// disagrees with the 3 token events (15 bytes of text) that arrived"), nullopt when it is
// absent or plausible (see kUsageFloor). text_bytes: every byte of answer, reasoning and tool
// text that arrived, dropped ones included.
std::optional<std::string> ImplausibleUsage(const ChatResponse& r, std::size_t text_bytes);

class StreamGuard {
 public:
  // max_tokens: stop a stream that delivered more tokens than this (0 = no cap); a token event
  // counts its own token count when the server gave a plausible one, else 1. keep_text_bytes:
  // answer and reasoning text kept, each (0 = all).
  StreamGuard(std::int64_t max_tokens = 0, std::size_t keep_text_bytes = 0)
      : max_tokens_(max_tokens), keep_text_(keep_text_bytes) {}

  // After ApplyStreamEvent applied `data` (r had events_before events then). False, with
  // r.outcome and r.reason set, when the stream must stop.
  bool AfterEvent(ChatResponse& r, std::string_view data, std::size_t events_before);

  // A 2xx stream that ended (r.outcome still kOk): false (kProtocol) when it had no chunk or
  // its final usage is implausible.
  bool AtStreamEnd(ChatResponse& r);

  // A complete non-streaming body was applied (r.outcome still kOk): false (kProtocol) when its
  // usage is implausible.
  bool AfterBody(ChatResponse& r);

 private:
  // Answer + reasoning + tool text that arrived, dropped bytes included.
  std::size_t TextBytes(const ChatResponse& r) const;
  bool CheckUsage(ChatResponse& r);
  void TrimText(ChatResponse& r);

  std::int64_t max_tokens_ = 0;
  std::size_t keep_text_ = 0;
  std::int64_t tokens_ = 0;  // streamed tokens so far
  std::int64_t chunks_ = 0;  // chunk payloads applied
  std::size_t dropped_ = 0;  // text bytes dropped by the keep cap
};

}  // namespace sb::client::detail
