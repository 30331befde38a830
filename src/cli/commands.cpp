#include "cli/commands.h"

#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "cli/roofline_command.h"
#include "cli/signals.h"
#include "cli/suite_command.h"
#include "client/http_client.h"
#include "client/server_info.h"
#include "core/clock.h"
#include "core/redact.h"
#include "core/result.h"
#include "launch/launch.h"
#include "media/media.h"
#include "perf/profiles.h"
#include "report/compare.h"
#include "report/format.h"
#include "report/markdown.h"
#include "report/run_dir.h"
#include "roofline/inputs.h"
#include "roofline/roofline.h"
#include "sim/sim_server.h"
#include "suite/runner.h"
#include "suite/suite.h"

namespace sb::cli {

namespace {

using nlohmann::json;

constexpr const char* kVersion = "0.1.0";

int ExitCodeFor(const Error& e) {
  switch (e.code) {
    case ErrorCode::kUsage:
      return kExitUsage;
    case ErrorCode::kCancelled:
      return kExitInterrupted;
    default:
      return kExitSetup;
  }
}

int Fail(const Error& e) {
  std::fprintf(stderr, "servebench: error: %s\n", Redact(e.message).c_str());
  return ExitCodeFor(e);
}

// ---------------------------------------------------------------------------------------------
// The target: a server given by --endpoint, or the built-in simulator started in-process.

struct TargetOptions {
  std::string endpoint;
  std::string model;
  std::string api_key_env;
  std::string api_key_file;
  // Time limits (docs/bounds.md). Defaults end a dead server in tens of seconds.
  double connect_timeout_s = 10;
  double first_byte_timeout_s = 60;
  double idle_timeout_s = 30;
  double request_timeout_s = 0;  // whole request; 0 = none (the other limits still hold)
};

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(std::llround(seconds * 1e3)));
}

// The client's options for the server root or API base `endpoint`.
client::ClientOptions MakeClientOptions(const TargetOptions& o, const std::string& endpoint,
                                        const std::string& api_key) {
  client::ClientOptions co;
  co.endpoint = endpoint;
  co.api_key = api_key;
  co.connect_timeout = Millis(o.connect_timeout_s);
  co.first_byte_timeout = Millis(o.first_byte_timeout_s);
  co.idle_timeout = Millis(o.idle_timeout_s);
  co.total_timeout = Millis(o.request_timeout_s);
  return co;
}

// A limit must be a finite number of seconds above 0 (or exactly 0 where `zero_means_none`):
// 0, negative or NaN silently turning a limit off is how a run hangs.
Result<void> CheckSeconds(const char* flag, double v, bool zero_means_none) {
  if (std::isfinite(v) && (v > 0 || (zero_means_none && v == 0))) {
    return {};
  }
  return MakeError(ErrorCode::kUsage,
                   fmt::format("{} must be a number of seconds above 0{} (got {})", flag,
                               zero_means_none ? ", or 0 for no limit" : "", v));
}

Result<void> CheckTimeouts(const TargetOptions& o) {
  for (auto [flag, v] : {std::pair{"--connect-timeout-s", o.connect_timeout_s},
                         {"--first-byte-timeout-s", o.first_byte_timeout_s},
                         {"--idle-timeout-s", o.idle_timeout_s}}) {
    if (auto ok = CheckSeconds(flag, v, false); !ok) {
      return ok;
    }
  }
  return CheckSeconds("--request-timeout-s", o.request_timeout_s, true);
}

struct Target {
  std::unique_ptr<sim::SimServer> sim;  // set when the built-in simulator is the target
  std::unique_ptr<client::Client> client;
  client::ServerInfo info;
  std::string endpoint;  // as shown to the user (".../v1")
  std::string model;
};

std::string Trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

Result<std::string> ResolveApiKey(const TargetOptions& o) {
  if (!o.api_key_file.empty()) {
    std::ifstream in(o.api_key_file);
    if (!in) {
      return MakeError(ErrorCode::kSetup,
                       fmt::format("cannot read API key file '{}'", o.api_key_file));
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return Trim(ss.str());
  }
  std::string var = o.api_key_env.empty() ? "OPENAI_API_KEY" : o.api_key_env;
  const char* v = std::getenv(var.c_str());
  if (v == nullptr || *v == '\0') {
    if (!o.api_key_env.empty()) {
      return MakeError(ErrorCode::kSetup,
                       fmt::format("--api-key-env {}: that environment variable is not set", var));
    }
    return std::string();
  }
  return std::string(v);
}

// Settings of the simulator that `run` and `perf` start when no --endpoint is given: a fast,
// plausible server, so the whole product can be shown on a machine without a model.
sim::SimOptions EmbeddedSimOptions() {
  sim::SimOptions o;
  o.ttft_ms = 40;
  o.prefill_us_per_token = 20;
  o.itl_ms = 4;
  o.jitter_ms = 0.5;
  o.concurrency_slowdown = 0.05;
  o.max_batch = 64;
  o.seed = 1;
  return o;
}

// `embedded`: the simulator to start when no --endpoint is given; `what` says what it plays.
Result<Target> OpenTarget(const TargetOptions& o, const sim::SimOptions& embedded,
                          const std::string& what) {
  Target t;
  std::string endpoint = o.endpoint;
  if (endpoint.empty()) {
    auto started = sim::SimServer::Start(embedded);
    if (!started) {
      return started.error().WithContext("starting the built-in simulator");
    }
    t.sim = std::move(started.value());
    endpoint = t.sim->base_url();
    std::printf(
        "servebench: no --endpoint given: running against the built-in simulator at %s "
        "(figures show the harness, not a model%s)\n",
        endpoint.c_str(), what.c_str());
    std::fflush(stdout);
  }
  auto key = ResolveApiKey(o);
  if (!key) {
    return key.error();
  }
  AddSecret(key.value());
  AddUrlSecrets(endpoint);
  t.client = std::make_unique<client::Client>(MakeClientOptions(o, endpoint, key.value()));
  if (auto valid = t.client->Validate(); !valid) {
    return valid.error();
  }
  // As shown and recorded: credentials in the URL (user:password@) never leave the client.
  t.endpoint = RedactUrl(t.client->root() + "/v1");
  auto info = client::DetectServer(*t.client);
  if (!info) {
    return info.error();
  }
  t.info = info.value();
  auto model = client::ChooseModel(t.info, o.model);
  if (!model) {
    return model.error();
  }
  t.model = model.value();
  return t;
}

json TargetJson(const Target& t) {
  return json{
      {"endpoint", t.endpoint},
      {"model", t.model},
      {"simulated", t.sim != nullptr},
      {"server",
       {{"kind", std::string(client::ServerKindName(t.info.kind))},
        {"version", t.info.version.empty() ? json(nullptr) : json(t.info.version)}}},
      {"models", t.info.models},
      {"max_model_len", t.info.max_model_len > 0 ? json(t.info.max_model_len) : json(nullptr)}};
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
  return v * scale;
}

// A list flag given as "1,,2" or "1,2," (CLI11 drops the empty item silently): a usage error.
Result<void> CheckListArgs(int argc, char** argv) {
  static const std::vector<std::string> kListFlags = {
      "--levels", "--lengths", "--sizes", "--rates", "--profile",    "--profiles",
      "--suite",  "--tests",   "--slo",   "--only",  "--rerun-empty"};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    std::string flag = arg;
    if (auto eq = arg.find('='); eq != std::string::npos && arg.starts_with("--")) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[i + 1];
    }
    if (std::find(kListFlags.begin(), kListFlags.end(), flag) == kListFlags.end()) {
      continue;
    }
    if (value.find(",,") != std::string::npos || value.starts_with(",") ||
        (value.ends_with(",") && !value.empty())) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("{} {}: an empty item in the list", flag, value));
    }
  }
  return {};
}

