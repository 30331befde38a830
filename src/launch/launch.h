// Server lifecycle: servebench starts the server it benchmarks. A Recipe (command line or argv,
// environment, port, readiness check, time limits) comes from a YAML recipe file (one recipe, or
// a matrix of several run one after another) or from `--serve "CMD"`. ServerProcess::Start runs
// it in its own session with stdout+stderr appended to a log file, polls it until it answers,
// and measures the time to ready; Stop() sends SIGTERM to everything it started, then SIGKILL
// after a grace period. Format and behaviour: docs/launch.md.
// Thread safety: the recipe functions are pure. One ServerProcess is used from one thread at a
// time; the stop_token passed to Start may be triggered from any thread. Times are seconds
// (steady clock) unless a name says otherwise.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>
#include <sys/types.h>

#include "core/result.h"

namespace sb::launch {

struct Recipe {
  std::string name = "serve";  // label in reports, [A-Za-z0-9._-]+ (also a directory name)
  // Exactly one of command / argv. command runs as `/bin/sh -c COMMAND`; argv[0] is looked up on
  // PATH (the recipe's PATH when env sets one).
  std::string command;
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;  // added to the inherited environment
  std::string host = "127.0.0.1";  // where the server listens; polled at 127.0.0.1 if 0.0.0.0
  int port = 0;                    // 0: a free loopback port is chosen at start
  std::string endpoint;            // "" = "http://{host}:{port}/v1"
  // "" = GET /health must answer 200 (404 and 405 are taken as "no such route" and skipped),
  // then GET <endpoint>/models must answer 200 with at least one model. Otherwise GET ready_path
  // (relative to the server root, e.g. "/ping") must answer 2xx.
  std::string ready_path;
  double ready_timeout_s = 900;
  double poll_interval_s = 0.5;  // the longest pause between polls (they start at kFirstPollS)
  double stop_timeout_s = 30;    // SIGTERM, then SIGKILL after this long
  std::string cwd;               // "" = inherited
};

// Readiness polls start kFirstPollS after the first one and the pause doubles after each until
// it reaches the recipe's poll_interval_s, so a server ready in 0.1 s is seen within ~0.1 s and
// a slow one is not polled more than once per poll_interval_s.
inline constexpr double kFirstPollS = 0.01;

// The pause after a poll that found the server not ready: kFirstPollS after the first (pass
// previous_s = 0), then twice the previous pause, at most max_s (and at least 0.001 s).
double NextPollPause(double previous_s, double max_s);

// The literal tokens "{port}" and "{host}" in command, argv, env values and endpoint are replaced
// once the port is known; every other brace (JSON in --speculative-config) is left alone.
std::string Substitute(std::string_view text, std::string_view host, int port);

// kUsage error when the recipe can not run: a bad name, both or neither of command/argv, values
// out of range, or port 0 with no way to tell the server the chosen port (no "{port}" in the
// command, argv or env, and no `--port N` to take it from; docs/launch.md §2).
Result<void> ValidateRecipe(const Recipe& recipe);

// One recipe file: a single recipe mapping, or {defaults: {...}, recipes: [{...}, ...]} (a
// matrix, run one after another in file order). Strict: unknown keys, wrong types, a missing
// command, duplicate names are kUsage errors "FILE:LINE: problem". A single recipe without a
// name is named after the file (its stem, when that is a valid name; else "serve"). In
// LoadRecipes a relative cwd is taken relative to the file's directory. When a recipe has port
// 0 and no "{port}" but its command says `--port N`, port becomes N.
Result<std::vector<Recipe>> LoadRecipes(const std::filesystem::path& file);
Result<std::vector<Recipe>> ParseRecipes(std::string_view yaml, std::string_view source);

// `--serve "CMD"`: one recipe named "serve" running CMD with /bin/sh -c. The port is taken from
// `--port N` in CMD when CMD has no "{port}" (ValidateRecipe reports when neither is there).
Recipe RecipeFromCommand(std::string command);

// How a stopped server ended.
struct StopReport {
  std::optional<int> exit_code;     // it exited with this status...
  std::optional<int> signal;        // ...or was ended by this signal (SIGTERM = 15, SIGKILL = 9)
  bool exited_before_stop = false;  // it had already exited when Stop() was called
  bool killed = false;              // SIGKILL was needed: something outlived the grace period
  double stop_s = 0;                // Stop() called -> everything it started had exited
};

// "exited with code 3", "ended by SIGTERM", "ended (exit status unknown)" (neither set: it was
// reaped by someone else, e.g. with SIGCHLD ignored).
std::string DescribeEnd(const StopReport& report);

// Optional observer of the readiness wait (e.g. a progress line every few seconds).
struct StartHooks {
  // After every poll that found the server not ready yet: seconds since the spawn and what the
  // poll saw ("GET /health: connection refused"). Runs on the thread calling Start.
  std::function<void(double elapsed_s, const std::string& last_poll)> on_poll;
};

class ServerProcess {
 public:
  // Starts the server in a new session (its own process group) with stdin from /dev/null and
  // stdout+stderr appended to log_path (parent directories are created), after a header line
  // "# servebench: started <UTC time>: <command>". Then polls until ready, until the process
  // exits, until ready_timeout_s, or until stop is requested. Errors:
  //   kUsage: the recipe is invalid (ValidateRecipe);
  //   kSetup: the fixed port is in use, argv[0] or cwd not found, spawn failed, the log can not
  //     be written, the server exited before it was ready ("server 'mtp3' exited with code 1
  //     before it was ready (after 2.1 s); last 20 lines of runs/x/server.log: ..."), or it
  //     was not ready in time ("server 'mtp3' was not ready after 900 s (GET /health:
  //     connection refused); it was stopped; last 20 lines of ...");
  //   kCancelled: stop was requested during the wait.
  // On every error the process and its group are stopped (and reaped) before Start returns.
  static Result<std::unique_ptr<ServerProcess>> Start(const Recipe& recipe,
                                                      const std::filesystem::path& log_path,
                                                      std::stop_token stop = {},
                                                      const StartHooks& hooks = {});

