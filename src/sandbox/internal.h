// Internals of the sandbox shared by its sources and its tests: the verdict mapping and the
// formats of the reasons.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sandbox/sandbox.h"

namespace sb::sandbox {

// How a run ended, as seen by the parent.
struct Ending {
  std::optional<Verdict> killed;  // we killed it (kWallTimeout, kOutputLimit)
  bool program_ended = false;     // the supervisor reported the program's wait status
  int status = 0;                 // that wait status
  double program_cpu_s = 0;       // the program's own CPU time (with the children it reaped)
  std::int64_t maxrss_kib = 0;
};

// Sets verdict, exit_code, signal and reason of result from ending (docs/sandbox.md).
void Classify(const Ending& ending, const Limits& limits, RunResult& result);

// RLIMIT_CPU in whole seconds: ceil(cpu_s), at least 1.
long CpuLimitSeconds(const Limits& limits);

// The out-of-memory message in a program's stderr ("MemoryError", "std::bad_alloc", ...), if any.
std::optional<std::string_view> MemoryErrorPattern(std::string_view stderr_data);

// 1048576 -> "1 MiB", 1536 -> "1.5 KiB", 100 -> "100 B".
std::string FormatBytes(std::uint64_t bytes);

// 11 -> "SIGSEGV".
std::string SignalName(int signal);

}  // namespace sb::sandbox
