// `servebench scale-out k8s` (docs/scale-out.md): a Kubernetes manifest that runs one load as N
// shards (an Indexed Job: each pod's JOB_COMPLETION_INDEX is its shard) and a second Job that
// waits for every shard's report and runs `servebench merge`. Thread safety: plain function.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "scaleout/shard.h"

namespace sb::scaleout {

struct K8sOptions {
  int shards = 0;
  std::string image;
  std::string name = "servebench";                  // Job names: NAME-shards, NAME-merge
  std::string volume_claim = "servebench-results";  // a ReadWriteMany PVC both Jobs mount
  std::string out = "/results/run";    // shard I writes OUT/shard-I; the merge OUT/merged
  WallTime start_at;                   // every shard's --start-at
  long long merge_wait_s = 86400;      // the merge gives up when a shard's report is this late
  std::vector<std::string> perf_args;  // `servebench perf` arguments (after "--")
};

// The YAML of both Jobs. kUsage error for a bad option: no image or shards, perf arguments
// without --endpoint (each pod would measure a simulator of its own) or holding the flags the
// manifest sets itself (--shard, --shards, --start-at, --out), an `out` not under /results.
Result<std::string> K8sManifest(const K8sOptions& o);

}  // namespace sb::scaleout
