#include "report/markdown_gates.h"

#include <string>
#include <vector>

#include <fmt/format.h>

namespace sb::report {

using nlohmann::json;

std::string RenderGatesMarkdown(const json& results) {
  const json* v = nullptr;
  if (auto g = results.find("gates"); g != results.end() && g->is_object()) {
    if (auto s = g->find("slo"); s != g->end() && s->is_object()) {
      v = &*s;
    }
  }
  if (v == nullptr) {
    return "";
  }
  std::string slo;
  const json objectives = v->value("slo", json::object());
  for (const auto& [k, x] : objectives.items()) {
    slo += fmt::format("{}{}={:g}", slo.empty() ? "" : ",", k, x.is_number() ? x.get<double>() : 0);
  }
  const bool met = v->value("met", false);
  std::string out = "\n## Gates\n\n";
  out +=
      fmt::format("**SLO gate {}**: `--slo {}`, at least {:g}% of a level's requests good, {}.\n",
                  met ? "passed" : "FAILED", slo, 100 * v->value("slo_fraction", 0.99),
                  v->contains("at") && (*v)["at"].is_string()
                      ? "at " + (*v)["at"].get<std::string>()
                      : std::string("at every concurrency level and rate measured"));
  if (v->contains("reason") && (*v)["reason"].is_string()) {
    out += fmt::format("\nNot checked: {}.\n", (*v)["reason"].get<std::string>());
  }
  const json checks = v->value("checks", json::array());
  if (checks.empty()) {
    return out;
  }
  out += "\n| where | good / sent | share | verdict | missed |\n|---|---:|---:|---|---|\n";
  for (const json& c : checks) {
    const json share = c.value("fraction", json(nullptr));
    std::vector<std::string> failed = c.value("failed", std::vector<std::string>{});
    out += fmt::format(
        "| {} | {} / {} | {} | {} | {} |\n", c.value("where", std::string()), c.value("good", 0LL),
        c.value("sent", 0LL),
        share.is_number() ? fmt::format("{:.1f}%", 100 * share.get<double>()) : std::string("—"),
        c.value("met", false) ? "met" : "**not met**",
        failed.empty() ? std::string("—") : fmt::format("{}", fmt::join(failed, ", ")));
  }
  out += "\n";
  return out;
}

}  // namespace sb::report