std::string CommandLine(int argc, char** argv) {
  std::string s = "servebench";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    s += ' ';
    s += a.find_first_of(" \t'\"") == std::string::npos ? a : "'" + a + "'";
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// run / perf

struct SpeedCommand {
  TargetOptions target;
  std::string out;
  bool overwrite = false;
  std::vector<std::string> profiles;
  bool profiles_given = false;  // --profiles on the command line (run)
  bool is_run = false;          // `run` (suites + profiles) rather than `perf`
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
  // --model-config etc.: the bandwidth ceiling beside decode results.
  roofline::RooflineArgs roofline;
};

Result<void> CheckSpeedOptions(SpeedCommand& c) {
  for (const auto& p : c.profiles) {
    const auto& names = perf::PerfProfileNames();
    if (std::find(names.begin(), names.end(), p) == names.end()) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("unknown profile '{}' (available: decode, concurrency, "
                                   "max-tokens, ttft, context, rate)",
                                   p));
    }
  }
  auto positive = [](const std::vector<int>& v) {
    return std::all_of(v.begin(), v.end(), [](int x) { return x > 0; });
  };
  auto usage = [](std::string text) { return MakeError(ErrorCode::kUsage, std::move(text)); };
  if (c.profile.tokens < 2) {
    return usage(fmt::format("--tokens must be at least 2 (got {})", c.profile.tokens));
  }
  for (auto [flag, v] :
       {std::pair{"--runs", c.profile.runs}, {"--length-runs", c.profile.length_runs}}) {
    if (v < 1) {
      return usage(fmt::format("{} must be at least 1 (got {})", flag, v));
    }
  }
  for (auto [flag, v] : {std::pair{"--levels", &c.profile.levels},
                         {"--lengths", &c.profile.lengths},
                         {"--sizes", &c.profile.sizes}}) {
    if (!positive(*v)) {
      return usage(
          fmt::format("{} must list positive whole numbers (got {})", flag, fmt::join(*v, ",")));
    }
  }
  if (c.profile.warmup < 0) {
    return usage(fmt::format("--warmup must be 0 or more (got {})", c.profile.warmup));
  }
  if (auto ok = CheckTimeouts(c.target); !ok) {
    return ok.error();
  }
  if (c.thinking == "on") {
    c.profile.enable_thinking = true;
  } else if (c.thinking == "off") {
    c.profile.enable_thinking = false;
  }
  if (c.temperature >= 0) {
    c.profile.temperature = c.temperature;
  }
  c.profile.request_timeout = Millis(c.target.request_timeout_s);
  if (std::find(c.profiles.begin(), c.profiles.end(), "rate") != c.profiles.end()) {
    if (auto ok = perf::ValidateRateOptions(c.profile.rate); !ok) {
      return ok.error();
    }
    // --max-concurrency runs one client per slot, each made like the main one.
    c.profile.rate.new_client = [t = c.target](const std::string& root) {
      auto key = ResolveApiKey(t);
      return std::make_unique<client::Client>(
          MakeClientOptions(t, root, key ? key.value() : std::string()));
    };
  }
  return {};
}

// The run's summary: the test counts of the suites, and the speed totals of every measured
// request (speed profiles and suite requests together).
json MergedSummary(const perf::Session& session, const suite::SuiteRunner& runner) {
  json s = session.Summary();
  const json tests = runner.StatusSummary();
  for (auto it = tests.begin(); it != tests.end(); ++it) {
    s[it.key()] = *it;
  }
  s["requests"] = s.value("requests", 0LL) + runner.requests();
  s["failed_requests"] = s.value("failed_requests", 0LL) + runner.failed_requests();
  const long long tokens = s.value("completion_tokens", 0LL) + runner.completion_tokens();
  const double wall = s.value("wall_time_s", 0.0) + runner.wall_time_s();
  s["completion_tokens"] = tokens;
  s["wall_time_s"] = wall;
  s["avg_tok_s"] = wall > 0 ? json(static_cast<double>(tokens) / wall) : json(nullptr);
  return s;
}

// What the embedded simulator was told to do, for the report.
json DemoDescription(const std::vector<suite::Suite>& suites,
                     const std::map<std::string, double>& timeouts) {
  auto present = [&](const std::string& id) {
    for (const auto& s : suites) {
      for (const auto& t : s.tests) {
        if (t.id == id) {
          return true;
        }
      }
    }
    return false;
  };
  const AnswerTweaks tw = DemoTweaks();
  json lines = json::array();
  lines.push_back(
      "The simulator answers every test with its reference answer, except where listed here.");
  lines.push_back(
      "It refuses audio input (vLLM's \"At most 0 audio(s)\"): audio tests are "
      "UNSUPPORTED after one probe request.");
  for (const auto& id : tw.loop) {
    if (present(id)) {
      lines.push_back(fmt::format("{}: the output loops (LOOP, cancelled early).", id));
    }
  }
  for (const auto& [id, n] : tw.reasoning) {
    if (present(id)) {
      lines.push_back(
          fmt::format("{}: thinks for {} tokens before answering (EMPTY when the "
                      "budget is smaller; --rerun-empty retries).",
                      id, report::Thousands(n)));
    }
  }
  for (const auto& id : tw.bad) {
    if (present(id)) {
      lines.push_back(fmt::format("{}: gives a wrong answer (FAIL).", id));
    }
  }
  for (const auto& [id, fault] : tw.fault) {
    if (!present(id)) {
      continue;
    }
    if (fault == "stall") {
      const auto t = timeouts.find(id);
      lines.push_back(
          fmt::format("{}: the stream stalls for 10 s; the test's time limit is {} s "
                      "(TIMEOUT).",
                      id, t != timeouts.end() ? t->second : 0));
    } else {
      lines.push_back(fmt::format("{}: the server answers HTTP {} (ERROR).", id, fault));
    }
  }
  return lines;
}

