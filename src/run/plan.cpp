#include "run/plan.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <utility>

#include <fmt/format.h>
#include <sys/resource.h>

#include "client/http_client.h"
#include "core/profile_table.h"
#include "core/progress.h"
#include "media/media.h"

namespace sb::run {

namespace {

// The widest fan-out the plan's profiles open at once, checked against RLIMIT_NOFILE.
Result<void> CheckOpenFilesFor(const Plan& c) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_max == RLIM_INFINITY) {
    return {};
  }
  auto has = [&](const char* p) {
    return std::find(c.profiles.begin(), c.profiles.end(), p) != c.profiles.end();
  };
  const bool embedded =
      c.target.endpoint.empty() && c.serve.empty() && c.recipe_file.empty() && !c.recipe;
  if (const std::vector<int> levels = c.profile.args.Ints("--levels");
      has("concurrency") && !levels.empty()) {
    const int most = *std::max_element(levels.begin(), levels.end());
    if (auto ok = CheckOpenFiles(fmt::format("--levels {}", most), most, embedded, lim.rlim_max);
        !ok) {
      return ok;
    }
  }
  if (has("rate") && c.profile.rate.max_concurrency > 0) {
    return CheckOpenFiles(fmt::format("--max-concurrency {}", c.profile.rate.max_concurrency),
                          c.profile.rate.max_concurrency, embedded, lim.rlim_max);
  }
  return {};
}

// --shard / --shards / a launcher's rank: this process's share of the rate profile and its
// directory, DIR/shard-I. A resumed shard keeps its directory (--resume names it).
Result<void> ResolveShard(Plan& c, const scaleout::EnvLookup& env) {
  auto spec = scaleout::DetectShard(c.shard, c.shards, env);
  if (!spec) {
    return spec.error();
  }
  if (!spec.value()) {
    return {};
  }
  const scaleout::ShardSpec& s = *spec.value();
  const std::string who = s.source == "--shard"
                              ? fmt::format("--shard {}/{}", s.index, s.count)
                              : fmt::format("rank {} of {} ({})", s.index, s.count, s.source);
  if (c.is_run || c.profiles != std::vector<std::string>{"rate"}) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("{}: only `servebench perf --profile rate` runs sharded (the "
                                 "other profiles measure one client's view)",
                                 who));
  }
  if (c.out.empty() && c.resume_dir.empty()) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("{}: give --out DIR (shard I writes DIR/shard-I, which "
                                 "`servebench merge DIR/shard-*` joins)",
                                 who));
  }
  if (auto ok = scaleout::ApplyShare(s, c.profile.rate); !ok) {
    return ok;
  }
  if (c.resume_dir.empty()) {
    c.out = (std::filesystem::path(c.out) / fmt::format("shard-{}", s.index)).string();
    if (s.source != "--shard" && !c.args.empty()) {
      // plan.json records the rank as --shard I/N: `--resume` runs without the launcher that
      // gave it, and must run the same share (not the whole load) in the same directory.
      std::vector<std::string> args;
      for (std::size_t i = 0; i < c.args.size(); ++i) {
        if (c.args[i] == "--shards") {
          ++i;  // and its value
        } else if (!c.args[i].starts_with("--shards=")) {
          args.push_back(c.args[i]);
        }
      }
      args.push_back("--shard");
      args.push_back(fmt::format("{}/{}", s.index, s.count));
      c.args = std::move(args);
    }
  }
  c.shard_spec = s;
  return {};
}

}  // namespace

Result<void> CheckLimits(const Plan& c) {
  if (auto ok = CheckTimeouts(c.target); !ok) {
    return ok;
  }
  if (c.suite.test_timeout_s) {
    if (auto ok = CheckSeconds("--test-timeout-s", *c.suite.test_timeout_s, false); !ok) {
      return ok;
    }
  }
  return CheckSeconds("--serve-ready-timeout-s", c.serve_ready_timeout_s, false);
}

Result<void> CheckOpenFiles(const std::string& flag, long long streams, bool embedded_server,
                            unsigned long long hard) {
  const long long need = streams * (embedded_server ? 2 : 1) + 64;
  if (static_cast<unsigned long long>(need) <= hard) {
    return {};
  }
  return MakeError(
      ErrorCode::kUsage,
      fmt::format("{} needs about {} open files at once (one socket per stream{}, and 64 more), "
                  "but the open-file limit (RLIMIT_NOFILE, hard) is {}: raise it (`ulimit -Hn`, "
                  "LimitNOFILE= for a systemd service, nofile in /etc/security/limits.conf) or "
                  "measure fewer streams",
                  flag, need,
                  embedded_server ? ", two with the built-in simulator in this process" : "",
                  hard));
}

