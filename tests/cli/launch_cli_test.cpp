// End-to-end tests of server lifecycle through the servebench binary: `run --serve` starting
// the simulator, a server that fails to start, and `servebench launch` running a matrix of
// recipes (bare / speculative) into one comparison.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

TEST(LaunchCli, RunServeStartsMeasuresAndStopsTheServer) {
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r =
      RunProcess({kBin, "run", "--serve", kBin + " sim --port {port} --itl-ms 0.2 --answers quick",
                  "--suite", "quick", "--out", out.string()},
                 std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("server ready after"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stopped: ended by SIGTERM"), std::string::npos) << r.err;
  const json res = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(res["summary"]["pass"], 5);
  const json& sp = res["server_process"];
  EXPECT_GT(sp["time_to_ready_s"].get<double>(), 0);
  EXPECT_EQ(sp["log_file"], "server.log");
  EXPECT_EQ(sp["stop"]["killed"], false);
  EXPECT_NE(ReadFile(out / "server.log").find("listening on"), std::string::npos);
  EXPECT_NE(ReadFile(out / "report.md").find("Server: started by servebench"), std::string::npos);
}

TEST(LaunchCli, AServerThatDiesGivesItsLogTailAndExitThree) {
  TempDir dir;
  ProcessResult r = RunProcess({kBin, "perf", "--profile", "decode", "--serve",
                                "echo 'model file not found' >&2; exit 4 # --port {port}", "--out",
                                (dir.path() / "run").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("exited with code 4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("model file not found"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / "run" / "server.log"));
  EXPECT_FALSE(fs::exists(dir.path() / "run" / "results.json"));
}

TEST(LaunchCli, ServeAndEndpointTogetherIsAUsageError) {
  ProcessResult r = RunProcess({kBin, "perf", "--profile", "decode", "--serve", "x --port {port}",
                                "--endpoint", "http://127.0.0.1:1/v1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("do not give --endpoint too"), std::string::npos) << r.err;
}

TEST(LaunchCli, MatrixRunsEachRecipeThenCompares) {
  TempDir dir;
  const fs::path matrix = dir.path() / "spec.yaml";
  {
    std::ofstream(matrix) << "defaults:\n  ready_timeout_s: 30\n  stop_timeout_s: 5\n"
                             "recipes:\n"
                             "  - name: bare\n    argv: ["
                          << kBin
                          << ", sim, --port, '{port}', --itl-ms, '2']\n"
                             "  - name: broken\n    command: 'exit 1 # {port}'\n"
                             "  - name: mtp3\n    argv: ["
                          << kBin
                          << ", sim, --port, '{port}', --itl-ms, '2', --spec-tokens, '3', "
                             "--spec-accept, '0.86,0.67,0.55']\n";
  }
  const fs::path out = dir.path() / "matrix";
  ProcessResult r = RunProcess({kBin, "launch", matrix.string(), "--keep-going", "--profiles",
                                "decode", "--runs", "2", "--tokens", "64", "--out", out.string()},
                               std::chrono::seconds(120));
  EXPECT_EQ(r.exit_code, 3) << r.err;  // one recipe failed to start
  EXPECT_NE(r.out.find("bare: done"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("broken: failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mtp3: done"), std::string::npos) << r.out;
  const std::string md = ReadFile(out / "compare.md");
  EXPECT_NE(md.find("servebench compare: bare vs mtp3"), std::string::npos) << md;
  EXPECT_NE(md.find("Mean acceptance length"), std::string::npos);
  const json cmp = json::parse(ReadFile(out / "compare.json"));
  bool decode_row = false;
  for (const json& section : cmp["sections"]) {
    for (const json& row : section["rows"]) {
      if (row["key"] == "decode_tok_s") {
        decode_row = true;
        EXPECT_EQ(row["advantage"]["winner"], "mtp3") << row.dump();
      }
    }
  }
  EXPECT_TRUE(decode_row);
  EXPECT_TRUE(fs::exists(out / "bare" / "server.log"));
  EXPECT_TRUE(fs::exists(out / "broken" / "server.log"));
  EXPECT_FALSE(fs::exists(out / "broken" / "results.json"));

  // Without --keep-going the matrix stops at the failure.
  ProcessResult stop =
      RunProcess({kBin, "launch", matrix.string(), "--profiles", "decode", "--runs", "1",
                  "--tokens", "16", "--out", (dir.path() / "m2").string()},
                 std::chrono::seconds(120));
  EXPECT_EQ(stop.exit_code, 3);
  EXPECT_NE(stop.out.find("mtp3: not run"), std::string::npos) << stop.out;
  EXPECT_NE(stop.out.find("no comparison"), std::string::npos);
}

TEST(LaunchCli, RecipeFileWithSeveralRecipesPointsToLaunch) {
  TempDir dir;
  const fs::path matrix = dir.path() / "two.yaml";
  {
    std::ofstream(matrix) << "recipes:\n  - {name: a, command: 'x --port {port}'}\n"
                             "  - {name: b, command: 'y --port {port}'}\n";
  }
  ProcessResult r = RunProcess({kBin, "perf", "--profile", "decode", "--recipe", matrix.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("servebench launch"), std::string::npos) << r.err;
  ProcessResult only = RunProcess({kBin, "launch", matrix.string(), "--only", "c"});
  EXPECT_EQ(only.exit_code, 2);
  EXPECT_NE(only.err.find("no such recipe"), std::string::npos) << only.err;
}

}  // namespace
}  // namespace sb
