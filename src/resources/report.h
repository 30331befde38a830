// The resource section of report.md and the terminal summary, rendered from results.json
// ("resources" and the "resources" of each speed row). Renders only; a missing figure prints
// "—", and a source that was not available is listed with its reason.
// Thread safety: pure functions.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sb::resources {

// "## Resources": the sources (available or why not), the whole run, and one row per speed row
// that has figures. "" when results.json has no "resources".
std::string RenderResourcesMarkdown(const nlohmann::json& results);

// One or two plain lines for the terminal ("resources: server peak RSS 41.2 MiB, ..."), ending
// with a newline; "" without "resources".
std::string RenderResourcesConsole(const nlohmann::json& results);

// "41.2 MiB", "1.50 GiB" (binary units).
std::string FormatBytes(double bytes);

}  // namespace sb::resources
