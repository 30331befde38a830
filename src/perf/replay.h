// Trace replay (`servebench perf --profile replay`, docs/workloads.md): every request of a trace
// (workload/trace.h) is sent at its trace time × --time-scale on the open-loop schedule the rate
// profile uses (absolute send times computed before the first send: no coordinated omission;
// latencies from the scheduled time; late sends counted). A Mooncake trace's hash_ids become
// blocks of identical prompt text (workload/prompt.h), so a server's prefix cache sees the reuse
// the trace recorded. The runner is Session::Replay (replay.cpp).
#pragma once

#include <memory>
#include <string>

#include "core/result.h"
#include "workload/trace.h"

namespace sb::perf {

struct ReplayOptions {
  std::string trace;        // --trace FILE
  std::string format;       // --trace-format: mooncake, burstgpt, azure, jsonl; "" = detect
  double time_scale = 1.0;  // --time-scale: send time = trace time × this (> 0)
  int max_requests = 0;     // --max-requests: the first N by time; 0 = all
  int block_tokens = 512;   // --block-tokens: tokens per Mooncake hash id (the trace's: 512)
  // The trace, read by PrepareReplay (the plan check), so a bad line stops the run before it
  // starts; Session::Replay reads it itself when it is not set.
  std::shared_ptr<const workload::Trace> loaded;
};

// Checks the options and reads the trace into o.loaded; kUsage error naming the flag or
// FILE:LINE, kSetup when the file cannot be read.
Result<void> PrepareReplay(ReplayOptions& o);

}  // namespace sb::perf
