// Arrival schedules for open-loop load: pure functions from (process, rate, seed) to the send
// offsets of every request, in nanoseconds from the start of the run. The whole schedule is
// computed before the first send and each request is sent at start + offset (an absolute time),
// so lateness of one send never shifts the next one (no drift), and the load offered does not
// depend on how fast the server answers (no coordinated omission).
// The generators are our own (xoshiro256** and explicit samplers, not <random>'s distributions,
// whose algorithms differ between standard libraries): a seed gives the same schedule on every
// machine and build. docs/load.md explains the choices. Thread safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace sb::perf {

enum class Arrival {
  kConstant,  // every 1/rate exactly
  kPoisson,   // exponential gaps (mean 1/rate): independent arrivals
  kGamma,     // gamma gaps, shape = burstiness, scale = 1/(rate × burstiness)
};

// "constant", "poisson", "gamma".
std::string_view ArrivalName(Arrival arrival);
std::optional<Arrival> ParseArrival(std::string_view name);

struct ArrivalProcess {
  Arrival arrival = Arrival::kPoisson;
  double rate_rps = 1.0;  // mean arrivals per second
  // Gamma shape (kGamma only): the gaps' coefficient of variation is 1/sqrt(burstiness).
  // 1 = Poisson (the same draws as kPoisson), < 1 burstier, > 1 more regular.
  double burstiness = 1.0;
  std::uint64_t seed = 1;
};

// kUsage error naming the bad field: rate and burstiness must be finite and > 0; burstiness
// other than 1 needs kGamma.
Result<void> ValidateArrivals(const ArrivalProcess& process);

// Offsets (ns from the run's start) of the first `count` arrivals: the first at 0, then
// cumulative gaps. Non-decreasing. kConstant: offset i = round(i × 1e9 / rate) exactly.
// kPoisson/kGamma: offset i = round(1e9 / rate × Σ_{k<i} g_k) with g_k i.i.d. of mean 1 drawn
// from `seed`; so for one seed, the schedule at rate 2R is the schedule at R compressed by 2
// (the sweep and the search compare rates on the same arrival pattern), and a shorter schedule
// is a prefix of a longer one. Never rescaled to hit count/rate exactly (docs/load.md).
// REQUIRES: ValidateArrivals(process).
std::vector<std::int64_t> ArrivalOffsets(const ArrivalProcess& process, std::size_t count);

// Every arrival with offset < duration (the same sequence as ArrivalOffsets, cut by time).
// REQUIRES: ValidateArrivals(process).
std::vector<std::int64_t> ArrivalOffsetsWithin(const ArrivalProcess& process,
                                               std::chrono::nanoseconds duration);

// The rate a drawn schedule actually offers: (n − 1) / (last − first offset), in req/s; nullopt
// for fewer than two arrivals or a zero span.
std::optional<double> OfferedRate(const std::vector<std::int64_t>& offsets);

}  // namespace sb::perf
