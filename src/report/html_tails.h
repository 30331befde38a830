// report.html's tails table of a sweep (issue 23): p50 / p90 / p99 of TTFT, ITL, TPOT and E2E per
// concurrency level or max-tokens length, the same cells as report.md's (markdown_tails.h).
// Empty when no row has tails (a results.json written before them).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sb::report::html {

std::string TailsTable(const std::vector<const nlohmann::json*>& rows, std::string_view id,
                       std::string_view level_key, std::string_view level_header);

}  // namespace sb::report::html
