// A run's live progress on stderr (issue 23 item 3; core/progress.h draws it): counters bumped
// from the sample sink (one per finished request, never from the timed path), the run's own
// lines printed above the status line, and the total of requests the plan will send, for the
// ETA. `--progress auto|tty|plain|off` on run and perf.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/clock.h"
#include "core/progress.h"
#include "run/plan.h"

namespace sb::run {

// Requests the plan sends, warm-ups and retries left out: `tests` quality tests × --repeat,
// then each chosen profile's (decode and ttft runs, one per stream or --requests per
// concurrency level, max-tokens lengths × runs, context sizes (twice with --context-cached),
// rate points × requests). 0 when a profile's count is not known ahead (--duration-s, replay):
// the line then shows no total and no ETA.
long long PlannedRequests(const Plan& plan, std::size_t tests);

class RunProgress {
 public:
  // The mode is plan.progress (checked by CheckPlan); auto looks at whether stderr is a tty.
  RunProgress(const Plan& plan, std::size_t tests, Clock& clock);
  ~RunProgress();

  // A finished request (not a warm-up): ok or not, its output tokens.
  void OnFinished(bool ok, long long tokens);
  // The journal's unit that began ("concurrency c8 stream 1", "rate sweep 4", "test id 1"):
  // the line's current item, and what it is waiting for when nothing finishes.
  void SetCurrent(std::string_view unit);
  // A line of the run's own (a level's result), above the status line.
  void Print(const std::string& line);
  // Erases the status line and stops drawing (before the summary).
  void Stop();

 private:
  Clock& clock_;
  ProgressState state_;
  std::unique_ptr<ProgressReporter> reporter_;
  ProgressMode mode_;
};

}  // namespace sb::run
