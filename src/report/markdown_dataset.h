// The dataset note under a concurrency or rate section of report.md (perf.<profile>.dataset,
// docs/workloads.md "Datasets"): which file, how many entries were used and sent, and what
// --skip-bad-lines and --max-requests left out.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sb::report::md {

// Appends nothing when the profile ran without --dataset.
void RenderDataset(const nlohmann::json& profile, std::string& out);

}  // namespace sb::report::md
