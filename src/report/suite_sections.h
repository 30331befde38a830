// Internal: the report.md sections that only quality-suite runs have (docs/reports.md): the
// simulator's demo scenario, the suite notes under the summary (confidence interval, the
// suite's own throughput, how each modality was sent, the sandbox), pass@k with --repeat, and
// speculative-decoding acceptance by input kind. Each renders nothing when its data is absent.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sb::report {

void RenderDemoScenario(const nlohmann::json& results, std::string& out);
void RenderSuiteNotes(const nlohmann::json& results, std::string& out);
void RenderRepeats(const nlohmann::json& results, std::string& out);
void RenderSpecByInput(const nlohmann::json& results, std::string& out);

}  // namespace sb::report
