// Live progress on stderr (issue 23 item 3, docs/reports.md "Live progress"): one status line
// redrawn in place on a terminal, or a plain line at most every 10 s when stderr is not one.
// The run only bumps counters (ProgressState: atomics, one short lock for the current item's
// name) when a request finishes; a separate thread (ProgressReporter) reads them and writes, so
// nothing is printed from the timed path. ProgressLine decides what to write at a given time and
// is a pure function of its inputs, so tests drive it with a ManualClock.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "core/clock.h"
#include "core/result.h"

namespace sb {

enum class ProgressMode { kOff, kTty, kPlain };

// "auto" (a terminal: tty, else plain), "tty", "plain", "off"; kUsage error otherwise.
Result<ProgressMode> ParseProgressMode(std::string_view text, bool stderr_is_tty);

struct ProgressSnapshot {
  long long done = 0;   // requests finished (ok + failed)
  long long total = 0;  // requests planned when known, else 0 (no ETA)
  long long ok = 0;
  long long failed = 0;
  long long tokens = 0;           // completion tokens of the finished requests
  std::string current;            // the item the last request belonged to ("concurrency c8")
  std::int64_t last_done_ns = 0;  // when the last request finished (0: none yet)
};

class ProgressState {
 public:
  void AddTotal(long long n) { total_.fetch_add(n, std::memory_order_relaxed); }

  // The item now running (a test, a profile's level or rate); shown until the next one.
  void SetCurrent(std::string_view item);
  void Finished(bool ok, long long tokens, std::string_view item, std::int64_t now_ns);
  ProgressSnapshot Read() const;

 private:
  std::atomic<long long> done_{0}, total_{0}, ok_{0}, failed_{0}, tokens_{0};
  std::atomic<std::int64_t> last_done_ns_{0};
  mutable std::mutex mu_;
  std::string current_;  // guarded by mu_
};

class ProgressLine {
 public:
  static constexpr std::int64_t kPlainEveryNs = 10'000'000'000;  // a plain line at most every 10 s
  static constexpr std::int64_t kRateWindowNs = 5'000'000'000;   // tok/s over the last 5 s
  static constexpr std::int64_t kWaitingAfterNs = 10'000'000'000;  // "still waiting" after 10 s

  ProgressLine(ProgressMode mode, std::int64_t start_ns) : mode_(mode), start_ns_(start_ns) {}

  // What to write at `now_ns` for `s`: tty, "\r" + the status + erase-to-end-of-line on every
  // call; plain, the status and "\n" when 10 s have passed since the last line (or "" );
  // off, "". Call it from one thread.
  std::string Tick(const ProgressSnapshot& s, std::int64_t now_ns);

  // tty: what erases the drawn line ("" when none is drawn); others "".
  std::string Clear();

  // The status text itself: "120/400 requests · 118 ok, 2 failed · concurrency c8 · 1,830 tok/s
  // · 0:42 elapsed, ETA 1:58", plus "· still waiting for concurrency c8: 37 s" when nothing
  // finished for 10 s.
  std::string Status(const ProgressSnapshot& s, std::int64_t now_ns);

 private:
  ProgressMode mode_;
  std::int64_t start_ns_;
  std::int64_t last_plain_ns_ = 0;
  bool plain_written_ = false;
  bool drawn_ = false;
  std::deque<std::pair<std::int64_t, long long>> window_;  // (time, tokens so far)
};

// The thread that draws: every 0.5 s on a terminal, every second otherwise (ProgressLine keeps
// plain lines 10 s apart). PrintAbove() writes a line of the run's own (a finished level) with
// the status line erased first and redrawn after. Stops and erases its line when destroyed.
class ProgressReporter {
 public:
  ProgressReporter(ProgressMode mode, const ProgressState& state, Clock& clock, std::FILE* out);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  void PrintAbove(const std::string& line);

 private:
  void Draw();

  ProgressMode mode_;
  const ProgressState& state_;
  Clock& clock_;
  std::FILE* out_;
  std::mutex mu_;  // guards line_ and writes to out_
  ProgressLine line_;
  std::jthread thread_;
};

}  // namespace sb
