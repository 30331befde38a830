#include "cli/merge_command.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/store_command.h"
#include "run/exit_codes.h"
#include "run/plan.h"
#include "scaleout/scale_out.h"
#include "scaleout/shard.h"

namespace sb::cli {

using run::Fail;

CLI::App* AddMergeCommand(CLI::App& app, MergeCommand& cmd) {
  CLI::App* sub = app.add_subcommand(
      "merge",
      "Join the run directories of the shards of one load (perf --shard, mpirun, srun, a "
      "Kubernetes Indexed Job) into one run: counts summed, percentiles recomputed exactly from "
      "the shards' histograms (docs/scale-out.md)");
  sub->add_option("shards", cmd.args.shard_dirs, "The shards' run directories (DIR/shard-*)")
      ->required()
      ->check(CLI::ExistingDirectory);
  sub->add_option("--out", cmd.args.out, "The merged run directory")->required();
  sub->add_flag("--overwrite", cmd.args.overwrite, "Replace a run already in --out");
  AddRecordOptions(sub, cmd.store);
  return sub;
}

int RunMergeCommand(const MergeCommand& cmd, const std::string& command_line) {
  if (auto ok = scaleout::MergeRunDirs(cmd.args, command_line); !ok) {
    return Fail(ok.error());
  }
  store::RecordRun(cmd.store, cmd.args.out);
  return 0;
}

CLI::App* AddScaleOutCommand(CLI::App& app, ScaleOutCommand& cmd) {
  CLI::App* top = app.add_subcommand(
      "scale-out", "Print what runs one load from many machines (docs/scale-out.md)");
  top->require_subcommand(1);
  CLI::App* k8s = top->add_subcommand(
      "k8s",
      "A Kubernetes manifest: an Indexed Job of N pods, each `servebench perf ... --shards N "
      "--start-at T --out OUT`, and a Job that waits for them and runs `servebench merge`. "
      "Usage: servebench scale-out k8s --shards N --image IMG -- --endpoint URL --profile rate "
      "--rates R ...");
  k8s->add_option("--shards", cmd.shards, "Pods (shards) sharing the load")->required();
  k8s->add_option("--image", cmd.image, "Container image holding servebench")->required();
  k8s->add_option("--name", cmd.name, "Job name prefix")->capture_default_str();
  k8s->add_option("--volume-claim", cmd.volume_claim,
                  "A ReadWriteMany PersistentVolumeClaim mounted at /results in every pod "
                  "(default servebench-results)");
  k8s->add_option("--out", cmd.out, "Run directory on the shared volume (under /results)")
      ->capture_default_str();
  k8s->add_option("--start-in", cmd.start_in,
                  "The shards start together this long after the manifest is printed (90, 90s, "
                  "5m): apply it before then")
      ->capture_default_str();
  k8s->add_option("--merge-wait", cmd.merge_wait,
                  "The merge Job gives up (exit 1, naming the shard) when a shard has written no "
                  "report this long after the Jobs start (its pod died)")
      ->capture_default_str();
  k8s->add_option("perf_args", cmd.perf_args, "`servebench perf` arguments, after --")->required();
  k8s->positionals_at_end();
  return k8s;
}

int RunScaleOutCommand(const ScaleOutCommand& cmd) {
  auto seconds = run::ParseDuration("--start-in", cmd.start_in);
  if (!seconds) {
    return Fail(seconds.error());
  }
  auto wait = run::ParseDuration("--merge-wait", cmd.merge_wait);
  if (!wait) {
    return Fail(wait.error());
  }
  scaleout::K8sOptions o;
  o.merge_wait_s = std::max<long long>(1, std::llround(*wait));
  o.shards = cmd.shards;
  o.image = cmd.image;
  o.name = cmd.name;
  if (!cmd.volume_claim.empty()) {
    o.volume_claim = cmd.volume_claim;
  }
  o.out = cmd.out;
  o.perf_args = cmd.perf_args;
  o.start_at = std::chrono::time_point_cast<scaleout::WallTime::duration>(
      std::chrono::system_clock::now() +
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::duration<double>(*seconds)));
  auto yaml = scaleout::K8sManifest(o);
  if (!yaml) {
    return Fail(yaml.error());
  }
  std::fwrite(yaml->data(), 1, yaml->size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 3;
}

}  // namespace sb::cli
