// The server's Prometheus gauges (KV-cache usage, running and waiting requests), and
// --power-cmd.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "resources/sources.h"

extern char** environ;

namespace sb::resources {

namespace {

// The largest value of the first name present (KV usage per engine: the fullest engine).
std::optional<double> MaxOf(const std::vector<perf::PromSample>& samples,
                            std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) {
    std::optional<double> best;
    for (const auto& s : samples) {
      if (s.name == name && std::isfinite(s.value)) {
        best = best ? std::max(*best, s.value) : s.value;
      }
    }
    if (best) {
      return best;
    }
  }
  return std::nullopt;
}

// The sum of the first name present (requests over engines).
std::optional<double> SumFirst(const std::vector<perf::PromSample>& samples,
                               std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) {
    if (auto v = perf::SumOf(samples, name)) {
      return v;
    }
  }
  return std::nullopt;
}

class GaugeSource final : public Source {
 public:
  explicit GaugeSource(std::function<Result<std::string>()> fetch, std::string detail)
      : fetch_(std::move(fetch)), detail_(std::move(detail)) {}

  std::string name() const override { return "prometheus"; }

  std::string detail() const override { return detail_; }

  Result<void> Read(Fields& out) override {
    auto body = fetch_();
    if (!body) {
      return body.error();
    }
    auto samples = perf::ParsePrometheus(body.value());
    if (!samples) {
      return samples.error();
    }
    for (const auto& [k, v] : ReadGauges(samples.value())) {
      out[k] = v;
    }
    return {};
  }

 private:
  std::function<Result<std::string>()> fetch_;
  std::string detail_;
};

class PowerCommand final : public Source {
 public:
  PowerCommand(std::string command, int timeout_ms)
      : command_(std::move(command)), timeout_ms_(timeout_ms) {}

  std::string name() const override { return "power-cmd"; }

  std::string detail() const override { return fmt::format("watts printed by `{}`", command_); }

  Result<void> Read(Fields& out) override {
    auto text = RunCommand();
    if (!text) {
      return text.error();
    }
    auto watts = ParseWatts(text.value());
    if (!watts) {
      return watts.error().WithContext(fmt::format("--power-cmd `{}`", command_));
    }
    out[kCommandPower] = watts.value();
    return {};
  }

 private:
  // Runs /bin/sh -c command; its stdout (at most 4 KiB kept), or an error on a non-zero exit or
  // a timeout (then it is killed).
  Result<std::string> RunCommand() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      return MakeError(ErrorCode::kSetup, fmt::format("pipe: {}", std::strerror(errno)));
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    const char* argv[] = {"/bin/sh", "-c", command_.c_str(), nullptr};
    pid_t pid = -1;
    const int rc =
        posix_spawn(&pid, "/bin/sh", &fa, &attr, const_cast<char* const*>(argv), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(fds[1]);
    if (rc != 0) {
      close(fds[0]);
      return MakeError(ErrorCode::kSetup, fmt::format("--power-cmd: spawn: {}", std::strerror(rc)));
    }
    std::string text;
    bool timed_out = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) {
        timed_out = true;
        break;
      }
      pollfd p{fds[0], POLLIN, 0};
      const int pr = poll(&p, 1, static_cast<int>(left));
      if (pr < 0 && errno == EINTR) {
        continue;
      }
      if (pr <= 0) {
        timed_out = pr == 0;
        break;
      }
      char buf[512];
      const ssize_t got = read(fds[0], buf, sizeof buf);
      if (got < 0 && errno == EINTR) {
        continue;
      }
      if (got <= 0) {
        break;  // EOF: the command closed its stdout
      }
      if (text.size() < 4096) {
        text.append(buf, static_cast<std::size_t>(got));
      }
    }
    close(fds[0]);
    if (timed_out) {
      kill(-pid, SIGKILL);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) {
      return MakeError(ErrorCode::kTimeout,
                       fmt::format("--power-cmd `{}` took over {} ms", command_, timeout_ms_));
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      return MakeError(
          ErrorCode::kSetup,
          fmt::format("--power-cmd `{}` failed ({})", command_,
                      WIFEXITED(status) ? fmt::format("exit code {}", WEXITSTATUS(status))
                                        : fmt::format("signal {}", WTERMSIG(status))));
    }
    return text;
  }

  std::string command_;
  int timeout_ms_;
};

}  // namespace

Fields ReadGauges(const std::vector<perf::PromSample>& samples) {
  Fields out;
  if (auto kv = MaxOf(samples, {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc",
                                "sglang:token_usage", "llamacpp:kv_cache_usage_ratio"})) {
    out[kKvCacheUsage] = *kv;
  }
  if (auto r = SumFirst(samples, {"vllm:num_requests_running", "sglang:num_running_reqs",
                                  "llamacpp:requests_processing"})) {
    out[kRequestsRunning] = *r;
  }
  if (auto w = SumFirst(samples, {"vllm:num_requests_waiting", "sglang:num_queue_reqs",
                                  "llamacpp:requests_deferred"})) {
    out[kRequestsWaiting] = *w;
  }
  return out;
}

Result<std::unique_ptr<Source>> OpenPrometheusGauges(std::function<Result<std::string>()> fetch) {
  auto body = fetch();
  if (!body) {
    return body.error();
  }
  auto samples = perf::ParsePrometheus(body.value());
  if (!samples) {
    return samples.error();
  }
  const Fields first = ReadGauges(samples.value());
  if (first.empty()) {
    return MakeError(ErrorCode::kSetup,
                     "/metrics has none of the gauges servebench reads (KV-cache usage, "
                     "running and waiting requests of vLLM, SGLang or llama.cpp)");
  }
  std::vector<std::string> names;
  for (const auto& [k, v] : first) {
    names.push_back(k);
  }
  return std::unique_ptr<Source>(std::make_unique<GaugeSource>(
      std::move(fetch), fmt::format("GET /metrics: {}", fmt::join(names, ", "))));
}

Result<std::unique_ptr<Source>> OpenPowerCommand(const std::string& command, int timeout_ms) {
  auto source = std::make_unique<PowerCommand>(command, timeout_ms);
  Fields probe;
  if (auto ok = source->Read(probe); !ok) {
    return ok.error();
  }
  return std::unique_ptr<Source>(std::move(source));
}

Result<double> ParseWatts(const std::string& text) {
  const char* p = text.c_str();
  while (*p != '\0') {
    if ((*p >= '0' && *p <= '9') ||
        ((*p == '-' || *p == '+' || *p == '.') && p[1] >= '0' && p[1] <= '9')) {
      char* end = nullptr;
      const double v = std::strtod(p, &end);
      if (end != p && std::isfinite(v) && v >= 0 && v <= kMaxWatts) {
        return v;
      }
      if (end != p && v > kMaxWatts) {
        // 1e308 W would make every mean and energy infinite: not a machine's power.
        return MakeError(
            ErrorCode::kProtocol,
            fmt::format("printed {:g} W, over {:g} W: not a machine's power", v, kMaxWatts));
      }
      break;
    }
    ++p;
  }
  std::string shown = text.substr(0, 80);
  shown.erase(std::remove(shown.begin(), shown.end(), '\n'), shown.end());
  return MakeError(ErrorCode::kProtocol, fmt::format("printed no number of watts (\"{}\")", shown));
}

}  // namespace sb::resources
