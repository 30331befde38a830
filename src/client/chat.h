// OpenAI chat-completions requests and responses, and the dialect differences between servers
// (vLLM, SGLang, llama.cpp, Ollama, the built-in simulator). Every server-specific field name
// lives in chat.cpp and server_info.cpp, nowhere else.
// Times are steady-clock nanoseconds (sb::ToNanos): CLOCK_MONOTONIC, comparable across processes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace sb::client {

enum class ServerKind { kUnknown, kVllm, kSglang, kLlamaCpp, kOllama, kSim };

// "vllm", "sglang", "llama.cpp", "ollama", "sim", "unknown" (the results.json spelling).
std::string_view ServerKindName(ServerKind kind);

struct ChatMessage {
  std::string role;
  std::string content;       // plain text content
  std::string content_json;  // when non-empty: a raw JSON array of content parts, used instead
};

struct ChatParams {
  std::string model;
  std::vector<ChatMessage> messages;
  int max_tokens = 256;
  // Force exactly max_tokens output tokens: ignore_eos plus the server's minimum-length field
  // (vLLM min_tokens, SGLang min_new_tokens, llama.cpp n_predict/ignore_eos). Ollama has none.
  bool force_length = false;
  std::optional<double> temperature;
  std::optional<bool> enable_thinking;  // chat_template_kwargs.enable_thinking (Ollama: think)
  bool stream = true;
  // stream_options.continuous_usage_stats: usage on every chunk, so each event's token count is
  // exact (vLLM, SGLang); llama.cpp gets `timings_per_token` instead, whose timings.predicted_n
  // gives the same. Off by default: it makes every chunk larger.
  bool continuous_usage = false;
  // OpenAI function-calling fields, as JSON text: `tools` (an array of tool definitions) and
  // `tool_choice` ("auto", "none", "required" or an object). Empty = not sent; text that is not
  // valid JSON is not sent either.
  std::string tools_json;
  std::string tool_choice_json;
  // Extra fields merged into the body last (a JSON object as text) with JSON merge-patch rules
  // (RFC 7396): objects merge key by key, other values replace, null deletes a field.
  std::string extra_body_json;
  // When non-empty: the whole `messages` array as JSON text, sent instead of `messages` (a
  // conversation's history with assistant tool calls and tool messages: perf's sessions). Text
  // that is not a valid JSON array is not used.
  std::string messages_json;
};

// The JSON body for POST /v1/chat/completions. Streaming bodies always carry
// stream_options.include_usage = true. max_tokens is always sent (llama.cpp b4748 ignores
// max_completion_tokens); vLLM, SGLang, the simulator and unknown servers also get
// max_completion_tokens. REQUIRES: extra_body_json empty or a JSON object (see
// ValidateExtraBody); anything else is ignored. A message whose content_json is not valid JSON
// falls back to its plain content.
std::string BuildChatBody(const ChatParams& params, ServerKind kind);

// kUsage error unless text is empty or a JSON object (the --extra-body check).
Result<void> ValidateExtraBody(std::string_view text);

// Whether the server is known to honour force_length (exactly max_tokens output tokens).
// False for Ollama (no ignore_eos) and for unknown servers (the vLLM fields are sent anyway).
bool CanForceLength(ServerKind kind);

// "HTTP 400: <message>": the message is error.message (or error, message, detail) when the body
// is JSON, else the body's first 200 bytes; UTF-8 safe, control characters replaced by spaces.
std::string HttpErrorReason(int status, std::string_view body);

enum class Outcome { kOk, kHttpError, kTransport, kTimeout, kProtocol, kCancelled };

// "ok", "http_error", "transport", "timeout", "malformed", "cancelled".
std::string_view OutcomeName(Outcome outcome);

struct Usage {
  int prompt_tokens = -1;  // -1: the server did not say
  int completion_tokens = -1;
  int reasoning_tokens = -1;  // usage.completion_tokens_details.reasoning_tokens
  int cached_tokens = -1;     // usage.prompt_tokens_details.cached_tokens
};

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // concatenated argument deltas (JSON text as the model wrote it)
};

