// Internal to sb_report: the speed sections of report.md (decode, concurrency, max-tokens,
// TTFT, context, rate, speculative decoding), rendered from results.json.
// Thread safety: pure functions.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sb::report::md {

// "## Speed" with a table per profile measured; nothing when no profile was.
void RenderSpeed(const nlohmann::json& results, std::string& out);

// One line naming the perf profiles results.json holds that this report does not draw.
void RenderOtherProfiles(const nlohmann::json& results, std::string& out);

// results.json has a top-level spec_decode object.
bool HasSpecDecode(const nlohmann::json& results);

}  // namespace sb::report::md
