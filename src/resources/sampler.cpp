#include "resources/sampler.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <time.h>

namespace sb::resources {

using nlohmann::json;

namespace {

double Seconds(std::int64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

// The samples a window's gauges are read from: those in [begin, end], else the two around it.
std::vector<const Sample*> WindowSamples(std::span<const Sample> samples, std::int64_t begin_ns,
                                         std::int64_t end_ns) {
  std::vector<const Sample*> in;
  const Sample* before = nullptr;
  const Sample* after = nullptr;
  for (const Sample& s : samples) {
    if (s.t_ns < begin_ns) {
      before = &s;
    } else if (s.t_ns <= end_ns) {
      in.push_back(&s);
    } else if (after == nullptr) {
      after = &s;
    }
  }
  if (in.empty()) {
    for (const Sample* s : {before, after}) {
      if (s != nullptr) {
        in.push_back(s);
      }
    }
  }
  return in;
}

// {"peak", "mean"} of a field over the chosen samples; null when none has it.
json PeakMean(const std::vector<const Sample*>& chosen, const char* key) {
  double peak = 0, sum = 0;
  int n = 0;
  for (const Sample* s : chosen) {
    auto it = s->values.find(key);
    if (it == s->values.end()) {
      continue;
    }
    peak = n == 0 ? it->second : std::max(peak, it->second);
    sum += it->second;
    ++n;
  }
  if (n == 0) {
    return nullptr;
  }
  return json{{"peak", peak}, {"mean", sum / n}, {"samples", n}};
}

// (t, value) points of one field, in time order.
std::vector<std::pair<std::int64_t, double>> Points(std::span<const Sample> samples,
                                                    const char* key) {
  std::vector<std::pair<std::int64_t, double>> out;
  for (const Sample& s : samples) {
    if (auto it = s.values.find(key); it != s.values.end()) {
      out.emplace_back(s.t_ns, it->second);
    }
  }
  return out;
}

// Linear interpolation of a series at t; held flat beyond its ends. REQUIRES: !p.empty().
double At(const std::vector<std::pair<std::int64_t, double>>& p, std::int64_t t) {
  if (t <= p.front().first) {
    return p.front().second;
  }
  if (t >= p.back().first) {
    return p.back().second;
  }
  auto hi = std::lower_bound(p.begin(), p.end(), t,
                             [](const auto& x, std::int64_t v) { return x.first < v; });
  auto lo = hi - 1;
  const double f = static_cast<double>(t - lo->first) / static_cast<double>(hi->first - lo->first);
  return lo->second + f * (hi->second - lo->second);
}

// ∫ P(t) dt over [a, b] in joules for a piecewise-linear P through the points (held flat beyond
// them): the trapezoid rule between the breakpoints inside the window.
double Integrate(const std::vector<std::pair<std::int64_t, double>>& p, std::int64_t a,
                 std::int64_t b) {
  std::vector<std::int64_t> ts = {a};
  for (const auto& [t, v] : p) {
    if (t > a && t < b) {
      ts.push_back(t);
    }
  }
  ts.push_back(b);
  double joules = 0;
  for (std::size_t i = 1; i < ts.size(); ++i) {
    joules += 0.5 * (At(p, ts[i - 1]) + At(p, ts[i])) * Seconds(ts[i] - ts[i - 1]);
  }
  return joules;
}

// Whether the series has a point at or before a and one at or after b.
bool Brackets(const std::vector<std::pair<std::int64_t, double>>& p, std::int64_t a,
              std::int64_t b) {
  return !p.empty() && p.front().first <= a && p.back().first >= b;
}

}  // namespace

json WindowFigures(std::span<const Sample> samples, std::int64_t begin_ns, std::int64_t end_ns,
                   long long output_tokens) {
  if (end_ns <= begin_ns) {
    return nullptr;
  }
  const std::vector<const Sample*> chosen = WindowSamples(samples, begin_ns, end_ns);
  if (chosen.empty()) {
    return nullptr;
  }
  const double window_s = Seconds(end_ns - begin_ns);
  json out = {{"window_s", window_s}, {"samples", chosen.size()}};
  // Memory: the GPUs' own when NVML reports it, else the server's resident memory (a
  // unified-memory device, or no NVML).
  const json gpu_mem = PeakMean(chosen, kGpuMemoryUsed);
  const json rss = PeakMean(chosen, kServerRss);
  out["memory_bytes"] = !gpu_mem.is_null() ? gpu_mem : rss;
  out["memory_source"] = !gpu_mem.is_null() ? json("gpu")
                         : !rss.is_null()   ? json("server_rss")
                                            : json(nullptr);
  out["gpu_memory_used_bytes"] = gpu_mem;
  out["server_rss_bytes"] = rss;
  out["server_cpu_pct"] = PeakMean(chosen, kServerCpu);
  out["gpu_util_pct"] = PeakMean(chosen, kGpuUtil);
  out["gpu_sm_clock_mhz"] = PeakMean(chosen, kGpuSmClock);
  out["kv_cache_usage"] = PeakMean(chosen, kKvCacheUsage);
  out["requests_running"] = PeakMean(chosen, kRequestsRunning);
  out["requests_waiting"] = PeakMean(chosen, kRequestsWaiting);

  // Energy: the counter when it covers the window, else integrated power.
  std::optional<double> energy;
  json energy_from = nullptr, power_source = nullptr;
  const auto counter = Points(samples, kGpuEnergy);
  if (Brackets(counter, begin_ns, end_ns)) {
    const double e = At(counter, end_ns) - At(counter, begin_ns);
    if (e >= 0) {  // a counter that went back (a driver reload) is not used
      energy = e;
      energy_from = "gpu_energy_counter";
      power_source = "nvml";
    }
  }
  json power = nullptr;
  for (const char* key : {kGpuPower, kCommandPower}) {
    const auto p = Points(samples, key);
    if (p.empty() || PeakMean(chosen, key).is_null()) {
      continue;
    }
    json pm = PeakMean(chosen, key);
    power = json{{"peak", pm["peak"]}};
    if (!energy) {
      energy = Integrate(p, begin_ns, end_ns);
      energy_from = "integrated_power";
      power_source = key == std::string(kGpuPower) ? "nvml" : "power-cmd";
    }
    break;
  }
  if (energy) {
    if (power.is_null()) {
      power = json::object();
    }
    power["mean"] = *energy / window_s;  // the window's average, from the energy
  }
  out["power_w"] = power;
  out["power_source"] = power_source;
  out["energy_j"] = energy ? json(*energy) : json(nullptr);
  out["energy_from"] = energy_from;
  out["output_tokens"] = output_tokens;
  const bool per_token = energy && output_tokens > 0;
  out["j_per_token"] = per_token ? json(*energy / static_cast<double>(output_tokens)) : json();
  out["tokens_per_j"] =
      per_token && *energy > 0 ? json(static_cast<double>(output_tokens) / *energy) : json();
  return out;
}

json SeriesJson(std::span<const Sample> samples, std::int64_t t0_ns, std::size_t max_points) {
  std::vector<std::string> keys;
  for (const Sample& s : samples) {
    for (const auto& [k, v] : s.values) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
        keys.push_back(k);
      }
    }
  }
  std::sort(keys.begin(), keys.end());
  const std::size_t n = samples.size();
  const std::size_t buckets = std::max<std::size_t>(1, std::min(n, max_points));
  json t = json::array();
  std::map<std::string, json> cols;
  for (const auto& k : keys) {
    cols[k] = json::array();
  }
  auto peak_kind = [](const std::string& k) {
    return k.ends_with("_bytes") || k == kKvCacheUsage || k == kRequestsRunning ||
           k == kRequestsWaiting;
  };
  for (std::size_t b = 0; b < buckets && n > 0; ++b) {
    const std::size_t lo = b * n / buckets, hi = (b + 1) * n / buckets;
    double t_sum = 0;
    for (std::size_t i = lo; i < hi; ++i) {
      t_sum += Seconds(samples[i].t_ns - t0_ns);
    }
    t.push_back(std::round(t_sum / static_cast<double>(hi - lo) * 1000) / 1000);
    for (const auto& k : keys) {
      double acc = 0;
      int m = 0;
      for (std::size_t i = lo; i < hi; ++i) {
        if (auto it = samples[i].values.find(k); it != samples[i].values.end()) {
          acc = peak_kind(k) ? (m == 0 ? it->second : std::max(acc, it->second)) : acc + it->second;
          ++m;
        }
      }
      cols[k].push_back(m == 0 ? json(nullptr) : json(peak_kind(k) ? acc : acc / m));
    }
  }
  json out = {{"t_s", t}};
  for (auto& [k, v] : cols) {
    out[k] = std::move(v);
  }
  if (n > buckets) {
    out["merged"] = true;  // each point stands for several samples
  }
  return out;
}

