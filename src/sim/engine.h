// The simulator's engine: pure functions from a parsed request, the options and a seeded RNG to
// what the server emits and when. No I/O, no clock: the server (sim_server.cpp) asks the engine
// for durations and token text and owns the timeline. Thread safety: functions are pure; an Rng
// belongs to one thread. Durations are in nanoseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/rng.h"  // Rng (xoshiro256**) and Mix64: fast and identical everywhere
#include "sim/sim_server.h"

namespace sb::sim {

inline constexpr std::string_view kServerName = "servebench-sim/0.1.0";

enum class Fault {
  kNone,
  kReset,
  kStall,
  kMalformed,
  kHttp500,
  kHttp429,
  kHttp503,  // 503 with Retry-After (SimOptions::retry_after_s)
  kGiant,    // one extra event whose content is SimOptions::giant_event_bytes long
  kBadUtf8,  // one extra event whose content holds invalid UTF-8 (kBadUtf8Text)
  // Hostile servers (docs/simulator.md "Faults"):
  kEndless,     // ignores max_tokens: a stream never ends (a body is 16 x the asked length)
  kDoneOpen,    // sends data: [DONE], then keeps the connection open without ending the body
  kDoneOnly,    // a 200 whose whole body is data: [DONE]
  kHugeUsage,   // the final usage says completion_tokens 10^15 (kHugeUsageTokens)
  kHugeHeader,  // a 200 whose head holds one kHugeHeaderBytes header line
};

// "reset", "stall", "malformed", "500", "429", "503", "giant", "badutf8", "endless",
// "done_open", "done_only", "huge_usage", "huge_header" -> the fault; anything else -> nullopt.
std::optional<Fault> ParseFault(std::string_view name);
std::string_view FaultName(Fault fault);
inline constexpr int kFaultKinds = 14;  // size of an array indexed by Fault
// Every fault kind but kNone, in enum order; and the list `fault_rate` draws from when
// fault_kinds is empty (the original five: giant and badutf8 change answers, 503 asks for a
// retry, so they strike only when named).
inline constexpr Fault kAllFaults[] = {
    Fault::kReset,    Fault::kStall,     Fault::kMalformed, Fault::kHttp500, Fault::kHttp429,
    Fault::kHttp503,  Fault::kGiant,     Fault::kBadUtf8,   Fault::kEndless, Fault::kDoneOpen,
    Fault::kDoneOnly, Fault::kHugeUsage, Fault::kHugeHeader};
inline constexpr Fault kDefaultRandomFaults[] = {Fault::kReset, Fault::kStall, Fault::kMalformed,
                                                 Fault::kHttp500, Fault::kHttp429};
inline constexpr std::string_view kFaultList =
    "reset, stall, malformed, 500, 429, 503, giant, badutf8, endless, done_open, done_only, "
    "huge_usage or huge_header";
// usage.completion_tokens of the huge_usage fault, and the header line of huge_header.
inline constexpr long long kHugeUsageTokens = 1'000'000'000'000'000LL;
inline constexpr std::size_t kHugeHeaderBytes = std::size_t{10} << 20;
// The content of the badutf8 fault's event: a lone 0xFF/0xFE, "C3 28" (a lead byte without its
// continuation), an encoded surrogate (ED A0 80) and a sequence cut short (E2 82).
inline constexpr std::string_view kBadUtf8Text = " caf\xC3\x28 \xFF\xFE \xED\xA0\x80 \xE2\x82 end";

// What the engine needs from a chat request (parsed by api.cpp; no JSON here).
struct ChatRequest {
  int prompt_tokens = 0;
  std::optional<int> max_tokens;  // max_tokens or max_completion_tokens
  int min_tokens = 0;
  bool ignore_eos = false;
  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage
  bool continuous_usage = false;  // stream_options.continuous_usage_stats
  bool thinking = false;          // chat_template_kwargs.enable_thinking (or the default)
  // Markers in the message text (docs/simulator.md "Markers").
  std::optional<Fault> forced_fault;  // [[sim:fault=KIND]]
  std::optional<int> forced_tokens;   // [[sim:tokens=N]]: the natural answer length
  bool loop = false;                  // [[sim:loop]]: the answer repeats one phrase
  // The answer's first words (each with its leading space), e.g. {" 56"} for a prompt asking
  // "What is 7 × 8?"; filler words follow. See ArithmeticAnswer.
  std::vector<std::string> answer_words;

  // A scripted answer (SimOptions::answers): its tool calls, cut into the tokens that follow
  // the answer words, and the reasoning length it asks for.
  struct ToolToken {
    int call = 0;           // index of the call
    std::string name;       // set on the call's first token
    std::string id;         // ditto
    std::string arguments;  // a piece of the arguments (the first token carries none)
  };

  std::vector<ToolToken> tool_tokens;
  std::optional<int> reasoning_tokens;
  bool scripted = false;        // answer_words came from SimOptions::answers (they need escaping)
  std::uint64_t text_hash = 0;  // FNV-1a over the message text; seeds length and words
  std::string log_text;         // the last text part's first line, at most 80 bytes
  // With the prefix cache on (SimOptions::prefix_cache_tokens): the chained keys of the
  // prompt's full blocks (BlockKeys in prefix_cache.h), looked up when the request is admitted.
  std::vector<std::uint64_t> block_keys;
};

// What one chat request will produce.
struct Plan {
  int completion_tokens = 0;       // tokens emitted in all (reasoning included)
  int reasoning_tokens = 0;        // the first reasoning_tokens tokens are reasoning
  std::string_view finish_reason;  // "stop" or "length"
  Fault fault = Fault::kNone;
  int fault_after_tokens = 0;   // the fault strikes once this many tokens were emitted
  std::uint64_t text_seed = 0;  // seeds TokenText
};

// Decides length, finish reason and fault. The natural length depends only on options.seed and
// the prompt text (same prompt, same answer); the random fault draw uses `rng`.
// REQUIRES: request passed validation (prompt_tokens < max_model_len, min <= max tokens).
Plan PlanChat(const ChatRequest& request, const SimOptions& options, Rng& rng);

// Time from leaving the queue to the first token: ttft_ms + prefill_us_per_token * the prompt
// tokens to compute (those not served from the prefix cache).
std::int64_t FirstTokenDelayNs(const SimOptions& options, int prompt_tokens);

// Duration of one decode step with `running` streams in the batch:
// itl_ms * (1 + concurrency_slowdown * (running - 1)) + uniform(-jitter_ms, +jitter_ms), >= 0.
std::int64_t StepNs(const SimOptions& options, int running, Rng& rng);

// Draft tokens accepted in one speculative step (0..spec_tokens): position i is accepted with
// probability spec_accept[i] / spec_accept[i-1] given position i-1 was, stopping at the first
// rejection, so P(accepted >= i+1) = spec_accept[i].
int DraftAccepted(const SimOptions& options, Rng& rng);

// The text of generated token `index` (0-based): one word of a fixed list of 64 English filler
// words, each with a leading space (" the"), one word = one token. JSON-safe (no escaping).
std::string_view TokenText(std::uint64_t text_seed, int index, bool loop);

// The product for the last "What is A × B?" (also "x" or "*") in text, as the simulator's one
// piece of knowledge: long-context probes get a checkable answer. nullopt when there is none.
std::optional<long long> ArithmeticAnswer(std::string_view text);

// The 64 filler words TokenText draws from (each with its leading space).
std::span<const std::string_view> FillerWords();

// Request id for the response ("chatcmpl-" + 32 hex digits), deterministic in (seed, n).
std::string RequestId(std::uint64_t seed, std::uint64_t request_number);

}  // namespace sb::sim