std::vector<std::string> UnreadFlagWarnings(const Plan& c) {
  auto chosen = [&](const ProfileSpec& p) {
    return std::find(c.profiles.begin(), c.profiles.end(), p.name) != c.profiles.end();
  };
  std::vector<std::string> warnings;
  for (const std::string& flag : c.given_flags) {
    if (c.slo_gate.fail_on_slo && (flag == "--slo" || flag == "--slo-fraction")) {
      continue;  // the SLO gate reads them at every concurrency level too
    }
    std::vector<std::string> readers;
    bool read = false;
    for (const ProfileSpec& p : Profiles()) {
      if (!ProfileReads(p, flag)) {
        continue;
      }
      readers.emplace_back(p.name);
      read = read || chosen(p);
    }
    if (!readers.empty() && !read) {
      warnings.push_back(fmt::format(
          "{} has no effect: only the {} profile reads it, and this run does not include it{}",
          flag, fmt::join(readers, "/"),
          c.profiles.empty() ? "" : fmt::format(" (profiles: {})", fmt::join(c.profiles, ", "))));
    }
  }
  return warnings;
}

// --images-per-request: the images every loaded prompt carries, made now (images.h).
static Result<void> MakeLoadImages(perf::ImageLoad& images) {
  if (images.per_request < 0 || images.per_request > 64) {
    return MakeError(
        ErrorCode::kUsage,
        fmt::format("--images-per-request must be in [0, 64], got {}", images.per_request));
  }
  const auto size = perf::ParseImageSize(images.size);
  if (!size) {
    return size.error();
  }
  images.data_uris.clear();
  images.bytes = 0;
  for (int i = 0; i < images.per_request; ++i) {
    auto image = media::LoadImage(size->first, size->second, static_cast<std::uint64_t>(i) + 1);
    if (!image) {
      return image.error();
    }
    images.bytes += image->bytes.size();
    images.data_uris.push_back(media::DataUri(image.value()));
  }
  return {};
}

namespace {

// The numbers the speed profiles take (--tokens, --levels, --requests, --late-ms, ...), and
// the table's options read into the profiles' option structs.
Result<void> CheckProfileNumbers(Plan& c) {
  auto usage = [](std::string text) { return MakeError(ErrorCode::kUsage, std::move(text)); };
  if (c.profile.tokens < 2) {
    return usage(fmt::format("--tokens must be at least 2 (got {})", c.profile.tokens));
  }
  if (c.profile.runs < 1) {
    return usage(fmt::format("--runs must be at least 1 (got {})", c.profile.runs));
  }
  // The table's options (--levels, --lengths, --sizes ...): the command line checked them as
  // they were parsed; a plan made otherwise (a suite, a program) is checked here alike.
  for (const auto& [flag, value] : c.profile.args.given()) {
    const OptionSpec* o = FindOption(flag).second;
    if (o == nullptr) {
      return usage(fmt::format("{} is no option of any profile", flag));
    }
    if (std::string why = CheckOption(*o, value); !why.empty()) {
      return usage(why);
    }
  }
  // Into the option structs the runners read (--slo, --trace, --turns ...).
  if (auto ok = perf::ApplyProfileArgs(c.profile); !ok) {
    return ok;
  }
  if (auto ok = CheckSloGateArgs(c.slo_gate, c.profile.rate.slo); !ok) {
    return ok;
  }
  if (c.profile.input_tokens < 0 || c.profile.input_tokens > 10'000'000) {
    return usage(fmt::format("--input-tokens must be between 0 and 10000000 (got {})",
                             c.profile.input_tokens));
  }
  if (c.profile.level_requests < 0 || c.profile.level_requests > 1'000'000) {
    return usage(
        fmt::format("--requests must be between 1 and 1000000 (got {})", c.profile.level_requests));
  }
  if (!(c.profile.level_duration_s >= 0) || c.profile.level_duration_s > 86400 * 7) {
    return usage(fmt::format("--duration-s must be a positive number of seconds (got {})",
                             c.profile.level_duration_s));
  }
  if (!(std::isfinite(c.profile.rate.late_ms) && c.profile.rate.late_ms > 0)) {
    return usage("--late-ms must be a positive number");
  }
  c.profile.client_bound_ms = c.profile.rate.late_ms;
  if (auto ok = CheckOpenFilesFor(c); !ok) {
    return ok;
  }
  if (c.profile.warmup < 0) {
    return usage(fmt::format("--warmup must be 0 or more (got {})", c.profile.warmup));
  }
  return {};
}

// What the run's requests carry from the target options: thinking, temperature, time limits,
// retries, I/O threads and TLS.
Result<void> ApplyRequestOptions(Plan& c) {
  auto usage = [](std::string text) { return MakeError(ErrorCode::kUsage, std::move(text)); };
  if (c.thinking == "on") {
    c.profile.enable_thinking = true;
  } else if (c.thinking == "off") {
    c.profile.enable_thinking = false;
  }
  if (c.temperature >= 0) {
    c.profile.temperature = c.temperature;
  }
  c.profile.request_timeout = Millis(c.target.request_timeout_s);
  c.profile.first_byte_timeout = Millis(c.target.first_byte_timeout_s);
  if (c.target.retries < 0 || c.target.retries > 10) {
    return usage(fmt::format("--retries must be between 0 and 10 (got {})", c.target.retries));
  }
  if (c.target.io_threads < 0 || c.target.io_threads > 64) {
    return usage(fmt::format("--io-threads must be between 0 (automatic) and 64 (got {})",
                             c.target.io_threads));
  }
  if (!c.target.ca_cert.empty() && c.target.insecure) {
    return usage("give either --ca-cert or --insecure, not both");
  }
  return {};
}

// Reads what the chosen profiles load before the first request (trace, images, session file,
// dataset), so a bad line stops the run before anything is sent; checks the rate options and
// gives the profiles that open more connections a way to make them.
Result<void> LoadWorkloads(Plan& c) {
  if (std::find(c.profiles.begin(), c.profiles.end(), "replay") != c.profiles.end()) {
    // The trace is read now: a bad line stops the run before anything is sent.
    if (auto ok = perf::PrepareReplay(c.profile.replay); !ok) {
      return ok.error();
    }
  }
  if (auto ok = MakeLoadImages(c.profile.images); !ok) {
    return ok.error();
  }
  const bool sessions =
      std::find(c.profiles.begin(), c.profiles.end(), "sessions") != c.profiles.end();
  if (sessions) {
    // The session file is read now: a bad line stops the run before anything is sent.
    if (auto ok = perf::PrepareSessions(c.profile.sessions); !ok) {
      return ok.error();
    }
  }
  if (!c.profile.dataset.path.empty()) {
    // The dataset is read now too: a bad line stops the run before anything is sent.
    c.profile.dataset.max_requests = c.profile.replay.max_requests;
    if (auto ok = perf::PrepareDataset(c.profile.dataset); !ok) {
      return ok.error();
    }
  }
  const bool rate = std::find(c.profiles.begin(), c.profiles.end(), "rate") != c.profiles.end();
  if (rate) {
    if (auto ok = perf::ValidateRateOptions(c.profile.rate); !ok) {
      return ok.error();
    }
  }
  if (rate || sessions) {
    // --max-concurrency and the session slots run one client each, made like the main one.
    c.profile.rate.new_client = [t = c.target](const std::string& root) {
      auto key = ResolveApiKey(t);
      return std::make_unique<client::Client>(
          MakeClientOptions(t, root, key ? key.value() : std::string()));
    };
  }
  return {};
}

}  // namespace

