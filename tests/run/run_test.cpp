// The run module without the command line: a plan's checks, durations, time limits, suite
// loading, the gates, and a whole (tiny) run against the embedded simulator.
#include "run/run.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run/exit_codes.h"
#include "run/plan.h"
#include "run/suites.h"
#include "run/target.h"
#include "support/temp_dir.h"

namespace sb::run {
namespace {

using nlohmann::json;

// A plan that passes CheckPlan: the decode profile, small.
Plan DecodePlan() {
  Plan p;
  p.profiles = {"decode"};
  p.profile.tokens = 8;
  p.profile.runs = 1;
  p.profile.warmup = 0;
  return p;
}

// CheckPlan's error for `p`: kUsage, naming `flag`.
void ExpectUsage(Plan p, const std::string& flag) {
  auto ok = CheckPlan(p);
  ASSERT_FALSE(ok) << flag;
  EXPECT_EQ(ok.error().code, ErrorCode::kUsage) << ok.error().message;
  EXPECT_NE(ok.error().message.find(flag), std::string::npos) << ok.error().message;
}

TEST(RunPlan, CheckPlanAcceptsAGoodPlanAndCompletesTheProfileOptions) {
  Plan p = DecodePlan();
  p.thinking = "off";
  p.temperature = 0.5;
  p.target.request_timeout_s = 2.5;
  ASSERT_TRUE(CheckPlan(p));
  EXPECT_EQ(p.profile.enable_thinking, std::optional<bool>(false));
  EXPECT_EQ(p.profile.temperature, std::optional<double>(0.5));
  EXPECT_EQ(p.profile.request_timeout, std::chrono::milliseconds(2500));
}

TEST(RunPlan, OpenFilesTooFewForTheStreamsIsAClearUsageError) {
  EXPECT_TRUE(CheckOpenFiles("--levels 1000", 1000, false, 1064));
  auto one = CheckOpenFiles("--levels 1000", 1000, false, 1063);
  ASSERT_FALSE(one);
  EXPECT_EQ(one.error().code, ErrorCode::kUsage);
  EXPECT_NE(one.error().message.find("--levels 1000 needs about 1064 open files"),
            std::string::npos)
      << one.error().message;
  EXPECT_NE(one.error().message.find("(RLIMIT_NOFILE, hard) is 1063"), std::string::npos);
  EXPECT_NE(one.error().message.find("ulimit -Hn"), std::string::npos);
  // The built-in simulator in this process holds the other end of each socket.
  auto two = CheckOpenFiles("--levels 1000", 1000, true, 1064);
  ASSERT_FALSE(two);
  EXPECT_NE(two.error().message.find("needs about 2064 open files"), std::string::npos);
  EXPECT_TRUE(CheckOpenFiles("--levels 1000", 1000, true, 2064));
}

TEST(RunPlan, CheckPlanBadValuesAreUsageErrorsNamingTheFlag) {
  Plan p = DecodePlan();
  p.profiles = {"decode", "bogus"};
  ExpectUsage(p, "unknown profile 'bogus'");

  p = DecodePlan();
  p.profile.tokens = 1;
  ExpectUsage(p, "--tokens");

  p = DecodePlan();
  p.profile.runs = 0;
  ExpectUsage(p, "--runs");

  p = DecodePlan();
  p.profile.args.SetInts("--length-runs", {-1});
  ExpectUsage(p, "--length-runs");

  p = DecodePlan();
  p.profile.args.SetInts("--levels", {1, 0});
  ExpectUsage(p, "--levels");

  p = DecodePlan();
  p.profile.args.SetInts("--sizes", {-5});
  ExpectUsage(p, "--sizes");

  p = DecodePlan();
  p.profile.warmup = -1;
  ExpectUsage(p, "--warmup");

  p = DecodePlan();
  p.target.first_byte_timeout_s = 0;
  ExpectUsage(p, "--first-byte-timeout-s");
}

// The results.json key is not a profile name on the command line: one spelling.
TEST(RunPlan, AProfileIsNamedAsTheTableNamesIt) {
  Plan p = DecodePlan();
  p.profiles = {"max_tokens"};
  ExpectUsage(p, "unknown profile 'max_tokens' (available: decode, concurrency, max-tokens");
  p = DecodePlan();
  p.profiles = {"max-tokens"};
  EXPECT_TRUE(CheckPlan(p));
}

// An option only another profile reads is said to have no effect (the table's flags).
TEST(RunPlan, AFlagOnlyAnUnchosenProfileReadsIsWarnedAbout) {
  Plan p = DecodePlan();
  p.profiles = {"decode"};
  p.given_flags = {"--tokens", "--levels", "--rates", "--runs"};
  const auto w = UnreadFlagWarnings(p);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("--levels has no effect: only the concurrency profile reads it"),
            std::string::npos)
      << w[0];
  EXPECT_NE(w[1].find("--rates has no effect: only the rate profile"), std::string::npos) << w[1];
  p.profiles = {"decode", "concurrency", "rate"};
  EXPECT_TRUE(UnreadFlagWarnings(p).empty());
}

TEST(RunPlan, ParseDurationBareNumbersAreSecondsUnitsScale) {
  EXPECT_EQ(ParseDuration("--deadline", "90").value(), 90);
  EXPECT_EQ(ParseDuration("--deadline", "90s").value(), 90);
  EXPECT_EQ(ParseDuration("--deadline", "45m").value(), 45 * 60);
  EXPECT_EQ(ParseDuration("--deadline", "2h").value(), 2 * 3600);
  EXPECT_EQ(ParseDuration("--deadline", "1.5h").value(), 1.5 * 3600);
  EXPECT_EQ(ParseDuration("--deadline", "0.25").value(), 0.25);
}

TEST(RunPlan, ParseDurationRejectsAnythingElseNamingTheFlag) {
  for (const char* text : {"", "0", "-5", "abc", "5d", "5 m", "m", "nan", "inf", "0s"}) {
    auto d = ParseDuration("--deadline", text);
    ASSERT_FALSE(d) << text;
    EXPECT_EQ(d.error().code, ErrorCode::kUsage);
    EXPECT_EQ(d.error().message.rfind(std::string("--deadline ") + text + ":", 0), 0u)
        << d.error().message;
  }
}

TEST(RunTarget, CheckTimeoutsDefaultsPassEachBadLimitIsNamed) {
  EXPECT_TRUE(CheckTimeouts(TargetOptions{}));
  TargetOptions zero_total;
  zero_total.request_timeout_s = 0;  // no whole-request limit: allowed
  EXPECT_TRUE(CheckTimeouts(zero_total));

  const double nan = std::numeric_limits<double>::quiet_NaN();

  struct Case {
    double TargetOptions::*field;
    double value;
    const char* flag;
  };

  for (const Case& c : {Case{&TargetOptions::connect_timeout_s, 0, "--connect-timeout-s"},
                        Case{&TargetOptions::first_byte_timeout_s, -1, "--first-byte-timeout-s"},
                        Case{&TargetOptions::idle_timeout_s, nan, "--idle-timeout-s"},
                        Case{&TargetOptions::request_timeout_s, -1, "--request-timeout-s"},
                        Case{&TargetOptions::request_timeout_s, nan, "--request-timeout-s"}}) {
    TargetOptions o;
    o.*c.field = c.value;
    auto ok = CheckTimeouts(o);
    ASSERT_FALSE(ok) << c.flag;
    EXPECT_EQ(ok.error().code, ErrorCode::kUsage);
    EXPECT_EQ(ok.error().message.rfind(c.flag, 0), 0u) << ok.error().message;
  }
}

TEST(RunSuites, LoadSuitesNoneIsNoSuiteAndABuiltinNameLoads) {
  auto none = LoadSuites({"none"});
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty());
  auto quick = LoadSuites({"quick"});
  ASSERT_TRUE(quick) << quick.error().message;
  ASSERT_EQ(quick->size(), 1u);
  EXPECT_EQ(quick->front().name, "quick");
  EXPECT_FALSE(quick->front().tests.empty());
}

