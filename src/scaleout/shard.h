// One share of a load run by many processes (docs/scale-out.md): which shard this process is
// (--shard I/N, or the rank an MPI, Slurm or Kubernetes launcher gives it), its share of the
// rate profile's load, the common start time (--start-at) and its clock offset to the server.
// `servebench merge` (run/merge.h) joins the shards' run directories into one run.
// Thread safety: plain functions; ProbeClockOffset uses its client from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "client/http_client.h"
#include "core/clock.h"
#include "core/result.h"
#include "perf/profiles.h"

namespace sb::scaleout {

using WallTime = std::chrono::system_clock::time_point;

inline constexpr int kMaxShards = 4096;

struct ShardSpec {
  int index = 0;       // 0-based rank
  int count = 1;       // shards in all
  std::string source;  // where the rank came from: "--shard", "OMPI_COMM_WORLD_RANK", ...
};

// Reads an environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// The process environment (getenv).
EnvLookup ProcessEnv();

// "I/N" (0 <= I < N <= kMaxShards) -> the spec; kUsage error naming --shard otherwise.
Result<ShardSpec> ParseShardFlag(std::string_view text);

// Which shard this process is, in this order: --shard I/N (`flag`, "" = not given); with
// --shards N (`shards` > 0) the rank from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job), else
// from the launcher variables below, which must then agree with N; with neither, a launcher's
// rank and size: OMPI_COMM_WORLD_RANK/SIZE (Open MPI), PMI_RANK/PMI_SIZE (MPICH, Intel MPI,
// Slurm's PMI), SLURM_PROCID/SLURM_NTASKS (srun). nullopt: not sharded (no flag, and no launcher
// with more than one process). kUsage error for a malformed or out-of-range value, naming it.
Result<std::optional<ShardSpec>> DetectShard(const std::string& flag, int shards,
                                             const EnvLookup& env);

// `total` split over the shards as evenly as possible, the remainder to the lowest ranks
// (10 over 4 -> 3, 3, 2, 2).
long long ShareOf(long long total, const ShardSpec& s);

// The arrival seed of shard s: the run's seed itself for a single shard, else a splitmix64 mix
// (core/rng.h Mix64) of the seed and the rank (distinct per shard, the same on every run).
std::uint64_t ShardSeed(std::uint64_t seed, const ShardSpec& s);

// This shard's share of the rate profile (the only profile that runs sharded): every rate R/N,
// --requests and --max-concurrency split by ShareOf, the seed by ShardSeed, --duration-s
// unchanged, histograms on. kUsage error when a share would be empty (--requests 3 over 4
// shards) or --search-rate is given (each shard would bisect on its own share).
Result<void> ApplyShare(const ShardSpec& s, perf::RateOptions& rate);

// --start-at: RFC 3339 ("2026-05-01T12:00:00Z", "2026-05-01T14:00:00.250+02:00") or unix seconds
// ("1777636800", "1777636800.25"). kUsage error otherwise.
Result<WallTime> ParseStartAt(std::string_view text);

// How far in the past a --start-at may be and still be accepted (the shard starts at once).
inline constexpr std::chrono::seconds kStartAtTolerance{2};

// The steady-clock time of the wall-clock time `at`, given "now" read on both clocks. kUsage
// error when `at` passed more than `tolerance` ago (the shards would not start together), or
// lies more than a day ahead (a typo, most likely).
Result<SteadyTime> StartAtSteady(WallTime at, WallTime wall_now, SteadyTime steady_now,
                                 std::chrono::nanoseconds tolerance = kStartAtTolerance);

// How long before --start-at a shard stops waiting, to warm up (the schedule starts at the time).
inline constexpr std::chrono::seconds kStartLead{3};

// Sleeps on `clock` until `lead` before `start` (the warm-up then runs; the rate schedule itself
// starts at `start`). Returns false when stopped first.
bool WaitForStart(Clock& clock, SteadyTime start, std::chrono::nanoseconds lead,
                  std::stop_token stop);

// This machine's clock against the server's, from the HTTP Date header (1 s resolution): the
// probe repeats a GET until the Date value ticks to the next second, which brackets the server's
// whole second between the send of one probe and the answer of the next.
struct ClockOffset {
  std::optional<double> offset_s;  // server − local; nullopt when the server sends no Date
  double uncertainty_s = 0;        // ± half the bracket (half a second when no tick was seen)
  std::string method;              // "date-tick", "date" (no tick seen), "none"
  int probes = 0;
  std::string note;  // why there is no estimate, "" otherwise
};

// Parses an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") to unix seconds; nullopt otherwise.
std::optional<std::int64_t> ParseHttpDate(std::string_view text);

// Probes `path` (e.g. "/health") on `client` for at most `budget` (the tick comes within ~1 s).
ClockOffset ProbeClockOffset(client::Client& client, const std::string& path,
                             std::chrono::milliseconds budget = std::chrono::milliseconds(1500));

// results.json "shard" of one shard's run directory.
nlohmann::json ShardJson(const ShardSpec& s, const std::string& host, const ClockOffset& clock,
                         const std::optional<WallTime>& start_at);

// "2026-05-01T12:00:00.250Z" (milliseconds) for a wall-clock time.
std::string Rfc3339(WallTime t);

}  // namespace sb::scaleout
