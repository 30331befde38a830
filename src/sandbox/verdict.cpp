// How a sandboxed run ended, in words: its verdict, the limit it hit, the signal that killed
// it, the memory error its stderr shows.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <signal.h>
#include <string.h>

#include "sandbox/internal.h"
#include "sandbox/sandbox.h"

namespace sb::sandbox {

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kExited:
      return "exited";
    case Verdict::kSignaled:
      return "signaled";
    case Verdict::kCpuLimit:
      return "cpu_limit";
    case Verdict::kWallTimeout:
      return "wall_timeout";
    case Verdict::kOutputLimit:
      return "output_limit";
    case Verdict::kFileSizeLimit:
      return "file_size_limit";
    case Verdict::kMemoryLimit:
      return "memory_limit";
    case Verdict::kCompileError:
      return "compile_error";
    case Verdict::kStopped:
      return "stopped";
  }
  return "unknown";
}

long CpuLimitSeconds(const Limits& limits) {
  return std::max(1L, static_cast<long>(std::ceil(limits.cpu_s)));
}

std::optional<std::string_view> MemoryErrorPattern(std::string_view stderr_data) {
  static constexpr std::string_view kPatterns[] = {
      "MemoryError",             // Python
      "std::bad_alloc",          // C++ (libstdc++'s terminate message)
      "Cannot allocate memory",  // strerror(ENOMEM)
      "out of memory",           // cc1plus, glibc
  };
  for (std::string_view p : kPatterns) {
    if (stderr_data.find(p) != std::string_view::npos) {
      return p;
    }
  }
  return std::nullopt;
}

std::string FormatBytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  return fmt::format("{:g} {}", std::round(v * 10) / 10, kUnits[unit]);
}

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signal);
}

void Classify(const Ending& ending, const Limits& limits, RunResult& result) {
  const int status = ending.status;
  if (ending.program_ended) {
    if (WIFEXITED(status)) {
      result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      result.signal = WTERMSIG(status);
    }
  }
  auto memory = [&](std::optional<std::string_view> pattern) {
    result.verdict = Verdict::kMemoryLimit;
    result.reason = fmt::format("memory limit ({})", FormatBytes(limits.memory_bytes));
    if (pattern) {
      result.reason += fmt::format(": {}", *pattern);
    }
  };
  if (ending.killed) {
    result.verdict = *ending.killed;
    if (*ending.killed == Verdict::kOutputLimit) {
      result.reason = fmt::format("wrote over {} of output", FormatBytes(limits.output_bytes));
    } else if (*ending.killed == Verdict::kStopped) {
      result.reason = "stopped: the run is ending (Ctrl-C or --deadline), the program was killed";
    } else {
      result.verdict = Verdict::kWallTimeout;
      result.reason = fmt::format("killed after {:g} s wall time", limits.wall_s);
    }
    return;
  }
  const std::optional<std::string_view> pattern = MemoryErrorPattern(result.stderr_data);
  if (WIFEXITED(status)) {
    result.verdict = Verdict::kExited;
    result.reason = fmt::format("exit code {}", result.exit_code);
    if (result.exit_code != 0 && pattern) {
      memory(pattern);
    } else if (result.exit_code != 0 &&
               result.stderr_data.find("File too large") != std::string::npos) {
      // Python ignores SIGXFSZ, so the write fails with EFBIG and it exits with the OSError.
      result.verdict = Verdict::kFileSizeLimit;
      result.reason = fmt::format("file size limit ({})", FormatBytes(limits.file_bytes));
    }
    return;
  }
  const int sig = result.signal;
  const long cpu_limit = CpuLimitSeconds(limits);
  const bool big = static_cast<double>(ending.maxrss_kib) * 1024.0 >=
                   0.5 * static_cast<double>(limits.memory_bytes);
  if (sig == SIGXCPU ||
      (sig == SIGKILL && ending.program_cpu_s >= static_cast<double>(cpu_limit) - 0.05)) {
    result.verdict = Verdict::kCpuLimit;
    result.reason = fmt::format("CPU time limit ({} s)", cpu_limit);
  } else if (sig == SIGXFSZ) {
    result.verdict = Verdict::kFileSizeLimit;
    result.reason = fmt::format("file size limit ({})", FormatBytes(limits.file_bytes));
  } else if ((sig == SIGABRT || sig == SIGSEGV || sig == SIGBUS || sig == SIGKILL) && pattern) {
    memory(pattern);
  } else if ((sig == SIGSEGV || sig == SIGBUS || sig == SIGKILL) && big) {
    memory(std::nullopt);
  } else {
    result.verdict = Verdict::kSignaled;
    result.reason = SignalName(sig);
  }
}

}  // namespace sb::sandbox
