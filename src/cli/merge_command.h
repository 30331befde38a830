// `servebench merge SHARD_DIR... --out RUN` (run/merge.h) and `servebench scale-out k8s`
// (a Kubernetes Indexed Job for N shards plus the merge step): docs/scale-out.md.
// Flags only; the work is in run/merge.h and cli/scale_out.h. Thread safety: main's thread.
#pragma once

#include <string>
#include <vector>

#include "scaleout/merge.h"
#include "store/store.h"

namespace CLI {
class App;
}  // namespace CLI

namespace sb::cli {

struct MergeCommand {
  scaleout::MergeArgs args;
  store::StoreOptions store;
};

// Adds the `merge` subcommand and returns it.
CLI::App* AddMergeCommand(CLI::App& app, MergeCommand& cmd);

// Merges; 0, or 2 (shards that do not belong together) / 3 (unreadable shard, unwritable --out)
// with one line on stderr.
int RunMergeCommand(const MergeCommand& cmd, const std::string& command_line);

struct ScaleOutCommand {
  int shards = 0;
  std::string image;
  std::string name = "servebench";
  std::string volume_claim;  // a ReadWriteMany PVC the shards and the merge share
  std::string out = "/results/run";
  std::string start_in = "60s";
  std::string merge_wait = "24h";
  std::vector<std::string> perf_args;  // after "--"
};

// Adds `scale-out` with its `k8s` subcommand; returns the k8s one.
CLI::App* AddScaleOutCommand(CLI::App& app, ScaleOutCommand& cmd);

// Prints the manifest to stdout; 0, or 2 with one line on stderr.
int RunScaleOutCommand(const ScaleOutCommand& cmd);

}  // namespace sb::cli
