// Files of a run directory that the run module reads back: plan.json (written before the first
// request; --resume runs it again) and results.json of an earlier process.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace sb::run {

inline constexpr const char* kPlanFile = "plan.json";

// A JSON object file; kSetup error when it is missing or not a JSON object.
Result<nlohmann::json> ReadJsonFile(const std::filesystem::path& p);

}  // namespace sb::run
