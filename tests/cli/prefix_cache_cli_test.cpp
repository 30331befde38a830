// `servebench perf --profile prefix-cache` end to end: a profile drawn from its table entry
// alone (no writer of its own in src/report), so its report.md table, its report.html chart, its
// compare section, its CSV rows and its flags all come through the profile table.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sb::testing::Child;
using sb::testing::ProcessResult;
using sb::testing::ReadFile;
using sb::testing::RunProcess;
using sb::testing::TempDir;

const std::string kBin = SB_BINARY;

// A perf run of the prefix-cache profile against a `servebench sim` child; cache_tokens 0 =
// the simulator without a prefix cache.
ProcessResult PrefixRun(const fs::path& out, const std::string& cache_tokens) {
  Child sim({kBin, "sim", "--port", "0", "--ttft-ms", "2", "--itl-ms", "0.2",
             "--prefill-us-per-token", "100", "--prefix-cache-tokens", cache_tokens});
  const std::string line = sim.ReadLine();
  EXPECT_EQ(line.rfind("listening on ", 0), 0U) << line;
  return RunProcess(
      {kBin, "perf", "--endpoint", line.substr(13), "--profile", "prefix-cache", "--prefix-sizes",
       "256,1024", "--prefix-hits", "2", "--runs", "1", "--out", out.string()},
      std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
}

TEST(PrefixCacheCli, TheTableAloneGivesTheReportTheChartTheComparisonAndTheCsv) {
  TempDir dir;
  const fs::path warm = dir.path() / "warm";
  const fs::path cold = dir.path() / "cold";
  ProcessResult r = PrefixRun(warm, "1000000");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(PrefixRun(cold, "0").exit_code, 0);

  const json results = json::parse(ReadFile(warm / "results.json"));
  const json& rows = results["perf"]["prefix_cache"]["prefixes"];
  ASSERT_EQ(rows.size(), 2U) << results["perf"].dump();
  EXPECT_EQ(rows[1]["prefix_tokens"], 1024);
  EXPECT_GT(rows[1]["speedup"].get<double>(), 3.0) << rows[1].dump();
  EXPECT_EQ(results["config"]["profile_options"]["--prefix-hits"], "2");
  EXPECT_EQ(results["config"]["profile_options"]["--prefix-sizes"], "256,1024");

  const std::string md = ReadFile(warm / "report.md");
  EXPECT_NE(md.find("### Prefix cache\n"), std::string::npos) << md;
  EXPECT_NE(
      md.find("| Prefix tokens | TTFT cold (ms) | TTFT warm (ms) | Speedup | Cached tokens |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("| 1,024 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("not drawn by this report"), std::string::npos) << md;
  const std::string html = ReadFile(warm / "report.html");
  EXPECT_NE(html.find("data-chart=\"prefix-cache\""), std::string::npos);

  r = RunProcess({kBin, "compare", warm.string(), cold.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Prefix cache"), std::string::npos) << r.out;
  const auto at = r.out.find("| TTFT warm, 1,024 tokens");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string row = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_NE(row.find("faster"), std::string::npos) << row;  // the cached run's warm TTFT

  const fs::path csv = dir.path() / "rows.csv";
  r = RunProcess({kBin, "export", warm.string(), "--format", "csv", "--out", csv.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = ReadFile(csv);
  EXPECT_NE(text.find("prefix-cache"), std::string::npos) << text.substr(0, 2000);
}

TEST(PrefixCacheCli, ItsFlagsAreCheckedAndNamedWhenNoProfileReadsThem) {
  ProcessResult r = RunProcess({kBin, "perf", "--endpoint", "http://127.0.0.1:9/v1", "--profile",
                                "prefix-cache", "--prefix-hits", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--prefix-hits: must be a whole number in [1, 1000], got '0'"),
            std::string::npos)
      << r.err;
  r = RunProcess({kBin, "perf", "--endpoint", "http://127.0.0.1:9/v1", "--profile", "prefix-cache",
                  "--prefix-sizes", "1000,x"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--prefix-sizes: must be whole numbers in [16, 10000000], got 'x'"),
            std::string::npos)
      << r.err;
  r = RunProcess({kBin, "perf", "--help"});
  EXPECT_NE(r.out.find("--prefix-sizes"), std::string::npos);
  EXPECT_NE(r.out.find("prefix-cache"), std::string::npos);

  TempDir dir;
  Child sim({kBin, "sim", "--port", "0", "--ttft-ms", "1", "--itl-ms", "0.1"});
  const std::string line = sim.ReadLine();
  ASSERT_EQ(line.rfind("listening on ", 0), 0U) << line;
  r = RunProcess({kBin, "perf", "--endpoint", line.substr(13), "--profile", "decode", "--tokens",
                  "8", "--runs", "1", "--prefix-hits", "2", "--out", (dir.path() / "d").string()},
                 std::chrono::seconds(60), {"SERVEBENCH_STORE=off"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--prefix-hits has no effect: only the prefix-cache profile reads it"),
            std::string::npos)
      << r.err;
}

}  // namespace
