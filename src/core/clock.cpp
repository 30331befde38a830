#include "core/clock.h"

#include <ctime>
#include <thread>

namespace sb {

std::int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

bool SteadyClock::SleepUntil(SteadyTime t, std::stop_token stop) {
  // Sleep in short slices so a stop request is seen promptly; the last slice is exact.
  constexpr auto kSlice = std::chrono::milliseconds(50);
  while (!stop.stop_requested()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= t) {
      return true;
    }
    auto left = t - now;
    if (left > kSlice) {
      std::this_thread::sleep_for(kSlice);
    } else {
      std::this_thread::sleep_until(t);
    }
  }
  return false;
}

SteadyTime ManualClock::Now() const {
  std::lock_guard<std::mutex> lock(mu_);
  return now_;
}

bool ManualClock::SleepUntil(SteadyTime t, std::stop_token stop) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait(lock, stop, [&] { return now_ >= t; });
}

void ManualClock::Advance(Nanos d) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += d;
  }
  cv_.notify_all();
}

void ManualClock::Set(SteadyTime t) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    now_ = t;
  }
  cv_.notify_all();
}

namespace {

std::tm NowUtc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  return tm;
}

}  // namespace

std::string UtcTimestamp() {
  std::tm tm = NowUtc();
  char buf[32];
  return std::string(buf, std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm));
}

std::string UtcTimestampCompact() {
  std::tm tm = NowUtc();
  char buf[32];
  return std::string(buf, std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm));
}

}  // namespace sb
