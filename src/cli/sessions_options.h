// The flags of `perf --profile sessions` (docs/sessions.md); they affect nothing else.
#pragma once

#include <CLI/CLI.hpp>

#include "perf/sessions.h"

namespace sb::cli {

void AddSessionsOptions(CLI::App* cmd, perf::SessionsOptions& sessions);

}  // namespace sb::cli