TEST(RunSuites, LoadSuitesMissingSuiteFileIsASetupError) {
  sb::testing::TempDir tmp;
  for (const std::string& name :
       {(tmp.path() / "missing.yaml").string(), std::string("no/such/suite")}) {
    auto s = LoadSuites({name});
    ASSERT_FALSE(s) << name;
    EXPECT_EQ(s.error().code, ErrorCode::kSetup) << s.error().message;
    EXPECT_EQ(s.error().message,
              "cannot read suite file '" + name + "': No such file or directory");
  }
}

TEST(RunSuites, LoadSuitesMisspeltNameIsAUsageError) {
  auto s = LoadSuites({"standrad"});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kUsage);
  EXPECT_NE(s.error().message.find("standrad"), std::string::npos) << s.error().message;
}

TEST(RunSuites, CheckGatesExitOneBelowAThreshold) {
  SuiteArgs off;
  EXPECT_EQ(CheckGates(off, json{{"pass_rate", 0.1}}), kExitOk);
  SuiteArgs a;
  a.min_pass_rate = 0.5;
  EXPECT_EQ(CheckGates(a, json{{"pass_rate", 0.5}}), kExitOk);
  EXPECT_EQ(CheckGates(a, json{{"pass_rate", 0.4}}), kExitGate);
  EXPECT_EQ(CheckGates(a, json::object()), kExitGate);  // no tests: no pass rate
  SuiteArgs e;
  e.min_effective_pass_rate = 0.9;
  EXPECT_EQ(CheckGates(e, json{{"pass_rate", 0.1}, {"effective_pass_rate", 0.95}}), kExitOk);
  EXPECT_EQ(CheckGates(e, json{{"effective_pass_rate", 0.5}}), kExitGate);
}

