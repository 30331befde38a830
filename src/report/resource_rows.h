// Internal to sb_report: the speed rows of a results.json that carry resource figures
// ("resources" of each decode run, concurrency level, max-tokens run, TTFT run, context row
// and rate point; docs/results-schema.md), in report.md's order, for report.html's resources
// table and compare's Resources section.
// Thread safety: pure functions; the pointers point into the given document.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sb::report {

struct ResourceRow {
  std::string profile;  // "decode", "concurrency", "max-tokens", "ttft", "context", "rate"
  std::string label;    // the row within its profile: "run 2", "c4", "2000 tokens", "4 req/s"
  std::string key;      // stable and unique per row: "decode.run 2", "concurrency.c4"
  const nlohmann::json* figures = nullptr;  // the row's "resources" object
};

std::vector<ResourceRow> ResourceRows(const nlohmann::json& results);

}  // namespace sb::report