// A token-bearing SSE event: it carried answer text, reasoning text or a tool-call delta.
struct TokenEvent {
  static constexpr std::uint8_t kAnswer = 1, kReasoning = 2, kTool = 4;
  std::int64_t t_ns = 0;     // when its bytes were read, before JSON parsing
  std::int32_t tokens = -1;  // tokens in this event when the server says (continuous usage)
  std::uint8_t kinds = 0;    // bitmask of kAnswer/kReasoning/kTool
  // answer.size() and reasoning.size() just after this event: what a hook saw then (a resumed
  // run replays a recorded stream event by event, client/journal.h).
  std::uint32_t answer_end = 0;
  std::uint32_t reasoning_end = 0;
};

struct ChatResponse {
  std::uint64_t id = 0;
  Outcome outcome = Outcome::kOk;
  std::string reason;      // human-readable cause when outcome != kOk ("HTTP 400: ...")
  int http_status = 0;     // 0 when no status line was received
  std::string error_body;  // body of a non-2xx answer (capped at 64 KiB)

  std::int64_t scheduled_ns = 0;  // intended send time (open loop); 0 = sent when ready
  // Steady time just before the request was handed to libcurl (curl_multi_add_handle). It
  // includes connection setup on a fresh connection, as vLLM's `bench serve` does (it starts its
  // timer before aiohttp's POST). 0 when the call was never sent.
  // With retries (ClientOptions::retries) this is the send of the attempt whose result this is,
  // so no retry wait counts in latency; first_send_ns is the first attempt's.
  std::int64_t send_ns = 0;
  std::int64_t first_send_ns = 0;  // send of the first attempt (== send_ns without retries)
  // When the request was about to be written to its connection (after connecting and any TLS
  // handshake, before the first byte goes out: the native transport's first write, libcurl's
  // pre-request point); 0 = not reached or unknown. written_ns - send_ns is the time spent
  // connecting or waiting in the client before the request left.
  std::int64_t written_ns = 0;
  std::int64_t first_byte_ns = 0;  // first response byte
  std::int64_t done_ns = 0;        // transfer finished (or failed)
  // The answering attempt opened a connection of its own (none was idle in the client's cache:
  // curl's CURLINFO_NUM_CONNECTS), so its TTFT includes a handshake.
  bool new_connection = false;

  std::vector<TokenEvent> events;  // token-bearing events only, in arrival order
  std::string answer;
  std::string reasoning;  // reasoning_content, else reasoning: never both
  std::vector<ToolCall> tool_calls;
  std::string finish_reason;
  Usage usage;
  std::string server_model;  // "model" echoed by the server
  std::string timings_json;  // raw llama.cpp "timings" object (last one seen), "" if none
  // llama.cpp timings.predicted_n of the last chunk that had one (timings_per_token), -1 if none:
  // per-chunk token counts without continuous usage.
  int timings_predicted_n = -1;
  std::string sim_json;      // raw "sim" ground-truth object (servebench sim), "" if none
  bool stream_done = false;  // "data: [DONE]" seen
  // The answer came as an SSE event stream. False for a stream call answered with one JSON body
  // (a server that ignores stream=true): its single event's timestamp is the body's arrival,
  // so TTFT and decode speed cannot be measured from it and should not be reported.
  bool streamed = false;
  // The server sent text that is not valid UTF-8; each invalid byte was replaced by U+FFFD
  // before parsing, so answer/reasoning/tool calls are always valid UTF-8 (and serialisable).
  bool invalid_utf8 = false;
  // Attempts = retries + 1. retry_reasons[k] is why attempt k failed ("HTTP 429: ...",
  // "Recv failure: Connection reset by peer"); empty without retries.
  int retries = 0;
  std::vector<std::string> retry_reasons;
  // Replayed from the journal of a resumed run (client/journal.h): not sent by this process.
  // Every field above is recorded there: a new field must be added to ResponseToJson too.
  bool replayed = false;
};

// Decodes one SSE data payload (a chat.completion.chunk, an error object, or "[DONE]") into r.
// t_ns is the arrival time of its bytes. Returns false when the payload is not valid JSON or
// carries an error object (r.outcome/reason set). Invalid UTF-8 is replaced by U+FFFD (and
// r.invalid_utf8 set) rather than refused: the text is kept.
bool ApplyStreamEvent(std::string_view data, std::int64_t t_ns, ChatResponse& r);

// Decodes a complete non-streaming chat.completion body into r (answer, reasoning, tool calls,
// usage, finish_reason, timings). Returns false on malformed JSON. Invalid UTF-8: as above.
bool ApplyCompletionBody(std::string_view body, std::int64_t t_ns, ChatResponse& r);

}  // namespace sb::client