// --min-pass-rate / --min-effective-pass-rate: exit 1 below the threshold.
int CheckGates(const SuiteArgs& a, const json& summary) {
  auto rate = [&](const char* key) -> std::optional<double> {
    if (summary.contains(key) && summary[key].is_number()) {
      return summary[key].get<double>();
    }
    return std::nullopt;
  };
  int code = kExitOk;
  if (a.min_pass_rate >= 0) {
    auto r = rate("pass_rate");
    if (!r || *r < a.min_pass_rate) {
      std::fprintf(stderr, "servebench: gate failed: pass rate %s is below --min-pass-rate %.3g\n",
                   r ? fmt::format("{:.3g}", *r).c_str() : "(no tests)", a.min_pass_rate);
      code = kExitGate;
    }
  }
  if (a.min_effective_pass_rate >= 0) {
    auto r = rate("effective_pass_rate");
    if (!r || *r < a.min_effective_pass_rate) {
      std::fprintf(stderr,
                   "servebench: gate failed: effective pass rate %s is below "
                   "--min-effective-pass-rate %.3g\n",
                   r ? fmt::format("{:.3g}", *r).c_str() : "(no tests)", a.min_effective_pass_rate);
      code = kExitGate;
    }
  }
  return code;
}

int RunSpeed(SpeedCommand& c, const std::string& command_line, std::stop_source& stop) {
  if (auto ok = CheckSpeedOptions(c); !ok) {
    return Fail(ok.error());
  }
  // `run`: the standard suite and the default profiles; with --suite, only what is asked.
  if (c.is_run) {
    if (c.suite.suites.empty() && !c.profiles_given) {
      c.suite.suites = {"standard"};
    } else if (!c.suite.suites.empty() && !c.profiles_given) {
      c.profiles.clear();
    }
  }
  auto loaded = LoadSuites(c.suite.suites);
  if (!loaded) {
    return Fail(loaded.error());
  }
  const std::vector<suite::Suite>& suites = loaded.value();
  auto run_options = MakeRunOptions(c.suite, c.profile);
  if (!run_options) {
    return Fail(run_options.error());
  }
  if (suites.empty() && c.profiles.empty()) {
    return Fail(MakeError(ErrorCode::kUsage, "nothing to run: no suite and no profile"));
  }
  if (!c.roofline.model_config.empty()) {
    if (auto roof = roofline::RooflineResultsJson(c.roofline, std::nullopt); !roof) {
      return Fail(roof.error());  // bad config or hardware: say so before measuring anything
    }
  }
  std::string started_at = UtcTimestamp();
  std::string compact = UtcTimestampCompact();
  // A server to launch: its run directory is chosen first, since its log goes there.
  if (!c.serve.empty() || !c.recipe_file.empty()) {
    if (!c.target.endpoint.empty()) {
      return Fail(MakeError(ErrorCode::kUsage,
                            "--serve and --recipe start the server: do not give --endpoint too"));
    }
    if (!c.serve.empty() && !c.recipe_file.empty()) {
      return Fail(MakeError(ErrorCode::kUsage, "give either --serve or --recipe, not both"));
    }
    if (!c.serve.empty()) {
      c.recipe = launch::RecipeFromCommand(c.serve);
      c.recipe->ready_timeout_s = c.serve_ready_timeout_s;
    } else {
      auto recipes = launch::LoadRecipes(c.recipe_file);
      if (!recipes) {
        return Fail(recipes.error());
      }
      if (recipes->size() != 1) {
        return Fail(MakeError(ErrorCode::kUsage,
                              fmt::format("{} holds {} recipes: run a matrix with `servebench "
                                          "launch {}`",
                                          c.recipe_file, recipes->size(), c.recipe_file)));
      }
      c.recipe = recipes->front();
    }
    if (auto ok = launch::ValidateRecipe(*c.recipe); !ok) {
      return Fail(ok.error());
    }
  }
  std::unique_ptr<launch::ServerProcess> server;
  std::filesystem::path server_out;
  if (c.recipe) {
    server_out = c.out.empty() ? std::filesystem::path("runs") /
                                     report::DefaultRunDirName(compact, c.recipe->name)
                               : std::filesystem::path(c.out);
    std::error_code ec;
    std::filesystem::create_directories(server_out, ec);
    if (ec) {
      return Fail(MakeError(
          ErrorCode::kIo, fmt::format("cannot create {}: {}", server_out.string(), ec.message())));
    }
    std::fprintf(stderr, "starting server '%s': %s\n", c.recipe->name.c_str(),
                 c.recipe->command.empty()
                     ? fmt::format("{}", fmt::join(c.recipe->argv, " ")).c_str()
                     : c.recipe->command.c_str());
    launch::StartHooks hooks;
    double last_note = 0;
    hooks.on_poll = [&last_note](double elapsed, const std::string& last) {
      if (elapsed - last_note >= 10) {
        last_note = elapsed;
        std::fprintf(stderr, "  waiting for the server: %.0f s (%s)\n", elapsed, last.c_str());
      }
    };
    auto started =
        launch::ServerProcess::Start(*c.recipe, server_out / "server.log", stop.get_token(), hooks);
    if (!started) {
      return Fail(started.error());
    }
    server = std::move(started.value());
    std::fprintf(stderr, "server ready after %.1f s at %s (%s)\n", server->time_to_ready_s(),
                 server->endpoint().c_str(), server->command().c_str());
    c.target.endpoint = server->endpoint();
    c.out = server_out.string();
  }

  sim::SimOptions embedded = EmbeddedSimOptions();
  std::string embedded_what;
  if (!suites.empty()) {
    embedded = DemoSimOptions(suites, run_options->timeout_by_test);
    embedded_what = "; it plays a demo scenario that shows every test status";
  }
  auto target = OpenTarget(c.target, embedded, embedded_what);
  if (!target) {
    return Fail(target.error());
  }
  Target& t = target.value();
  if (!t.sim) {
    run_options->timeout_by_test.clear();
  }
  std::fprintf(
      stderr, "target: %s %s, model %s\n", std::string(client::ServerKindName(t.info.kind)).c_str(),
      t.info.version.empty() ? "(version unknown)" : t.info.version.c_str(), t.model.c_str());

  std::filesystem::path out =
      c.out.empty() ? std::filesystem::path("runs") / report::DefaultRunDirName(compact, t.model)
                    : std::filesystem::path(c.out);
  auto dir = report::RunDir::Create(
      out, c.overwrite ? report::RunDirMode::kOverwrite : report::RunDirMode::kNew);
  if (!dir) {
    return Fail(dir.error());
  }
  report::RunDir& rd = dir.value();

  json results = {{"schema", "servebench.results/1"},
                  {"tool", {{"name", "servebench"}, {"version", kVersion}}},
                  {"started_at", started_at},
                  {"finished_at", nullptr},
                  {"status", "running"},
                  {"command", command_line},
                  {"target", TargetJson(t)},
                  {"config",
                   {{"profiles", c.profiles},
                    {"tokens", c.profile.tokens},
                    {"runs", c.profile.runs},
                    {"levels", c.profile.levels},
                    {"lengths", c.profile.lengths},
                    {"length_runs", c.profile.length_runs},
                    {"warmup", c.profile.warmup},
                    {"thinking", c.thinking.empty() ? json(nullptr) : json(c.thinking)},
                    {"suites", c.suite.suites},
                    {"tests", c.suite.tests},
                    {"repeat", c.suite.repeat},
                    {"rerun_budgets", run_options->rerun_budgets},
                    {"test_timeout_s",
                     c.suite.test_timeout_s > 0 ? json(c.suite.test_timeout_s) : json(nullptr)},
                    {"video_transport", c.suite.video_transport}}},
                  {"summary", json::object()},
                  {"tests", json::array()},
                  {"perf", json::object()},
                  {"spec_decode", nullptr},
                  {"warnings", json::array()}};

  // Why the run stops early, set once by whoever stops it: the journal's disk, the deadline.
  // A stop with neither set came from a signal.
  std::mutex stop_mu;
  std::string io_error;       // guarded by stop_mu
  bool deadline_hit = false;  // guarded by stop_mu
  auto on_sample = [&](const json& rec) {
    if (auto ok = rd.AppendSample(rec); !ok) {
      std::lock_guard<std::mutex> lock(stop_mu);
      if (io_error.empty()) {
        // Measuring on without a journal would lose what follows: stop now.
        io_error = ok.error().message;
        std::fprintf(stderr, "servebench: error: %s: stopping the run\n", io_error.c_str());
        stop.request_stop();
      }
    }
  };
  auto on_progress = [](const std::string& line) {
    std::fprintf(stderr, "  %s\n", Redact(line).c_str());
  };
  // --deadline: the whole run's time limit, shared by every recipe of a matrix.
  std::jthread deadline_watch;
  if (c.deadline_at) {
    deadline_watch = std::jthread([&, at = *c.deadline_at](std::stop_token done) {
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock<std::mutex> lock(mu);
      if (!cv.wait_until(lock, done, at, [] { return false; }) && !done.stop_requested()) {
        std::lock_guard<std::mutex> guard(stop_mu);
        deadline_hit = true;
        std::fprintf(stderr,
                     "servebench: the run's deadline (--deadline %s) passed: stopping, "
                     "writing what was measured\n",
                     c.deadline.c_str());
        stop.request_stop();
      }
    });
  }
  const std::int64_t t0_ns = ToNanos(std::chrono::steady_clock::now());
  perf::Session session(*t.client, {t.model, t.info.kind, t.info.max_model_len}, on_sample,
                        on_progress, stop.get_token(), t0_ns);
  suite::SuiteRunner runner(*t.client, {t.model, t.info.kind, t.info.max_model_len},
                            run_options.value(), session, on_sample, on_progress, stop.get_token(),
                            t0_ns);
  if (t.sim && !suites.empty()) {
    results["demo"] = DemoDescription(suites, run_options->timeout_by_test);
  }

  json extra_warnings = json::array();
  std::string stop_reason;
  auto write_results = [&](const char* status) -> Result<void> {
    results["status"] = status;
    results["stop_reason"] = stop_reason.empty() ? json(nullptr) : json(stop_reason);
    if (server) {
      results["server_process"] = server->Describe(rd.path());
    }
    results["summary"] = MergedSummary(session, runner);
    if (!suites.empty()) {
      results["tests"] = runner.tests();
      results["suite"] = runner.SuiteJson();
      for (const auto& [key, value] : runner.perf_results()) {
        results["perf"][key] = value;
      }
    }
    json warnings = session.warnings();
    for (const auto& w : runner.warnings()) {
      warnings.push_back(w);
    }
    for (const auto& w : extra_warnings) {
      warnings.push_back(w);
    }
    // Failed requests of the speed profiles (a suite's failures are in its test tables).
    const json perf_sum = session.Summary();
    if (perf_sum.value("failed_requests", 0) > 0) {
      warnings.push_back(
          fmt::format("{} of {} measured speed-profile requests failed: see the Errors section "
                      "(their figures are left out, never counted as zero).",
                      perf_sum.value("failed_requests", 0), perf_sum.value("requests", 0)));
    }
    results["warnings"] = warnings;
    results["spec_decode"] = session.SpecDecode();
    if (std::string(status) != "running") {
      results["finished_at"] = UtcTimestamp();
    }
    return rd.WriteResults(results);
  };
  if (auto ok = write_results("running"); !ok) {
    return Fail(ok.error());
  }
  for (const suite::Suite& s : suites) {
    if (stop.stop_requested() || session.Halted()) {
      break;
    }
    std::fprintf(stderr, "suite %s (%zu tests):\n", s.name.c_str(), s.tests.size());
    runner.Run(s);
    if (auto ok = write_results("running"); !ok) {
      return Fail(ok.error());
    }
  }
  for (const auto& name : c.profiles) {
    if (stop.stop_requested()) {
      break;
    }
    std::fprintf(stderr, "%s:\n", name.c_str());
    results["perf"][perf::ProfileKey(name)] = session.Run(name, c.profile);
    if (auto ok = write_results("running"); !ok) {
      return Fail(ok.error());
    }
  }
  deadline_watch = std::jthread();  // joined: no stop from it after this point
  if (server) {
    const launch::StopReport end = server->Stop();
    std::fprintf(stderr, "server '%s' stopped: %s\n", c.recipe->name.c_str(),
                 launch::DescribeEnd(end).c_str());
    if (end.exited_before_stop) {
      extra_warnings.push_back(fmt::format("The server {} before the run ended; see server.log.",
                                           launch::DescribeEnd(end)));
    }
  }
  if (!c.roofline.model_config.empty()) {
    std::optional<double> measured;
    const json& d = results["perf"].value("decode", json::object());
    if (d.contains("decode_tok_s") && d["decode_tok_s"].contains("median")) {
      measured = d["decode_tok_s"]["median"].get<double>();
    }
    if (auto roof = roofline::RooflineResultsJson(c.roofline, measured)) {
      results["roofline"] = roof.value();
    }
  }
  // The run's end: the first cause that applies names the status, the reason and the exit code.
  const char* status = "complete";
  int code = kExitOk;
  {
    std::lock_guard<std::mutex> lock(stop_mu);
    const json summary = MergedSummary(session, runner);
    const long long requests = summary.value("requests", 0LL);
    const long long failed = summary.value("failed_requests", 0LL);
    if (!io_error.empty()) {
      status = "failed";
      stop_reason = io_error;
      code = kExitSetup;
    } else if (deadline_hit) {
      status = "interrupted";
      stop_reason = fmt::format("the run's deadline (--deadline {}) passed", c.deadline);
      code = kExitSetup;
    } else if (stop.stop_requested()) {
      status = "interrupted";
      stop_reason = "stopped by a signal (Ctrl-C or SIGTERM)";
      code = kExitInterrupted;
    } else if (session.server_gone() || runner.server_gone()) {
      status = "failed";
      stop_reason =
          "the server stopped answering (connections refused); the rest of the run was not sent";
      code = kExitSetup;
    } else if (requests > 0 && failed == requests) {
      status = "failed";
      stop_reason = fmt::format("every request failed ({} of {})", failed, requests);
      code = kExitSetup;
    }
  }
  if (auto ok = write_results(status); !ok) {
    return Fail(ok.error());
  }
  std::string markdown = report::RenderMarkdown(results);
  if (results.contains("roofline")) {
    markdown += "\n" + roofline::RenderRooflineMarkdown(results);
  }
  if (auto ok = rd.WriteText("report.md", markdown); !ok) {
    return Fail(ok.error());
  }
  std::printf("%s", Redact(report::RenderConsoleSummary(results)).c_str());
  if (results.contains("roofline")) {
    std::printf("%s", roofline::RenderRooflineConsole(results).c_str());
  }
  std::printf("results: %s/ (report.md, results.json, samples.jsonl)\n", rd.path().c_str());
  if (code != kExitOk) {
    return code;
  }
  return CheckGates(c.suite, results["summary"]);
}

