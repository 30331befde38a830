#include "store/baseline.h"

#include <algorithm>

#include <fmt/format.h>

namespace sb::store {

Result<RunQuery> ParseRunQuery(const std::string& text) {
  RunQuery q;
  q.text = text;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    std::string term = text.substr(pos, comma - pos);
    pos = comma + 1;
    const bool tag = term.rfind("tag:", 0) == 0;
    if (tag) {
      term = term.substr(4);
    }
    const auto eq = term.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == term.size()) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("--baseline store:{}: '{}' is not KEY=VALUE (terms: model=M, "
                                   "recipe=R, label=L, since=DATE, tag:KEY=VALUE or KEY=VALUE)",
                                   text, term));
    }
    const std::string key = term.substr(0, eq);
    const std::string value = term.substr(eq + 1);
    if (!tag && key == "model") {
      q.filter.model = value;
    } else if (!tag && key == "recipe") {
      q.recipe = value;
    } else if (!tag && key == "label") {
      q.label = value;
    } else if (!tag && key == "since") {
      q.filter.since = value;
    } else {
      q.filter.tags[key] = value;
    }
  }
  return q;
}

Result<RunRecord> LatestMatching(const std::vector<RunRecord>& runs, const RunQuery& query,
                                 const std::vector<std::string>& exclude) {
  std::vector<RunRecord> matched = Select(runs, query.filter);
  std::erase_if(matched, [&](const RunRecord& r) {
    return (!query.recipe.empty() && r.recipe != query.recipe) ||
           (!query.label.empty() && r.label != query.label) ||
           std::find(exclude.begin(), exclude.end(), r.id) != exclude.end();
  });
  if (matched.empty()) {
    const auto complete = std::count_if(runs.begin(), runs.end(),
                                        [](const RunRecord& r) { return r.status == "complete"; });
    return MakeError(ErrorCode::kUsage,
                     fmt::format("--baseline store:{}: no run in the store matches ({} complete "
                                 "run{} stored{}; `servebench store ls` lists them)",
                                 query.text, complete, complete == 1 ? "" : "s",
                                 exclude.empty() ? "" : ", the runs compared left out"));
  }
  return *std::max_element(matched.begin(), matched.end(), [](const auto& a, const auto& b) {
    return a.started_at != b.started_at ? a.started_at < b.started_at : a.id < b.id;
  });
}

}  // namespace sb::store
