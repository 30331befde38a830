// The human report of one run (report.md) and the terminal summary, rendered from a
// results.json document (docs/results-schema.md). Renders only: every figure comes from the
// document as perf/suite computed it; a null or missing value prints "—", never 0. Sections
// appear only when their data exists. Layout: docs/reports.md. Never throws on odd input.
// Thread safety: pure functions.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sb::report {

// report.md: title, target, status, warnings, results summary, by-category and per-test tables,
// speed tables (decode, concurrency, max_tokens, ttft, spec decode), failed requests,
// definitions.
std::string RenderMarkdown(const nlohmann::json& results);

// A few plain lines for the terminal (no Markdown tables), e.g.
// "decode: 198.7 tok/s (median of 3; runs 198.1, 198.7, 199.0)". Ends with a newline.
std::string RenderConsoleSummary(const nlohmann::json& results);

}  // namespace sb::report
