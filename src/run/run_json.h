// Private to the run module: what a run writes into results.json before and after it measures
// (the skeleton, the plan record, labels, the merged summary) and the server it resolves.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "perf/profiles.h"
#include "run/plan.h"
#include "run/target.h"
#include "store/store.h"
#include "suite/runner.h"

namespace sb::run::detail {

using nlohmann::json;

// The run's summary: the test counts of the suites, and the speed totals of every measured
// request (speed profiles and suite requests together).
json MergedSummary(const perf::Session& session, const suite::SuiteRunner& runner);

// --serve / --recipe: the server to launch, into c.recipe (a matrix sets c.recipe itself).
// kUsage error for --endpoint beside them, both at once, or a file of several recipes.
Result<void> ResolveServer(Plan& c);

// plan.json: what --resume needs to run the same plan again (docs/resume.md).
json PlanJson(const Plan& c, const Target& t, const std::string& started_at);

// This machine's name (results.json "host"; the run store keeps it), "" when unknown.
std::string HostName();

// --label / --tag as results.json "labels" ({"label": "...", "tags": {"k": "v"}}), null when
// neither was given: the run directory keeps them, not only the store (docs/store.md).
json LabelsJson(const store::StoreOptions& o);

// The results.json skeleton: what was asked and of whom, before anything is measured.
json InitialResults(const Plan& c, const Target& t, const suite::RunOptions& run_options,
                    const std::string& started_at, const std::string& command_line);

}  // namespace sb::run::detail
