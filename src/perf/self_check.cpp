// The client-bound self-check (self_check.h).
#include "perf/self_check.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace sb::perf {

namespace {

nlohmann::json HistogramUs(const Histogram& h) {
  return {{"n", h.count()},
          {"p50", static_cast<double>(h.ValueAtPercentile(50)) / 1e3},
          {"p99", static_cast<double>(h.ValueAtPercentile(99)) / 1e3},
          {"max", static_cast<double>(h.Max()) / 1e3}};
}

// The median of `v` (0 when empty); v is reordered.
double Median(std::vector<double>& v) {
  if (v.empty()) {
    return 0;
  }
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

ClientCheck CheckClient(std::span<const client::ChatResponse> batch, const Histogram& event_delay,
                        double bound_ms) {
  ClientCheck out;
  const auto bound_ns = static_cast<std::int64_t>(bound_ms * 1e6);
  Histogram send_wait;
  long long coalesced = 0, pairs = 0;
  // The figures a client delay can shift: TTFT (send -> first event) and the decode span (first
  // -> last event) of each successful request, in ns.
  std::vector<double> ttfts, spans;
  for (const client::ChatResponse& r : batch) {
    if (r.outcome != client::Outcome::kOk) {
      continue;
    }
    if (r.written_ns > 0 && r.send_ns > 0) {
      send_wait.Record(r.written_ns - r.send_ns);
    }
    if (!r.events.empty() && r.send_ns > 0) {
      ttfts.push_back(static_cast<double>(r.events.front().t_ns - r.send_ns));
      if (r.events.size() > 1) {
        spans.push_back(static_cast<double>(r.events.back().t_ns - r.events.front().t_ns));
      }
    }
    for (std::size_t i = 1; i < r.events.size(); ++i) {
      ++pairs;
      coalesced += r.events[i].t_ns - r.events[i - 1].t_ns < kCoalescedGapNs ? 1 : 0;
    }
  }
  // A delay over the bound is named only when it is a material share of a figure it can shift
  // (kMaterialShare of the median TTFT or decode span): 2 ms late on a 2 s answer is noise.
  const double ttft = Median(ttfts);
  const double span = Median(spans);
  auto share = [](double delay, double of) { return of > 0 ? delay / of : 1.0; };
  const double event_p99 = event_delay.empty() ? 0.0 : event_delay.ValueAtPercentile(99);
  const double event_share =
      std::max(share(event_p99, ttft), spans.empty() ? 0.0 : share(event_p99, span));
  if (!event_delay.empty() && event_p99 > static_cast<double>(bound_ns) &&
      event_share > kMaterialShare) {
    out.reasons.push_back(fmt::format(
        "events waited {:.3f} ms (p99) between arriving and being processed (bound {:g} ms), "
        "{:.1f}% of the median {}",
        event_p99 / 1e6, bound_ms, event_share * 100,
        !spans.empty() && share(event_p99, span) >= share(event_p99, ttft) ? "decode time"
                                                                           : "TTFT"));
  }
  const double wait_p99 = send_wait.empty() ? 0.0 : send_wait.ValueAtPercentile(99);
  if (!send_wait.empty() && wait_p99 > static_cast<double>(bound_ns) &&
      share(wait_p99, ttft) > kMaterialShare) {
    out.reasons.push_back(fmt::format(
        "requests waited {:.3f} ms (p99) between being started and being written to their "
        "connection (connecting, or queued in the client; bound {:g} ms): TTFT includes it, "
        "{:.1f}% of the median TTFT",
        wait_p99 / 1e6, bound_ms, share(wait_p99, ttft) * 100));
  }
  const double fraction = pairs > 0 ? static_cast<double>(coalesced) / pairs : 0.0;
  if (coalesced >= 20 && fraction > 0.10) {
    out.reasons.push_back(fmt::format(
        "{:.0f}% of token events were read together with the one before (they had queued in "
        "the socket buffer): ITL and decode speed are the client's, not the server's",
        fraction * 100));
  }
  // The simulator's own lateness, request by request (responses without a "sim" object have
  // none: any other server).
  Histogram sim_behind;
  for (const client::ChatResponse& r : batch) {
    if (r.outcome == client::Outcome::kOk) {
      if (const auto behind = SimBehindNs(r.sim_json)) {
        sim_behind.Record(*behind);
      }
    }
  }
  out.json = {{"event_delay_us", HistogramUs(event_delay)},
              {"send_wait_us", send_wait.empty() ? nlohmann::json() : HistogramUs(send_wait)},
              {"coalesced_token_events", {{"n", coalesced}, {"of", pairs}, {"fraction", fraction}}},
              {"median_ttft_ms", ttfts.empty() ? nlohmann::json() : nlohmann::json(ttft / 1e6)},
              {"client_bound", !out.reasons.empty()},
              {"reasons", out.reasons}};
  AddSimBehind(sim_behind, ttft, bound_ms, out.json, out.sim_reasons);
  return out;
}

std::optional<std::int64_t> SimBehindNs(std::string_view sim_json) {
  bool found = false;
  double behind_us = 0;
  for (const std::string_view key : {"\"read_lag_us\"", "\"first_emit_lag_us\""}) {
    std::size_t at = sim_json.find(key);
    if (at == std::string_view::npos) {
      continue;
    }
    at += key.size();
    while (at < sim_json.size() && (sim_json[at] == ' ' || sim_json[at] == ':')) {
      ++at;
    }
    double v = 0;
    const char* end = sim_json.data() + sim_json.size();
    if (const auto [ptr, ec] = std::from_chars(sim_json.data() + at, end, v);
        ec == std::errc() && std::isfinite(v)) {
      behind_us += std::max(0.0, v);
      found = true;
    }
  }
  if (!found) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(std::min(behind_us, 1e12) * 1e3);
}

void AddSimBehind(const Histogram& sim_behind, double median_ttft_ns, double bound_ms,
                  nlohmann::json& check, std::vector<std::string>& sim_reasons) {
  if (sim_behind.empty()) {
    return;
  }
  const double p99 = static_cast<double>(sim_behind.ValueAtPercentile(99));
  const double share = median_ttft_ns > 0 ? p99 / median_ttft_ns : 1.0;
  const bool behind = p99 > bound_ms * 1e6 && share > kMaterialShare;
  if (behind) {
    sim_reasons.push_back(fmt::format(
        "the simulator read requests or wrote their first tokens late by {:.3f} ms (p99; its "
        "read_lag_us + first_emit_lag_us; bound {:g} ms), {:.1f}% of the median TTFT",
        p99 / 1e6, bound_ms, share * 100));
  }
  check["simulator_behind_ms"] = {
      {"n", sim_behind.count()},
      {"p50", static_cast<double>(sim_behind.ValueAtPercentile(50)) / 1e6},
      {"p99", p99 / 1e6},
      {"max", static_cast<double>(sim_behind.Max()) / 1e6}};
  check["simulator_behind"] = behind;
}

}  // namespace sb::perf
