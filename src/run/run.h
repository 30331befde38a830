// Executing a plan (docs/architecture.md): open the target (an --endpoint, a launched server or the
// built-in simulator), run the suites and the speed profiles into a run directory, write
// results.json, report.md and the console summary, and decide the exit code; or do that for
// every recipe of a matrix and compare them. The composition root: the only place where
// concrete pieces (client, simulator, launched server, run directory, writers) are wired.
// Thread safety: call from one thread; `stop` may be requested from any thread (a signal).
#pragma once

#include <stop_token>
#include <string>

#include "run/exit_codes.h"
#include "run/plan.h"

namespace sb::run {

// The version results.json and --version name: project(VERSION) in CMakeLists.txt with the
// commit from `git describe` ("0.1.0+g967002f"), as the .deb names it (cmake/WriteVersion.cmake).
const char* Version();

// Runs `plan` (`run` or `perf`) and returns the exit code (run/exit_codes.h); errors are printed
// to stderr. `command_line` is recorded in results.json. CheckPlan is applied first, and the
// plan is completed in place (the suite/profile defaults of `run`, the recipe, the endpoint and
// run directory of a launched server).
int ExecuteRun(Plan& plan, const std::string& command_line, std::stop_source& stop);

// Runs every chosen recipe of the matrix in turn (ExecuteRun with the base plan), one run
// directory each under the matrix's, then writes compare.md and compare.json when at least two
// were measured. Returns 130 when interrupted, else the first failing recipe's code, else 0.
int ExecuteMatrix(MatrixPlan& matrix, const std::string& command_line, std::stop_source& stop);

}  // namespace sb::run