void AddTargetOptions(CLI::App* cmd, TargetOptions& t) {
  cmd->add_option("--endpoint", t.endpoint,
                  "OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (default: the "
                  "built-in simulator)")
      ->check([](const std::string& v) {
        return v.empty() ? std::string("the endpoint URL must not be empty") : std::string();
      });
  cmd->add_option("--model", t.model, "Model id (default: the only/first served model)");
  cmd->add_option("--api-key-env", t.api_key_env,
                  "Environment variable holding the API key (default: OPENAI_API_KEY if set)");
  cmd->add_option("--api-key-file", t.api_key_file, "File holding the API key");
  cmd->add_option("--connect-timeout-s", t.connect_timeout_s, "Connect time limit (seconds, > 0)")
      ->capture_default_str();
  cmd->add_option("--first-byte-timeout-s", t.first_byte_timeout_s,
                  "Limit from send to the first response byte (seconds, > 0)")
      ->capture_default_str();
  cmd->add_option("--idle-timeout-s", t.idle_timeout_s,
                  "Longest silence allowed within a response (seconds, > 0)")
      ->capture_default_str();
}

void AddServeOptions(CLI::App* cmd, SpeedCommand& c) {
  cmd->add_option("--serve", c.serve,
                  "Start this server command (run by /bin/sh; {port} is replaced by a free "
                  "port), wait until it is ready, measure, then stop it (docs/launch.md)");
  cmd->add_option("--recipe", c.recipe_file,
                  "Like --serve, from a recipe file (command, env, port, readiness, timeouts)");
  cmd->add_option("--serve-ready-timeout-s", c.serve_ready_timeout_s,
                  "--serve: how long the server may take to become ready")
      ->capture_default_str();
}

