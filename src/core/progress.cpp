#include "core/progress.h"

#include <fmt/format.h>

#include "core/number_format.h"

namespace sb {

Result<ProgressMode> ParseProgressMode(std::string_view text, bool stderr_is_tty) {
  if (text == "auto") {
    return stderr_is_tty ? ProgressMode::kTty : ProgressMode::kPlain;
  }
  if (text == "tty") {
    return ProgressMode::kTty;
  }
  if (text == "plain") {
    return ProgressMode::kPlain;
  }
  if (text == "off") {
    return ProgressMode::kOff;
  }
  return MakeError(ErrorCode::kUsage,
                   fmt::format("--progress: '{}' is not one of auto, tty, plain, off", text));
}

void ProgressState::SetCurrent(std::string_view item) {
  std::lock_guard<std::mutex> lock(mu_);
  current_ = item;
}

void ProgressState::Finished(bool ok, long long tokens, std::string_view item,
                             std::int64_t now_ns) {
  (ok ? ok_ : failed_).fetch_add(1, std::memory_order_relaxed);
  tokens_.fetch_add(tokens, std::memory_order_relaxed);
  last_done_ns_.store(now_ns, std::memory_order_relaxed);
  done_.fetch_add(1, std::memory_order_release);
  if (!item.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (current_ != item) {
      current_ = item;
    }
  }
}

ProgressSnapshot ProgressState::Read() const {
  ProgressSnapshot s;
  s.done = done_.load(std::memory_order_acquire);
  s.total = total_.load(std::memory_order_relaxed);
  s.ok = ok_.load(std::memory_order_relaxed);
  s.failed = failed_.load(std::memory_order_relaxed);
  s.tokens = tokens_.load(std::memory_order_relaxed);
  s.last_done_ns = last_done_ns_.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  s.current = current_;
  return s;
}

namespace {

std::string MinSec(std::int64_t ns) {
  const long long s = ns / 1'000'000'000;
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

std::string ProgressLine::Status(const ProgressSnapshot& s, std::int64_t now_ns) {
  window_.emplace_back(now_ns, s.tokens);
  while (window_.size() > 1 && window_.front().first < now_ns - kRateWindowNs) {
    window_.pop_front();
  }
  std::string out = s.total > 0 ? fmt::format("{}/{} requests", s.done, s.total)
                                : fmt::format("{} requests", s.done);
  out += fmt::format(" · {} ok, {} failed", s.ok, s.failed);
  if (!s.current.empty()) {
    out += " · " + s.current;
  }
  const auto& [t0, n0] = window_.front();
  if (now_ns > t0) {
    const double rate =
        static_cast<double>(s.tokens - n0) / (static_cast<double>(now_ns - t0) / 1e9);
    out += " · " + FixedGrouped(rate, 0) + " tok/s";
  }
  const std::int64_t elapsed = now_ns - start_ns_;
  out += " · " + MinSec(elapsed) + " elapsed";
  if (s.total > 0 && s.done > 0 && s.done < s.total) {
    const double left = static_cast<double>(elapsed) * static_cast<double>(s.total - s.done) /
                        static_cast<double>(s.done);
    out += ", ETA " + MinSec(static_cast<std::int64_t>(left));
  }
  const std::int64_t since = now_ns - (s.last_done_ns > 0 ? s.last_done_ns : start_ns_);
  if (since >= kWaitingAfterNs) {
    out += fmt::format(" · still waiting{}: {} s", s.current.empty() ? "" : " for " + s.current,
                       since / 1'000'000'000);
  }
  return out;
}

std::string ProgressLine::Tick(const ProgressSnapshot& s, std::int64_t now_ns) {
  switch (mode_) {
    case ProgressMode::kOff:
      return "";
    case ProgressMode::kTty:
      drawn_ = true;
      return "\r" + Status(s, now_ns) + "\x1b[K";
    case ProgressMode::kPlain:
      if (plain_written_ && now_ns - last_plain_ns_ < kPlainEveryNs) {
        Status(s, now_ns);  // keeps the tok/s window current
        return "";
      }
      if (!plain_written_ && now_ns - start_ns_ < kPlainEveryNs) {
        Status(s, now_ns);
        return "";  // the first line after 10 s, not at once
      }
      plain_written_ = true;
      last_plain_ns_ = now_ns;
      return "progress: " + Status(s, now_ns) + "\n";
  }
  return "";
}

std::string ProgressLine::Clear() {
  if (mode_ != ProgressMode::kTty || !drawn_) {
    return "";
  }
  drawn_ = false;
  return "\r\x1b[K";
}

ProgressReporter::ProgressReporter(ProgressMode mode, const ProgressState& state, Clock& clock,
                                   std::FILE* out)
    : mode_(mode), state_(state), clock_(clock), out_(out), line_(mode, ToNanos(clock.Now())) {
  if (mode_ == ProgressMode::kOff) {
    return;
  }
  const Nanos every = mode_ == ProgressMode::kTty ? Nanos(500'000'000) : Nanos(1'000'000'000);
  thread_ = std::jthread([this, every](std::stop_token stop) {
    SteadyTime next = clock_.Now() + every;
    while (clock_.SleepUntil(next, stop)) {
      Draw();
      next += every;
    }
  });
}

ProgressReporter::~ProgressReporter() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  std::lock_guard<std::mutex> lock(mu_);
  const std::string clear = line_.Clear();
  if (!clear.empty()) {
    std::fputs(clear.c_str(), out_);
    std::fflush(out_);
  }
}

void ProgressReporter::Draw() {
  const ProgressSnapshot s = state_.Read();
  std::lock_guard<std::mutex> lock(mu_);
  const std::string text = line_.Tick(s, ToNanos(clock_.Now()));
  if (!text.empty()) {
    std::fputs(text.c_str(), out_);
    std::fflush(out_);
  }
}

void ProgressReporter::PrintAbove(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string clear = line_.Clear();
  std::fputs((clear + line + "\n").c_str(), out_);
  std::fflush(out_);
}

}  // namespace sb
