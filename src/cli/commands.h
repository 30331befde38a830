// The command-line surface (DESIGN.md §2): run, perf, compare, sim. The composition root: the
// only place where concrete pieces (client, simulator, run directory, writers) are wired.
#pragma once

namespace sb::cli {

// Exit codes (DESIGN.md §2).
inline constexpr int kExitOk = 0;
inline constexpr int kExitGate = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitSetup = 3;
inline constexpr int kExitInterrupted = 130;

int Main(int argc, char** argv);

}  // namespace sb::cli