void AddSpeedOptions(CLI::App* cmd, SpeedCommand& c) {
  AddTargetOptions(cmd, c.target);
  AddRooflineInputs(cmd, c.roofline, RooflineFlags::kSpeedCommand);
  cmd->add_option("--out", c.out, "Run directory (default: runs/<UTC time>-<model>)");
  cmd->add_flag("--overwrite", c.overwrite, "Replace the results in an existing run directory");
  cmd->add_option("--tokens", c.profile.tokens,
                  "Forced output tokens per request (decode, "
                  "concurrency)")
      ->capture_default_str();
  cmd->add_option("--runs", c.profile.runs, "Repetitions (decode, ttft); the median is quoted")
      ->capture_default_str();
  cmd->add_option("--levels", c.profile.levels, "Concurrency levels")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--lengths", c.profile.lengths, "Output lengths of the max-tokens profile")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--length-runs", c.profile.length_runs, "Repetitions per max-tokens length")
      ->capture_default_str();
  cmd->add_option("--sizes", c.profile.sizes,
                  "Prompt sizes of the context profile, in the server's tokens")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--depth", c.profile.depth,
                  "Where the context profile's question sits in the filler (0 = start, 1 = end)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_flag("--context-cached", c.profile.context_cached,
                "Context profile: send each prompt twice and report the prefix-cached TTFT too");
  cmd->add_option("--warmup", c.profile.warmup, "Warm-up requests, excluded from results")
      ->capture_default_str();
  cmd->add_option("--thinking", c.thinking,
                  "Send chat_template_kwargs.enable_thinking (on|off; default: not sent; for "
                  "suites it replaces every test's own setting)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--temperature", c.temperature, "Sampling temperature (default: not sent)");
  cmd->add_option("--request-timeout-s", c.target.request_timeout_s,
                  "Whole-request time limit, every profile and suite (0 = none; the connect, "
                  "first-byte and idle limits still hold)")
      ->capture_default_str();
  cmd->add_option("--deadline", c.deadline,
                  "Time limit of the whole run, e.g. 90s, 45m, 2h (a bare number is seconds): "
                  "then it stops sending and writes what was measured (status interrupted, "
                  "exit 3)");
  // The rate profile (open-loop load, docs/load.md); these affect nothing else.
  perf::RateOptions& rate = c.profile.rate;
  cmd->add_option("--rates", rate.rates, "rate: arrival rates in req/s, one open-loop run each")
      ->delimiter(',');
  cmd->add_option_function<std::string>(
         "--arrival",
         [&rate](const std::string& name) { rate.arrival = *perf::ParseArrival(name); },
         "rate: arrival process: poisson (default), constant, gamma")
      ->check(CLI::IsMember({"constant", "poisson", "gamma"}));
  cmd->add_option("--burstiness", rate.burstiness,
                  "rate: gamma shape (--arrival gamma): gaps' CV = 1/sqrt(X); < 1 burstier")
      ->capture_default_str();
  cmd->add_option("--requests", rate.requests, "rate: requests per rate")->capture_default_str();
  cmd->add_option("--duration-s", rate.duration_s,
                  "rate: arrivals during this many seconds per rate instead of --requests");
  cmd->add_option("--seed", rate.seed, "rate: seed of the arrival schedule")->capture_default_str();
  cmd->add_option("--rate-tokens", rate.tokens, "rate: forced output tokens per request")
      ->capture_default_str();
  cmd->add_option_function<std::vector<std::string>>(
         "--slo",
         [&rate](const std::vector<std::string>& items) {
           auto slo = perf::ParseSlo(items);
           if (!slo) {
             throw CLI::ValidationError(slo.error().message);
           }
           rate.slo = slo.value();
         },
         "rate: objectives from the scheduled send, e.g. ttft_ms=500,tpot_ms=50,e2e_ms=5000")
      ->delimiter(',');
  cmd->add_option("--slo-fraction", rate.slo_fraction,
                  "rate: share of good requests a rate needs to meet the SLOs")
      ->capture_default_str();
  cmd->add_option_function<std::string>(
      "--search-rate",
      [&rate](const std::string& text) {
        auto range = perf::ParseRateRange(text);
        if (!range) {
          throw CLI::ValidationError(range.error().message);
        }
        rate.search = range.value();
      },
      "rate: find the highest rate in MIN:MAX (req/s) that meets the SLOs");
  cmd->add_option("--search-steps", rate.search_steps, "rate: bisection steps of --search-rate")
      ->capture_default_str();
  cmd->add_option("--late-ms", rate.late_ms,
                  "rate: a send this far behind its schedule counts as late")
      ->capture_default_str();
  cmd->add_option("--max-concurrency", rate.max_concurrency,
                  "rate: at most N requests in flight; later arrivals wait in the client (the "
                  "wait counts from the scheduled time); 0 = no cap")
      ->capture_default_str();
}

