#include "cli/store_command.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/signals.h"
#include "cli/write_out.h"
#include "core/redact.h"
#include "run/exit_codes.h"
#include "store/baseline.h"
#include "store/import.h"
#include "store/query.h"
#include "store/record.h"

namespace sb::cli {

namespace {

using run::Fail;
using run::kExitOk;
using run::kExitSetup;

const char* kStoreHelp =
    "Run store: a SQLite file or postgresql://USER@HOST/DB (default: $SERVEBENCH_STORE, else "
    "$XDG_DATA_HOME/servebench/runs.sqlite, else ~/.local/share/servebench/runs.sqlite)";

// --store's value: refused at once when no store could ever be opened there (an empty value, an
// unknown scheme, a missing directory), not after a run.
std::string CheckStore(const std::string& v) {
  auto ok = store::CheckLocation(v);
  return ok ? std::string() : fmt::format("'{}': {}", RedactUrl(v), ok.error().message);
}

std::string CheckTag(const std::string& v) {
  auto t = store::ParseTag(v);
  return t ? std::string() : t.error().message;
}

// The store the reading commands use; an absent SQLite file is an error, not a new store.
Result<std::unique_ptr<store::Store>> OpenForReading(const std::string& flag, bool must_exist) {
  store::StoreOptions o;
  o.store = flag;
  const auto location = store::ResolveLocation(o);
  if (!location) {
    return MakeError(ErrorCode::kSetup,
                     "no run store: SERVEBENCH_STORE is off and no --store was given");
  }
  const bool pg = store::IsPostgresUrl(*location);
  if (must_exist && !pg && !std::filesystem::exists(*location)) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("no run store at {} (nothing recorded yet: run servebench, or "
                                 "`servebench store import DIR`)",
                                 *location));
  }
  return store::Open(*location);
}

int Print(const std::string& text, const std::string& out) {
  return WriteOut(out, text);
}

Result<store::Filter> MakeFilter(const StoreCommands& c) {
  store::Filter f;
  f.model = c.model;
  f.since = c.since;
  for (const auto& t : c.tags) {
    auto tag = store::ParseTag(t);
    if (!tag) {
      return tag.error();
    }
    f.tags[tag->first] = tag->second;
  }
  return f;
}

int RunImport(const StoreCommands& c, std::stop_token stop) {
  store::Labels labels;
  labels.label = c.label;
  for (const auto& t : c.tags) {
    auto tag = store::ParseTag(t);
    if (!tag) {
      return Fail(tag.error());
    }
    labels.tags[tag->first] = tag->second;
  }
  auto s = OpenForReading(c.store, /*must_exist=*/false);
  if (!s) {
    return Fail(s.error());
  }
  const store::ImportTally t = store::ImportRunDirs(
      *s.value(), c.dirs, labels, stop,
      [](const std::string& dir, const std::string& id, bool ok, const std::string& what) {
        if (ok) {
          std::printf("%s %s: %s\n", id.c_str(), what.c_str(), dir.c_str());
        } else {
          std::fprintf(stderr, "servebench: error: %s\n", Redact(what).c_str());
        }
      });
  std::printf("%d added, %d updated, %d already stored, %d failed: %s\n", t.added, t.replaced,
              t.unchanged, t.failed, s.value()->Describe().c_str());
  if (t.attempted < c.dirs.size()) {
    std::fprintf(stderr, "servebench: interrupted: %zu of %zu run directories not imported\n",
                 c.dirs.size() - t.attempted, c.dirs.size());
    return run::kExitInterrupted;
  }
  return t.failed > 0 ? kExitSetup : kExitOk;
}

int RunLs(const StoreCommands& c) {
  auto s = OpenForReading(c.store, /*must_exist=*/true);
  if (!s) {
    return Fail(s.error());
  }
  auto runs = s.value()->List();
  if (!runs) {
    return Fail(runs.error());
  }
  std::printf(
      "| run | started | status | model | server | servebench | config | label | run directory "
      "|\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& r : runs.value()) {
    auto cell = [](const std::string& v) { return v.empty() ? std::string("—") : v; };
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.id.c_str(),
                r.started_at.c_str(), r.status.c_str(), r.model.c_str(), cell(r.server).c_str(),
                cell(r.tool_version).c_str(), r.config.c_str(), cell(r.label).c_str(),
                cell(r.run_dir).c_str());
  }
  std::printf("\n%zu run%s in %s (schema version %d)\n", runs->size(), runs->size() == 1 ? "" : "s",
              s.value()->Describe().c_str(), s.value()->SchemaVersion());
  return kExitOk;
}

