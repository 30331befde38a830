// The simulator's JSON API surface (everything but the per-token path): request parsing with
// vLLM-style validation errors, /tokenize, /detokenize, /v1/models, the non-streaming body and
// the ground-truth "sim" object. nlohmann/json stays inside api.cpp.
// Thread safety: functions are pure except Vocabulary, which belongs to one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "sim/engine.h"
#include "sim/sim_server.h"

namespace sb::sim {

// A complete answer to send (body with Content-Length).
struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::string extra_headers;  // complete "Name: value\r\n" lines
};

// vLLM's error shape: {"error":{"message":..,"type":..,"param":null,"code":status}}, with the
// type vLLM uses for the status (BadRequestError, NotFoundError, ...).
Reply ErrorReply(int status, std::string_view message);

// A chat completions body -> the request, or the error vLLM would answer (400 for bad fields,
// rejected modalities and context overflow; 404 for an unknown model).
std::variant<ChatRequest, Reply> ParseChatRequest(std::string_view body, const SimOptions& options);

// Token id -> text, for /detokenize: the generated words, single ASCII characters and every
// token /tokenize has seen (up to a cap).
class Vocabulary {
 public:
  Vocabulary();
  void Add(std::string_view token);
  const std::string* Find(std::int64_t id) const;  // nullptr if unknown

 private:
  std::unordered_map<std::int64_t, std::string> by_id_;
};

// POST /tokenize: vLLM {model?, prompt | messages} -> {count, max_model_len, tokens};
// llama.cpp {content, with_pieces?} -> {tokens}.
Reply Tokenize(std::string_view body, const SimOptions& options, Vocabulary& vocabulary);

// POST /detokenize {model?, tokens} -> {"prompt": text, "content": text} (vLLM, llama.cpp).
// Lossy on whitespace: tokens are joined with single spaces.
// POST /apply-template (SimOptions::apply_template): {"prompt": text} whose tokens are the
// chat's prompt tokens: "^" (BOS), per message "<" role ":" " " content " >", then "!" (the
// assistant header); each marker is one token. Messages with string content only.
Reply ApplyTemplate(std::string_view body);

Reply Detokenize(std::string_view body, const SimOptions& options, const Vocabulary& vocabulary);

// GET /v1/models (vLLM shape, with max_model_len).
std::string ModelsBody(const SimOptions& options, std::int64_t created);

// Ground truth of one request (times: CLOCK_MONOTONIC ns).
struct Truth {
  std::int64_t recv_ns = 0;   // request fully received
  std::int64_t start_ns = 0;  // left the queue (admitted to the batch)
  std::int64_t first_token_ns = 0;
  std::int64_t last_token_ns = 0;
  int prompt_tokens = 0;
  int cached_tokens = -1;  // served from the prefix cache; -1 when the cache is off
  int completion_tokens = 0;
  int reasoning_tokens = 0;
  int steps = 0;  // token-bearing emissions (the prefill token's included)
  int drafts = 0;
  int draft_tokens = 0;
  int accepted_tokens = 0;
  std::int64_t max_emit_lag_ns = 0;
  std::int64_t first_emit_lag_ns = 0;  // the first token's write behind its schedule: in TTFT
  // How long the request's last bytes waited in the socket before the simulator read them
  // (the kernel's receive time of its last read against recv_ns): a busy loop is behind here
  // before it can be late with any token. -1: not measured (no kernel timestamp).
  std::int64_t read_lag_ns = -1;
};

// The "sim" object: recv_ns, start_ns, first_token_ns, last_token_ns, queue_ms, ttft_ms,
// decode_tok_s, prompt_tokens, completion_tokens, reasoning_tokens, steps, drafts,
// draft_tokens, accepted_tokens, max_emit_lag_us, first_emit_lag_us, read_lag_us (when
// measured).
std::string TruthJson(const Truth& truth);

// The non-streaming chat.completion body.
std::string CompletionBody(std::string_view id, std::int64_t created, const SimOptions& options,
                           std::string_view reasoning, std::string_view content,
                           std::string_view finish_reason, const Truth& truth,
                           const std::vector<SimToolCall>& tool_calls = {},
                           const std::vector<std::string>& tool_ids = {});

}  // namespace sb::sim
