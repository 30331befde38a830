// A run as the command line describes it: the target, the suites, the speed profiles, the server
// to launch, the limits (`run` and `perf`), and a matrix of server recipes (`launch`). The flags
// that fill a Plan are in cli/commands.cpp; run/run.h executes it. Thread safety: plain data.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "launch/launch.h"
#include "perf/profiles.h"
#include "roofline/inputs.h"
#include "run/sampling.h"
#include "run/slo_gate.h"
#include "run/suites.h"
#include "run/target.h"
#include "scaleout/shard.h"
#include "store/store.h"

namespace sb::run {

// Everything one `run` or `perf` needs (or one recipe of a matrix).
struct Plan {
  TargetOptions target;
  std::string out;
  bool overwrite = false;
  std::string progress = "auto";  // --progress: auto, tty, plain, off (core/progress.h)
  std::vector<std::string> profiles;
  bool profiles_given = false;  // --profiles on the command line (run)
  // The options given on the command line ("--levels" ...), for UnreadFlagWarnings.
  std::vector<std::string> given_flags;
  bool is_run = false;  // `run` (suites + profiles) rather than `perf`
  SuiteArgs suite;
  // The server to start, measure and stop (--serve / --recipe / a matrix entry).
  std::string serve;
  std::string recipe_file;
  double serve_ready_timeout_s = 900;
  std::optional<launch::Recipe> recipe;
  perf::ProfileOptions profile;
  std::string thinking;  // "", "on", "off"
  double temperature = -1;
  std::string deadline;  // --deadline: the whole run's time limit ("" = none), as given
  std::optional<std::chrono::steady_clock::time_point> deadline_at;  // from `deadline`
  // --sample-period-ms, --power-cmd, --nvml-lib: the resource sampler.
  ResourceArgs resources;
  // --model-config etc.: the bandwidth ceiling beside decode results.
  roofline::RooflineArgs roofline;
  // The command line's words after the program name, as given (plan.json keeps them, so
  // --resume can run the same plan again).
  std::vector<std::string> args;
  // --resume: continue the run in this directory (docs/resume.md); the rest of the plan comes
  // from its plan.json.
  std::string resume_dir;
  // Sharded load (docs/scale-out.md): --shard I/N, --shards N (the rank from the environment),
  // --start-at TIME, as given; CheckPlan resolves them into shard_spec and start_at_time.
  std::string shard;
  int shards = 0;
  std::string start_at;
  std::optional<scaleout::ShardSpec> shard_spec;
  std::optional<scaleout::WallTime> start_at_time;
  // --store / --no-store / --label / --tag: where the finished run is recorded (docs/store.md).
  store::StoreOptions store;
  // --fail-on-slo / --slo-at: the SLO gate (run/slo_gate.h).
  SloGateArgs slo_gate;
};

// `launch`: a matrix of recipes, each started, measured with the same options and stopped, then
// one comparison.
struct MatrixPlan {
  Plan base;  // every recipe's options; its recipe and out are set per recipe
  std::string matrix;
  std::vector<std::string> only;
  bool keep_going = false;
};

// Checks the plan's values (kUsage errors name the flag) and completes it: --thinking,
// --temperature and --request-timeout-s go into the profile options; the rate profile gets a
// client maker for --max-concurrency; a shard (run/shard.h, from `env`) gets its share of the
// load and its own directory under --out (DIR/shard-I).
Result<void> CheckPlan(Plan& plan, const scaleout::EnvLookup& env = scaleout::ProcessEnv());

// One warning for each given option that only profiles outside plan.profiles read (the
// profile table's flags): "--levels has no effect: only the concurrency profile reads it ...".
std::vector<std::string> UnreadFlagWarnings(const Plan& plan);

// Every time limit of the plan in one place, each named by its flag: --connect-timeout-s,
// --first-byte-timeout-s, --idle-timeout-s, --request-timeout-s (0 = none), --test-timeout-s,
// --serve-ready-timeout-s (CheckSeconds: finite, above 0, at most kMaxLimitS). --deadline is
// checked where it is parsed (ParseDuration). kUsage error for the first bad one.
Result<void> CheckLimits(const Plan& plan);

// Whether `streams` concurrent streams (named by `flag`, "--levels 10000") fit in the open-file
// limit: one socket each, two when the built-in simulator serves them from this process, plus 64
// for the run's files and the HTTP library. `hard` is RLIMIT_NOFILE's hard limit (servebench
// raises the soft limit to it at start). kUsage error naming both figures and how to raise it.
Result<void> CheckOpenFiles(const std::string& flag, long long streams, bool embedded_server,
                            unsigned long long hard);

// "90", "90s", "45m", "2h", "1.5h" -> seconds, at most kMaxLimitS; kUsage error naming the flag
// otherwise.
Result<double> ParseDuration(const std::string& flag, const std::string& text);

}  // namespace sb::run
