// One run as the store keeps it (docs/store.md): read from a complete run directory
// (results.json, plan.json), which stays the source of truth. Metric rows are derived generically
// from results.json's "perf" (every profile, every row: level, size, rate, length, prompt) and its
// suite summary, so a new profile needs no change here. Thread safety: plain data, pure functions.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"
#include "core/result_rows.h"

namespace sb::store {

// One figure the store keeps: `profile`.`metric` (at `dim`=`point` for a row of a sweep), e.g.
// decode.decode_tok_s, or concurrency.throughput_tok_s at concurrency=8: a row of the one result
// model (core/result_rows.h) - a median with its n and 95% interval, a percentile object's p50 or
// p99 (metric "from_send.ttft_ms.p50"), or a plain number. `profile` is the profile's name
// ("max-tokens"), or "suite" / "resources".
using MetricRow = ResultRow;

struct TestRow {
  std::string suite, test_id, category, status, reason;
  std::optional<double> seconds;
  std::optional<long long> tokens;
};

struct RunRecord {
  std::string id;      // stable identity: the same run directory always gives the same id
  std::string digest;  // changes when the run's content (or its labels) changes
  std::string started_at, finished_at, status;
  std::string host, tool_version, server_kind, server_version, model, endpoint;
  bool simulated = false;
  std::string recipe, server_command;  // the launched server, when there was one
  std::string command, label, run_dir;
  std::map<std::string, std::string> tags;
  std::vector<MetricRow> metrics;
  std::vector<TestRow> tests;

  // The configuration history, the leaderboard and the bridge check group by: the recipe and
  // the tags, whichever the run has ("mtp,hw=spark"), else "-".
  std::string Config() const;
};

// Extra labels given to `store import` (added to those the run was started with).
struct Labels {
  std::string label;
  std::map<std::string, std::string> tags;
};

// "k=v" -> {k, v}; kUsage error naming --tag otherwise.
Result<std::pair<std::string, std::string>> ParseTag(const std::string& text);

// The record of the run in `dir` (or of a results.json path): its results.json, and its
// plan.json's --label/--tag when present. Errors: kSetup naming the file when results.json is
// missing, not JSON, or not a servebench results file, or the run is still "running".
Result<RunRecord> ReadRunDir(const std::filesystem::path& dir, const Labels& extra = {});

// The record of a parsed results.json (`plan_args`: plan.json's "args", possibly empty).
RunRecord RecordFromResults(const nlohmann::json& results,
                            const std::vector<std::string>& plan_args, const Labels& extra,
                            const std::string& run_dir);

// The metric rows of a results.json document (its "perf" and suite "summary").
std::vector<MetricRow> MetricRows(const nlohmann::json& results);

// The unit of a metric named `key` ("decode_tok_s" -> "tok/s", "ttft_ms" -> "ms"): core/units.h.
std::string UnitOf(const std::string& key);

}  // namespace sb::store
