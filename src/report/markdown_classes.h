// Workload lines of a load profile's report.md section (docs/workloads.md): where the prompts
// came from (--dataset: file, format, order, requests sent, entries used, --max-requests, bad
// lines skipped) and the shared-prefix groups (--shared-prefix).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sb::report::md {

// Appends the lines for a profile's "dataset" and "shared_prefix" objects; nothing without them.
void RenderWorkload(const nlohmann::json& profile, std::string& out);

}  // namespace sb::report::md
