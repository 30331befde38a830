// servebench's built-in simulator: a real HTTP/1.1 server (epoll, one event-loop thread, or
// SimOptions::threads of them sharing the port through SO_REUSEPORT) that
// speaks the OpenAI chat-completions dialect closely enough to rehearse every feature, with
// known ground truth. It shares no wire code with src/client, so it can catch the client's bugs.
// Times: CLOCK_MONOTONIC nanoseconds (std::chrono::steady_clock), comparable with the client's.
// Thread safety: Start/Stop/port/base_url/stats may be called from any thread; stats() is a
// consistent snapshot taken under the server's metrics mutex. docs/simulator.md is the manual.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace sb::sim {

struct SimToolCall {
  std::string name;
  std::string arguments;  // JSON text, streamed in pieces
};

// A scripted answer (`servebench sim --answers SUITE`): a request whose text parts, joined by
// "\n", equal `key` gets this answer instead of filler words (docs/simulator.md "Answers").
struct SimAnswer {
  std::string key;
  std::string content;                  // the answer text, streamed in token-sized pieces
  std::vector<SimToolCall> tool_calls;  // after the content; finish_reason "tool_calls"
  int reasoning_tokens = -1;            // with thinking: reasoning tokens first (-1: default)
  bool loop = false;  // the reasoning (with thinking) or the answer repeats one phrase forever
  std::string fault;  // "" or a fault kind struck on this request (reset, stall, malformed, ...)
};

struct SimOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0 = an ephemeral port
  // Event loops, each a thread with its own SO_REUSEPORT listening socket on the port; the kernel
  // spreads connections over them. One engine still: the batch (max_batch, its FIFO queue, the
  // slowdown by running streams), the prefix cache and the counters are shared. With more than
  // one, which stream a seed's numbers go to depends on arrival order across the loops.
  int threads = 1;
  std::string model = "sim-model";
  double ttft_ms = 40.0;               // request received -> first token (at 0 prompt tokens)
  double prefill_us_per_token = 20.0;  // added to TTFT per prompt token
  double itl_ms = 5.0;                 // decode step time for one stream
  double jitter_ms = 0.0;              // uniform +/- jitter per step, seeded
  double concurrency_slowdown = 0.05;  // step time *= 1 + slowdown * (active streams - 1)
  int max_batch = 64;                  // streams decoding at once; the rest queue (FIFO)
  std::uint64_t seed = 1;
  int default_output_tokens = 64;  // natural answer length is seeded in [this/2, this]
  int spec_tokens = 0;             // k draft tokens per step (0 = no speculative decoding)
  // Per-position acceptance rates as vLLM reports them: spec_accept[i] = P(at least i+1 draft
  // tokens accepted in a step). Non-increasing, each in [0, 1]; size == spec_tokens.
  std::vector<double> spec_accept;
  int thinking_tokens = 32;  // reasoning tokens before the answer when thinking is on
  // Modalities answered with a vLLM-style 400: image, video, audio.
  std::vector<std::string> reject;
  double fault_rate = 0.0;  // probability that a chat request gets a random fault
  // Kinds fault_rate draws from: reset, stall, malformed, 500, 429, 503, giant, badutf8,
  // endless, done_open, done_only, huge_usage, huge_header. Empty: the first five (the others
  // strike only when named or forced).
  std::vector<std::string> fault_kinds;
  // Name of the streamed/non-streamed reasoning field: "reasoning_content" (SGLang, llama.cpp,
  // older vLLM) or "reasoning" (vLLM >= 0.12, Ollama).
  std::string reasoning_field = "reasoning_content";
  // Context window: prompt + max_tokens above it is a 400. 128K + 1K, the same for `servebench
  // sim` and the built-in simulator, so `--profile context --sizes ...,128000` fits both.
  int max_model_len = 131072 + 1024;
  double stall_ms = 5000.0;  // how long the "stall" fault stops emitting
  // Retry-After of the 429 and 503 faults, in seconds, in [0, 86400]. A fraction is sent as a
  // decimal ("0.05"; not RFC 9110, but servebench's client and many others accept it): tests
  // stay fast.
  double retry_after_s = 1.0;
  // Content bytes of the "giant" fault's one event (the SSE line is ~200 bytes longer).
  std::size_t giant_event_bytes = std::size_t{8} << 20;
  // gzip-compress responses to requests whose Accept-Encoding allows gzip: streams with a
  // streaming deflate flushed (Z_SYNC_FLUSH) after every write, so each event still arrives
  // when it is written; other bodies in one piece. Content-Encoding: gzip, Vary:
  // Accept-Encoding. Counted in Stats::compressed_responses.
  bool gzip = false;
  // /tokenize as llama.cpp has it: plain text only (`content`, `prompt`); a `messages` body is a
  // 400, so a client must count the chat template's share itself (`--plain-tokenize`).
  bool plain_tokenize = false;
  // POST /apply-template {messages} as llama.cpp has it: {"prompt": the chat template applied},
  // a text whose /tokenize count (special markers included) equals the chat's prompt tokens
  // (`--apply-template`; string contents only).
  bool apply_template = false;
  // Prompt tokens as a small vocabulary counts them: each word cut into pieces of at most this
  // many characters (2: "because" is 4 tokens), in [0, 64]; 0 = one token per word. Answers are
  // still one token per word.
  int chars_per_token = 0;
  bool thinking_by_default = false;  // thinking when the request sets no enable_thinking
  // When set: one line per accepted chat request is appended to this file, "<hash>\t<text>\n":
  // the FNV-1a hash of the messages' text (16 hex digits) and the last text part's first line
  // (at most 80 bytes). Written as each request starts, so it survives a client killed at any
  // moment: tests count what was sent per prompt (resume sends no finished work again).
  std::string request_log;
  // Busy-wait up to this long before a deadline instead of sleeping through it: timer wake-ups
  // run late by tens of microseconds on virtual machines. Costs CPU; 0 = always sleep.
  double spin_us = 0.0;
  // Prefix cache (prefix_cache.h, docs/simulator.md "Prefix cache"): > 0 keeps up to this many
  // prompt tokens in blocks of block_tokens, LRU; prefill then costs time only for the tokens
  // not served from it, and usage.prompt_tokens_details.cached_tokens says how many were.
  // 0 = off (no prompt_tokens_details in usage).
  int prefix_cache_tokens = 0;
  int block_tokens = 16;
  // A request that offers `tools` and has no scripted answer calls one of them with this
  // probability (tool_calls.h; deterministic with the seed and the messages). 0 = never.
  double tool_call_probability = 0.0;
  // Scripted answers, matched by the request's text (see SimAnswer). The first match wins.
  std::vector<SimAnswer> answers;
};

