// The flags of `perf --profile sessions` (docs/sessions.md); they affect nothing else.
#pragma once

#include <CLI/CLI.hpp>

#include "perf/images.h"
#include "perf/sessions.h"

namespace sb::cli {

// Also --images-per-request and --image-size (perf/images.h), which sessions share with decode,
// concurrency and rate.
void AddSessionsOptions(CLI::App* cmd, perf::SessionsOptions& sessions, perf::ImageLoad& images);

}  // namespace sb::cli
