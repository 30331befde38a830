// The simulator's counters: one struct guarded by a mutex, updated by the event-loop threads and
// read by /metrics (a loop thread) and SimServer::stats() (any thread). Rendered in Prometheus
// text format with vLLM v1 names (label model_name) plus sim_* series of the simulator's own.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "sim/engine.h"
#include "sim/sim_server.h"

namespace sb::sim {

struct Counters {
  std::uint64_t requests = 0;
  std::uint64_t chat_requests = 0;
  int running = 0;
  int waiting = 0;
  int max_running = 0;
  std::uint64_t prompt_tokens = 0;  // counted when the prefill finishes (first token)
  // Prefix cache (when on): prompt tokens looked up and those served from the cache, counted
  // when a request is admitted (vLLM's prefix_cache_queries / prefix_cache_hits).
  std::uint64_t prefix_cache_queries = 0;
  std::uint64_t prefix_cache_hits = 0;
  std::uint64_t generation_tokens = 0;  // counted as tokens are emitted
  std::uint64_t success_stop = 0;
  std::uint64_t success_length = 0;
  std::uint64_t success_abort = 0;  // client went away, reset/malformed faults
  std::uint64_t drafts = 0;
  std::uint64_t draft_tokens = 0;
  std::uint64_t accepted_tokens = 0;
  std::vector<std::uint64_t> accepted_per_pos;  // size spec_tokens
  std::uint64_t emits = 0;
  std::int64_t emit_lag_sum_ns = 0;
  std::int64_t emit_lag_max_ns = 0;
  std::uint64_t faults[kFaultKinds] = {};
  std::uint64_t disconnects = 0;
  std::uint64_t compressed_responses = 0;       // responses sent gzip-compressed (SimOptions::gzip)
  std::uint64_t connections = 0;                // TCP connections accepted
  std::vector<std::uint64_t> loop_connections;  // by event loop; size SimOptions::threads
};

class Metrics {
 public:
  Metrics(int spec_tokens, int threads) {
    c_.accepted_per_pos.assign(spec_tokens, 0);
    c_.loop_connections.assign(threads, 0);
  }

  // Runs fn(Counters&) under the lock.
  template <typename Fn>
  void Update(Fn&& fn) {
    std::lock_guard<std::mutex> lock(mu_);
    fn(c_);
  }

  Counters Snapshot() const {
    std::lock_guard<std::mutex> lock(mu_);
    return c_;
  }

 private:
  mutable std::mutex mu_;
  Counters c_;  // guarded by mu_
};

// Prometheus text exposition (format 0.0.4) of the counters.
std::string RenderPrometheus(const Counters& c, const SimOptions& options);

}  // namespace sb::sim