// Checks every option; the message names the option and the offending value, e.g.
// "spec_accept has 2 values but spec_tokens is 3". SimServer::Start calls it first.
Result<void> Validate(const SimOptions& options);

class SimServer {
 public:
  // Counters for tests and the CLI; a snapshot (see /metrics for the Prometheus view).
  struct Stats {
    std::uint64_t requests = 0;       // HTTP requests parsed (every endpoint, errors included)
    std::uint64_t chat_requests = 0;  // chat completions accepted for generation
    int streams_active = 0;           // chat requests in flight: running + waiting
    int running = 0;                  // in the batch (prefill or decode)
    int waiting = 0;                  // queued because the batch was full
    int max_concurrent = 0;           // peak of running
    std::uint64_t emits = 0;          // token-bearing writes (one per decode step)
    double emit_lag_max_us = 0.0;     // max over emits of (write time - scheduled time)
    double emit_lag_mean_us = 0.0;
    std::uint64_t faults_injected = 0;
    std::uint64_t disconnects = 0;           // chat requests dropped because the client went away
    std::uint64_t compressed_responses = 0;  // sent gzip-compressed (SimOptions::gzip)
    std::uint64_t connections = 0;           // TCP connections accepted
    std::vector<std::uint64_t> loop_connections;  // of those, by event loop (SimOptions::threads)
  };

  // Validates the options, binds, listens and starts the event-loop thread.
  // kUsage error for bad options, kSetup error if the address is in use or unresolvable.
  static Result<std::unique_ptr<SimServer>> Start(const SimOptions& options);
  ~SimServer();  // stops the loop, closes every connection
  SimServer(const SimServer&) = delete;
  SimServer& operator=(const SimServer&) = delete;

  int port() const;
  std::string base_url() const;  // "http://127.0.0.1:PORT/v1"
  Stats stats() const;
  void Stop();  // idempotent; joins the threads

 private:
  SimServer();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sb::sim
