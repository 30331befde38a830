#include "scaleout/shard.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/rng.h"

namespace sb::scaleout {

using nlohmann::json;

namespace {

Error Usage(std::string text) {
  return MakeError(ErrorCode::kUsage, std::move(text));
}

// A whole number in [lo, hi] (the entire text); nullopt otherwise.
std::optional<long long> Integer(std::string_view text, long long lo, long long hi) {
  long long v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < lo || v > hi) {
    return std::nullopt;
  }
  return v;
}

struct Family {
  const char* rank;
  const char* size;
};

constexpr Family kFamilies[] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                {"PMI_RANK", "PMI_SIZE"},
                                {"SLURM_PROCID", "SLURM_NTASKS"}};

// The first launcher family whose rank and size are both set; nullopt when none is.
Result<std::optional<ShardSpec>> FromLauncher(const EnvLookup& env) {
  for (const Family& f : kFamilies) {
    auto rank = env(f.rank);
    auto size = env(f.size);
    if (!rank || !size) {
      continue;
    }
    auto n = Integer(*size, 1, kMaxShards);
    if (!n) {
      return Usage(fmt::format("{}={} is not a process count in 1..{}", f.size, *size, kMaxShards));
    }
    auto i = Integer(*rank, 0, *n - 1);
    if (!i) {
      return Usage(fmt::format("{}={} is not a rank below {}={}", f.rank, *rank, f.size, *size));
    }
    return std::optional<ShardSpec>(
        ShardSpec{static_cast<int>(*i), static_cast<int>(*n), std::string(f.rank)});
  }
  return std::optional<ShardSpec>();
}

}  // namespace

EnvLookup ProcessEnv() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
  };
}

Result<ShardSpec> ParseShardFlag(std::string_view text) {
  const std::size_t slash = text.find('/');
  const auto bad = [&] {
    return Usage(fmt::format("--shard {}: expected I/N with 0 <= I < N <= {} (e.g. 0/4)",
                             std::string(text), kMaxShards));
  };
  if (slash == std::string_view::npos) {
    return bad();
  }
  auto n = Integer(text.substr(slash + 1), 1, kMaxShards);
  if (!n) {
    return bad();
  }
  auto i = Integer(text.substr(0, slash), 0, *n - 1);
  if (!i) {
    return bad();
  }
  return ShardSpec{static_cast<int>(*i), static_cast<int>(*n), "--shard"};
}

Result<std::optional<ShardSpec>> DetectShard(const std::string& flag, int shards,
                                             const EnvLookup& env) {
  if (!flag.empty()) {
    if (shards > 0) {
      return Usage("give either --shard I/N or --shards N, not both");
    }
    auto s = ParseShardFlag(flag);
    if (!s) {
      return s.error();
    }
    return std::optional<ShardSpec>(s.value());
  }
  auto launcher = FromLauncher(env);
  if (!launcher) {
    return launcher.error();
  }
  if (shards != 0) {
    if (shards < 1 || shards > kMaxShards) {
      return Usage(fmt::format("--shards must be in 1..{} (got {})", kMaxShards, shards));
    }
    if (auto index = env("JOB_COMPLETION_INDEX")) {
      auto i = Integer(*index, 0, shards - 1);
      if (!i) {
        return Usage(fmt::format("JOB_COMPLETION_INDEX={} is not a shard index below --shards {}",
                                 *index, shards));
      }
      return std::optional<ShardSpec>(
          ShardSpec{static_cast<int>(*i), shards, "JOB_COMPLETION_INDEX"});
    }
    if (!launcher.value()) {
      return Usage(fmt::format(
          "--shards {} needs this process's rank: set JOB_COMPLETION_INDEX (a Kubernetes Indexed "
          "Job does), run under mpirun or srun, or give --shard I/{} instead",
          shards, shards));
    }
    if (launcher.value()->count != shards) {
      return Usage(
          fmt::format("--shards {} disagrees with the launcher, which started {} "
                      "processes ({})",
                      shards, launcher.value()->count, launcher.value()->source));
    }
    return launcher;
  }
  if (launcher.value() && launcher.value()->count > 1) {
    return launcher;
  }
  return std::optional<ShardSpec>();
}

long long ShareOf(long long total, const ShardSpec& s) {
  const long long n = s.count;
  return total / n + (s.index < total % n ? 1 : 0);
}

std::uint64_t ShardSeed(std::uint64_t seed, const ShardSpec& s) {
  if (s.count == 1) {
    return seed;
  }
  return Mix64(Mix64(seed) ^ static_cast<std::uint64_t>(s.index + 1));
}

