// What a result costs: memory, power and energy sampled beside every measurement window
// (docs/metrics.md "Resources"). A Sampler owns one thread that reads every available Source at
// a fixed period (default 250 ms) and timestamps each sample with the same Clock the client
// uses (steady_clock, CLOCK_MONOTONIC nanoseconds), so a sample and a request can be compared.
// A window [begin, end] of a speed row is turned into its figures (peak and mean memory, mean
// power, energy, J per output token, peak KV-cache usage) by WindowFigures, a pure function.
// Sources (sources.h): NVML (dlopen'ed at run time), the launched server's process tree
// (/proc), the server's Prometheus gauges, and a --power-cmd. A source that cannot be read is
// listed as not available with the reason; it never contributes zeros.
// Thread safety: Sampler's public members may be called from any thread; sources are read under
// one mutex, so a Source need not be thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/result.h"

namespace sb::resources {

// Field names of a sample (units in the names). GPU values are summed over the GPUs, except
// utilization and clock (means over the GPUs).
inline constexpr const char* kGpuMemoryUsed = "gpu_memory_used_bytes";
inline constexpr const char* kGpuMemoryTotal = "gpu_memory_total_bytes";
inline constexpr const char* kGpuPower = "gpu_power_w";
inline constexpr const char* kGpuEnergy = "gpu_energy_j";  // cumulative counter
inline constexpr const char* kGpuUtil = "gpu_util_pct";
inline constexpr const char* kGpuSmClock = "gpu_sm_clock_mhz";
inline constexpr const char* kServerRss = "server_rss_bytes";
inline constexpr const char* kServerCpu = "server_cpu_pct";  // 100 = one core
inline constexpr const char* kServerProcesses = "server_processes";
inline constexpr const char* kKvCacheUsage = "kv_cache_usage";  // 0..1
inline constexpr const char* kRequestsRunning = "requests_running";
inline constexpr const char* kRequestsWaiting = "requests_waiting";
inline constexpr const char* kCommandPower = "power_cmd_w";

using Fields = std::map<std::string, double>;

struct Sample {
  std::int64_t t_ns = 0;  // ToNanos(clock.Now()) when the read began
  Fields values;
};

// One thing that can be read at an instant.
class Source {
 public:
  virtual ~Source() = default;
  virtual std::string name() const = 0;  // "nvml", "process", "prometheus", "power-cmd"

  // What it reads, for the report ("2 × NVIDIA H200; total-energy counter").
  virtual std::string detail() const { return ""; }

  // Adds this instant's values to `out`; an error adds nothing (the sample lacks them).
  virtual Result<void> Read(Fields& out) = 0;
};

// A source as the report lists it.
struct SourceStatus {
  std::string name;
  bool available = false;
  std::string detail;  // available: what it reads
  std::string reason;  // not available: why
  long long reads = 0, failures = 0;
  std::string last_error;   // the latest failed read's message
  std::int64_t cpu_ns = 0;  // thread CPU time its reads took
};

// The figures of one window (a speed row) from the samples; JSON as in docs/results-schema.md
// ("resources" of a row). Pure. The samples are those of the whole run in time order.
//  - memory, CPU, utilization, clock, KV usage, running/waiting: peak and mean over the samples
//    taken in [begin, end]; when none was (a window shorter than the period), over the two that
//    bracket it.
//  - energy: the GPU total-energy counter interpolated linearly at begin and end, when every
//    bracketing sample has it; else the power (GPU, else --power-cmd) integrated over the window
//    as a piecewise-linear function of time (held flat beyond the first/last sample).
//  - mean power = energy / window; J per token = energy / output tokens; tokens per J the inverse.
// null when no sample brackets or falls in the window.
nlohmann::json WindowFigures(std::span<const Sample> samples, std::int64_t begin_ns,
                             std::int64_t end_ns, long long output_tokens);

// The time series of results.json "resources.series": columns t_s (since t0_ns) and one per
// field present; a missing value is null. Longer than max_points: consecutive samples are merged
// into max_points buckets (bytes, KV usage and request counts take the bucket's peak, the rest
// its mean).
nlohmann::json SeriesJson(std::span<const Sample> samples, std::int64_t t0_ns,
                          std::size_t max_points = 2000);

class Sampler {
 public:
  Sampler(Clock& clock, std::chrono::nanoseconds period);
  ~Sampler();  // Stop()
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  void Add(std::unique_ptr<Source> source);
  void AddUnavailable(std::string name, std::string reason);

  // The thread: one sample at once, then one per period until Stop().
  void Start();
  void Stop();

  // One sample now, on the calling thread (e.g. as a window ends, so the window has a sample
  // after it). Also what the thread runs.
  void SampleNow();

  // SampleNow() when the latest sample is older than end_ns, then WindowFigures.
  nlohmann::json Window(std::int64_t begin_ns, std::int64_t end_ns, long long output_tokens);

  std::vector<Sample> samples() const;
  std::vector<SourceStatus> sources() const;
  bool any_available() const;

  // results.json "resources": period, sources, the whole run's figures (output_tokens: the
  // run's completion tokens), the series, and the sampler's own CPU cost.
  nlohmann::json RunJson(std::int64_t t0_ns, long long output_tokens) const;

 private:
  void Loop(std::stop_token stop);

  Clock& clock_;
  std::chrono::nanoseconds period_;
  // Serialises the reads of sources_ (and Add); never held with mu_ waited for, so a read that
  // waits on a frozen server (a /metrics scrape, up to its time limit) never blocks RunJson,
  // Stop or the results the run writes meanwhile.
  std::mutex read_mu_;
  std::vector<std::unique_ptr<Source>> sources_;  // guarded by read_mu_
  mutable std::mutex mu_;             // guards everything below; never held while a source is read
  std::vector<SourceStatus> status_;  // available sources first, in Add order
  std::vector<Sample> samples_;
  std::int64_t cpu_ns_ = 0;  // thread CPU time spent sampling (any thread)
  std::int64_t started_ns_ = 0, stopped_ns_ = 0;
  std::jthread thread_;
};

}  // namespace sb::resources
