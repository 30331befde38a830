// The resource sampler of a run (docs/metrics.md "Resources"): which sources can be read here
// (NVML, the launched server's process tree, the server's Prometheus gauges, --power-cmd), each
// listed as not available with the reason otherwise. Wiring only; the sampler is
// src/resources. Thread safety: call from the run's thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "launch/launch.h"
#include "resources/sampler.h"
#include "run/target.h"

namespace sb::run {

// --sample-period-ms, --power-cmd, --nvml-lib.
struct ResourceArgs {
  int period_ms = 250;
  std::string power_cmd;
  std::string nvml_lib;  // "" = $SERVEBENCH_NVML_LIB, else libnvidia-ml.so.1
};

// kUsage error for a period outside 10..60000 ms.
Result<void> CheckResourceArgs(const ResourceArgs& args);

// Opens every source and starts the sampler's thread (the first sample is taken at once).
// `server` is the launched server, or null; `notes` receives what a reader must know (a
// unified-memory GPU).
std::unique_ptr<resources::Sampler> StartSampler(const ResourceArgs& args,
                                                 const TargetOptions& target_options,
                                                 const Target& target,
                                                 const launch::ServerProcess* server, Clock& clock,
                                                 std::vector<std::string>& notes);

}  // namespace sb::run
