// The base run of `servebench compare --baseline store:QUERY NEW...` (docs/compare.md "Gates in
// CI"): the latest complete run in the store that matches QUERY, the filter `history` and
// `leaderboard` apply (--model, --tag, --since) plus the recipe and the label, written as one
// comma-separated list: "model=Qwen3-8B,hw=spark,recipe=mtp". Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "store/query.h"
#include "store/record.h"

namespace sb::store {

// QUERY: comma-separated KEY=VALUE terms, all of which must match. model=, recipe=, label= and
// since= (ISO date or time) are the run's fields; tag:KEY=VALUE, or any other KEY=VALUE, is a
// tag. An empty query matches every complete run.
struct RunQuery {
  Filter filter;  // model, since, tags: as history/leaderboard (query.h Select)
  std::string recipe, label;
  std::string text;  // as given
};

// kUsage error naming --baseline for a term without '=' or with an empty key or value.
Result<RunQuery> ParseRunQuery(const std::string& text);

// The latest (by started_at, then id) complete run of `runs` matching `query`, leaving out the
// runs whose id is in `exclude` (the new runs being compared, which may be stored already).
// kUsage error when none matches, saying how many complete runs the store has.
Result<RunRecord> LatestMatching(const std::vector<RunRecord>& runs, const RunQuery& query,
                                 const std::vector<std::string>& exclude);

}  // namespace sb::store
