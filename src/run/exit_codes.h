// Exit codes (docs/architecture.md) and the one way an error ends a command: a line on stderr, then
// the code its kind maps to. Used by the run module and the command line alike.
#pragma once

#include "core/result.h"

namespace sb::run {

inline constexpr int kExitOk = 0;
inline constexpr int kExitGate = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitSetup = 3;
inline constexpr int kExitInterrupted = 130;

// kUsage -> 2, kCancelled -> 130, any other error -> 3.
int ExitCodeFor(const Error& e);

// Prints "servebench: error: MESSAGE" to stderr (through Redact()) and returns ExitCodeFor(e).
int Fail(const Error& e);

}  // namespace sb::run
