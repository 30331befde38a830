// `servebench compare RUN_A RUN_B [...]`: a head-to-head table of two or more results.json
// documents, in the layout of the seeds' "At a glance" table (Metric | A | B | Advantage).
// Each metric knows whether higher or lower is better; the Advantage column names the best run
// and its ratio over the runner-up, or "Tie" when the difference is within noise. The rules
// (noise, wording, rows) are documented in docs/compare.md. Renders only: the figures come from
// the documents; compare computes the ratios and the peak over concurrency levels, nothing else.
// Thread safety: pure functions.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"

namespace sb::report {

enum class Format { kMarkdown, kJson, kHtml };

// "md" / "markdown", "json", "html" (case-sensitive); kUsage error otherwise.
Result<Format> ParseFormat(std::string_view name);

// Labels for the runs: each run's target.model. Where two runs share a model, the name of the
// directory each came from (sources[i]: the run directory or its results.json) is appended,
// "Qwen3-8B (20261202T090000Z-a)"; without sources, or if still ambiguous, "#<position>".
// REQUIRES: sources is empty or sources.size() == runs.size().
std::vector<std::string> DefaultLabels(const std::vector<nlohmann::json>& runs,
                                       const std::vector<std::filesystem::path>& sources = {});

// The comparison of `runs` (in the given order; the first is listed first) in `format`.
// `labels`: one per run, or empty for DefaultLabels(runs).
// Errors (kUsage): fewer than two runs; labels.size() neither 0 nor runs.size().
// Markdown and HTML end with the tie rule; JSON is {"schema": "servebench.compare/1",
// "runs": [...], "rows": [...]} (docs/compare.md).
Result<std::string> Compare(const std::vector<nlohmann::json>& runs,
                            const std::vector<std::string>& labels, Format format);

}  // namespace sb::report
