// End-to-end limits of the servebench binary (docs/bounds.md): a server that freezes mid-run
// (SIGSTOP) ends the run `failed` in bounded time; --request-timeout-s reaches suite tests;
// every duration flag is checked in one place; progress lines count what was sent and name the
// flag of the limit that fired. Real processes, real HTTP on loopback, real files.
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>

#include "support/sim_child.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Child;
using testing::ProcessResult;
using testing::ReadFile;
using testing::ReadJsonl;
using testing::RunProcess;
using testing::TempDir;

const std::string kBin = SB_BINARY;

// `servebench sim` with fast timings and extra flags.
class Sim : public testing::SimChild {
 public:
  explicit Sim(std::vector<std::string> extra = {}) : SimChild(Fast(std::move(extra))) {}

  // A frozen server is continued before it is killed and reaped (SimChild's destructor).
  ~Sim() { child().Signal(SIGCONT); }

 private:
  static std::vector<std::string> Fast(std::vector<std::string> extra) {
    extra.insert(extra.begin(), {"--ttft-ms", "5", "--itl-ms", "1"});
    return extra;
  }
};

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string FirstLine(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// Waits (bounded) until samples.jsonl holds `n` successful requests of `profile`.
bool WaitForOk(const fs::path& run, const std::string& profile, std::size_t n) {
  for (int i = 0; i < 3000; ++i) {
    std::size_t ok = 0;
    if (fs::exists(run / "samples.jsonl")) {
      for (const auto& s : ReadJsonl(run / "samples.jsonl")) {
        ok += s.value("profile", "") == profile && s.value("status", "") == "ok" ? 1 : 0;
      }
    }
    if (ok >= n) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// The server freezes (SIGSTOP: it keeps accepting connections, the kernel's backlog does that,
// and answers nothing) after the run's first requests succeeded: the run ends `failed`, exit 3,
// within 3 x the first-byte limit of the freeze, saying so on its first line; what was measured
// before is kept.
void ExpectFrozenServerEndsTheRun(const std::vector<std::string>& command,
                                  const std::string& profile) {
  Sim sim;
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const fs::path out = dir.path() / "run";
  constexpr double kFirstByteS = 4;
  std::vector<std::string> argv = {kBin};
  argv.insert(argv.end(), command.begin(), command.end());
  argv.insert(argv.end(), {"--endpoint", sim.url(), "--first-byte-timeout-s", "4",
                           "--idle-timeout-s", "1", "--out", out.string()});
  Child run(argv);
  ASSERT_TRUE(WaitForOk(out, profile, 2)) << run.Stderr();
  sim.child().Signal(SIGSTOP);
  const auto frozen = std::chrono::steady_clock::now();
  const int code = run.Wait(std::chrono::seconds(120));
  const double took = SecondsSince(frozen);
  const std::string stdout_text = run.RemainingStdout();
  EXPECT_EQ(code, 3) << run.Stderr();
  EXPECT_LT(took, 3 * kFirstByteS) << run.Stderr();
  EXPECT_EQ(FirstLine(stdout_text).rfind("RUN FAILED: the server stopped answering", 0), 0u)
      << stdout_text;
  const json res = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(res["status"], "failed");
  EXPECT_NE(res["stop_reason"].get<std::string>().find("got no answer"), std::string::npos)
      << res["stop_reason"];
  std::size_t ok = 0;
  for (const auto& s : ReadJsonl(out / "samples.jsonl")) {
    ok += s.value("profile", "") == profile && s.value("status", "") == "ok" ? 1 : 0;
  }
  EXPECT_GE(ok, 2u);  // nothing measured before the freeze is lost
}

TEST(Limits, FrozenServerEndsAStandardRunFailedWithinThreeFirstByteLimits) {
  ExpectFrozenServerEndsTheRun({"run", "--suite", "standard"}, "suite");
}

TEST(Limits, FrozenServerEndsAPerfRunFailedWithinThreeFirstByteLimits) {
  ExpectFrozenServerEndsTheRun(
      {"perf", "--profile", "decode", "--runs", "100000", "--tokens", "16", "--warmup", "0"},
      "decode");
}

// A server that stalls every stream but lists its models is alive: the run goes on to the end
// (every request failing), and is not called gone.
TEST(Limits, AStallingServerThatAnswersTheProbeIsNotGone) {
  Sim sim({"--fault-rate", "1", "--fault-kinds", "stall", "--stall-ms", "30000"});
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r = RunProcess(
      {kBin, "perf", "--endpoint", sim.url(), "--profile", "decode", "--runs", "4", "--tokens",
       "16", "--warmup", "0", "--idle-timeout-s", "0.5", "--out", out.string()},
      std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(FirstLine(r.out).rfind("RUN FAILED: every request failed", 0), 0u) << r.out;
  const json res = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(res["perf"]["decode"]["runs"].size(), 4u);
  // Each failed run's progress line names the limit and its flag.
  EXPECT_NE(r.err.find("decode 1/4: timeout: idle gap over 500 ms (raise with --idle-timeout-s)"),
            std::string::npos)
      << r.err;
}

// --request-timeout-s is the limit of a suite test that has no timeout_s of its own (the built-in
// suites give theirs only as the suite's default): a stalled answer ends TIMEOUT at that limit,
// and the reason names the flag.
TEST(Limits, RequestTimeoutAppliesToSuiteTestsWithoutTheirOwnLimit) {
  Sim sim({"--fault-rate", "1", "--fault-kinds", "stall", "--stall-ms", "60000"});
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const fs::path out = dir.path() / "run";
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r = RunProcess(
      {kBin, "run", "--endpoint", sim.url(), "--suite", "quick", "--tests", "reasoning,writing",
       "--request-timeout-s", "1", "--idle-timeout-s", "120", "--out", out.string()},
      std::chrono::seconds(120));
  const double took = SecondsSince(start);
  const json res = json::parse(ReadFile(out / "results.json"));
  ASSERT_FALSE(res["tests"].empty()) << r.err;
  for (const auto& t : res["tests"]) {
    EXPECT_EQ(t["status"], "TIMEOUT") << t.dump();
    EXPECT_NE(t["reason"].get<std::string>().find("--request-timeout-s 1 s"), std::string::npos)
        << t["reason"];
    EXPECT_LT(t["time_ms"].get<double>(), 3000.0) << t.dump();
  }
  EXPECT_LT(took, 30.0) << r.err;  // the stall lasts 60 s per test
}

// Every duration flag, checked in one place: 0 (where it is not "none"), negative, NaN,
// infinity and values that overflow the clock are usage errors naming the flag.
TEST(Limits, EveryDurationFlagRejectsZeroNanInfinityAndOverflow) {
  for (const char* flag : {"--connect-timeout-s", "--first-byte-timeout-s", "--idle-timeout-s",
                           "--request-timeout-s", "--test-timeout-s", "--serve-ready-timeout-s"}) {
    for (const char* value : {"0", "-1", "nan", "inf", "1e16"}) {
      if (std::string(flag) == "--request-timeout-s" && std::string(value) == "0") {
        continue;  // documented: 0 = no whole-request limit (the other limits still hold)
      }
      ProcessResult r = RunProcess({kBin, "run", "--suite", "quick", flag, value});
      EXPECT_EQ(r.exit_code, 2) << flag << " " << value << ": " << r.err;
      EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("ready_timeout_s"), std::string::npos) << r.err;  // no internal names
      EXPECT_EQ(r.err.find("ChatCall"), std::string::npos) << r.err;
    }
  }
  for (const char* value : {"1e7h", "inf", "2000000s"}) {
    ProcessResult r = RunProcess({kBin, "perf", "--profile", "decode", "--deadline", value});
    EXPECT_EQ(r.exit_code, 2) << value << ": " << r.err;
    EXPECT_NE(r.err.find(std::string("--deadline ") + value), std::string::npos) << r.err;
  }
}

// A closed loop (--requests) counts its requests against what it sent, not against the level.
TEST(Limits, ClosedLoopCountsAreOfTheRequestsSent) {
  Sim sim;
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  ProcessResult r = RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "concurrency",
                                "--levels", "2", "--requests", "10", "--tokens", "8", "--out",
                                (dir.path() / "run").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("concurrency 2: 10/10 requests ok"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("10/2"), std::string::npos) << r.err;
}

// A context row whose request timed out says so, with the flag; it is neither "wrong" nor given
// a TTFT.
TEST(Limits, ATimedOutContextRowSaysHowItFailed) {
  Sim sim({"--fault-rate", "1", "--fault-kinds", "stall", "--stall-ms", "30000"});
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r =
      RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "context", "--sizes", "200",
                  "--warmup", "0", "--idle-timeout-s", "0.5", "--out", out.string()},
                 std::chrono::seconds(60));
  EXPECT_NE(r.err.find("timeout: idle gap over 500 ms (raise with --idle-timeout-s)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("wrong"), std::string::npos) << r.err;
  const json res = json::parse(ReadFile(out / "results.json"));
  const json& row = res["perf"]["context"]["rows"][0];
  EXPECT_EQ(row["status"], "timeout") << row.dump();
  EXPECT_TRUE(row["ttft_ms"].is_null()) << row.dump();
}

}  // namespace
}  // namespace sb
