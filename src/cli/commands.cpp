#include "cli/commands.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/compare_command.h"
#include "cli/completion.h"
#include "cli/doctor_command.h"
#include "cli/export_command.h"
#include "cli/merge_command.h"
#include "cli/resume_args.h"
#include "cli/roofline_command.h"
#include "cli/signals.h"
#include "cli/sim_command.h"
#include "cli/store_command.h"
#include "cli/suggest.h"
#include "cli/suite_command.h"
#include "core/profile_table.h"
#include "core/result.h"
#include "media/media.h"
#include "perf/profiles.h"
#include "run/plan.h"
#include "run/run.h"
#include "run/suites.h"
#include "sim/sim_server.h"

namespace sb::cli {

namespace {

using nlohmann::json;
using run::Fail;

// A list flag given as "1,,2" or "1,2," (CLI11 drops the empty item silently): a usage error.
// The list options of the profile table (--levels, --rates, --slo ...) are such flags too.
Result<void> CheckListArgs(int argc, char** argv) {
  static const std::vector<std::string> kListFlags = {"--profile", "--profiles", "--suite",
                                                      "--tests",   "--only",     "--rerun-empty"};
  auto is_list = [](const std::string& flag) {
    if (std::find(kListFlags.begin(), kListFlags.end(), flag) != kListFlags.end()) {
      return true;
    }
    const OptionSpec* o = FindOption(flag).second;
    return o != nullptr && (o->kind == OptionSpec::kNumbers || o->kind == OptionSpec::kTexts);
  };
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
    if (!is_list(flag)) {
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

void AddTargetOptions(CLI::App* cmd, run::TargetOptions& t) {
  cmd->add_option("--endpoint", t.endpoint,
                  "OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (default: the "
                  "built-in simulator)")
      ->check([](const std::string& v) {
        return v.empty() ? std::string("the endpoint URL must not be empty") : std::string();
      });
  cmd->add_option("--model", t.model, "Model id (default: the only/first served model)");
  cmd->add_option("--api-key-env", t.api_key_env,
                  "Environment variable holding the API key (default: OPENAI_API_KEY if set)");
  cmd->add_option("--api-key-file", t.api_key_file,
                  "File holding the API key (at most 64 KiB; one trailing newline allowed, no "
                  "other control character)");
  cmd->add_option("--connect-timeout-s", t.connect_timeout_s, "Connect time limit (seconds, > 0)")
      ->capture_default_str();
  cmd->add_option("--first-byte-timeout-s", t.first_byte_timeout_s,
                  "Limit from send to the first response byte (seconds, > 0)")
      ->capture_default_str();
  cmd->add_option("--idle-timeout-s", t.idle_timeout_s,
                  "Longest silence allowed within a response (seconds, > 0)")
      ->capture_default_str();
  cmd->add_option("--retries", t.retries,
                  "Retry a request answered 429 or 503 (honouring Retry-After) or refused/reset "
                  "before its first byte, up to N times; counted, never inside a latency")
      ->capture_default_str();
  cmd->add_option("--ca-cert", t.ca_cert, "HTTPS: trust this CA certificate (PEM file)");
  cmd->add_flag("--insecure,-k", t.insecure, "HTTPS: do not check the server's certificate");
  cmd->add_option("--http-transport", t.http_transport,
                  "What sends the requests: native (servebench's own HTTP/1.1, https through "
                  "OpenSSL), curl (libcurl), or auto: $SERVEBENCH_HTTP_TRANSPORT if set, else "
                  "native. A user:password in the URL and proxies always use libcurl "
                  "(docs/performance.md)")
      ->check(CLI::IsMember({"auto", "native", "curl"}))
      ->capture_default_str();
}

void AddServeOptions(CLI::App* cmd, run::Plan& c) {
  cmd->add_option("--serve", c.serve,
                  "Start this server command (run by /bin/sh; {port} is replaced by a free "
                  "port), wait until it is ready, measure, then stop it (docs/launch.md)");
  cmd->add_option("--recipe", c.recipe_file,
                  "Like --serve, from a recipe file (command, env, port, readiness, timeouts)");
  cmd->add_option("--serve-ready-timeout-s", c.serve_ready_timeout_s,
                  "--serve: how long the server may take to become ready (seconds, > 0)")
      ->capture_default_str();
}

// The load flags that every profile reads beside its table options (docs/load.md,
// docs/workloads.md): the seed, the lateness bound, --allow-cache.
void AddLoadOptions(CLI::App* cmd, perf::ProfileOptions& p) {
  cmd->add_option("--seed", p.rate.seed,
                  "rate: seed of the arrival schedule; --input-tokens / --output-tokens "
                  "distributions: seed of the lengths")
      ->capture_default_str();
  cmd->add_option("--late-ms", p.rate.late_ms,
                  "rate: a send this far behind its schedule counts as late; every profile: a "
                  "row whose events waited longer (p99) in the client is flagged client-bound")
      ->capture_default_str();
  cmd->add_flag("--allow-cache", p.allow_cache,
                "Leave out the unique nonce at the start of each prompt, so a server's prefix "
                "cache may serve repeated prompt text (decode, concurrency, rate)");
}

// The SLO gate (run/slo_gate.h, docs/load.md "The SLO gate").
void AddSloGateOptions(CLI::App* cmd, run::SloGateArgs& g) {
  cmd->add_flag("--fail-on-slo", g.fail_on_slo,
                "Exit 1 (after writing every result) when --slo is not met: a concurrency "
                "level or rate point meets it when --slo-fraction of its requests are good; "
                "checked at every level and rate measured unless --slo-at names one");
  cmd->add_option_function<std::string>(
      "--slo-at",
      [&g](const std::string& text) {
        auto at = run::ParseSloAt(text);
        if (!at) {
          throw CLI::ValidationError(at.error().message);
        }
        g.at = at.value();
        g.at_text = text;
      },
      "--fail-on-slo: check only here: concurrency=N (a --levels level) or rate=R (a --rates "
      "rate, req/s)");
}

// The resource sampler (docs/metrics.md "Resources").
void AddResourceOptions(CLI::App* cmd, run::ResourceArgs& r) {
  cmd->add_option("--sample-period-ms", r.period_ms,
                  "Resource sampling period: memory, power, KV cache beside every measurement "
                  "window (10..60000 ms)")
      ->capture_default_str();
  cmd->add_option("--power-cmd", r.power_cmd,
                  "A command (run by /bin/sh each sample) that prints the machine's power in "
                  "watts, for machines without NVML");
  cmd->add_option("--nvml-lib", r.nvml_lib,
                  "Path of the NVML library to dlopen (default: $SERVEBENCH_NVML_LIB, else "
                  "libnvidia-ml.so.1)");
}

// CLI11 writes "--levels: " before a check's message: the message without its own flag.
std::string WithoutFlag(const OptionSpec& o, std::string why) {
  const std::string own = std::string(o.flag) + " ";
  return why.starts_with(own) ? why.substr(own.size()) : why;
}

// The options the profile table declares (OptionSpec), each flag once (two profiles may list
// one): checked here, read by their profile from ProfileOptions::args.
void AddTableOptions(CLI::App* cmd, perf::ProfileOptions& profile) {
  std::vector<std::string_view> added;
  for (const ProfileSpec& p : Profiles()) {
    for (const OptionSpec& o : p.options) {
      if (std::find(added.begin(), added.end(), o.flag) != added.end()) {
        continue;
      }
      added.push_back(o.flag);
      const std::string flag(o.flag);
      const std::string help(o.help);
      CLI::Option* opt = nullptr;
      switch (o.kind) {
        case OptionSpec::kFlag:
          cmd->add_flag_function(
              flag, [&profile, f = o.flag](std::int64_t) { profile.args.Set(f, "1"); }, help);
          continue;
        case OptionSpec::kNumbers:
        case OptionSpec::kTexts:
          // A list: "1,2,4", "1 2 4" or the flag given again, items joined by ','.
          opt = cmd->add_option_function<std::vector<std::string>>(
                       flag,
                       [&profile, f = o.flag](const std::vector<std::string>& items) {
                         profile.args.Set(f, fmt::format("{}", fmt::join(items, ",")));
                       },
                       help)
                    ->delimiter(',');
          break;
        case OptionSpec::kNumber:
        case OptionSpec::kText:
        case OptionSpec::kChoice:
          opt = cmd->add_option_function<std::string>(
              flag, [&profile, f = o.flag](const std::string& v) { profile.args.Set(f, v); }, help);
          break;
      }
      if (o.kind == OptionSpec::kChoice) {
        std::vector<std::string> choices;
        for (std::string_view rest = o.choices; !rest.empty();) {
          const auto comma = rest.find(',');
          choices.emplace_back(rest.substr(0, comma));
          rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
        }
        opt->check(CLI::IsMember(choices));  // its type name lists them for completion
      } else if (o.kind == OptionSpec::kNumber || o.kind == OptionSpec::kNumbers) {
        opt->type_name(std::string(o.integer ? "INT" : "FLOAT") +
                       (o.kind == OptionSpec::kNumbers ? ",..." : ""));
        // Each item of a list alone (CLI11 splits it first).
        opt->check([&o](const std::string& v) { return WithoutFlag(o, CheckOption(o, v)); }, "",
                   "");
      }
      if (!o.default_value.empty()) {
        opt->default_str(std::string(o.default_value));
      }
    }
  }
}

void AddSpeedOptions(CLI::App* cmd, run::Plan& c) {
  AddTargetOptions(cmd, c.target);
  AddResourceOptions(cmd, c.resources);
  AddRooflineInputs(cmd, c.roofline, RooflineFlags::kSpeedCommand);
  cmd->add_option("--out", c.out, "Run directory (default: runs/<UTC time>-<model>)");
  cmd->add_option("--resume", c.resume_dir,
                  "Continue the interrupted run in this directory with its recorded plan: "
                  "finished work is not sent again (docs/resume.md)");
  cmd->add_flag("--overwrite", c.overwrite, "Replace the results in an existing run directory");
  cmd->add_option("--progress", c.progress,
                  "Live progress on stderr: auto (a status line redrawn in place on a terminal, "
                  "else a plain line every 10 s), tty, plain, off")
      ->check(CLI::IsMember({"auto", "tty", "plain", "off"}))
      ->capture_default_str();
  AddTableOptions(cmd, c.profile);
  cmd->add_option("--warmup", c.profile.warmup, "Warm-up requests, excluded from results")
      ->capture_default_str();
  cmd->add_option("--thinking", c.thinking,
                  "Send chat_template_kwargs.enable_thinking (on|off; default: not sent; for "
                  "suites it replaces every test's own setting)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--temperature", c.temperature, "Sampling temperature (default: not sent)");
  cmd->add_option("--request-timeout-s", c.target.request_timeout_s,
                  "Whole-request time limit in seconds, every profile and suite test without "
                  "a timeout_s of its own, and their auxiliary requests (0 = none; the connect, "
                  "first-byte and idle limits still hold)")
      ->capture_default_str();
  cmd->add_option("--deadline", c.deadline,
                  "Time limit of the whole run, e.g. 90s, 45m, 2h (a bare number is seconds): "
                  "then it stops sending and writes what was measured (status interrupted, "
                  "exit 3)");
  AddLoadOptions(cmd, c.profile);
  AddSloGateOptions(cmd, c.slo_gate);
  AddRecordOptions(cmd, c.store);
}

// ---------------------------------------------------------------------------------------------
// The subcommands and their options, in the order `servebench --help` lists them.

CLI::App* AddRunCommand(CLI::App& app, run::Plan& c) {
  c.profiles = perf::DefaultProfileNames();
  CLI::App* cmd = app.add_subcommand("run",
                                     "Run the quality suites and speed profiles, write a "
                                     "run directory and print the summary");
  c.is_run = true;
  AddSpeedOptions(cmd, c);
  AddServeOptions(cmd, c);
  AddSuiteOptions(cmd, c.suite);
  cmd->add_option("--profiles", c.profiles,
                  fmt::format("Speed profiles to run (default: {} when no --suite is given; "
                              "none with --suite)",
                              fmt::join(perf::DefaultProfileNames(), ", ")))
      ->delimiter(',');
  return cmd;
}

CLI::App* AddPerfCommand(CLI::App& app, run::Plan& c) {
  CLI::App* cmd =
      app.add_subcommand("perf", fmt::format("Run speed profiles: {}", ProfileNameList()));
  AddSpeedOptions(cmd, c);
  AddServeOptions(cmd, c);
  cmd->add_option("--profile", c.profiles,
                  fmt::format("Profile(s): {} (repeat or comma-separate)", ProfileNameList()))
      ->delimiter(',')
      ->required();
  cmd->add_option("--io-threads", c.target.io_threads,
                  "Client I/O threads per batch of requests, each with its own connections "
                  "(up to 64); 0 = automatic: 1 below 512 concurrent streams, else one per 256 "
                  "streams, at most 16; 1 for an uncapped rate point. Timings share one clock "
                  "(docs/load.md)")
      ->capture_default_str();
  cmd->add_option("--shard", c.shard,
                  "rate: run shard I of N (0-based) of one load: 1/N of every rate and of "
                  "--requests, its own arrival seed, written to DIR/shard-I under --out; join "
                  "the shards with `servebench merge` (docs/scale-out.md). Without it, the rank "
                  "comes from mpirun (OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE) or srun "
                  "(SLURM_PROCID/SLURM_NTASKS) when they start more than one process");
  cmd->add_option("--shards", c.shards,
                  "rate: the load is split over N shards; this process's index comes from "
                  "JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or the MPI/Slurm rank");
  cmd->add_option("--start-at", c.start_at,
                  "Start the load at this wall-clock time (RFC 3339, e.g. 2026-05-01T12:00:00Z, "
                  "or unix seconds), so every shard starts together; an error when it passed "
                  "more than 2 s ago");
  return cmd;
}

CLI::App* AddLaunchCommand(CLI::App& app, run::MatrixPlan& l) {
  l.base.is_run = true;
  CLI::App* cmd = app.add_subcommand(
      "launch",
      "Run a matrix of server recipes one after another (start, measure with the same "
      "options, stop), then compare them");
  cmd->add_option("matrix", l.matrix, "Recipe file (docs/launch.md)")->required();
  cmd->add_option("--only", l.only, "Run only these recipes (names)")->delimiter(',');
  cmd->add_flag("--keep-going", l.keep_going,
                "When a recipe fails to start, go on with the next one");
  AddSpeedOptions(cmd, l.base);
  AddSuiteOptions(cmd, l.base.suite);
  cmd->add_option("--profiles", l.base.profiles,
                  "Speed profiles to run for every recipe (as for `run`)")
      ->delimiter(',');
  l.base.profiles = perf::DefaultProfileNames();
  return cmd;
}

// --deadline: the time point the run must end by, counted from now.
Result<void> SetDeadline(run::Plan& c) {
  if (c.deadline.empty()) {
    return {};
  }
  auto seconds = run::ParseDuration("--deadline", c.deadline);
  if (!seconds) {
    return seconds.error();
  }
  c.deadline_at = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(*seconds));
  return {};
}

// Parses the command line into the commands' options; the exit code when that ends the program
// (--help, --version, a parse error).
std::optional<int> Parse(CLI::App& app, int argc, char** argv) {
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
    if (std::string hint = SuggestFlag(app, e.what()); !hint.empty()) {
      std::fprintf(stderr, "%s\n", hint.c_str());
    }
    return kExitUsage;
  }
  return std::nullopt;
}

// What CLI11 does not check: empty list items, and each plan's --deadline (into deadline_at).
Result<void> CheckArgs(int argc, char** argv, std::initializer_list<run::Plan*> plans) {
  if (auto ok = CheckListArgs(argc, argv); !ok) {
    return ok;
  }
  for (run::Plan* c : plans) {
    if (auto ok = SetDeadline(*c); !ok) {
      return ok;
    }
  }
  return {};
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

namespace {

// Every command's options, bound to one CLI11 app.
struct Commands {
  CLI::App app{
      "servebench: does a model work on this server, and how fast is it?\n"
      "Speed profiles against any OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama),\n"
      "or against the built-in simulator when no --endpoint is given.",
      "servebench"};
  run::Plan run_cmd, perf_cmd;
  run::MatrixPlan launch_cmd;
  CompareCommand cmp_cmd;
  ReportCommand report_cmd;
  roofline::RooflineArgs roof_cmd;
  SuitesCommand suites_list;
  AssetsCommand assets;
  SimCommand sim_cmd;
  DoctorCommand doctor_cmd;
  StoreCommands store_cmds;
  ExportCommand export_cmd;
  MergeCommand merge_cmd;
  ScaleOutCommand scale_cmd;
  CLI::App *run_app, *perf_app, *launch_app, *cmp, *report_app, *roof, *suites_cmd, *assets_cmd,
      *doctor_app, *export_app, *merge_app, *k8s_app;

  Commands() {
    app.set_version_flag("--version", std::string("servebench ") + run::Version());
    app.require_subcommand(1);
    run_app = AddRunCommand(app, run_cmd);
    perf_app = AddPerfCommand(app, perf_cmd);
    launch_app = AddLaunchCommand(app, launch_cmd);
    cmp = AddCompareCommand(app, cmp_cmd);
    export_app = AddExportCommand(app, export_cmd);
    merge_app = AddMergeCommand(app, merge_cmd);
    k8s_app = AddScaleOutCommand(app, scale_cmd);
    report_app = AddReportCommand(app, report_cmd);
    roof = AddRooflineCommand(app, roof_cmd);
    suites_cmd = AddSuitesCommand(app, suites_list);
    assets_cmd = AddAssetsCommand(app, assets);
    AddSimCommand(app, sim_cmd);
    doctor_app = AddDoctorCommand(app, doctor_cmd);
    AddStoreCommands(app, store_cmds);
    AddCompletionCommand(app);  // hidden: completion scripts and man page (docs/install.md)
  }

  // The plan of the parsed `run`, `perf` or `launch` (its base), or nullptr.
  run::Plan* SpeedPlan() {
    return run_app->parsed()      ? &run_cmd
           : perf_app->parsed()   ? &perf_cmd
           : launch_app->parsed() ? &launch_cmd.base
                                  : nullptr;
  }
};

// The options given to `app` on the command line, by their long name.
std::vector<std::string> GivenFlags(const CLI::App* app) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app->get_options()) {
    if (o->count() > 0 && !o->get_lnames().empty()) {
      out.push_back("--" + o->get_lnames().front());
    }
  }
  return out;
}

// Runs the parsed command.
int Dispatch(Commands& c, const std::string& command_line) {
  std::stop_source stop;
  SetMediaCache();
  if (c.run_app->parsed()) {
    c.run_cmd.profiles_given =
        c.run_app->get_option("--profiles")->count() > 0 || c.run_cmd.profiles_given;
    c.run_cmd.given_flags = GivenFlags(c.run_app);
    WatchStopSignals(stop);
    return run::ExecuteRun(c.run_cmd, command_line, stop);
  }
  if (c.launch_app->parsed()) {
    c.launch_cmd.base.profiles_given =
        c.launch_app->get_option("--profiles")->count() > 0 || c.launch_cmd.base.profiles_given;
    c.launch_cmd.base.given_flags = GivenFlags(c.launch_app);
    WatchStopSignals(stop);
    return run::ExecuteMatrix(c.launch_cmd, command_line, stop);
  }
  if (c.perf_app->parsed()) {
    c.perf_cmd.given_flags = GivenFlags(c.perf_app);
    WatchStopSignals(stop);
    return run::ExecuteRun(c.perf_cmd, command_line, stop);
  }
  if (c.suites_cmd->parsed()) {
    return RunSuitesCommand(c.suites_list);
  }
  if (c.assets_cmd->parsed()) {
    return RunAssetsCommand(c.assets);
  }
  if (c.cmp->parsed()) {
    return RunCompare(c.cmp_cmd);
  }
  if (c.report_app->parsed()) {
    return RunReport(c.report_cmd);
  }
  if (c.roof->parsed()) {
    return RunRoofline(c.roof_cmd);
  }
  if (c.export_app->parsed()) {
    return RunExportCommand(c.export_cmd);
  }
  if (c.merge_app->parsed()) {
    return RunMergeCommand(c.merge_cmd, command_line);
  }
  if (c.k8s_app->parsed()) {
    return RunScaleOutCommand(c.scale_cmd);
  }
  if (c.doctor_app->parsed()) {
    return RunDoctorCommand(c.doctor_cmd);
  }
  if (StoreCommandParsed(c.store_cmds)) {
    return RunStoreCommand(c.store_cmds);
  }
  return RunSimCommand(c.sim_cmd);
}

std::vector<std::string> Args(int argc, char** argv) {
  return {argv + 1, argv + argc};
}

// `run|perf|launch --resume DIR [options]`: the plan recorded in DIR/plan.json, with the options
// given beside --resume checked against it (docs/resume.md).
int MainResume(int argc, char** argv, const std::string& dir) {
  auto recorded = RecordedArgs(dir);
  if (!recorded) {
    return Fail(recorded.error());
  }
  std::vector<std::string> given = WithoutResume(Args(argc, argv));
  const std::string sub = given.empty() ? std::string() : given.front();
  if (sub != recorded->front()) {
    return Fail(MakeError(ErrorCode::kUsage,
                          fmt::format("{} holds a `servebench {}` run: resume it with `servebench "
                                      "{} --resume {}`",
                                      dir, recorded->front(), recorded->front(), dir)));
  }
  Commands rec;
  if (auto code = ParseArgs(rec.app, *recorded, /*lenient=*/false)) {
    return *code;
  }
  Commands giv;
  if (auto code = ParseArgs(giv.app, given, /*lenient=*/true)) {
    return *code;
  }
  run::Plan* plan = rec.SpeedPlan();
  run::Plan* given_plan = giv.SpeedPlan();
  if (plan == nullptr || given_plan == nullptr) {
    return Fail(MakeError(ErrorCode::kUsage, "--resume applies to run, perf and launch"));
  }
  auto endpoint = CheckAgainstPlan(*giv.app.get_subcommand(sub), *rec.app.get_subcommand(sub), dir);
  if (!endpoint) {
    return Fail(endpoint.error());
  }
  if (!endpoint->empty()) {
    plan->target.endpoint = *endpoint;  // the recorded one, with its credentials given again
  }
  plan->deadline = given_plan->deadline;  // a new time limit for the rest of the run
  // The store may be named again (a PostgreSQL URL's password is not in plan.json) or skipped.
  if (!given_plan->store.store.empty()) {
    plan->store.store = given_plan->store.store;
  }
  plan->store.no_store = plan->store.no_store || given_plan->store.no_store;
  plan->resume_dir = dir;
  plan->args = *recorded;
  RegisterStoreSecrets(plan->store.store);
  if (auto ok = CheckArgs(argc, argv, {plan}); !ok) {
    return Fail(ok.error());
  }
  return Dispatch(rec, CommandLine(argc, argv));
}

}  // namespace

int Main(int argc, char** argv) {
  if (auto dir = FindResumeDir(argc, argv)) {
    return MainResume(argc, argv, *dir);
  }
  Commands c;
  if (auto code = Parse(c.app, argc, argv)) {
    return *code;
  }
  if (auto ok = CheckArgs(argc, argv, {&c.run_cmd, &c.perf_cmd, &c.launch_cmd.base}); !ok) {
    return Fail(ok.error());
  }
  if (run::Plan* plan = c.SpeedPlan()) {
    plan->args = Args(argc, argv);
    RegisterStoreSecrets(plan->store.store);
  }
  return Dispatch(c, CommandLine(argc, argv));
}

}  // namespace sb::cli