Result<void> CheckPlan(Plan& c, const scaleout::EnvLookup& env) {
  if (auto mode = ParseProgressMode(c.progress, false); !mode) {
    return mode.error();
  }
  for (const auto& p : c.profiles) {
    const ProfileSpec* spec = FindProfile(p);
    if (spec == nullptr || spec->name != p) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("unknown profile '{}' (available: {})", p, ProfileNameList()));
    }
  }
  if (auto ok = CheckProfileNumbers(c); !ok) {
    return ok;
  }
  if (auto ok = CheckResourceArgs(c.resources); !ok) {
    return ok;
  }
  if (auto ok = CheckLimits(c); !ok) {
    return ok.error();
  }
  if (auto ok = ApplyRequestOptions(c); !ok) {
    return ok;
  }
  if (!c.start_at.empty()) {
    auto at = scaleout::ParseStartAt(c.start_at);
    if (!at) {
      return at.error();
    }
    c.start_at_time = at.value();
  }
  if (auto ok = ResolveShard(c, env); !ok) {
    return ok;
  }
  return LoadWorkloads(c);
}

// "90", "90s", "45m", "2h", "1.5h" -> seconds; kUsage error naming the flag otherwise.
Result<double> ParseDuration(const std::string& flag, const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (...) {
    used = 0;
  }
  const std::string unit = used > 0 ? text.substr(used) : "";
  const double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  if (used == 0 || scale == 0 || !std::isfinite(v) || v <= 0) {
    return MakeError(
        ErrorCode::kUsage,
        fmt::format("{} {}: expected a time above 0 such as 90, 90s, 45m or 2h", flag, text));
  }
  if (v * scale > kMaxLimitS) {
    return MakeError(ErrorCode::kUsage, fmt::format("{} {}: at most {:.0f} s (about 11 days)", flag,
                                                    text, kMaxLimitS));
  }
  return v * scale;
}

}  // namespace sb::run
