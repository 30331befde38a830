// What a run writes into results.json around its measurements (run_json.h).
#include "run/run_json.h"

#include <string>

#include <fmt/format.h>
#include <unistd.h>

#include "client/server_info.h"
#include "launch/launch.h"
#include "run/run.h"
#include "store/record.h"

namespace sb::run::detail {

json MergedSummary(const perf::Session& session, const suite::SuiteRunner& runner) {
  json s = session.Summary();
  const json tests = runner.StatusSummary();
  for (auto it = tests.begin(); it != tests.end(); ++it) {
    s[it.key()] = *it;
  }
  s["requests"] = s.value("requests", 0LL) + runner.requests();
  s["failed_requests"] = s.value("failed_requests", 0LL) + runner.failed_requests();
  const long long tokens = s.value("completion_tokens", 0LL) + runner.completion_tokens();
  const double wall = s.value("wall_time_s", 0.0) + runner.wall_time_s();
  s["completion_tokens"] = tokens;
  s["wall_time_s"] = wall;
  s["avg_tok_s"] = wall > 0 ? json(static_cast<double>(tokens) / wall) : json(nullptr);
  return s;
}

Result<void> ResolveServer(Plan& c) {
  if (c.serve.empty() && c.recipe_file.empty()) {
    return {};
  }
  if (!c.target.endpoint.empty()) {
    return MakeError(ErrorCode::kUsage,
                     "--serve and --recipe start the server: do not give --endpoint too");
  }
  if (!c.serve.empty() && !c.recipe_file.empty()) {
    return MakeError(ErrorCode::kUsage, "give either --serve or --recipe, not both");
  }
  if (!c.serve.empty()) {
    c.recipe = launch::RecipeFromCommand(c.serve);
    c.recipe->ready_timeout_s = c.serve_ready_timeout_s;
  } else {
    auto recipes = launch::LoadRecipes(c.recipe_file);
    if (!recipes) {
      return recipes.error();
    }
    if (recipes->size() != 1) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("{} holds {} recipes: run a matrix with `servebench "
                                   "launch {}`",
                                   c.recipe_file, recipes->size(), c.recipe_file));
    }
    c.recipe = recipes->front();
  }
  return launch::ValidateRecipe(*c.recipe);
}

json PlanJson(const Plan& c, const Target& t, const std::string& started_at) {
  return {{"schema", "servebench.plan/1"},
          {"args", c.args},
          {"model", t.model},
          {"endpoint", t.endpoint},
          {"server", std::string(client::ServerKindName(t.info.kind))},
          {"started_at", started_at}};
}

std::string HostName() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

json LabelsJson(const store::StoreOptions& o) {
  if (o.label.empty() && o.tags.empty()) {
    return nullptr;
  }
  json tags = json::object();
  for (const std::string& t : o.tags) {
    if (auto kv = store::ParseTag(t)) {
      tags[kv->first] = kv->second;
    }
  }
  return {{"label", o.label.empty() ? json(nullptr) : json(o.label)}, {"tags", tags}};
}

json InitialResults(const Plan& c, const Target& t, const suite::RunOptions& run_options,
                    const std::string& started_at, const std::string& command_line) {
  return {
      {"schema", "servebench.results/1"},
      {"tool", {{"name", "servebench"}, {"version", Version()}}},
      {"started_at", started_at},
      {"finished_at", nullptr},
      {"status", "running"},
      {"command", command_line},
      {"host", HostName()},
      {"target", TargetJson(t)},
      {"recipe",
       c.recipe ? json{{"name", c.recipe->name}, {"command", c.recipe->command}} : json(nullptr)},
      {"labels", LabelsJson(c.store)},
      {"config",
       {{"profiles", c.profiles},
        {"tokens", c.profile.tokens},
        {"runs", c.profile.runs},
        {"levels", c.profile.args.Ints("--levels")},
        {"lengths", c.profile.args.Ints("--lengths")},
        {"length_runs", c.profile.args.Int("--length-runs")},
        {"warmup", c.profile.warmup},
        {"thinking", c.thinking.empty() ? json(nullptr) : json(c.thinking)},
        {"suites", c.suite.suites},
        {"tests", c.suite.tests},
        {"repeat", c.suite.repeat},
        {"rerun_budgets", run_options.rerun_budgets},
        {"test_timeout_s", c.suite.test_timeout_s ? json(*c.suite.test_timeout_s) : json(nullptr)},
        {"video_transport", c.suite.video_transport},
        // The profile table's declared options as given ({"--prefix-hits": "5"}); the rest of
        // them took their defaults.
        {"profile_options", c.profile.args.given()}}},
      {"summary", json::object()},
      {"tests", json::array()},
      {"perf", json::object()},
      {"spec_decode", nullptr},
      {"warnings", json::array()}};
}

}  // namespace sb::run::detail