TEST(RunExitCodes, EachErrorKindMapsToItsCode) {
  EXPECT_EQ(ExitCodeFor(MakeError(ErrorCode::kUsage, "x")), kExitUsage);
  EXPECT_EQ(ExitCodeFor(MakeError(ErrorCode::kCancelled, "x")), kExitInterrupted);
  EXPECT_EQ(ExitCodeFor(MakeError(ErrorCode::kSetup, "x")), kExitSetup);
  EXPECT_EQ(ExitCodeFor(MakeError(ErrorCode::kIo, "x")), kExitSetup);
}

TEST(RunExecute, DecodeRunAgainstTheEmbeddedSimulatorCompletes) {
  sb::testing::TempDir tmp;
  Plan p = DecodePlan();
  p.out = (tmp.path() / "run").string();
  std::stop_source stop;
  ASSERT_EQ(ExecuteRun(p, "servebench perf --profile decode", stop), kExitOk);
  const json results = json::parse(sb::testing::ReadFile(tmp.path() / "run" / "results.json"));
  EXPECT_EQ(results["status"], "complete");
  EXPECT_EQ(results["stop_reason"], nullptr);
  EXPECT_EQ(results["command"], "servebench perf --profile decode");
  EXPECT_EQ(results["tool"]["version"], Version());
  EXPECT_EQ(results["target"]["simulated"], true);
  EXPECT_EQ(results["config"]["profiles"], json::array({"decode"}));
  EXPECT_EQ(results["config"]["tokens"], 8);
  EXPECT_TRUE(results["perf"].contains("decode")) << results["perf"].dump();
  EXPECT_TRUE(results["tests"].empty());
  EXPECT_FALSE(results["finished_at"].is_null());
  EXPECT_TRUE(std::filesystem::exists(tmp.path() / "run" / "report.md"));
  EXPECT_TRUE(std::filesystem::exists(tmp.path() / "run" / "samples.jsonl"));
}