// ---------------------------------------------------------------------------------------------
// launch: a matrix of recipes, each started, measured with the same options and stopped, then
// one comparison.

struct LaunchCommand {
  SpeedCommand base;
  std::string matrix;
  std::vector<std::string> only;
  bool keep_going = false;
};

int RunLaunch(LaunchCommand& l, const std::string& command_line, std::stop_source& stop) {
  auto recipes = launch::LoadRecipes(l.matrix);
  if (!recipes) {
    return Fail(recipes.error());
  }
  std::vector<launch::Recipe> chosen;
  for (const std::string& name : l.only) {
    if (std::none_of(recipes->begin(), recipes->end(),
                     [&](const launch::Recipe& r) { return r.name == name; })) {
      std::vector<std::string> names;
      for (const auto& r : *recipes) {
        names.push_back(r.name);
      }
      return Fail(
          MakeError(ErrorCode::kUsage, fmt::format("--only {}: no such recipe in {} (it has {})",
                                                   name, l.matrix, fmt::join(names, ", "))));
    }
  }
  for (const auto& r : *recipes) {
    if (l.only.empty() || std::find(l.only.begin(), l.only.end(), r.name) != l.only.end()) {
      chosen.push_back(r);
    }
  }
  if (!l.base.target.endpoint.empty() || !l.base.serve.empty() || !l.base.recipe_file.empty()) {
    return Fail(MakeError(ErrorCode::kUsage,
                          "launch starts each recipe's server: --endpoint, --serve and --recipe "
                          "do not apply"));
  }
  const std::filesystem::path base =
      l.base.out.empty()
          ? std::filesystem::path("runs") /
                report::DefaultRunDirName(UtcTimestampCompact(),
                                          std::filesystem::path(l.matrix).stem().string())
          : std::filesystem::path(l.base.out);
  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  if (ec) {
    return Fail(MakeError(ErrorCode::kIo,
                          fmt::format("cannot create {}: {}", base.string(), ec.message())));
  }
  int code = kExitOk;
  std::vector<std::string> done_labels;
  std::vector<std::filesystem::path> done_dirs;
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    if (stop.stop_requested()) {
      lines.push_back(fmt::format("{}: not run (stopped)", chosen[i].name));
      continue;
    }
    std::fprintf(stderr, "\n== recipe '%s' (%zu/%zu)\n", chosen[i].name.c_str(), i + 1,
                 chosen.size());
    SpeedCommand c = l.base;
    c.recipe = chosen[i];
    c.out = (base / chosen[i].name).string();
    const int rc = RunSpeed(c, command_line, stop);
    const bool measured = std::filesystem::exists(base / chosen[i].name / "results.json");
    if (measured) {
      done_labels.push_back(chosen[i].name);
      done_dirs.push_back(base / chosen[i].name);
    }
    lines.push_back(fmt::format("{}: {}", chosen[i].name,
                                rc == kExitOk            ? "done"
                                : rc == kExitInterrupted ? "interrupted"
                                : rc == kExitGate        ? "done, a gate failed"
                                                         : "failed (see above)"));
    if (rc == kExitInterrupted) {
      code = kExitInterrupted;
      continue;
    }
    if (rc != kExitOk && code == kExitOk) {
      code = rc;
    }
    if (rc != kExitOk && rc != kExitGate && !l.keep_going) {
      for (std::size_t k = i + 1; k < chosen.size(); ++k) {
        lines.push_back(
            fmt::format("{}: not run (an earlier recipe failed; --keep-going runs "
                        "the rest)",
                        chosen[k].name));
      }
      break;
    }
  }
  std::printf("\nmatrix %s:\n", l.matrix.c_str());
  for (const auto& line : lines) {
    std::printf("  %s\n", line.c_str());
  }
  if (done_dirs.size() >= 2) {
    std::vector<json> docs;
    for (const auto& d : done_dirs) {
      auto doc = report::LoadResults(d);
      if (!doc) {
        return Fail(doc.error());
      }
      docs.push_back(std::move(doc.value()));
    }
    for (auto [format, file] : {std::pair{report::Format::kMarkdown, "compare.md"},
                                {report::Format::kJson, "compare.json"}}) {
      auto text = report::Compare(docs, done_labels, format);
      if (!text) {
        return Fail(text.error());
      }
      std::ofstream f(base / file, std::ios::binary | std::ios::trunc);
      f << text.value();
      if (!f.flush()) {
        return Fail(
            MakeError(ErrorCode::kIo, fmt::format("cannot write {}", (base / file).string())));
      }
    }
    std::printf("comparison: %s\n", (base / "compare.md").c_str());
  } else {
    std::printf("no comparison: fewer than two recipes were measured\n");
  }
  return code;
}

// ---------------------------------------------------------------------------------------------
// compare

struct CompareCommand {
  std::vector<std::string> runs;
  std::vector<std::string> labels;
  std::string out;
  std::string format = "md";
};