Result<void> ApplyShare(const ShardSpec& s, perf::RateOptions& rate) {
  if (rate.search) {
    return Usage(
        "--search-rate cannot run sharded: each shard would bisect on its own share; sweep "
        "--rates instead and merge");
  }
  if (rate.duration_s <= 0) {
    const long long mine = ShareOf(rate.requests, s);
    if (mine < 1) {
      return Usage(
          fmt::format("--requests {} cannot be split over {} shards: each shard needs at "
                      "least one request per rate",
                      rate.requests, s.count));
    }
    rate.requests = static_cast<int>(mine);
  }
  if (rate.max_concurrency > 0) {
    const long long mine = ShareOf(rate.max_concurrency, s);
    if (mine < 1) {
      return Usage(
          fmt::format("--max-concurrency {} cannot be split over {} shards: each shard "
                      "needs at least one slot",
                      rate.max_concurrency, s.count));
    }
    rate.max_concurrency = static_cast<int>(mine);
  }
  for (double& r : rate.rates) {
    r /= s.count;
  }
  rate.seed = ShardSeed(rate.seed, s);
  rate.histograms = true;
  return {};
}

Result<WallTime> ParseStartAt(std::string_view text) {
  const auto bad = [&] {
    return Usage(
        fmt::format("--start-at {}: expected an RFC 3339 time "
                    "(2026-05-01T12:00:00Z) or unix seconds",
                    std::string(text)));
  };
  // Unix seconds, with an optional fraction.
  if (!text.empty() && text.find_first_not_of("0123456789.") == std::string_view::npos) {
    double v = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (ec != std::errc() || ptr != end || !std::isfinite(v) || v > 1e11) {
      return bad();
    }
    return WallTime(
        std::chrono::duration_cast<WallTime::duration>(std::chrono::duration<double>(v)));
  }
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  if (text.size() < 20) {
    return bad();
  }
  auto num = [&](std::size_t pos, std::size_t len, long long lo, long long hi) {
    return pos + len <= text.size() ? Integer(text.substr(pos, len), lo, hi) : std::nullopt;
  };
  auto year = num(0, 4, 1970, 9999);
  auto month = num(5, 2, 1, 12);
  auto day = num(8, 2, 1, 31);
  auto hour = num(11, 2, 0, 23);
  auto minute = num(14, 2, 0, 59);
  auto second = num(17, 2, 0, 60);
  const char t = text[10];
  if (!year || !month || !day || !hour || !minute || !second || text[4] != '-' || text[7] != '-' ||
      (t != 'T' && t != 't' && t != ' ') || text[13] != ':' || text[16] != ':') {
    return bad();
  }
  std::size_t pos = 19;
  std::chrono::nanoseconds frac{0};
  if (pos < text.size() && text[pos] == '.') {
    std::size_t digits = 0;
    long long value = 0;
    for (++pos; pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])); ++pos) {
      if (digits < 9) {
        value = value * 10 + (text[pos] - '0');
        ++digits;
      }
    }
    if (digits == 0) {
      return bad();
    }
    for (std::size_t d = digits; d < 9; ++d) {
      value *= 10;
    }
    frac = std::chrono::nanoseconds(value);
  }
  long long offset_s = 0;
  const std::string_view zone = text.substr(std::min(pos, text.size()));
  if (zone == "Z" || zone == "z") {
    offset_s = 0;
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    auto zh = Integer(zone.substr(1, 2), 0, 23);
    auto zm = Integer(zone.substr(4, 2), 0, 59);
    if (!zh || !zm) {
      return bad();
    }
    offset_s = (*zh * 3600 + *zm * 60) * (zone[0] == '-' ? -1 : 1);
  } else {
    return bad();
  }
  std::tm tm{};
  tm.tm_year = static_cast<int>(*year - 1900);
  tm.tm_mon = static_cast<int>(*month - 1);
  tm.tm_mday = static_cast<int>(*day);
  tm.tm_hour = static_cast<int>(*hour);
  tm.tm_min = static_cast<int>(*minute);
  tm.tm_sec = static_cast<int>(*second);
  const std::time_t utc = timegm(&tm);
  if (tm.tm_mday != *day) {  // timegm normalised an impossible date (Feb 30)
    return bad();
  }
  return WallTime(std::chrono::seconds(utc - offset_s)) +
         std::chrono::duration_cast<WallTime::duration>(frac);
}

Result<SteadyTime> StartAtSteady(WallTime at, WallTime wall_now, SteadyTime steady_now,
                                 std::chrono::nanoseconds tolerance) {
  const auto ahead = std::chrono::duration_cast<std::chrono::nanoseconds>(at - wall_now);
  if (ahead < -tolerance) {
    return Usage(
        fmt::format("--start-at {} passed {:.1f} s ago (the limit is {:.1f} s): give a "
                    "time far enough ahead for every shard to be started",
                    Rfc3339(at), -ToSeconds(ahead), ToSeconds(tolerance)));
  }
  if (ahead > std::chrono::hours(24)) {
    return Usage(fmt::format("--start-at {} is {:.0f} h ahead: more than a day", Rfc3339(at),
                             ToSeconds(ahead) / 3600));
  }
  return steady_now + std::chrono::duration_cast<SteadyTime::duration>(ahead);
}

