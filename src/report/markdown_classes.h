// Workload lines of a load profile's report.md section (docs/workloads.md): where the prompts
// came from (--dataset: file, format, order, requests sent, entries used, --max-requests, bad
// lines skipped) and the shared-prefix groups (--shared-prefix).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sb::report::md {

// Appends the lines for a profile's "dataset" and "shared_prefix" objects; nothing without them.
void RenderWorkload(const nlohmann::json& profile, std::string& out);

// The server's own count of cached prompt tokens over a measurement window (a "cache" object's
// "server_metrics", from vLLM's or SGLang's /metrics), as one sentence: a report.md paragraph,
// or plain text (not escaped) when `markdown` is false; "" when there is none.
std::string ServerCacheSentence(const nlohmann::json& cache, bool markdown = true);

// The same figure as a table cell: "61.8% (4,096 / 6,624)", "gauge 0.62", or "—".
std::string ServerCacheCell(const nlohmann::json& cache);

}  // namespace sb::report::md
