#include "sim/tool_calls.h"

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/rng.h"

namespace sb::sim {

std::optional<SimToolCall> DrawToolCall(const nlohmann::json& tools, double probability,
                                        std::uint64_t seed, std::uint64_t text_hash) {
  if (!(probability > 0) || !tools.is_array()) {
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (const auto& t : tools) {
    if (!t.is_object()) {
      continue;
    }
    const auto fn = t.find("function");
    if (fn == t.end() || !fn->is_object()) {
      continue;
    }
    const auto name = fn->find("name");
    if (name != fn->end() && name->is_string() && !name->get_ref<const std::string&>().empty()) {
      names.push_back(name->get<std::string>());
    }
  }
  if (names.empty()) {
    return std::nullopt;
  }
  Rng rng(Mix64(seed ^ Mix64(text_hash ^ 0x7001ca11ULL)));
  if (probability < 1 && rng.Uniform() >= probability) {
    return std::nullopt;
  }
  SimToolCall call;
  call.name = names[rng.Below(names.size())];
  call.arguments = "{\"query\": \"item " + std::to_string(rng.Below(1000)) + "\"}";
  return call;
}

}  // namespace sb::sim
