// The client-bound self-check of a measured batch (docs/load.md "Self-check"): signs, from the
// client's own records, that the client rather than the server set the figures. Three checks,
// each against the bound (--client-bound-ms, default 1 ms) and, for the two delays, against the
// figures they shift (kMaterialShare below):
//   - events waited between arriving and being processed (p99 > bound);
//   - requests waited between being started and being written to their connection, i.e.
//     connecting or queued in the client (p99 > bound);
//   - token events read together with the one before (< 20 µs apart on one stream): they had
//     queued in the socket buffer because the client was late (more than 10% of them, 20 at
//     least), so ITL and decode speed are the client's.
// And one about the server, where it is servebench's simulator (its "sim" object in each
// response): how much of each request's TTFT was the simulator's own lateness, its read lag
// (the request waited in its socket) plus its first token's emission lateness; over the bound
// at p99, and a material share of the median TTFT, it is named in sim_reasons (not
// client-bound). Later tokens' lateness (max_emit_lag_us) is not counted: one late write among
// hundreds moves no reported figure, and the schedule never drifts with it.
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/chat.h"
#include "perf/histogram.h"

namespace sb::perf {

struct ClientCheck {
  // {"event_delay_us": {n, p50, p99, max}, "send_wait_us": {...} | null,
  //  "coalesced_token_events": {"n", "of", "fraction"}, "client_bound": bool, "reasons": [...]}
  // ..., "simulator_behind_ms": {n, p50, p99, max} | absent, "simulator_behind": bool}
  nlohmann::json json;
  std::vector<std::string> reasons;      // one sentence per check that failed
  std::vector<std::string> sim_reasons;  // the simulator's own lateness, when material
};

// Events closer than this on one stream were read from the socket together.
inline constexpr std::int64_t kCoalescedGapNs = 20'000;

// A client delay over the bound is reported only when its p99 is more than this share of the
// median TTFT (send wait, event delay) or of the median decode span (event delay): the error it
// can put into a figure, not the delay alone.
inline constexpr double kMaterialShare = 0.02;

ClientCheck CheckClient(std::span<const client::ChatResponse> batch, const Histogram& event_delay,
                        double bound_ms);

// How much of one request's TTFT was servebench's simulator's own lateness, in ns: its "sim"
// object's read_lag_us plus first_emit_lag_us (read without parsing the whole object: cheap
// enough for the measuring thread); nullopt when the object has neither (another server:
// sim_json is empty).
std::optional<std::int64_t> SimBehindNs(std::string_view sim_json);

// The simulator's lateness over a batch or point into `check` ("simulator_behind_ms",
// "simulator_behind") and, when its p99 is over the bound and a material share of the median
// TTFT (ns), one sentence into `sim_reasons`. Nothing when `sim_behind` is empty.
void AddSimBehind(const Histogram& sim_behind, double median_ttft_ns, double bound_ms,
                  nlohmann::json& check, std::vector<std::string>& sim_reasons);

}  // namespace sb::perf
