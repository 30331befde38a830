// The command-line surface (docs/architecture.md): run, perf, launch, compare, roofline, suites,
// assets, sim, doctor. Flag parsing only: what `run`, `perf` and `launch` do is in run/run.h.
#pragma once

#include "run/exit_codes.h"

namespace sb::cli {

// Exit codes (docs/architecture.md), from run/exit_codes.h.
using run::kExitGate;
using run::kExitInterrupted;
using run::kExitOk;
using run::kExitSetup;
using run::kExitUsage;

int Main(int argc, char** argv);

}  // namespace sb::cli
