#include "report/failed_requests.h"

#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/profile_table.h"
#include "report/format.h"

namespace sb::report {

namespace {

using nlohmann::json;

void CollectFailed(std::string_view profile, std::string_view where,
                   const std::vector<const json*>& records, std::vector<FailedRequest>& out) {
  for (const json* rec : records) {
    auto status = StringAt(*rec, {"status"});
    if (!status || *status == "ok") {
      continue;
    }
    std::string label;
    if (auto l = StringAt(*rec, {"label"})) {
      label = *l;
    } else if (auto id = NumberAt(*rec, {"id"})) {
      label = fmt::format("{}request {}", where.empty() ? "" : std::string(where) + ", ",
                          FormatCount(id));
    } else {
      label = where.empty() ? std::string(kMissing) : std::string(where);
    }
    out.push_back(FailedRequest{std::string(profile), label, rec});
  }
}

}  // namespace

std::vector<FailedRequest> FailedRequests(const json& r) {
  std::vector<FailedRequest> failed;
  const json* perf = Find(r, {"perf"});
  if (perf == nullptr) {
    return failed;
  }
  CollectFailed("decode", "", ArrayAt(*perf, {"decode", "runs"}), failed);
  for (const json* l : ArrayAt(*perf, {"concurrency", "levels"})) {
    std::string where = fmt::format("{} streams", FormatCount(NumberAt(*l, {"concurrency"})));
    CollectFailed("concurrency", where, ArrayAt(*l, {"requests"}), failed);
  }
  for (const json* l : ProfileRows(*perf, ProfileId::kMaxTokens)) {
    std::string where = fmt::format("{} tokens", FormatCount(RowLevel(*l, ProfileId::kMaxTokens)));
    CollectFailed(Profile(ProfileId::kMaxTokens).name, where, ArrayAt(*l, {"runs"}), failed);
  }
  for (const json* p : ArrayAt(*perf, {"ttft", "prompts"})) {
    CollectFailed("ttft", StringAt(*p, {"name"}).value_or(""), ArrayAt(*p, {"runs"}), failed);
  }
  return failed;
}

}  // namespace sb::report
