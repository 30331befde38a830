// The quality-suite side of a run: the suites named by --suite, the runner's options, the
// simulator's scripted answers (`sim --answers`), the demo scenario the embedded simulator plays
// when `run` has no --endpoint, and the pass-rate gates (docs/suites.md, docs/simulator.md). The
// flags that fill SuiteArgs are in cli/suite_command.h. Thread safety: used from the run's thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "perf/profiles.h"
#include "sim/sim_server.h"
#include "suite/runner.h"
#include "suite/suite.h"

namespace sb::run {

// --suite, --tests, --rerun-empty, --repeat, --test-timeout-s, --video-transport,
// --video-frames, --python, --cxx, --min-pass-rate, --min-effective-pass-rate,
// --continuous-usage.
struct SuiteArgs {
  std::vector<std::string> suites;  // names or files; "none" = no suite
  std::vector<std::string> tests;   // --tests: ids, categories or id prefixes
  std::vector<int> rerun_budgets;   // --rerun-empty
  bool rerun_empty = false;
  int repeat = 1;
  std::optional<double> test_timeout_s;  // --test-timeout-s; none = each test's own
  std::string video_transport = "auto";
  int video_frames = 8;
  std::string python;
  std::string cxx;
  double min_pass_rate = -1;  // gates (exit 1); < 0 = off
  double min_effective_pass_rate = -1;
  bool continuous_usage = false;
};

// The suites named by --suite, loaded (kUsage errors name the file and line).
Result<std::vector<suite::Suite>> LoadSuites(const std::vector<std::string>& names);

// The runner's options from the command line; kUsage error for bad values.
Result<suite::RunOptions> MakeRunOptions(const SuiteArgs& args,
                                         const perf::ProfileOptions& profile);

// Changes to the simulator's scripted answers, by test id.
struct AnswerTweaks {
  std::vector<std::string> loop;             // the test's answer (or thinking) loops
  std::vector<std::string> bad;              // answer with the test's first bad answer
  std::map<std::string, std::string> fault;  // strike a fault (reset, stall, 500 ...)
  std::map<std::string, int> reasoning;      // reasoning tokens before the answer
};

// One scripted answer per quality test that has a reference answer (or, with tweaks, a bad
// answer, a loop, a fault), keyed by the test's prompt text.
std::vector<sim::SimAnswer> SimAnswers(const std::vector<suite::Suite>& suites,
                                       const AnswerTweaks& tweaks);

// The demo scenario: which tests show which status against the embedded simulator. Ids that
// are not in the suites being run are ignored.
AnswerTweaks DemoTweaks();

// The embedded simulator for suites: fast, with speculative decoding, audio refused, and the
// scripted answers of `suites` with the demo tweaks. `timeouts` receives the per-test time
// limits the scenario needs (the TIMEOUT test).
sim::SimOptions DemoSimOptions(const std::vector<suite::Suite>& suites,
                               std::map<std::string, double>& timeouts);

// "constraint_scheduling=12000"-style items -> map; kUsage error otherwise.
Result<std::map<std::string, std::string>> ParseAssignments(const std::vector<std::string>& items,
                                                            const std::string& flag);

// What the embedded simulator was told to do, for the report.
nlohmann::json DemoDescription(const std::vector<suite::Suite>& suites,
                               const std::map<std::string, double>& timeouts);

// --min-pass-rate / --min-effective-pass-rate: exit 1 below the threshold.
int CheckGates(const SuiteArgs& a, const nlohmann::json& summary);

}  // namespace sb::run
