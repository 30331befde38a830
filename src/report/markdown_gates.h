#pragma once
// report.md's "Gates" section: the SLO gate's verdict (results.json "gates.slo", written by
// `run` / `perf --fail-on-slo`), each level or rate point checked and which objective it missed.

#include <string>

#include <nlohmann/json.hpp>

namespace sb::report {

// Empty when results.json has no gate verdict.
std::string RenderGatesMarkdown(const nlohmann::json& results);

}  // namespace sb::report
