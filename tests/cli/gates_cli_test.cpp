// End-to-end tests of the CI gates (docs/compare.md "Gates in CI"): `perf --fail-on-slo` against
// the embedded simulator, and `compare --max-regression` / `--baseline store:` on run directories
// written by real runs against real `servebench sim` processes.
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "support/sim_child.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ProcessResult;
using testing::ReadFile;
using testing::RunProcess;
using testing::TempDir;

const std::string kBin = SB_BINARY;

// A `servebench sim` child (--ttft-ms 10) and its base URL.
class Sim : public testing::SimChild {
 public:
  explicit Sim(const std::vector<std::string>& extra) : SimChild({"--ttft-ms", "10"}, extra) {}
};

// A decode-profile run of 7 requests against `url` into `out`.
void Decode(const std::string& url, const fs::path& out) {
  ProcessResult r = RunProcess({kBin, "perf", "--endpoint", url, "--profile", "decode", "--tokens",
                                "64", "--runs", "7", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// ---- JUnit: xmllint validates against the Ant schema and counts by XPath -----------------

const std::string kSchema = std::string(SB_SOURCE_DIR) + "/tests/fixtures/junit/junit-ant.xsd";

std::string Xmllint() {
  const std::string found = testing::FindOnPath("xmllint");
  return found.empty() ? "xmllint" : found;
}

// Writes `xml` to DIR/name, checks it against the schema, and returns the value of `xpath`.
std::string XPath(const fs::path& file, const std::string& xpath) {
  ProcessResult r = RunProcess({Xmllint(), "--xpath", xpath, file.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  while (!r.out.empty() && r.out.back() == '\n') {
    r.out.pop_back();
  }
  return r.out;
}

void ExpectValidJunit(const fs::path& file) {
  ProcessResult lint = RunProcess({Xmllint(), "--noout", "--schema", kSchema, file.string()});
  EXPECT_EQ(lint.exit_code, 0) << lint.err << ReadFile(file);
}

// `export DIR --format junit` into DIR/junit.xml.
fs::path ExportJunit(const fs::path& run) {
  const fs::path xml = run / "junit.xml";
  ProcessResult r =
      RunProcess({kBin, "export", run.string(), "--format", "junit", "--out", xml.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectValidJunit(xml);
  return xml;
}

ProcessResult Perf(const fs::path& out, std::vector<std::string> extra) {
  std::vector<std::string> argv = {kBin, "perf", "--out", out.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return RunProcess(argv);
}

// ---- --fail-on-slo -------------------------------------------------------------------------

TEST(SloGateCliTest, AnImpossibleTtftFailsTheRateRunAfterWritingEverything) {
  TempDir dir;
  const fs::path out = dir.path() / "r";
  ProcessResult r = Perf(out, {"--profile", "rate", "--rates", "20", "--requests", "8", "--slo",
                               "ttft_ms=1", "--fail-on-slo"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("gate failed: --slo ttft_ms=1 not met at rate 20 req/s"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("missed: ttft_ms=1 (0/8 within)"), std::string::npos) << r.err;
  // Nothing lost: every output is written, and says the same.
  const json results = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(results["status"], "complete");
  EXPECT_EQ(results["gates"]["slo"]["met"], false);
  ASSERT_EQ(results["gates"]["slo"]["checks"].size(), 1u);
  EXPECT_EQ(results["gates"]["slo"]["checks"][0]["sent"], 8);
  const std::string md = ReadFile(out / "report.md");
  EXPECT_NE(md.find("**SLO gate FAILED**: `--slo ttft_ms=1`"), std::string::npos) << md;
  EXPECT_NE(md.find("| rate 20 req/s | 0 / 8 | 0.0% | **not met** |"), std::string::npos) << md;
  EXPECT_TRUE(fs::exists(out / "report.html"));
  EXPECT_TRUE(fs::exists(out / "samples.jsonl"));
  // The JUnit export: one testcase for the one rate point checked, failed with the message.
  const fs::path xml = ExportJunit(out);
  EXPECT_EQ(XPath(xml, "count(//testsuite[@name='gates']/testcase)"), "1");
  EXPECT_EQ(XPath(xml, "string(//testsuite[@name='gates']/@failures)"), "1");
  EXPECT_EQ(XPath(xml, "string(//testsuite[@name='gates']/testcase/failure/@message)"),
            "--slo ttft_ms=1 not met at rate 20 req/s: missed ttft_ms=1 (0/8 within)");
}

TEST(SloGateCliTest, AGenerousSloPassesAtEveryConcurrencyLevel) {
  TempDir dir;
  const fs::path out = dir.path() / "c";
  ProcessResult r = Perf(out, {"--profile", "concurrency", "--levels", "1,2", "--tokens", "16",
                               "--slo", "ttft_ms=60000,e2e_ms=60000", "--fail-on-slo"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("has no effect"), std::string::npos) << r.err;
  const json gate = json::parse(ReadFile(out / "results.json"))["gates"]["slo"];
  EXPECT_EQ(gate["met"], true);
  ASSERT_EQ(gate["checks"].size(), 2u);
  EXPECT_EQ(gate["checks"][1]["where"], "concurrency 2");
  EXPECT_EQ(gate["checks"][1]["good"], 2);
  EXPECT_NE(ReadFile(out / "report.md").find("**SLO gate passed**"), std::string::npos);
  const fs::path xml = ExportJunit(out);
  EXPECT_EQ(XPath(xml, "count(//testsuite[@name='gates']/testcase)"), "2");
  EXPECT_EQ(XPath(xml, "count(//failure)"), "0");
  EXPECT_EQ(XPath(xml, "string(//testsuite[@name='gates']/testcase[2]/@name)"),
            "SLO e2e_ms=60000,ttft_ms=60000 at concurrency 2");
}

TEST(SloGateCliTest, SloAtChecksOnlyTheLevelAskedAndAMissingLevelFails) {
  TempDir dir;
  ProcessResult r =
      Perf(dir.path() / "a", {"--profile", "concurrency", "--levels", "1,2", "--tokens", "16",
                              "--slo", "ttft_ms=1", "--fail-on-slo", "--slo-at", "concurrency=2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("not met at concurrency 2"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("not met at concurrency 1"), std::string::npos) << r.err;
  const json gate = json::parse(ReadFile(dir.path() / "a" / "results.json"))["gates"]["slo"];
  EXPECT_EQ(gate["at"], "concurrency=2");
  EXPECT_EQ(gate["checks"].size(), 1u);

  r = Perf(dir.path() / "b",
           {"--profile", "concurrency", "--levels", "1", "--tokens", "16", "--slo", "ttft_ms=60000",
            "--fail-on-slo", "--slo-at", "concurrency=4"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--slo-at concurrency=4: no such level or rate was measured"),
            std::string::npos)
      << r.err;
}

TEST(SloGateCliTest, BadGateFlagsAreUsageErrors) {
  TempDir dir;
  ProcessResult r = Perf(dir.path() / "a", {"--profile", "concurrency", "--fail-on-slo"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--fail-on-slo needs --slo"), std::string::npos) << r.err;
  r = Perf(dir.path() / "b",
           {"--profile", "concurrency", "--slo", "ttft_ms=5", "--slo-at", "concurrency=2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--slo-at has no effect without --fail-on-slo"), std::string::npos) << r.err;
  r = Perf(dir.path() / "c", {"--profile", "concurrency", "--slo", "ttft_ms=5", "--fail-on-slo",
                              "--slo-at", "level=2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("expected concurrency=N or rate=R"), std::string::npos) << r.err;
}

// ---- compare --max-regression ------------------------------------------------------------

// Two decode runs: 200 tok/s (itl 5 ms) and 100 tok/s (itl 10 ms), written once.
class CompareGateCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    {
      Sim fast({"--itl-ms", "5", "--jitter-ms", "0.5", "--seed", "3"});
      ASSERT_FALSE(fast.url().empty());
      Decode(fast.url(), dir_->path() / "fast");
      Decode(fast.url(), dir_->path() / "fast2");
    }
    Sim slow({"--itl-ms", "10", "--jitter-ms", "1"});
    ASSERT_FALSE(slow.url().empty());
    Decode(slow.url(), dir_->path() / "slow");
  }

  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static std::string Dir(const char* name) { return (dir_->path() / name).string(); }

  static ProcessResult Compare(std::vector<std::string> args) {
    std::vector<std::string> argv = {kBin, "compare"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  }

  static TempDir* dir_;
};

TempDir* CompareGateCliTest::dir_ = nullptr;

TEST_F(CompareGateCliTest, HalfTheSpeedFailsAndTheTableSaysWhich) {
  ProcessResult r = Compare({Dir("fast"), Dir("slow"), "--max-regression", "5%"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::string line = r.out.substr(r.out.find("| Decode speed (median)"));
  line = line.substr(0, line.find('\n'));
  EXPECT_NE(line.find("— ✗ gate: sim-model (slow) "), std::string::npos) << line;
  EXPECT_NE(line.find("% worse (limit 5%)"), std::string::npos) << line;
  EXPECT_NE(r.out.find("Regression gate (--max-regression 5%): FAILED, 1 of 1 check: Decode"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("servebench: Regression gate (--max-regression 5%): FAILED"),
            std::string::npos)
      << r.err;
  // The HTML table and the JSON document carry it too.
  ProcessResult html =
      Compare({Dir("fast"), Dir("slow"), "--max-regression", "5%", "--format", "html"});
  EXPECT_EQ(html.exit_code, 1);
  EXPECT_NE(html.out.find("✗ gate: sim-model (slow)"), std::string::npos);
  ProcessResult js =
      Compare({Dir("fast"), Dir("slow"), "--max-regression", "5%", "--format", "json"});
  ASSERT_EQ(js.exit_code, 1);
  const json gate = json::parse(js.out)["gate"];
  EXPECT_EQ(gate["failed"], true);
  ASSERT_EQ(gate["checks"].size(), 1u);
  EXPECT_EQ(gate["checks"][0]["key"], "decode_tok_s");
  EXPECT_NEAR(gate["checks"][0]["worse_pct"].get<double>(), 50.0, 5.0);
  // The faster run as the new one is no regression: the direction is the row's.
  EXPECT_EQ(Compare({Dir("slow"), Dir("fast"), "--max-regression", "5%"}).exit_code, 0);
}

TEST_F(CompareGateCliTest, TwoRunsOfOneSimulatorPass) {
  ProcessResult r = Compare({Dir("fast"), Dir("fast2"), "--max-regression", "5%"});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("Regression gate (--max-regression 5%): passed"), std::string::npos);
  EXPECT_EQ(r.out.find("✗ gate"), std::string::npos);
  // Their decode row reads "same": run-to-run noise, not a winner.
  std::string line = r.out.substr(r.out.find("| Decode speed (median)"));
  line = line.substr(0, line.find('\n'));
  EXPECT_NE(line.find("| same (within 2.5%)"), std::string::npos) << line;
  // With no equivalence margin the same two runs no longer read "same".
  ProcessResult strict = Compare({Dir("fast"), Dir("fast2"), "--equivalence", "0"});
  ASSERT_EQ(strict.exit_code, 0) << strict.err;
  line = strict.out.substr(strict.out.find("| Decode speed (median)"));
  line = line.substr(0, line.find('\n'));
  EXPECT_EQ(line.find("same (within"), std::string::npos) << line;
  // A margin out of range is a usage error.
  EXPECT_EQ(Compare({Dir("fast"), Dir("fast2"), "--equivalence", "-1"}).exit_code, 2);
}

TEST_F(CompareGateCliTest, JunitHasOneTestcasePerGatedMetric) {
  TempDir dir;
  const fs::path xml = dir.path() / "gate.xml";
  ProcessResult r = Compare({Dir("fast"), Dir("slow"), Dir("fast2"), "--max-regression",
                             "decode=5%", "--format", "junit", "--out", xml.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ExpectValidJunit(xml);
  // One gated row against two runs: two testcases; slow's decode speed is the one failure.
  EXPECT_EQ(XPath(xml, "count(//testcase)"), "2");
  EXPECT_EQ(XPath(xml, "count(//testcase/failure)"), "1");
  EXPECT_EQ(XPath(xml, "string(//testsuite/@failures)"), "1");
  const std::string failed = XPath(xml, "string(//failure/../@name)");
  EXPECT_NE(failed.find("Decode speed (median) [decode_tok_s]: sim-model (slow)"),
            std::string::npos)
      << failed;
  EXPECT_NE(XPath(xml, "string(//failure/@message)").find("% worse than sim-model (fast)"),
            std::string::npos);
  // Two runs of one simulator: the testcase passes.
  r = Compare({Dir("fast"), Dir("fast2"), "--max-regression", "decode=5%", "--format", "junit",
               "--out", xml.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectValidJunit(xml);
  EXPECT_EQ(XPath(xml, "count(//testcase)"), "1");
  EXPECT_EQ(XPath(xml, "count(//failure)"), "0");
  // JUnit without a gate has nothing to list.
  r = Compare({Dir("fast"), Dir("slow"), "--format", "junit"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--format junit needs --max-regression"), std::string::npos) << r.err;
}

TEST_F(CompareGateCliTest, PerMetricLimitsAndBadNames) {
  EXPECT_EQ(Compare({Dir("fast"), Dir("slow"), "--max-regression", "decode=60%"}).exit_code, 0);
  EXPECT_EQ(Compare({Dir("fast"), Dir("slow"), "--max-regression", "60%,decode=3%"}).exit_code, 1);
  EXPECT_EQ(Compare({Dir("fast"), Dir("slow"), "--max-regression", "decode_tok_s=3"}).exit_code, 1);
  ProcessResult bad = Compare({Dir("fast"), Dir("slow"), "--max-regression", "nosuch=3%"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("'nosuch' names no row of this comparison"), std::string::npos) << bad.err;
  bad = Compare({Dir("fast"), Dir("slow"), "--max-regression", "five"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("expected PCT (e.g. 5%)"), std::string::npos) << bad.err;
}

// ---- compare --baseline store:QUERY ------------------------------------------------------

// A real SQLite store: `store import` of the run directories, each with its tag.
TEST_F(CompareGateCliTest, BaselineFromTheStoreIsTheLatestMatchingRunNotTheNewOne) {
  TempDir dir;
  const std::string store = (dir.path() / "runs.sqlite").string();
  auto import = [&](const std::string& run, const std::string& tag) {
    ProcessResult r = RunProcess({kBin, "store", "import", "--store", store, "--tag", tag, run});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  };
  import(Dir("fast"), "gpu=a");
  import(Dir("slow"), "gpu=b");
  // The base is the fast run: the slow one regresses; against the slow base, no regression.
  ProcessResult r = Compare(
      {"--baseline", "store:gpu=a", "--store", store, Dir("slow"), "--max-regression", "5%"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("baseline: run "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(fs::absolute(Dir("fast")).lexically_normal().string()), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("FAILED, 1 of 1 check"), std::string::npos) << r.out;
  EXPECT_EQ(Compare({"--baseline", "store:tag:gpu=b", "--store", store, Dir("fast2"),
                     "--max-regression", "5%"})
                .exit_code,
            0);
  // The latest matching run is the base; a compared run that is stored itself is left out.
  import(Dir("fast2"), "gpu=a");
  r = Compare({"--baseline", "store:gpu=a,model=sim-model", "--store", store, Dir("slow")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(fs::absolute(Dir("fast2")).lexically_normal().string()), std::string::npos)
      << r.err;
  r = Compare({"--baseline", "store:gpu=a", "--store", store, Dir("fast2")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(fs::absolute(Dir("fast")).lexically_normal().string() + "\n"),
            std::string::npos)
      << r.err;
}

TEST_F(CompareGateCliTest, BaselineErrorsAreClear) {
  TempDir dir;
  const std::string store = (dir.path() / "runs.sqlite").string();
  const fs::path gone = dir.path() / "gone";
  fs::copy(Dir("fast"), gone, fs::copy_options::recursive);
  ASSERT_EQ(RunProcess({kBin, "store", "import", "--store", store, "--tag", "gpu=a", gone.string()})
                .exit_code,
            0);
  ProcessResult r = Compare({"--baseline", "store:gpu=c", "--store", store, Dir("slow")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--baseline store:gpu=c: no run in the store matches (1 complete run "
                       "stored"),
            std::string::npos)
      << r.err;
  r = Compare({"--baseline", "store:model", "--store", store, Dir("slow")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'model' is not KEY=VALUE"), std::string::npos) << r.err;
  fs::remove_all(gone);
  r = Compare({"--baseline", "store:gpu=a", "--store", store, Dir("slow")});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("which is gone"), std::string::npos) << r.err;
  r = Compare(
      {"--baseline", "store:", "--store", (dir.path() / "none.sqlite").string(), Dir("slow")});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no run store at"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sb