int RunCompare(const CompareCommand& c) {
  if (c.runs.size() < 2) {
    return Fail(MakeError(ErrorCode::kUsage, "compare needs at least two run directories"));
  }
  std::vector<json> docs;
  for (const auto& r : c.runs) {
    auto doc = report::LoadResults(r);
    if (!doc) {
      return Fail(doc.error());
    }
    docs.push_back(std::move(doc.value()));
  }
  auto format = report::ParseFormat(c.format);
  if (!format) {
    return Fail(format.error());
  }
  std::vector<std::string> labels = c.labels;
  if (!labels.empty() && labels.size() != c.runs.size()) {
    return Fail(MakeError(ErrorCode::kUsage, "--label must be given once per run, or not at all"));
  }
  if (labels.empty()) {
    labels = report::DefaultLabels(docs, {c.runs.begin(), c.runs.end()});
  }
  auto text = report::Compare(docs, labels, format.value());
  if (!text) {
    return Fail(text.error());
  }
  if (c.out.empty() || c.out == "-") {
    std::fwrite(text->data(), 1, text->size(), stdout);
    return kExitOk;
  }
  std::ofstream f(c.out, std::ios::binary | std::ios::trunc);
  f << text.value();
  if (!f.flush()) {
    return Fail(MakeError(ErrorCode::kIo, fmt::format("cannot write '{}'", c.out)));
  }
  std::fprintf(stderr, "wrote %s\n", c.out.c_str());
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// sim

struct SimCommand {
  sim::SimOptions options;
  std::vector<double> spec_accept;
  std::vector<std::string> reject;
  std::vector<std::string> fault_kinds;
  std::vector<std::string> answers;  // suites whose reference answers it gives
  std::vector<std::string> answer_loop, answer_bad, answer_fault, answer_reasoning;
  bool demo = false;
};

int RunSim(SimCommand& c) {
  c.options.spec_accept = c.spec_accept;
  c.options.reject = c.reject;
  c.options.fault_kinds = c.fault_kinds;
  if (!c.answers.empty()) {
    auto suites = LoadSuites(c.answers);
    if (!suites) {
      return Fail(suites.error());
    }
    AnswerTweaks tweaks = c.demo ? DemoTweaks() : AnswerTweaks{};
    if (c.demo && c.reject.empty()) {
      c.options.reject = {"audio"};
    }
    tweaks.loop.insert(tweaks.loop.end(), c.answer_loop.begin(), c.answer_loop.end());
    tweaks.bad.insert(tweaks.bad.end(), c.answer_bad.begin(), c.answer_bad.end());
    auto faults = ParseAssignments(c.answer_fault, "--answer-fault");
    auto reasoning = ParseAssignments(c.answer_reasoning, "--answer-reasoning");
    if (!faults) {
      return Fail(faults.error());
    }
    if (!reasoning) {
      return Fail(reasoning.error());
    }
    for (const auto& [id, kind] : faults.value()) {
      tweaks.fault[id] = kind;
    }
    for (const auto& [id, n] : reasoning.value()) {
      try {
        tweaks.reasoning[id] = std::stoi(n);
      } catch (...) {
        return Fail(MakeError(ErrorCode::kUsage,
                              fmt::format("--answer-reasoning {}={}: not a number", id, n)));
      }
    }
    c.options.answers = SimAnswers(suites.value(), tweaks);
  } else if (c.demo || !c.answer_loop.empty() || !c.answer_bad.empty() || !c.answer_fault.empty() ||
             !c.answer_reasoning.empty()) {
    return Fail(MakeError(ErrorCode::kUsage,
                          "--demo and --answer-* need --answers SUITE (the suite to answer)"));
  }
  if (auto ok = sim::Validate(c.options); !ok) {
    return Fail(MakeError(ErrorCode::kUsage, ok.error().message));
  }
  auto server = sim::SimServer::Start(c.options);
  if (!server) {
    return Fail(server.error());
  }
  std::printf("listening on %s\n", server.value()->base_url().c_str());
  std::fflush(stdout);
  WaitForStopSignal();
  server.value()->Stop();
  return kExitOk;
}

void AddSimOptions(CLI::App* cmd, SimCommand& c) {
  auto& o = c.options;
  cmd->add_option("--host", o.host, "Address to bind")->capture_default_str();
  cmd->add_option("--port", o.port, "Port (0 = any free port)")->capture_default_str();
  cmd->add_option("--model", o.model, "Model id it serves")->capture_default_str();
  cmd->add_option("--ttft-ms", o.ttft_ms, "Time to first token at an empty prompt")
      ->capture_default_str();
  cmd->add_option("--prefill-us-per-token", o.prefill_us_per_token,
                  "TTFT added per prompt token (µs)")
      ->capture_default_str();
  cmd->add_option("--itl-ms", o.itl_ms, "Decode step time of one stream")->capture_default_str();
  cmd->add_option("--jitter-ms", o.jitter_ms, "Uniform ± jitter per decode step")
      ->capture_default_str();
  cmd->add_option("--slowdown", o.concurrency_slowdown,
                  "Step time grows by this fraction per extra running stream")
      ->capture_default_str();
  cmd->add_option("--max-batch", o.max_batch, "Streams decoded at once; the rest queue")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of every random choice")->capture_default_str();
  cmd->add_option("--output-tokens", o.default_output_tokens,
                  "Natural answer length when the request does not force one")
      ->capture_default_str();
  cmd->add_option("--thinking-tokens", o.thinking_tokens,
                  "Reasoning tokens before the answer when thinking is on")
      ->capture_default_str();
  cmd->add_option("--spec-tokens", o.spec_tokens, "Speculative draft tokens per step (0 = off)")
      ->capture_default_str();
  cmd->add_option("--spec-accept", c.spec_accept,
                  "Per-position acceptance rates, e.g. 0.86,0.67,0.55")
      ->delimiter(',');
  cmd->add_option("--reject", c.reject, "Modalities refused with HTTP 400: image,video,audio")
      ->delimiter(',')
      ->check(CLI::IsMember({"image", "video", "audio"}));
  cmd->add_option("--fault-rate", o.fault_rate, "Probability of a fault per chat request")
      ->capture_default_str();
  cmd->add_option("--fault-kinds", c.fault_kinds,
                  "Faults to draw from: reset,stall,malformed,500,429")
      ->delimiter(',')
      ->check(CLI::IsMember({"reset", "stall", "malformed", "500", "429"}));
  cmd->add_option("--stall-ms", o.stall_ms, "How long the stall fault stops the stream")
      ->capture_default_str();
  cmd->add_option("--max-model-len", o.max_model_len, "Context window in tokens")
      ->capture_default_str();
  cmd->add_option("--answers", c.answers,
                  "Answer the tests of these suites (names or files) with their reference "
                  "answers, matched by prompt text")
      ->delimiter(',');
  cmd->add_option("--answer-loop", c.answer_loop, "With --answers: these test ids loop")
      ->delimiter(',');
  cmd->add_option("--answer-bad", c.answer_bad,
                  "With --answers: these test ids get their first bad answer")
      ->delimiter(',');
  cmd->add_option("--answer-fault", c.answer_fault,
                  "With --answers: TEST_ID=KIND (reset, stall, malformed, 500, 429)")
      ->delimiter(',');
  cmd->add_option("--answer-reasoning", c.answer_reasoning,
                  "With --answers: TEST_ID=N reasoning tokens before the answer (thinking on)")
      ->delimiter(',');
  cmd->add_flag("--demo", c.demo,
                "With --answers: the demo scenario of `servebench run` (audio refused, a loop, "
                "an exhausted budget, a wrong answer, a 500, a stall)");
}

}  // namespace