bool WaitForStart(Clock& clock, SteadyTime start, std::chrono::nanoseconds lead,
                  std::stop_token stop) {
  const SteadyTime until = start - std::chrono::duration_cast<SteadyTime::duration>(lead);
  if (clock.Now() >= until) {
    return !stop.stop_requested();
  }
  return clock.SleepUntil(until, stop);
}

std::optional<std::int64_t> ParseHttpDate(std::string_view text) {
  // "Sun, 06 Nov 1994 08:49:37 GMT"
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (text.size() != 29 || text[3] != ',' || text.substr(25) != " GMT") {
    return std::nullopt;
  }
  auto day = Integer(text.substr(5, 2), 1, 31);
  auto year = Integer(text.substr(12, 4), 1970, 9999);
  auto hour = Integer(text.substr(17, 2), 0, 23);
  auto minute = Integer(text.substr(20, 2), 0, 59);
  auto second = Integer(text.substr(23, 2), 0, 60);
  int month = -1;
  for (int m = 0; m < 12; ++m) {
    if (text.substr(8, 3) == kMonths[m]) {
      month = m;
    }
  }
  if (!day || !year || !hour || !minute || !second || month < 0) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = static_cast<int>(*year - 1900);
  tm.tm_mon = month;
  tm.tm_mday = static_cast<int>(*day);
  tm.tm_hour = static_cast<int>(*hour);
  tm.tm_min = static_cast<int>(*minute);
  tm.tm_sec = static_cast<int>(*second);
  return static_cast<std::int64_t>(timegm(&tm));
}

ClockOffset ProbeClockOffset(client::Client& client, const std::string& path,
                             std::chrono::milliseconds budget) {
  using std::chrono::system_clock;
  auto unix_s = [](WallTime t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
  };
  ClockOffset out;
  out.method = "none";
  const auto deadline = std::chrono::steady_clock::now() + budget;
  std::optional<std::int64_t> prev_date;
  double prev_send = 0;
  double first_send = 0, first_recv = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const double send = unix_s(system_clock::now());
    auto r = client.Get(path, std::chrono::milliseconds(5000));
    const double recv = unix_s(system_clock::now());
    ++out.probes;
    if (!r) {
      out.note = "the clock probe failed: " + r.error().message;
      return out;
    }
    auto date = ParseHttpDate(r->date_header);
    if (!date) {
      out.note = r->date_header.empty()
                     ? "the server sends no Date header"
                     : "the server's Date header is not an HTTP date: " + r->date_header;
      return out;
    }
    if (!prev_date) {
      first_send = send;
      first_recv = recv;
    } else if (*date == *prev_date + 1) {
      // The server's clock read *date.000 after the previous probe was sent and before this
      // one's answer came back.
      const double lo = prev_send;
      const double hi = recv;
      out.offset_s = static_cast<double>(*date) - (lo + hi) / 2;
      out.uncertainty_s = (hi - lo) / 2;
      out.method = "date-tick";
      return out;
    }
    prev_date = date;
    prev_send = send;
    // About a thousand probes over the second: the bracket stays near a millisecond plus the
    // round trip without hammering the server.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (prev_date) {
    // No tick within the budget: the server's time lies in [date, date + 1) at some point
    // between the first send and answer.
    const double mid = (first_send + first_recv) / 2;
    out.offset_s = static_cast<double>(*prev_date) + 0.5 - mid;
    out.uncertainty_s = 0.5 + (first_recv - first_send) / 2;
    out.method = "date";
  }
  return out;
}

std::string Rfc3339(WallTime t) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const std::time_t s = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ((ms % 1000) + 1000) % 1000);
}

json ShardJson(const ShardSpec& s, const std::string& host, const ClockOffset& clock,
               const std::optional<WallTime>& start_at) {
  return json{{"index", s.index},
              {"count", s.count},
              {"source", s.source},
              {"host", host},
              {"start_at", start_at ? json(Rfc3339(*start_at)) : json(nullptr)},
              {"clock",
               {{"offset_s", clock.offset_s ? json(*clock.offset_s) : json(nullptr)},
                {"uncertainty_s", clock.offset_s ? json(clock.uncertainty_s) : json(nullptr)},
                {"method", clock.method},
                {"probes", clock.probes},
                {"note", clock.note.empty() ? json(nullptr) : json(clock.note)}}}};
}

}  // namespace sb::scaleout
