// The tails table of a sweep in report.md (issue 23): one row per level (concurrency, max-tokens
// length) with p50 / p90 / p99 of TTFT, ITL, TPOT and E2E from results.json's `ttft_ms`,
// `itl_ms`, `tpot_ms` and `e2e_ms` of each level. Rows written before these figures existed have
// no tails: the table is then left out, so re-rendering an old run gives its old report.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sb::report::md {

// `level_key` is the row's field that says where it sits ("concurrency", "max_tokens"),
// `level_header` its column title.
void RenderTails(const std::vector<const nlohmann::json*>& rows, std::string_view level_key,
                 std::string_view level_header, std::string& out);

// "12.3 / 15.0 / 19.9" from a {"p50","p90","p99"} object; "—" when it has no values.
std::string TailCell(const nlohmann::json& row, std::string_view key);

// "12.3 / 15.0 / 19.9" from a {"p50","p90","p99"} object, each "—" when missing (a sentence's
// figures, where TailCell's single "—" would read as one value).
std::string ThreeMs(const nlohmann::json& row, std::string_view key);

// "120 / 1,000" from a {"p50","p99"} object of token counts ("— / —" without values).
std::string LengthCell(const nlohmann::json& row, std::string_view key);

}  // namespace sb::report::md
