// The sessions profile's section of report.md (perf.sessions, docs/sessions.md): what ran, a
// row per turn index (prompt tokens, cached tokens as the server reports them, TTFT, ITL, E2E)
// and a row per session (total time, turns, tool rounds, tokens).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sb::report::md {

void RenderSessions(const nlohmann::json& sessions, std::string& out);

}  // namespace sb::report::md