int RunRm(const StoreCommands& c) {
  auto s = OpenForReading(c.store, /*must_exist=*/true);
  if (!s) {
    return Fail(s.error());
  }
  auto removed = s.value()->Remove(c.run);
  if (!removed) {
    return Fail(removed.error());
  }
  for (const auto& id : removed.value()) {
    std::printf("removed %s from %s (its run directory is untouched)\n", id.c_str(),
                s.value()->Describe().c_str());
  }
  return kExitOk;
}

int RunHistoryOrLeaderboard(const StoreCommands& c, bool leaderboard) {
  auto spec = store::ParseMetric(c.metric);
  if (!spec) {
    return Fail(spec.error());
  }
  auto format = ParseOutputFormat(c.format, {OutputFormat::kMarkdown, OutputFormat::kCsv,
                                             OutputFormat::kJson, OutputFormat::kHtml});
  if (!format) {
    return Fail(format.error());
  }
  auto filter = MakeFilter(c);
  if (!filter) {
    return Fail(filter.error());
  }
  auto by = store::ParseGroupBy(c.by);
  if (!by) {
    return Fail(by.error());
  }
  auto s = OpenForReading(c.store, /*must_exist=*/true);
  if (!s) {
    return Fail(s.error());
  }
  auto all = s.value()->LoadAll();
  if (!all) {
    return Fail(all.error());
  }
  if (c.list_metrics) {
    return Print(store::ListMetrics(all.value()), c.out);
  }
  if (auto known = store::CheckMetric(all.value(), spec.value()); !known) {
    return Fail(known.error());
  }
  const auto runs = store::Select(all.value(), filter.value());
  const std::string text = leaderboard ? store::RenderLeaderboard(runs, spec.value(), *by, *format)
                                       : store::RenderHistory(runs, spec.value(), *format);
  return Print(text, c.out);
}

void AddStoreFlag(CLI::App* cmd, StoreCommands& c) {
  cmd->add_option("--store", c.store, kStoreHelp)->check(CheckStore);
}

void AddFilterFlags(CLI::App* cmd, StoreCommands& c) {
  cmd->add_option("--model", c.model, "Only runs of this model");
  cmd->add_option("--tag", c.tags, "Only runs with this tag (KEY=VALUE; repeat: all must match)")
      ->check(CheckTag);
  cmd->add_option("--since", c.since, "Only runs started at or after this date/time (ISO 8601)");
  cmd->add_option("--metric", c.metric,
                  "PROFILE.METRIC[@POINT]: decode.decode_tok_s, decode.ttft_ms, "
                  "concurrency.throughput_tok_s@8, suite.pass_rate, resources.j_per_token, ...")
      ->capture_default_str();
  cmd->add_flag("--list-metrics", c.list_metrics,
                "List every metric the stored runs measured, with its unit and points");
  cmd->add_option("--out", c.out, "Write to this file instead of stdout");
}

}  // namespace

void AddStoreCommands(CLI::App& app, StoreCommands& c) {
  c.store_app = app.add_subcommand(
      "store", "The run store: import run directories, list or remove stored runs");
  c.store_app->require_subcommand(1);
  c.import_app = c.store_app->add_subcommand(
      "import", "Add run directories to the store (a run already stored is not added twice)");
  c.import_app->add_option("dirs", c.dirs, "Run directories")->required();
  c.import_app->add_option("--label", c.label, "Label the imported runs");
  c.import_app->add_option("--tag", c.tags, "Tag the imported runs (KEY=VALUE, repeat)")
      ->check(CheckTag);
  AddStoreFlag(c.import_app, c);
  c.ls_app = c.store_app->add_subcommand("ls", "List the stored runs, oldest first");
  AddStoreFlag(c.ls_app, c);
  c.rm_app =
      c.store_app->add_subcommand("rm", "Remove a run from the store (its run directory is kept)");
  c.rm_app->add_option("run", c.run, "Run id (or a unique prefix of it), as `store ls` shows")
      ->required();
  AddStoreFlag(c.rm_app, c);

  c.history_app = app.add_subcommand(
      "history",
      "One row per stored run in time order: the metric, its change from the previous run of "
      "the same model and configuration, a sparkline, and the bridge check across versions");
  AddFilterFlags(c.history_app, c);
  c.history_app->add_option("--format", c.format, "md, csv, json or html (with a chart)")
      ->check(CLI::IsMember({"md", "csv", "json", "html"}))
      ->capture_default_str();
  AddStoreFlag(c.history_app, c);

  c.leaderboard_app = app.add_subcommand(
      "leaderboard",
      "The stored runs ranked by a metric (latest run per model, server and configuration); "
      "neighbours whose 95% intervals overlap are ties; peak memory and J/token columns when "
      "runs were sampled");
  AddFilterFlags(c.leaderboard_app, c);
  c.leaderboard_app
      ->add_option("--by", c.by, "Group by model (and configuration), recipe, or tag:KEY")
      ->capture_default_str();
  c.leaderboard_app->add_option("--format", c.format, "md, csv, json or html")
      ->check(CLI::IsMember({"md", "csv", "json", "html"}))
      ->capture_default_str();
  AddStoreFlag(c.leaderboard_app, c);
}

