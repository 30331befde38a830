// The sampler's sources. Each factory returns a ready Source, or an error whose message is the
// reason it is not available ("libnvidia-ml.so.1 could not be loaded: ..."), which the report
// lists; a source never stands in zeros for what it cannot read.
// Thread safety: a Source is read by one thread at a time (the Sampler serialises reads).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

#include "core/result.h"
#include "perf/prometheus.h"
#include "resources/sampler.h"

namespace sb::resources {

// The NVML library loaded when no path is given.
inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";
// Environment variable overriding the library path (as --nvml-lib does); tests point it at a
// library with NVML's C ABI.
inline constexpr const char* kNvmlLibraryEnv = "SERVEBENCH_NVML_LIB";

// GPUs through NVML, loaded with dlopen (no build dependency): memory used (and total), power,
// the total-energy counter when every GPU supports it, utilization, SM clock. A device where
// NVML reports no dedicated memory (unified memory: DGX Spark, Jetson) adds no memory figure,
// and `notes` says so (the server's RSS stands in). `library`: "" = $SERVEBENCH_NVML_LIB, else
// libnvidia-ml.so.1.
Result<std::unique_ptr<Source>> OpenNvml(const std::string& library, std::string* notes = nullptr);

// The process tree of a server servebench started (its session: the launched command, its
// children and whatever they started): RSS summed from /proc/PID/statm and CPU (utime + stime
// of /proc/PID/stat) as a rate between reads, 100 = one core. `proc_root` is "/proc" but for
// tests.
Result<std::unique_ptr<Source>> OpenProcessTree(pid_t leader, std::string proc_root = "/proc");

// The PIDs in the tree of `leader`: every process whose session or process group is leader's,
// and every descendant of those (by parent PID). Reads `proc_root`.
std::vector<pid_t> ProcessTree(pid_t leader, const std::string& proc_root = "/proc");

// The server's own gauges, read from its Prometheus /metrics text: KV-cache usage (0..1) and
// running/waiting requests, for vLLM (vllm:kv_cache_usage_perc, or the older
// vllm:gpu_cache_usage_perc; vllm:num_requests_running/waiting), SGLang (sglang:token_usage,
// sglang:num_running_reqs, sglang:num_queue_reqs) and llama.cpp (llamacpp:kv_cache_usage_ratio,
// llamacpp:requests_processing/deferred). nullopt fields are absent. Pure.
Fields ReadGauges(const std::vector<perf::PromSample>& samples);

// `fetch` returns the /metrics body (or an error). Not available when the first fetch fails or
// carries none of the gauges above.
Result<std::unique_ptr<Source>> OpenPrometheusGauges(std::function<Result<std::string>()> fetch);

// --power-cmd: `/bin/sh -c CMD` per sample; the first number it prints on stdout is watts. A
// command that takes over `timeout_ms` is killed (that read fails). Not available when the
// first read fails.
Result<std::unique_ptr<Source>> OpenPowerCommand(const std::string& command, int timeout_ms = 2000);

// The most watts a power reading may be (10 MW): above it a reading is an error, not a figure
// that makes every mean and energy infinite.
inline constexpr double kMaxWatts = 1e7;

// The first number in `text` (watts, 0..kMaxWatts), or an error naming the text.
Result<double> ParseWatts(const std::string& text);

}  // namespace sb::resources
