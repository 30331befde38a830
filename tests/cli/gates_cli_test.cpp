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

}  // namespace
}  // namespace sb
