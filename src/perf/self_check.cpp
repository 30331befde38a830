// The client-bound self-check (self_check.h).
#include "perf/self_check.h"

#include <fmt/format.h>

namespace sb::perf {

namespace {

nlohmann::json HistogramUs(const Histogram& h) {
  return {{"n", h.count()},
          {"p50", static_cast<double>(h.ValueAtPercentile(50)) / 1e3},
          {"p99", static_cast<double>(h.ValueAtPercentile(99)) / 1e3},
          {"max", static_cast<double>(h.Max()) / 1e3}};
}

}  // namespace

ClientCheck CheckClient(std::span<const client::ChatResponse> batch, const Histogram& event_delay,
                        double bound_ms) {
  ClientCheck out;
  const auto bound_ns = static_cast<std::int64_t>(bound_ms * 1e6);
  Histogram send_wait;
  long long coalesced = 0, pairs = 0;
  for (const client::ChatResponse& r : batch) {
    if (r.outcome != client::Outcome::kOk) {
      continue;
    }
    if (r.written_ns > 0 && r.send_ns > 0) {
      send_wait.Record(r.written_ns - r.send_ns);
    }
    for (std::size_t i = 1; i < r.events.size(); ++i) {
      ++pairs;
      coalesced += r.events[i].t_ns - r.events[i - 1].t_ns < kCoalescedGapNs ? 1 : 0;
    }
  }
  if (!event_delay.empty() && event_delay.ValueAtPercentile(99) > bound_ns) {
    out.reasons.push_back(fmt::format(
        "events waited {:.3f} ms (p99) between arriving and being processed (bound {:g} ms)",
        static_cast<double>(event_delay.ValueAtPercentile(99)) / 1e6, bound_ms));
  }
  if (!send_wait.empty() && send_wait.ValueAtPercentile(99) > bound_ns) {
    out.reasons.push_back(fmt::format(
        "requests waited {:.3f} ms (p99) between being started and being written to their "
        "connection (connecting, or queued in the client; bound {:g} ms): TTFT includes it",
        static_cast<double>(send_wait.ValueAtPercentile(99)) / 1e6, bound_ms));
  }
  const double fraction = pairs > 0 ? static_cast<double>(coalesced) / pairs : 0.0;
  if (coalesced >= 20 && fraction > 0.10) {
    out.reasons.push_back(fmt::format(
        "{:.0f}% of token events were read together with the one before (they had queued in "
        "the socket buffer): ITL and decode speed are the client's, not the server's",
        fraction * 100));
  }
  out.json = {{"event_delay_us", HistogramUs(event_delay)},
              {"send_wait_us", send_wait.empty() ? nlohmann::json() : HistogramUs(send_wait)},
              {"coalesced_token_events", {{"n", coalesced}, {"of", pairs}, {"fraction", fraction}}},
              {"client_bound", !out.reasons.empty()},
              {"reasons", out.reasons}};
  return out;
}

}  // namespace sb::perf
