// The trace replay's section of report.md (perf.replay, docs/workloads.md): what was sent and
// how late, the share of prompt tokens the server served from its cache ("not reported" when it
// said nothing, never 0), TTFT with and without cached tokens, and a row per request class.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sb::report::md {

void RenderReplay(const nlohmann::json& replay, std::string& out);

}  // namespace sb::report::md
