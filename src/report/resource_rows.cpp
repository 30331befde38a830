#include "report/resource_rows.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/format.h"

namespace sb::report {

using nlohmann::json;

std::vector<ResourceRow> ResourceRows(const json& r) {
  std::vector<ResourceRow> out;
  const json* perf = Find(r, {"perf"});
  if (perf == nullptr || !perf->is_object()) {
    return out;
  }
  auto add = [&](std::string_view profile, std::string label, const json& row) {
    if (const json* f = Find(row, {"resources"}); f != nullptr && f->is_object()) {
      std::string key = std::string(profile) + "." + label;
      out.push_back(ResourceRow{std::string(profile), std::move(label), std::move(key), f});
    }
  };
  auto number = [](const json& j, std::string_view k) {
    const auto v = NumberAt(j, {k});
    return v ? fmt::format("{:g}", *v) : std::string("?");
  };
  for (const json* x : ArrayAt(*perf, {"decode", "runs"})) {
    add("decode", StringAt(*x, {"label"}).value_or(""), *x);
  }
  for (const json* l : ArrayAt(*perf, {"concurrency", "levels"})) {
    add("concurrency", "c" + number(*l, "concurrency"), *l);
  }
  const ProfileSpec& mt = Profile(ProfileId::kMaxTokens);
  for (const json* l : ProfileRows(*perf, mt.id)) {
    for (const json* x : ArrayAt(*l, {"runs"})) {
      add(mt.name,
          fmt::format("{} tokens, {}", number(*l, mt.dim), StringAt(*x, {"label"}).value_or("")),
          *x);
    }
  }
  for (const json* p : ArrayAt(*perf, {"ttft", "prompts"})) {
    for (const json* x : ArrayAt(*p, {"runs"})) {
      add("ttft",
          fmt::format("{}, {}", StringAt(*p, {"name"}).value_or("?"),
                      StringAt(*x, {"label"}).value_or("")),
          *x);
    }
  }
  for (const json* x : ArrayAt(*perf, {"context", "rows"})) {
    add("context", number(*x, "size") + " tokens", *x);
  }
  for (const json* p : ArrayAt(*perf, {"rate", "rates"})) {
    add("rate", number(*p, "rate_rps") + " req/s", *p);
  }
  return out;
}

}  // namespace sb::report
