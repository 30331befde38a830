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

#include "support/subprocess.h"

namespace sb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ProcessResult;
using testing::RunProcess;

const std::string kBin = SB_BINARY;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/servebench-gates-XXXXXX";
    path_ = mkdtemp(tmpl);
  }

  ~TempDir() { fs::remove_all(path_); }

  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A `servebench sim` child and its base URL.
class Sim {
 public:
  explicit Sim(std::vector<std::string> extra) {
    std::vector<std::string> argv = {kBin, "sim", "--port", "0", "--ttft-ms", "10"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    child_ = std::make_unique<testing::Child>(argv);
    const std::string line = child_->ReadLine();
    const std::string prefix = "listening on ";
    if (line.rfind(prefix, 0) == 0) {
      url_ = line.substr(prefix.size());
    }
  }

  const std::string& url() const { return url_; }

 private:
  std::unique_ptr<testing::Child> child_;
  std::string url_;
};

// A decode-profile run of 7 requests against `url` into `out`.
void Decode(const std::string& url, const fs::path& out) {
  ProcessResult r = RunProcess({kBin, "perf", "--endpoint", url, "--profile", "decode", "--tokens",
                                "64", "--runs", "7", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
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
      Sim fast({"--itl-ms", "5", "--jitter-ms", "1", "--seed", "3"});
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

}  // namespace
}  // namespace sb
