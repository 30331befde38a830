// Every time read goes through Clock so tests can drive time by hand (ManualClock).
// Intervals use steady_clock only; wall-clock time is read once per run for the started_at label.
// Thread safety: SteadyClock is stateless; ManualClock is guarded by an internal mutex.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stop_token>
#include <string>

namespace sb {

using SteadyTime = std::chrono::steady_clock::time_point;
using Nanos = std::chrono::nanoseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual SteadyTime Now() const = 0;
  // Sleeps until t (absolute). Returns false if stop was requested first.
  virtual bool SleepUntil(SteadyTime t, std::stop_token stop) = 0;
};

class SteadyClock final : public Clock {
 public:
  SteadyTime Now() const override { return std::chrono::steady_clock::now(); }

  bool SleepUntil(SteadyTime t, std::stop_token stop) override;
};

// A clock that moves only when Advance() is called. SleepUntil returns once time reaches t.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(SteadyTime start = SteadyTime{} + std::chrono::hours(1)) : now_(start) {}

  SteadyTime Now() const override;
  bool SleepUntil(SteadyTime t, std::stop_token stop) override;
  void Advance(Nanos d);
  void Set(SteadyTime t);

 private:
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  SteadyTime now_;  // guarded by mu_
};

// Nanoseconds of steady time since the clock's epoch (CLOCK_MONOTONIC on Linux: the same
// value in every process of the machine, so the simulator and the client can compare times).
inline std::int64_t ToNanos(SteadyTime t) {
  return std::chrono::duration_cast<Nanos>(t.time_since_epoch()).count();
}

inline double ToMillis(Nanos d) {
  return static_cast<double>(d.count()) / 1e6;
}

inline double ToSeconds(Nanos d) {
  return static_cast<double>(d.count()) / 1e9;
}

// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID), in nanoseconds: the client's
// and the sampler's own cost, measured beside what they measure.
std::int64_t ThreadCpuNs();

// "2026-12-02T09:00:00Z" for the current wall-clock time (labels only).
std::string UtcTimestamp();

// "20261202T090000Z" for directory names.
std::string UtcTimestampCompact();

}  // namespace sb
