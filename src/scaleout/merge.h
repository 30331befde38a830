// `servebench merge SHARD_DIR... --out RUN` (docs/scale-out.md): the run directories of the
// shards of one load (perf --shard, run/shard.h) joined into one ordinary run directory. Counts
// are the sums; every latency percentile is recomputed from the sum of the shards' exact
// histograms, so it is bit-identical to what one process computes over the union of all
// samples. The shards must have measured the same target with the same options.
// Thread safety: plain functions.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace sb::scaleout {

// The merged results.json of the shards' results.json objects (any order). kUsage error naming
// the shard and the difference when they are not the shards of one load: a missing "shard"
// object, a missing or repeated index, another target or options, a profile other than rate.
// `command_line` becomes the merged run's "command".
Result<nlohmann::json> MergeShardResults(const std::vector<nlohmann::json>& shards,
                                         const std::string& command_line);

struct MergeArgs {
  std::vector<std::string> shard_dirs;
  std::string out;
  bool overwrite = false;
};

// Reads each shard directory's results.json, merges them (MergeShardResults), and writes `out`:
// results.json, samples.jsonl (every shard's lines, each with its "shard"), report.md and
// report.html. Prints where the run is. kSetup error for an unreadable shard, kUsage for
// shards that do not belong together.
Result<void> MergeRunDirs(const MergeArgs& args, const std::string& command_line);

}  // namespace sb::scaleout
