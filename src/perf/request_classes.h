// Per request class and per cache outcome (docs/workloads.md "What the report shows"): the
// rows the replay, concurrency and rate profiles share. A class is what the record's `class`
// says ("synthetic", "dataset", "shared-prefix:2", "trace:mooncake"); the cache outcomes are
// "cache hit" (some prompt tokens served from the server's cache), "cache miss" (none) and
// "cache not reported" (the server said nothing). Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sb::perf {

// What one finished request contributes.
struct RequestFact {
  std::string cls;
  bool ok = false;
  std::int64_t scheduled_ns = 0, send_ns = 0;  // the replay's schedule (its arrivals chart)
  std::optional<double> ttft_ms, e2e_ms;       // replay: from the scheduled send
  std::optional<double> tpot_ms;               // concurrency and rate records
  std::vector<double> itl_ms;                  // replay: every token gap
  int input_tokens = -1, output_tokens = -1, cached_tokens = -1;
};

// One row per class, then per cache outcome: count, input and output token p50/p90/p99, TTFT,
// ITL and E2E percentiles (TPOT too when a fact has it).
nlohmann::json ClassesJson(const std::vector<RequestFact>& facts);

// The share of prompt tokens the server says it served from its cache, with TTFT percentiles of
// the requests with and without cached tokens; {"reported": false, "share": "not reported"}
// (never 0) when no request carried the server's field.
nlohmann::json CacheJson(const std::vector<RequestFact>& facts);

// The fact of a concurrency or rate request record (samples.jsonl's fields: class, status,
// ttft_ms and e2e_ms from the send, tpot_ms, input/output/cached_tokens, null when unknown).
RequestFact FactOfRecord(const nlohmann::json& record);

// Adds "classes" and "cache" (ClassesJson, CacheJson) of `facts` to a concurrency level or rate
// point.
void AddClassRows(nlohmann::json& row, const std::vector<RequestFact>& facts);

// The same from the row's written "requests" records (servebench merge, which has only those).
void AddRequestClasses(nlohmann::json& row);

}  // namespace sb::perf
