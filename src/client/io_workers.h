// Internal to the client (not installed API): how Client::RunChats spreads one batch over several
// I/O threads (ClientOptions::io_threads). Each worker is its own event loop (curl multi handle,
// connection cache, timerfd) on its own thread, the calling thread being worker 0; this file
// holds what does not touch curl: how many workers, who gets which call and how much of
// max_in_flight, the serialized hooks, the threads and the preconnect gate.
// Thread safety: RunWorkers and StartGate are meant to be used from several threads as described;
// the rest are pure functions.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stop_token>
#include <vector>

#include "client/http_client.h"

namespace sb::client::io {

// Automatic rule (io_threads == 0): none below this many concurrent streams, then one worker per
// kStreamsPerWorker streams, rounded up.
inline constexpr std::size_t kFirstSplit = 512;
inline constexpr std::size_t kStreamsPerWorker = 256;
// Automatic rule: never more workers than this.
inline constexpr int kMaxAutoWorkers = 16;
// The largest io_threads ValidateOptions accepts.
inline constexpr int kMaxIoThreads = 64;

// How many workers a batch of `calls` calls runs on. requested > 0: that many; 0: 1 below
// kFirstSplit concurrent streams, else min(ceil(streams / kStreamsPerWorker), kMaxAutoWorkers),
// whatever the number of cores: libcurl's cost of starting a transfer grows with its handle's
// connections, so smaller handles pay off even on shared cores (docs/performance.md).
// Streams: min(max_in_flight, calls), or calls when max_in_flight is 0. An open-loop schedule
// (`scheduled`: the calls have send times, and no cap) gets 1: how many of its calls are in
// flight at once is the rate times the latency, not the number of calls, and measured at 5,000
// req/s of short requests, 16 threads made every event wait longer (the hook lock and the
// switches on shared cores) for nothing. Either way never more workers than streams (each worker
// gets at least one call and, under a cap, at least one slot of it), and at least 1.
int WorkerCount(int requested, std::size_t calls, std::size_t max_in_flight, bool scheduled);

// Worker w's slots of a max_in_flight cap split over `workers`: cap / workers, the remainder
// going one each to the lowest workers. 0 (no cap) stays 0.
std::size_t InFlightShare(std::size_t max_in_flight, int workers, int w);

// Worker w of `workers` runs calls w, w + workers, w + 2 * workers, ... (scheduled sends
// interleave evenly); how many that is of `calls`.
std::size_t CallShare(std::size_t calls, int workers, int w);

// Blocks workers until all `n` have arrived (every worker's preconnect is done before any call
// leaves), or until stop is requested.
class StartGate {
 public:
  explicit StartGate(int n) : left_(n) {}

  void ArriveAndWait(std::stop_token stop);

 private:
  std::mutex mu_;
  std::condition_variable_any cv_;
  int left_;
};

// One worker's part of a batch.
struct Share {
  int worker = 0;
  int workers = 1;  // the batch's calls i with i % workers == worker are this worker's
  // The caller's hooks with max_in_flight replaced by this worker's share, on_done and on_event
  // wrapped to run under one mutex shared by all workers (never two hooks at once).
  RunHooks hooks;
  StartGate* preconnected = nullptr;  // set when hooks.preconnect: wait here after preconnecting
};

// Runs body(share, stop) for each of `workers` shares: share 0 on the calling thread, the others
// on threads of their own, all at once; returns when all are done. `stop` is the caller's token
// joined with an internal one that is requested when a body throws (the first exception is
// rethrown here after every worker has ended). Returns false, having run nothing, when a thread
// could not be started (the caller then runs the batch on one thread). cpu_ns, when given,
// receives each worker's thread CPU time (CLOCK_THREAD_CPUTIME_ID) over its body.
bool RunWorkers(int workers, const RunHooks& hooks, std::stop_token stop,
                const std::function<void(const Share&, std::stop_token)>& body,
                std::vector<std::int64_t>* cpu_ns = nullptr);

}  // namespace sb::client::io