// The generated media's disk cache: $SERVEBENCH_CACHE_DIR, else $XDG_CACHE_HOME/servebench/media,
// else ~/.cache/servebench/media; SERVEBENCH_CACHE_DIR=off: none. A cache that cannot be written
// is ignored (docs/media.md).
void SetMediaCache() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : std::string();
  };
  std::filesystem::path dir = env("SERVEBENCH_CACHE_DIR");
  if (dir == "off") {
    media::SetCacheDir("");
    return;
  }
  if (dir.empty() && !env("XDG_CACHE_HOME").empty()) {
    dir = std::filesystem::path(env("XDG_CACHE_HOME")) / "servebench" / "media";
  }
  if (dir.empty() && !env("HOME").empty()) {
    dir = std::filesystem::path(env("HOME")) / ".cache" / "servebench" / "media";
  }
  media::SetCacheDir(dir);
}

int Main(int argc, char** argv) {
  CLI::App app{
      "servebench: does a model work on this server, and how fast is it?\n"
      "Speed profiles against any OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama),\n"
      "or against the built-in simulator when no --endpoint is given.",
      "servebench"};
  app.set_version_flag("--version", std::string("servebench ") + kVersion);
  app.require_subcommand(1);

  SpeedCommand run_cmd;
  run_cmd.profiles = perf::ProfileNames();
  CLI::App* run = app.add_subcommand("run",
                                     "Run the quality suites and speed profiles, write a "
                                     "run directory and print the summary");
  run_cmd.is_run = true;
  AddSpeedOptions(run, run_cmd);
  AddServeOptions(run, run_cmd);
  AddSuiteOptions(run, run_cmd.suite);
  CLI::Option* profiles_opt =
      run->add_option("--profiles", run_cmd.profiles,
                      "Speed profiles to run (default: decode, concurrency, max-tokens, ttft, "
                      "context when no --suite is given; none with --suite)")
          ->delimiter(',');

  SpeedCommand perf_cmd;
  CLI::App* perf = app.add_subcommand("perf",
                                      "Run speed profiles: decode, concurrency, "
                                      "max-tokens, ttft, context, rate");
  AddSpeedOptions(perf, perf_cmd);
  AddServeOptions(perf, perf_cmd);
  perf->add_option("--profile", perf_cmd.profiles,
                   "Profile(s): decode, concurrency, max-tokens, ttft, context, rate (repeat or "
                   "comma-separate)")
      ->delimiter(',')
      ->required();

  LaunchCommand launch_cmd;
  launch_cmd.base.is_run = true;
  CLI::App* launch_app = app.add_subcommand(
      "launch",
      "Run a matrix of server recipes one after another (start, measure with the same "
      "options, stop), then compare them");
  launch_app->add_option("matrix", launch_cmd.matrix, "Recipe file (docs/launch.md)")->required();
  launch_app->add_option("--only", launch_cmd.only, "Run only these recipes (names)")
      ->delimiter(',');
  launch_app->add_flag("--keep-going", launch_cmd.keep_going,
                       "When a recipe fails to start, go on with the next one");
  AddSpeedOptions(launch_app, launch_cmd.base);
  AddSuiteOptions(launch_app, launch_cmd.base.suite);
  CLI::Option* launch_profiles_opt =
      launch_app
          ->add_option("--profiles", launch_cmd.base.profiles,
                       "Speed profiles to run for every recipe (as for `run`)")
          ->delimiter(',');
  launch_cmd.base.profiles = perf::ProfileNames();

  CompareCommand cmp_cmd;
  CLI::App* cmp =
      app.add_subcommand("compare", "Head-to-head table of two or more run directories");
  cmp->add_option("runs", cmp_cmd.runs, "Run directories (or results.json files)")->required();
  cmp->add_option("--out", cmp_cmd.out, "Write to this file instead of stdout");
  cmp->add_option("--format", cmp_cmd.format, "md, html or json")
      ->check(CLI::IsMember({"md", "html", "json"}))
      ->capture_default_str();
  cmp->add_option("--label", cmp_cmd.labels, "Column label per run (repeat in order)");

  roofline::RooflineArgs roof_cmd;
  CLI::App* roof = AddRooflineCommand(app, roof_cmd);

  SuitesCommand suites_list;
  CLI::App* suites_cmd = AddSuitesCommand(app, suites_list);
  AssetsCommand assets;
  CLI::App* assets_cmd = AddAssetsCommand(app, assets);

  SimCommand sim_cmd;
  CLI::App* simc = app.add_subcommand(
      "sim", "Serve the simulator: an OpenAI-compatible server with known ground truth");
  AddSimOptions(simc, sim_cmd);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }

  if (auto ok = CheckListArgs(argc, argv); !ok) {
    return Fail(ok.error());
  }
  for (SpeedCommand* c : {&run_cmd, &perf_cmd, &launch_cmd.base}) {
    if (!c->deadline.empty()) {
      auto seconds = ParseDuration("--deadline", c->deadline);
      if (!seconds) {
        return Fail(seconds.error());
      }
      c->deadline_at = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(*seconds));
    }
  }
  std::stop_source stop;
  std::string command_line = CommandLine(argc, argv);
  SetMediaCache();
  if (run->parsed()) {
    run_cmd.profiles_given = profiles_opt->count() > 0;
    WatchStopSignals(stop);
    return RunSpeed(run_cmd, command_line, stop);
  }
  if (launch_app->parsed()) {
    launch_cmd.base.profiles_given = launch_profiles_opt->count() > 0;
    WatchStopSignals(stop);
    return RunLaunch(launch_cmd, command_line, stop);
  }
  if (suites_cmd->parsed()) {
    return RunSuitesCommand(suites_list);
  }
  if (assets_cmd->parsed()) {
    return RunAssetsCommand(assets);
  }
  if (perf->parsed()) {
    WatchStopSignals(stop);
    return RunSpeed(perf_cmd, command_line, stop);
  }
  if (cmp->parsed()) {
    return RunCompare(cmp_cmd);
  }
  if (roof->parsed()) {
    return RunRoofline(roof_cmd);
  }
  return RunSim(sim_cmd);
}

}  // namespace sb::cli