TEST(RunExecute, BadPlanIsAUsageErrorBeforeAnythingIsWritten) {
  sb::testing::TempDir tmp;
  Plan p = DecodePlan();
  p.profile.tokens = 0;
  p.out = (tmp.path() / "run").string();
  std::stop_source stop;
  EXPECT_EQ(ExecuteRun(p, "servebench perf", stop), kExitUsage);
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "run"));

  Plan nothing;  // `perf` with no profile and no suite
  nothing.out = p.out;
  EXPECT_EQ(ExecuteRun(nothing, "servebench perf", stop), kExitUsage);
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "run"));
}

TEST(RunExecute, StopBeforeTheStartEndsInterrupted) {
  sb::testing::TempDir tmp;
  Plan p = DecodePlan();
  p.out = (tmp.path() / "run").string();
  std::stop_source stop;
  stop.request_stop();
  EXPECT_EQ(ExecuteRun(p, "servebench perf", stop), kExitInterrupted);
  const json results = json::parse(sb::testing::ReadFile(tmp.path() / "run" / "results.json"));
  EXPECT_EQ(results["status"], "interrupted");
  EXPECT_EQ(results["stop_reason"], "stopped by a signal (Ctrl-C or SIGTERM)");
}

// Resume without the command line: a finished run whose journal is cut back to look as if the
// process was killed during its last concurrency level.
TEST(RunExecute, ResumeReplaysFinishedUnitsAndMeasuresTheCutOffOneAgain) {
  sb::testing::TempDir tmp;
  const std::filesystem::path dir = tmp.path() / "run";
  Plan p = DecodePlan();
  p.profiles = {"concurrency"};
  p.profile.args.SetInts("--levels", {1, 2, 3});
  p.out = dir.string();
  std::stop_source stop;
  ASSERT_EQ(ExecuteRun(p, "servebench perf", stop), kExitOk);
  // Keep the journal up to the last unit's "end" line: that unit was cut off.
  const std::string journal = sb::testing::ReadFile(dir / "journal.jsonl");
  const std::size_t last_end = journal.rfind("\"end\"");
  ASSERT_NE(last_end, std::string::npos);
  std::ofstream(dir / "journal.jsonl", std::ios::trunc)
      << journal.substr(0, journal.rfind('\n', last_end) + 1);
  json results = json::parse(sb::testing::ReadFile(dir / "results.json"));
  results["status"] = "running";
  std::ofstream(dir / "results.json", std::ios::trunc) << results.dump();

  Plan again = DecodePlan();
  again.profiles = {"concurrency"};
  again.profile.args.SetInts("--levels", {1, 2, 3});
  again.resume_dir = dir.string();
  ASSERT_EQ(ExecuteRun(again, "servebench perf --resume", stop), kExitOk);
  const json after = json::parse(sb::testing::ReadFile(dir / "results.json"));
  EXPECT_EQ(after["status"], "complete");
  EXPECT_EQ(after["started_at"], results["started_at"]);
  ASSERT_EQ(after["resumed"].size(), 1u);
  EXPECT_EQ(after["resumed"][0]["units_replayed"], 2);
  EXPECT_EQ(after["resumed"][0]["superseded_samples"], 3);
  EXPECT_EQ(after["resumed"][0]["unfinished_unit"], "concurrency c3 stream 1");
  const json& levels = after["perf"]["concurrency"]["levels"];
  ASSERT_EQ(levels.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(levels[i]["ok"], i + 1);
  }
  EXPECT_EQ(levels[0]["requests"][0]["replayed"], true);
  EXPECT_FALSE(levels[2]["requests"][0].contains("replayed"));
  int counted = 0, superseded = 0;
  for (const json& line : sb::testing::ReadJsonl(dir / "samples.jsonl")) {
    (line.value("superseded", false) ? superseded : counted) += 1;
  }
  EXPECT_EQ(counted, 6);  // 1 + 2 + 3 streams, each once
  EXPECT_EQ(superseded, 3);
}

}  // namespace
}  // namespace sb::run