  ~ServerProcess();  // Stop() if it was not called
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  const std::string& name() const { return recipe_.name; }

  // The recipe with "{port}"/"{host}" substituted and the chosen port filled in.
  const Recipe& recipe() const { return recipe_; }

  const std::string& command() const { return command_; }  // as run (argv shell-quoted)

  const std::string& endpoint() const { return endpoint_; }  // ready-to-use base URL ".../v1"

  int port() const { return recipe_.port; }

  pid_t pid() const { return pid_; }  // also the process group and session id

  const std::filesystem::path& log_path() const { return log_path_; }

  double time_to_ready_s() const { return time_to_ready_s_; }  // spawn -> ready answer

  // How precisely time_to_ready_s is known: the server became ready between the start of the last
  // poll that found it not ready (or the spawn) and the ready answer, this many seconds apart.
  // Two start-up times closer than their resolutions are a tie.
  double time_to_ready_resolution_s() const { return time_to_ready_resolution_s_; }

  // False once the server process (the session leader) has exited; it is reaped then.
  bool Running();

  // SIGTERM, once each, to the process group and every process of the session outside it (a
  // server may count them: llama-server quits at once on a second one), waits up to
  // stop_timeout_s for all of them to exit, then SIGKILL; reaps the leader and appends
  // "# servebench: stopped ..." to the log. Idempotent: later calls return the first report.
  StopReport Stop();

  // The last `lines` lines the server wrote since this start ('\r' counts as a line break; long
  // lines are cut). "" when it wrote nothing.
  std::string LogTail(std::size_t lines) const;

  // The results.json "server_process" object: name, command, endpoint, port, pid, env (values of
  // names that look secret -- KEY, TOKEN, SECRET, PASSWORD -- replaced by "<redacted>"),
  // time_to_ready_s, time_to_ready_resolution_s, log_file (relative to `relative_to` when given and
  // below it), stop (the StopReport, null while running). Schema: docs/launch.md §6.
  nlohmann::json Describe(const std::filesystem::path& relative_to = {}) const;

 private:
  ServerProcess() = default;
  bool Alive();  // the leader or anything else in its process group or session
  void SignalAll(int sig);
  Result<void> WaitReady(std::chrono::steady_clock::time_point t0, const std::string& who,
                         std::stop_token stop, const StartHooks& hooks);
  void AppendToLog(const std::string& line) const;

  Recipe recipe_;
  std::string command_;
  std::string endpoint_;
  std::filesystem::path log_path_;
  long long log_offset_ = 0;  // where this start's output begins in the log
  pid_t pid_ = -1;
  bool reaped_ = false;
  bool group_gone_ = false;    // the leader is reaped and nothing is left in its group/session
  bool status_known_ = false;  // false: reaped by someone else (SIGCHLD ignored)
  int wait_status_ = 0;        // valid when reaped_ && status_known_
  double time_to_ready_s_ = 0;
  double time_to_ready_resolution_s_ = 0;
  std::optional<StopReport> stop_report_;
};

}  // namespace sb::launch
