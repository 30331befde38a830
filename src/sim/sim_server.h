// servebench's built-in simulator: a real HTTP/1.1 server (epoll, one event-loop thread) that
// speaks the OpenAI chat-completions dialect closely enough to rehearse every feature, with
// known ground truth. It shares no wire code with src/client, so it can catch the client's bugs.
// Times: CLOCK_MONOTONIC nanoseconds (std::chrono::steady_clock), comparable with the client's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace sb::sim {

struct SimOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0 = an ephemeral port
  std::string model = "sim-model";
  double ttft_ms = 40.0;                 // request received -> first token (at 0 prompt tokens)
  double prefill_us_per_token = 20.0;    // added to TTFT per prompt token
  double itl_ms = 5.0;                   // decode step time for one stream
  double jitter_ms = 0.0;                // uniform +/- jitter per step, seeded
  double concurrency_slowdown = 0.05;    // step time *= 1 + slowdown * (active streams - 1)
  int max_batch = 64;                    // streams decoding at once; the rest queue (FIFO)
  std::uint64_t seed = 1;
  int default_output_tokens = 64;        // when the request sets no max_tokens
  int spec_tokens = 0;                   // k draft tokens per step (0 = no speculative decoding)
  // Per-position acceptance rates as vLLM reports them: spec_accept[i] = P(at least i+1 draft
  // tokens accepted in a step). Non-increasing, each in [0, 1]; size == spec_tokens.
  std::vector<double> spec_accept;
  int thinking_tokens = 32;              // reasoning tokens before the answer when thinking is on
  std::vector<std::string> reject;       // modalities answered with a vLLM-style 400: image, video, audio
  double fault_rate = 0.0;               // probability that a chat request gets a random fault
  std::vector<std::string> fault_kinds;  // reset, stall, malformed, 500, 429 (default: all)
};

class SimServer {
 public:
  // Binds, listens and starts the event-loop thread. kSetup error if the address is in use.
  static Result<std::unique_ptr<SimServer>> Start(const SimOptions& options);
  ~SimServer();  // stops the loop, closes every connection
  SimServer(const SimServer&) = delete;
  SimServer& operator=(const SimServer&) = delete;

  int port() const;
  std::string base_url() const;  // "http://127.0.0.1:PORT/v1"
  void Stop();

 private:
  SimServer();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sb::sim