bool StoreCommandParsed(const StoreCommands& c) {
  return c.store_app->parsed() || c.history_app->parsed() || c.leaderboard_app->parsed();
}

int RunStoreCommand(StoreCommands& c) {
  RegisterStoreSecrets(c.store);
  if (c.import_app->parsed()) {
    std::stop_source stop;
    WatchStopSignals(stop,
                     "\nservebench: interrupted: finishing the run being written, importing no "
                     "more (a third Ctrl-C quits at once)\n");
    return RunImport(c, stop.get_token());
  }
  QuitOnStopSignal();
  if (c.ls_app->parsed()) {
    return RunLs(c);
  }
  if (c.rm_app->parsed()) {
    return RunRm(c);
  }
  return RunHistoryOrLeaderboard(c, c.leaderboard_app->parsed());
}

void AddRecordOptions(CLI::App* cmd, store::StoreOptions& o) {
  cmd->add_option("--store", o.store,
                  std::string("Record the finished run in this store. ") + kStoreHelp)
      ->check(CheckStore);
  cmd->add_flag("--no-store", o.no_store, "Do not record the run in the run store");
  cmd->add_option("--label", o.label, "A label for the run in the store");
  cmd->add_option("--tag", o.tags,
                  "A KEY=VALUE tag for the run in the store (repeat), e.g. hw=dgx-spark")
      ->check(CheckTag);
}

void RegisterStoreSecrets(const std::string& store_flag) {
  AddUrlSecrets(store_flag);
  if (const char* env = std::getenv("SERVEBENCH_STORE")) {
    AddUrlSecrets(env);
  }
}

std::vector<std::string> CompareBridgeLines(const std::vector<std::string>& run_dirs,
                                            const std::string& store_flag) {
  RegisterStoreSecrets(store_flag);
  std::vector<store::RunRecord> runs;
  std::vector<std::string> ids;
  for (const auto& d : run_dirs) {
    auto r = store::ReadRunDir(d);
    if (!r) {
      continue;
    }
    ids.push_back(r->id);
    runs.push_back(std::move(r.value()));
  }
  if (auto s = OpenForReading(store_flag, /*must_exist=*/true)) {
    if (auto all = s.value()->LoadAll()) {
      for (auto& r : all.value()) {
        if (std::find(ids.begin(), ids.end(), r.id) == ids.end()) {
          runs.push_back(std::move(r));
        }
      }
    }
  }
  std::stable_sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
    return a.started_at != b.started_at ? a.started_at < b.started_at : a.id < b.id;
  });
  return store::BridgeCheck(runs, store::MetricSpec{"decode", "decode_tok_s", ""}, ids);
}

Result<std::string> ResolveBaseline(const std::string& baseline, const std::string& store_flag,
                                    const std::vector<std::string>& new_dirs) {
  const std::string prefix = "store:";
  if (baseline.rfind(prefix, 0) != 0) {
    return baseline;
  }
  auto query = store::ParseRunQuery(baseline.substr(prefix.size()));
  if (!query) {
    return query.error();
  }
  RegisterStoreSecrets(store_flag);
  auto s = OpenForReading(store_flag, /*must_exist=*/true);
  if (!s) {
    return s.error();
  }
  auto all = s.value()->LoadAll();
  if (!all) {
    return all.error();
  }
  std::vector<std::string> exclude;
  for (const auto& d : new_dirs) {
    if (auto r = store::ReadRunDir(d)) {
      exclude.push_back(r->id);
    }
  }
  auto base = store::LatestMatching(all.value(), query.value(), exclude);
  if (!base) {
    return base.error();
  }
  std::error_code ec;
  if (base->run_dir.empty() || !std::filesystem::exists(base->run_dir, ec)) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("--baseline {}: run {} (started {}) was recorded from {}, which "
                                 "is gone; compare needs its run directory",
                                 baseline, base->id, base->started_at,
                                 base->run_dir.empty() ? "an unknown directory" : base->run_dir));
  }
  std::fprintf(stderr, "servebench: baseline: run %s (%s, started %s) from %s\n", base->id.c_str(),
               base->model.c_str(), base->started_at.c_str(), base->run_dir.c_str());
  return base->run_dir;
}

}  // namespace sb::cli
