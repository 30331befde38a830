// Writes samples.jsonl off the measuring threads. A finished request's typed record is handed
// over (moved) and turned into JSON, serialised, redacted and written by one writer thread: the
// thread that reads the streams and sends the next requests spends under a microsecond handing
// it over, where building and writing the line cost it 30-100 µs (docs/performance.md "Writing
// samples").
//
// Order: lines are written in the order Post is called (one queue, one writer).
// Timing: Post wakes nobody (a wake-up per record cost the posting thread 30-70 µs on a 2-core
// machine, the woken writer taking its core); the writer wakes every kPeriod, when kWakeAt
// records wait, or for a Drain, and writes what waits in one go.
// Completeness: Drain() returns once every record posted before it is in the file (or failed);
// the journal takes samples.jsonl's size only after a Drain, so a unit's end mark never counts a
// line that is not there yet. The destructor drains. A record still queued when the process is
// killed (SIGKILL, a crash) is lost with the unfinished unit it belongs to, which --resume
// measures again; Ctrl-C and SIGTERM stop the run normally, and its end drains.
// Errors: the first failed append is passed to `on_error` (on the writer thread) once; every
// record after it is dropped, as the file must end at the last whole line.
// Memory: at most `max_queued` records wait; Post blocks while the queue is full (a disk slower
// than the load holds the measuring thread rather than growing without bound).
// Thread safety: Post and Drain may be called from any thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/result.h"
#include "perf/request_record.h"

namespace sb::perf {

class SampleWriter {
 public:
  using Append = std::function<Result<void>(const Sample&)>;
  using OnError = std::function<void(const std::string&)>;

  SampleWriter(Append append, OnError on_error, std::size_t max_queued = 1 << 16);
  SampleWriter(const SampleWriter&) = delete;
  SampleWriter& operator=(const SampleWriter&) = delete;
  ~SampleWriter();

  void Post(Sample sample);
  void Drain();

  static constexpr std::chrono::milliseconds kPeriod{20};
  static constexpr std::size_t kWakeAt = 256;

 private:
  void Loop();

  Append append_;
  OnError on_error_;
  const std::size_t max_queued_;
  const std::size_t wake_at_;
  std::mutex mu_;
  std::condition_variable changed_;  // a record posted, taken or written; the writer stops
  std::deque<Sample> queue_;         // guarded by mu_
  bool writing_ = false;             // guarded by mu_: the writer holds taken records
  int draining_ = 0;                 // guarded by mu_: Drain calls waiting
  bool stopping_ = false;            // guarded by mu_: the destructor's
  bool failed_ = false;              // guarded by mu_
  std::thread writer_;               // last: started after everything it reads
};

}  // namespace sb::perf
