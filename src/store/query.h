// What the store's commands print (docs/store.md): `history` (one row per run, the change from
// the previous run of the same model and configuration, a sparkline), `leaderboard` (ranked, with
// ties where the 95% intervals overlap) and the bridge check (the same model and configuration
// measured under two engine or servebench versions). Everything is computed here from the loaded
// records, never in SQL, so SQLite and PostgreSQL print the same bytes. Thread safety: pure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/output_format.h"
#include "core/result.h"
#include "store/record.h"

namespace sb::store {

// "profile.metric" or "profile.metric@point", e.g. decode.decode_tok_s,
// concurrency.throughput_tok_s@8, suite.pass_rate.
struct MetricSpec {
  std::string profile, metric, point;
  std::string Name() const;
};

// A profile may be spelled as on the command line ("max-tokens.tok_s@64" names the stored
// profile max_tokens).
Result<MetricSpec> ParseMetric(const std::string& text);

// Checks `spec` against what `runs` measured (metric_names.cpp): a usage error when no run has
// the metric (naming the stored metrics of that profile, or of every profile), when the metric
// is swept and no @POINT is given, or when no run has that point (naming the points there
// are). A store with no runs passes: there is nothing to check against.
Result<void> CheckMetric(const std::vector<RunRecord>& runs, const MetricSpec& spec);

// Every metric the runs measured, one line each: "PROFILE.METRIC  UNIT  [@P1, @P2, ...]",
// sorted (`history/leaderboard --list-metrics`).
std::string ListMetrics(const std::vector<RunRecord>& runs);

// The row of `run` that `spec` names: with a point, that row; without one, the row without a
// point, else the one at the highest numeric point. nullptr when the run did not measure it.
const MetricRow* FindMetric(const RunRecord& run, const MetricSpec& spec);

// Whether a larger value is better (tok/s, req/s, rates, tokens/J) or a smaller one (ms, s,
// and the resource figures in bytes, W, J and J/token).
bool HigherIsBetter(const MetricRow& row);

struct Filter {
  std::string model;
  std::map<std::string, std::string> tags;
  std::string since;  // ISO date or time: runs started at or after it
};

// The complete runs that pass the filter, in time order.
std::vector<RunRecord> Select(const std::vector<RunRecord>& runs, const Filter& filter);

std::string Sparkline(const std::vector<double>& values);

// `history`: the runs (already selected) with `spec`; those without it are left out.
std::string RenderHistory(const std::vector<RunRecord>& runs, const MetricSpec& spec,
                          OutputFormat format);

// How leaderboard entries are grouped: "model" (model and configuration), "recipe", "tag:KEY".
Result<std::string> ParseGroupBy(const std::string& text);

std::string RenderLeaderboard(const std::vector<RunRecord>& runs, const MetricSpec& spec,
                              const std::string& by, OutputFormat format);

// The bridge check over `runs` (time order): one line per consecutive pair of runs of the same
// model and configuration whose server version or servebench version differ. With `involving`
// non-empty, only pairs that include one of those run ids.
std::vector<std::string> BridgeCheck(const std::vector<RunRecord>& runs, const MetricSpec& spec,
                                     const std::vector<std::string>& involving = {});

}  // namespace sb::store