Sampler::Sampler(Clock& clock, std::chrono::nanoseconds period) : clock_(clock), period_(period) {}

Sampler::~Sampler() {
  Stop();
}

void Sampler::Add(std::unique_ptr<Source> source) {
  std::lock_guard<std::mutex> read_lock(read_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  SourceStatus st;
  st.name = source->name();
  st.available = true;
  st.detail = source->detail();
  sources_.push_back(std::move(source));
  // Available sources come first, in the order they were added.
  status_.insert(status_.begin() + static_cast<std::ptrdiff_t>(sources_.size() - 1), st);
}

void Sampler::AddUnavailable(std::string name, std::string reason) {
  std::lock_guard<std::mutex> lock(mu_);
  SourceStatus st;
  st.name = std::move(name);
  st.reason = std::move(reason);
  status_.push_back(std::move(st));
}

void Sampler::SampleNow() {
  std::lock_guard<std::mutex> read_lock(read_mu_);
  const std::int64_t cpu0 = ThreadCpuNs();
  Sample s;
  s.t_ns = ToNanos(clock_.Now());

  struct Outcome {
    std::int64_t cpu_ns = 0;
    std::optional<std::string> error;
  };

  std::vector<Outcome> outcomes(sources_.size());
  for (std::size_t i = 0; i < sources_.size(); ++i) {
    const std::int64_t c0 = ThreadCpuNs();
    if (auto ok = sources_[i]->Read(s.values); !ok) {
      outcomes[i].error = ok.error().message;
    }
    outcomes[i].cpu_ns = ThreadCpuNs() - c0;
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    SourceStatus& st = status_[i];
    ++st.reads;
    st.cpu_ns += outcomes[i].cpu_ns;
    if (outcomes[i].error) {
      ++st.failures;
      st.last_error = std::move(*outcomes[i].error);
    }
  }
  if (started_ns_ == 0) {
    started_ns_ = s.t_ns;
  }
  samples_.push_back(std::move(s));
  cpu_ns_ += ThreadCpuNs() - cpu0;
}

void Sampler::Loop(std::stop_token stop) {
  SteadyTime next = clock_.Now();
  while (!stop.stop_requested()) {
    SampleNow();
    next += period_;
    const SteadyTime now = clock_.Now();
    if (next < now) {
      next = now;  // a slow read: the next sample comes at once, never a burst to catch up
    }
    if (!clock_.SleepUntil(next, stop)) {
      break;
    }
  }
}

void Sampler::Start() {
  if (thread_.joinable()) {
    return;
  }
  thread_ = std::jthread([this](std::stop_token stop) { Loop(stop); });
}

void Sampler::Stop() {
  if (!thread_.joinable()) {
    return;
  }
  thread_.request_stop();
  thread_.join();
  thread_ = std::jthread();
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ns_ = ToNanos(clock_.Now());
}

json Sampler::Window(std::int64_t begin_ns, std::int64_t end_ns, long long output_tokens) {
  bool need = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    need = !sources_.empty() && (samples_.empty() || samples_.back().t_ns < end_ns);
  }
  if (need) {
    SampleNow();
  }
  std::lock_guard<std::mutex> lock(mu_);
  return WindowFigures(samples_, begin_ns, end_ns, output_tokens);
}

