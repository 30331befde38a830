// Internal to sb_suite: a suite's `profile:` test. Its options come from the run's profile
// options and the test's own arguments; its results become one test row per level, length,
// prompt, size or run, judged PASS/ERROR/TIMEOUT/FAIL like a quality test.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "perf/profiles.h"
#include "suite/suite.h"

namespace sb::suite::detail {

// The profile options for `test`: `base` with the test's arguments (levels, lengths, sizes,
// runs, tokens, depth, context_max_tokens) and its thinking/temperature, the run's winning
// (`run_thinking`, `run_temperature`) when set.
perf::ProfileOptions ProfileTestOptions(const TestSpec& test, perf::ProfileOptions base,
                                        const std::optional<bool>& run_thinking,
                                        const std::optional<double>& run_temperature);

// The test rows of a profile test whose profile produced `result`.
std::vector<nlohmann::json> ProfileTestRows(const TestSpec& test, const nlohmann::json& result);

}  // namespace sb::suite::detail
