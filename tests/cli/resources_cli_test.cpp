// The resource section end to end through the servebench binary: a launched simulator's process
// tree (/proc), NVML through the tests' library with NVML's C ABI (SERVEBENCH_NVML_LIB), the
// simulator's Prometheus gauges, and --power-cmd; sources that are not available are listed with
// their reason and contribute no zeros.
#include <filesystem>
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
const std::string kFakeNvml = SB_FAKE_NVML;

const json* Source(const json& res, const std::string& name) {
  for (const auto& s : res["sources"]) {
    if (s["name"] == name) {
      return &s;
    }
  }
  return nullptr;
}

TEST(ResourcesCli, ServeReportsTheServersPeakRssCpuAndNvmlEnergyPerToken) {
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r = RunProcess(
      {kBin, "perf", "--profile", "decode,concurrency", "--runs", "2", "--levels", "2", "--serve",
       kBin + " sim --port {port} --itl-ms 2", "--sample-period-ms", "50", "--out", out.string()},
      std::chrono::seconds(120),
      {"SERVEBENCH_NVML_LIB=" + kFakeNvml, "FAKE_NVML_DEVICES=2", "FAKE_NVML_POWER_MW=100000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("resources: peak memory 40.00 GiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("server peak RSS"), std::string::npos) << r.out;
  const json res = json::parse(ReadFile(out / "results.json"));
  const json& rs = res["resources"];
  EXPECT_EQ(rs["period_ms"], 50.0);
  for (const char* name : {"nvml", "process", "prometheus"}) {
    const json* s = Source(rs, name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_EQ((*s)["available"], true) << name << ": " << s->dump();
    EXPECT_EQ((*s)["failed_reads"], 0) << name << ": " << s->dump();
  }
  EXPECT_EQ((*Source(rs, "power-cmd"))["reason"], "no --power-cmd given");
  // The simulator is a real process: tens of MB resident, some CPU while it streamed.
  const json& run = rs["run"];
  EXPECT_GT(run["server_rss_bytes"]["peak"].get<double>(), 4e6);
  EXPECT_LT(run["server_rss_bytes"]["peak"].get<double>(), 2e9);
  EXPECT_GT(run["server_cpu_pct"]["peak"].get<double>(), 0);
  EXPECT_EQ(run["requests_running"]["peak"], 2.0);  // the simulator's gauge at concurrency 2
  // Each decode run: two fake GPUs at 100 W each, from their energy counters.
  const json& runs = res["perf"]["decode"]["runs"];
  ASSERT_EQ(runs.size(), 2U);
  for (const auto& row : runs) {
    const json& f = row["resources"];
    ASSERT_TRUE(f.is_object()) << row.dump();
    EXPECT_EQ(f["energy_from"], "gpu_energy_counter");
    EXPECT_NEAR(f["power_w"]["mean"].get<double>(), 200.0, 2.0) << f.dump();
    EXPECT_EQ(f["output_tokens"], 256);
    const double energy = f["energy_j"].get<double>();
    EXPECT_NEAR(energy, 200.0 * f["window_s"].get<double>(), 0.01 * energy);
    EXPECT_NEAR(f["j_per_token"].get<double>(), energy / 256, 1e-9);
    EXPECT_NEAR(f["tokens_per_j"].get<double>(), 256 / energy, 1e-9);
    EXPECT_EQ(f["memory_source"], "gpu");
    EXPECT_EQ(f["memory_bytes"]["peak"], 2.0 * (20LL << 30));
    EXPECT_EQ(f["gpu_util_pct"]["mean"], 87.0);
    // The row's window is the request's: first send to last token.
    EXPECT_NEAR(f["window_s"].get<double>(), row["e2e_ms"].get<double>() / 1e3, 0.002);
  }
  EXPECT_TRUE(res["perf"]["concurrency"]["levels"][0]["resources"]["energy_j"].is_number());
  // The series a chart can draw.
  const json& series = rs["series"];
  EXPECT_EQ(series["t_s"].size(), rs["samples"].get<std::size_t>());
  EXPECT_EQ(series["gpu_power_w"].size(), series["t_s"].size());
  EXPECT_GT(rs["samples"].get<int>(), 10);
  EXPECT_TRUE(rs["sampler_cost"]["cpu_ms_per_s"].is_number());
  const std::string md = ReadFile(out / "report.md");
  EXPECT_NE(md.find("## Resources"), std::string::npos);
  EXPECT_NE(md.find("| nvml | available | 2 × Fake GPU H200"), std::string::npos) << md;
  EXPECT_NE(md.find("| power-cmd | not available | no --power-cmd given |"), std::string::npos);
  EXPECT_NE(md.find("| decode | run 1 | 40.00 GiB | 40.00 GiB |"), std::string::npos) << md;
}

TEST(ResourcesCli, UnifiedMemoryFallsBackToTheServersRss) {
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r = RunProcess(
      {kBin, "perf", "--profile", "decode", "--runs", "1", "--serve",
       kBin + " sim --port {port} --itl-ms 1", "--out", out.string()},
      std::chrono::seconds(120),
      {"SERVEBENCH_NVML_LIB=" + kFakeNvml, "FAKE_NVML_UNIFIED=1", "FAKE_NVML_NO_ENERGY=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json res = json::parse(ReadFile(out / "results.json"));
  const json& f = res["perf"]["decode"]["runs"][0]["resources"];
  EXPECT_EQ(f["memory_source"], "server_rss") << f.dump();
  EXPECT_TRUE(f["gpu_memory_used_bytes"].is_null());
  EXPECT_EQ(f["memory_bytes"], f["server_rss_bytes"]);
  EXPECT_EQ(f["energy_from"], "integrated_power");
  EXPECT_NEAR(f["power_w"]["mean"].get<double>(), 150.0, 1e-6);
  EXPECT_NE(res["warnings"].dump().find("unified-memory"), std::string::npos)
      << res["warnings"].dump();
}

TEST(ResourcesCli, EmbeddedSimulatorWithPowerCommandAndNoNvml) {
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r =
      RunProcess({kBin, "perf", "--profile", "decode", "--runs", "1", "--power-cmd", "echo 50",
                  "--out", out.string()},
                 std::chrono::seconds(120), {"SERVEBENCH_NVML_LIB=/nonexistent/libnvidia-ml.so.1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json res = json::parse(ReadFile(out / "results.json"));
  const json& rs = res["resources"];
  EXPECT_EQ((*Source(rs, "nvml"))["available"], false);
  EXPECT_NE((*Source(rs, "nvml"))["reason"].get<std::string>().find("could not be loaded"),
            std::string::npos);
  EXPECT_NE((*Source(rs, "process"))["reason"].get<std::string>().find("built-in simulator"),
            std::string::npos);
  const json& f = res["perf"]["decode"]["runs"][0]["resources"];
  EXPECT_EQ(f["power_source"], "power-cmd");
  EXPECT_NEAR(f["power_w"]["mean"].get<double>(), 50.0, 1e-6);
  EXPECT_NEAR(f["j_per_token"].get<double>(), 50.0 * f["window_s"].get<double>() / 256, 1e-9);
  // Nothing measured memory: null, never 0.
  EXPECT_TRUE(f["memory_bytes"].is_null());
  EXPECT_TRUE(f["server_rss_bytes"].is_null());
  const std::string md = ReadFile(out / "report.md");
  EXPECT_NE(md.find("| process | not available | the built-in simulator"), std::string::npos);
}

TEST(ResourcesCli, ABadSamplePeriodIsAUsageError) {
  ProcessResult r = RunProcess({kBin, "perf", "--profile", "decode", "--sample-period-ms", "5"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--sample-period-ms must be in 10..60000"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sb