std::vector<Sample> Sampler::samples() const {
  std::lock_guard<std::mutex> lock(mu_);
  return samples_;
}

std::vector<SourceStatus> Sampler::sources() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

bool Sampler::any_available() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !sources_.empty();
}

json Sampler::RunJson(std::int64_t t0_ns, long long output_tokens) const {
  std::lock_guard<std::mutex> lock(mu_);
  json sources = json::array();
  for (const SourceStatus& st : status_) {
    json j = {{"name", st.name}, {"available", st.available}};
    if (st.available) {
      j["detail"] = st.detail;
      j["reads"] = st.reads;
      j["failed_reads"] = st.failures;
      j["last_error"] = st.last_error.empty() ? json(nullptr) : json(st.last_error);
      j["cpu_ms_per_read"] =
          st.reads > 0 ? json(Seconds(st.cpu_ns) * 1e3 / static_cast<double>(st.reads)) : json();
    } else {
      j["reason"] = st.reason;
    }
    sources.push_back(std::move(j));
  }
  const std::int64_t end_ns =
      stopped_ns_ != 0 ? stopped_ns_ : (samples_.empty() ? 0 : samples_.back().t_ns);
  const double wall_s =
      started_ns_ != 0 && end_ns > started_ns_ ? Seconds(end_ns - started_ns_) : 0.0;
  json run = nullptr;
  if (!samples_.empty() && samples_.back().t_ns > samples_.front().t_ns) {
    run = WindowFigures(samples_, samples_.front().t_ns, samples_.back().t_ns, output_tokens);
  }
  return json{
      {"period_ms", std::chrono::duration<double, std::milli>(period_).count()},
      {"samples", samples_.size()},
      {"sources", sources},
      {"run", run},
      {"series", SeriesJson(samples_, t0_ns)},
      {"sampler_cost",
       {{"cpu_s", Seconds(cpu_ns_)},
        {"wall_s", wall_s},
        {"cpu_ms_per_s", wall_s > 0 ? json(Seconds(cpu_ns_) * 1e3 / wall_s) : json(nullptr)},
        {"mean_sample_ms",
         samples_.empty() ? json(nullptr)
                          : json(Seconds(cpu_ns_) * 1e3 / static_cast<double>(samples_.size()))}}}};
}

}  // namespace sb::resources
