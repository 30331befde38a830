#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/output_file.h"
#include "core/redact.h"
#include "launch/launch.h"
#include "report/compare.h"
#include "report/format.h"
#include "report/run_dir.h"
#include "report/run_dir_lock.h"
#include "run/exit_codes.h"
#include "run/run.h"
#include "run/run_files.h"

// A matrix of server recipes (`servebench launch`, docs/launch.md): each recipe's run in turn,
// then one comparison; --resume keeps the recipes already measured.
namespace sb::run {

namespace {

using nlohmann::json;

// A matrix of recipes.

// The recipes of the matrix file that --only chooses (all by default), in the file's order;
// kUsage error for an --only name the file does not have.
Result<std::vector<launch::Recipe>> ChooseRecipes(const MatrixPlan& l) {
  auto recipes = launch::LoadRecipes(l.matrix);
  if (!recipes) {
    return recipes.error();
  }
  std::vector<launch::Recipe> chosen;
  for (const std::string& name : l.only) {
    if (std::none_of(recipes->begin(), recipes->end(),
                     [&](const launch::Recipe& r) { return r.name == name; })) {
      std::vector<std::string> names;
      for (const auto& r : *recipes) {
        names.push_back(r.name);
      }
      return MakeError(ErrorCode::kUsage, fmt::format("--only {}: no such recipe in {} (it has {})",
                                                      name, l.matrix, fmt::join(names, ", ")));
    }
  }
  for (const auto& r : *recipes) {
    if (l.only.empty() || std::find(l.only.begin(), l.only.end(), r.name) != l.only.end()) {
      chosen.push_back(r);
    }
  }
  return chosen;
}

// What the recipes of a matrix came to.
struct MatrixOutcome {
  int code = kExitOk;
  std::vector<std::string> done_labels;  // the measured recipes (a results.json was written)
  std::vector<std::filesystem::path> done_dirs;
  std::vector<std::string> lines;  // one per recipe, for the console
};

// Runs each recipe in turn into base/NAME; after a failure (not a gate) the rest are skipped
// unless --keep-going.
MatrixOutcome RunRecipes(const MatrixPlan& l, const std::vector<launch::Recipe>& chosen,
                         const std::filesystem::path& base, const std::string& command_line,
                         std::stop_source& stop) {
  MatrixOutcome m;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    if (stop.stop_requested()) {
      m.lines.push_back(fmt::format("{}: not run (stopped)", chosen[i].name));
      continue;
    }
    const std::filesystem::path dir = base / chosen[i].name;
    Plan c = l.base;
    c.recipe = chosen[i];
    c.out = dir.string();
    c.resume_dir.clear();
    if (!l.base.resume_dir.empty()) {
      // --resume: a recipe measured in full is kept; one cut off is resumed; the rest run.
      auto prior = ReadJsonFile(dir / std::string(report::kResultsFile));
      if (prior && prior->value("status", "") == "complete") {
        std::fprintf(stderr, "\n== recipe '%s' (%zu/%zu): complete, kept\n", chosen[i].name.c_str(),
                     i + 1, chosen.size());
        m.done_labels.push_back(chosen[i].name);
        m.done_dirs.push_back(dir);
        m.lines.push_back(fmt::format("{}: done (kept from before --resume)", chosen[i].name));
        continue;
      }
      if (std::filesystem::exists(dir / kPlanFile)) {
        c.resume_dir = dir.string();
      }
    }
    std::fprintf(stderr, "\n== recipe '%s' (%zu/%zu)%s\n", chosen[i].name.c_str(), i + 1,
                 chosen.size(), c.resume_dir.empty() ? "" : " (resumed)");
    const int rc = ExecuteRun(c, command_line, stop);
    const bool measured = std::filesystem::exists(base / chosen[i].name / "results.json");
    if (measured) {
      m.done_labels.push_back(chosen[i].name);
      m.done_dirs.push_back(base / chosen[i].name);
    }
    m.lines.push_back(fmt::format("{}: {}", chosen[i].name,
                                  rc == kExitOk            ? "done"
                                  : rc == kExitInterrupted ? "interrupted"
                                  : rc == kExitGate        ? "done, a gate failed"
                                                           : "failed (see above)"));
    if (rc == kExitInterrupted) {
      m.code = kExitInterrupted;
      continue;
    }
    if (rc != kExitOk && m.code == kExitOk) {
      m.code = rc;
    }
    if (rc != kExitOk && rc != kExitGate && !l.keep_going) {
      for (std::size_t k = i + 1; k < chosen.size(); ++k) {
        m.lines.push_back(
            fmt::format("{}: not run (an earlier recipe failed; --keep-going runs "
                        "the rest)",
                        chosen[k].name));
      }
      break;
    }
  }
  return m;
}

// compare.md and compare.json of the measured recipes, in `base`.
Result<void> WriteComparison(const std::filesystem::path& base, const MatrixOutcome& m) {
  std::vector<report::CompareRun> docs;
  for (const auto& d : m.done_dirs) {
    auto doc = report::LoadCompareRun(d);
    if (!doc) {
      return doc.error();
    }
    docs.push_back(std::move(doc.value()));
  }
  for (auto [format, file] :
       {std::pair{OutputFormat::kMarkdown, "compare.md"}, {OutputFormat::kJson, "compare.json"}}) {
    auto text = report::Compare(docs, m.done_labels, format);
    if (!text) {
      return text.error();
    }
    if (auto ok = WriteOutputFile(base / file, text.value()); !ok) {
      return ok.error();
    }
  }
  return {};
}

}  // namespace

int ExecuteMatrix(MatrixPlan& l, const std::string& command_line, std::stop_source& stop) {
  auto chosen = ChooseRecipes(l);
  if (!chosen) {
    return Fail(chosen.error());
  }
  if (!l.base.target.endpoint.empty() || !l.base.serve.empty() || !l.base.recipe_file.empty()) {
    return Fail(MakeError(ErrorCode::kUsage,
                          "launch starts each recipe's server: --endpoint, --serve and --recipe "
                          "do not apply"));
  }
  const std::filesystem::path base =
      !l.base.resume_dir.empty() ? std::filesystem::path(l.base.resume_dir)
      : l.base.out.empty()
          ? std::filesystem::path("runs") /
                report::DefaultRunDirName(UtcTimestampCompact(),
                                          std::filesystem::path(l.matrix).stem().string())
          : std::filesystem::path(l.base.out);
  // One launch at a time per base directory (each recipe's run directory has its own lock).
  auto lock = report::RunDirLock::Acquire(base);
  if (!lock) {
    return Fail(lock.error());
  }
  if (l.base.resume_dir.empty()) {
    // The matrix's plan, for `launch --resume BASE`.
    const json plan = {{"schema", "servebench.plan/1"}, {"args", l.base.args}};
    if (auto ok = WriteOutputFile(base / kPlanFile, Redact(plan.dump(2)) + "\n"); !ok) {
      return Fail(ok.error());
    }
  }
  const MatrixOutcome m = RunRecipes(l, chosen.value(), base, command_line, stop);
  std::printf("\nmatrix %s:\n", l.matrix.c_str());
  for (const auto& line : m.lines) {
    std::printf("  %s\n", line.c_str());
  }
  if (m.done_dirs.size() >= 2) {
    if (auto ok = WriteComparison(base, m); !ok) {
      return Fail(ok.error());
    }
    std::printf("comparison: %s\n", (base / "compare.md").c_str());
  } else {
    std::printf("no comparison: fewer than two recipes were measured\n");
  }
  return m.code;
}

}  // namespace sb::run
