// One load from many processes (docs/scale-out.md), through the binary: shards started by hand
// (--shard I/N), by Open MPI's mpirun, and by the commands of the Kubernetes manifest that
// `servebench scale-out k8s` prints, all against one real `servebench sim` process; then
// `servebench merge`, checked against the union of the shards' samples and against one process
// running the same total load.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "perf/histogram.h"
#include "support/sim_child.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Child;
using testing::ProcessResult;
using testing::RunProcess;
using testing::SimChild;

const std::string kBin = SB_BINARY;

json ReadJson(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in, nullptr, false);
}

std::vector<json> ReadLines(const fs::path& p) {
  std::vector<json> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      out.push_back(json::parse(line));
    }
  }
  return out;
}

// --start-at a few seconds from now, as unix seconds (every shard gets the same text).
std::string StartSoon(double seconds = 3.0) {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return std::to_string(now + seconds);
}

// The load every test splits: 40 req/s, 80 requests of 8 tokens, Poisson arrivals.
std::vector<std::string> RateArgs(const std::string& url) {
  return {"perf", "--endpoint", url,  "--profile",     "rate", "--rates",
          "40",   "--requests", "80", "--rate-tokens", "8",    "--no-store"};
}

// Rebuilds a merged rate point's histogram of `field` (a per-request "..._ms" value of
// samples.jsonl) from the successful rate requests of every shard, as one process would have
// recorded them (nanoseconds; the journal writes ns / 1e6, which rounds back exactly).
perf::Histogram UnionOf(const std::vector<json>& samples, const std::string& field) {
  perf::Histogram h;
  for (const json& s : samples) {
    if (s.value("profile", "") == "rate" && s.value("status", "") == "ok" && s.contains(field) &&
        s[field].is_number()) {
      h.Record(std::llround(s[field].get<double>() * 1e6));
    }
  }
  return h;
}

// The checks every merged run of the 80-request load passes.
void ExpectMergedLoad(const fs::path& merged, int shards) {
  const json m = ReadJson(merged / "results.json");
  ASSERT_TRUE(m.is_object()) << merged;
  EXPECT_EQ(m["status"], "complete");
  EXPECT_EQ(m["shards"]["count"], shards);
  ASSERT_EQ(m["perf"]["rate"]["rates"].size(), 1u);
  const json& p = m["perf"]["rate"]["rates"][0];
  EXPECT_EQ(p["sent"], 80);
  EXPECT_EQ(p["ok"], 80);
  EXPECT_EQ(p["output_tokens"], 80 * 8);
  EXPECT_DOUBLE_EQ(p["rate_rps"].get<double>(), 40.0);
  EXPECT_EQ(m["summary"]["requests"], 80);

  // Percentiles bit-identical to one histogram over the union of all shards' samples.
  const std::vector<json> samples = ReadLines(merged / "samples.jsonl");
  const perf::Histogram ttft = UnionOf(samples, "ttft_from_scheduled_ms");
  const perf::Histogram e2e = UnionOf(samples, "e2e_from_scheduled_ms");
  EXPECT_EQ(ttft.count(), 80);
  EXPECT_EQ(p["from_scheduled"]["ttft_ms"], perf::PercentilesJson(ttft, 1e6));
  EXPECT_EQ(p["from_scheduled"]["e2e_ms"], perf::PercentilesJson(e2e, 1e6));
  EXPECT_EQ(p["histograms"]["ttft_from_scheduled"], ttft.ToJson());

  // Every shard's lines are there, marked; the shards started together: the simulator received
  // each shard's first scheduled request within a few milliseconds of the others' (its own
  // clock, one for all shards).
  std::map<int, std::int64_t> first_recv;
  for (const json& s : samples) {
    if (s.value("profile", "") != "rate") {
      continue;
    }
    const int shard = s["shard"].get<int>();
    const std::int64_t recv = s["server"]["sim"]["recv_ns"].get<std::int64_t>();
    auto [it, fresh] = first_recv.try_emplace(shard, recv);
    it->second = std::min(it->second, recv);
  }
  ASSERT_EQ(static_cast<int>(first_recv.size()), shards);
  std::int64_t lo = INT64_MAX, hi = 0;
  for (const auto& [shard, t] : first_recv) {
    lo = std::min(lo, t);
    hi = std::max(hi, t);
  }
  EXPECT_LT(hi - lo, 50'000'000) << "the shards' first requests arrived " << (hi - lo) / 1e6
                                 << " ms apart";
  // Each clock offset was measured against the simulator's Date header (one machine: ~0).
  for (const json& s : m["shards"]["shards"]) {
    EXPECT_EQ(s["clock"]["method"], "date-tick") << s.dump();
  }
  ASSERT_TRUE(m["shards"]["clock_spread_s"].is_number());
  EXPECT_LT(m["shards"]["clock_spread_s"].get<double>(), 0.25);

  std::ifstream md(merged / "report.md");
  const std::string report((std::istreambuf_iterator<char>(md)), {});
  EXPECT_NE(report.find("Shards: " + std::to_string(shards) + " shards on 1 host, merged"),
            std::string::npos)
      << report;
}

class ShardCli : public ::testing::Test {
 protected:
  void SetUp() override {
    sim_ = std::make_unique<SimChild>(std::vector<std::string>{"--ttft-ms", "20", "--itl-ms", "5"});
    ASSERT_FALSE(sim_->url().empty()) << "the simulator did not start";
  }

  std::unique_ptr<SimChild> sim_;
  testing::TempDir dir_;
};

TEST_F(ShardCli, FourShardsMergeToTheUnionOfTheirSamples) {
  const fs::path load = dir_.path() / "load";
  const std::string start = StartSoon();
  std::vector<std::unique_ptr<Child>> shards;
  for (int i = 0; i < 4; ++i) {
    std::vector<std::string> argv = {kBin};
    for (const std::string& a : RateArgs(sim_->url())) {
      argv.push_back(a);
    }
    for (const std::string& a : {std::string("--out"), load.string(), std::string("--shard"),
                                 std::to_string(i) + "/4", std::string("--start-at"), start}) {
      argv.push_back(a);
    }
    shards.push_back(std::make_unique<Child>(argv));
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(shards[i]->Wait(std::chrono::seconds(60)), 0) << shards[i]->Stderr();
    const json r = ReadJson(load / ("shard-" + std::to_string(i)) / "results.json");
    EXPECT_EQ(r["shard"]["index"], i);
    EXPECT_EQ(r["shard"]["source"], "--shard");
    EXPECT_EQ(r["perf"]["rate"]["rates"][0]["rate_rps"], 10.0);
    EXPECT_EQ(r["perf"]["rate"]["rates"][0]["sent"], 20);
  }

  // Three of four: refused, naming the missing one, and nothing written.
  const ProcessResult partial =
      RunProcess({kBin, "merge", (load / "shard-0").string(), (load / "shard-1").string(),
                  (load / "shard-3").string(), "--out", (dir_.path() / "partial").string()});
  EXPECT_EQ(partial.exit_code, 2);
  EXPECT_NE(partial.err.find("split into 4 shards but 3 were given (missing: shard 2)"),
            std::string::npos)
      << partial.err;
  EXPECT_FALSE(fs::exists(dir_.path() / "partial" / "results.json"));

  const fs::path merged = dir_.path() / "merged";
  const ProcessResult m =
      RunProcess({kBin, "merge", (load / "shard-2").string(), (load / "shard-0").string(),
                  (load / "shard-3").string(), (load / "shard-1").string(), "--out",
                  merged.string(), "--no-store"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("merged 4 shards (80 requests)"), std::string::npos) << m.out;
  ExpectMergedLoad(merged, 4);
  EXPECT_TRUE(fs::exists(merged / "report.html"));
  // Again into the same directory: refused, the run kept; --overwrite replaces it.
  std::vector<std::string> again = {kBin, "merge"};
  for (int i = 0; i < 4; ++i) {
    again.push_back((load / ("shard-" + std::to_string(i))).string());
  }
  again.insert(again.end(), {"--out", merged.string(), "--no-store"});
  const ProcessResult refused = RunProcess(again);
  EXPECT_EQ(refused.exit_code, 3);
  EXPECT_NE(refused.err.find("already holds a run (results.json); choose another --out, or pass "
                             "--overwrite to replace it"),
            std::string::npos)
      << refused.err;
  again.push_back("--overwrite");
  EXPECT_EQ(RunProcess(again).exit_code, 0);
  ExpectMergedLoad(merged, 4);

  // A run that was not sharded is refused with the way to shard it.
  const fs::path single = dir_.path() / "single";
  std::vector<std::string> argv = {kBin};
  for (const std::string& a : RateArgs(sim_->url())) {
    argv.push_back(a);
  }
  argv.insert(argv.end(), {"--out", single.string()});
  ASSERT_EQ(RunProcess(argv).exit_code, 0);
  const ProcessResult not_shard =
      RunProcess({kBin, "merge", single.string(), "--out", (dir_.path() / "x").string()});
  EXPECT_EQ(not_shard.exit_code, 2);
  EXPECT_NE(not_shard.err.find("not a shard's run"), std::string::npos) << not_shard.err;
}

// The test: mpirun -np 4 --oversubscribe, merged, against one process running the same
// total load. Skipped without mpirun, unless SERVEBENCH_REQUIRE_MPI=1 (CI) makes that a failure.
TEST_F(ShardCli, MpirunFourRanksMatchOneProcessRunningTheWholeLoad) {
  const std::string mpirun = testing::FindOnPath("mpirun");
  if (mpirun.empty()) {
    const char* require = std::getenv("SERVEBENCH_REQUIRE_MPI");
    if (require != nullptr && std::string(require) == "1") {
      FAIL() << "SERVEBENCH_REQUIRE_MPI=1 but no mpirun on PATH (Debian: openmpi-bin)";
    }
    GTEST_SKIP() << "no mpirun on PATH (Debian: openmpi-bin)";
  }
  const fs::path load = dir_.path() / "load";
  std::vector<std::string> argv = {mpirun, "-np", "4", "--oversubscribe", kBin};
  for (const std::string& a : RateArgs(sim_->url())) {
    argv.push_back(a);
  }
  argv.insert(argv.end(), {"--out", load.string(), "--start-at", StartSoon()});
  // Open MPI refuses to run as root (containers, CI) unless told twice.
  const ProcessResult run = RunProcess(
      argv, std::chrono::seconds(90),
      {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_btl=self,tcp"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  for (int i = 0; i < 4; ++i) {
    const json r = ReadJson(load / ("shard-" + std::to_string(i)) / "results.json");
    EXPECT_EQ(r["shard"]["source"], "OMPI_COMM_WORLD_RANK");
    EXPECT_EQ(r["shard"]["count"], 4);
  }
  const fs::path merged = dir_.path() / "merged";
  std::vector<std::string> merge = {kBin, "merge"};
  for (int i = 0; i < 4; ++i) {
    merge.push_back((load / ("shard-" + std::to_string(i))).string());
  }
  merge.insert(merge.end(), {"--out", merged.string(), "--no-store"});
  const ProcessResult m = RunProcess(merge);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  ExpectMergedLoad(merged, 4);

  // One process, the same total load, the same server: the same counts, and a TTFT that agrees
  // with the merged one (the simulator's TTFT is 20 ms; neither client is loaded).
  const fs::path single = dir_.path() / "single";
  std::vector<std::string> one = {kBin};
  for (const std::string& a : RateArgs(sim_->url())) {
    one.push_back(a);
  }
  one.insert(one.end(), {"--out", single.string()});
  ASSERT_EQ(RunProcess(one).exit_code, 0);
  const json s = ReadJson(single / "results.json")["perf"]["rate"]["rates"][0];
  const json g = ReadJson(merged / "results.json")["perf"]["rate"]["rates"][0];
  for (const char* key : {"scheduled", "sent", "ok", "failed", "output_tokens"}) {
    EXPECT_EQ(g[key], s[key]) << key;
  }
  const double merged_p50 = g["from_scheduled"]["ttft_ms"]["p50"].get<double>();
  const double single_p50 = s["from_scheduled"]["ttft_ms"]["p50"].get<double>();
  EXPECT_GE(merged_p50, 20.0);
  EXPECT_GE(single_p50, 20.0);
  EXPECT_LT(std::abs(merged_p50 - single_p50), 10.0) << merged_p50 << " vs " << single_p50;
}

// The manifest parses as YAML, holds an Indexed Job of N pods and the merge Job; and the very
// commands it gives the pods, run here with JOB_COMPLETION_INDEX set and /results pointed at a
// temporary directory, produce shards the merge script joins.
TEST_F(ShardCli, ScaleOutK8sManifestRunsAsWritten) {
  const ProcessResult out = RunProcess({kBin,
                                        "scale-out",
                                        "k8s",
                                        "--shards",
                                        "3",
                                        "--image",
                                        "reg.example/sb:1",
                                        "--start-in",
                                        "3s",
                                        "--merge-wait",
                                        "2s",
                                        "--",
                                        "--endpoint",
                                        sim_->url(),
                                        "--profile",
                                        "rate",
                                        "--rates",
                                        "30",
                                        "--requests",
                                        "30",
                                        "--rate-tokens",
                                        "8"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const std::vector<YAML::Node> docs = YAML::LoadAll(out.out);
  ASSERT_EQ(docs.size(), 2u) << out.out;
  const YAML::Node shards = docs[0];
  EXPECT_EQ(shards["kind"].as<std::string>(), "Job");
  EXPECT_EQ(shards["spec"]["completionMode"].as<std::string>(), "Indexed");
  EXPECT_EQ(shards["spec"]["completions"].as<int>(), 3);
  EXPECT_EQ(shards["spec"]["parallelism"].as<int>(), 3);
  const YAML::Node container = shards["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["image"].as<std::string>(), "reg.example/sb:1");
  std::vector<std::string> command = container["command"].as<std::vector<std::string>>();
  ASSERT_GE(command.size(), 2u);
  EXPECT_EQ(command[0], "servebench");
  const YAML::Node merge = docs[1];
  EXPECT_EQ(merge["kind"].as<std::string>(), "Job");
  std::vector<std::string> merge_cmd =
      merge["spec"]["template"]["spec"]["containers"][0]["command"].as<std::vector<std::string>>();
  ASSERT_EQ(merge_cmd.size(), 3u);
  EXPECT_EQ(merge_cmd[0], "/bin/sh");

  // Run the pods' command here: /results is the temporary directory, servebench this build.
  auto local = [&](std::string s) {
    for (std::size_t at = s.find("/results"); at != std::string::npos;
         at = s.find("/results", at + 1)) {
      s.replace(at, 8, dir_.path().string());
    }
    return s;
  };
  command[0] = kBin;
  for (std::string& a : command) {
    a = local(a);
  }
  std::vector<std::unique_ptr<Child>> pods;
  for (int i = 0; i < 3; ++i) {
    setenv("JOB_COMPLETION_INDEX", std::to_string(i).c_str(), 1);
    pods.push_back(std::make_unique<Child>(command));
  }
  unsetenv("JOB_COMPLETION_INDEX");
  for (auto& pod : pods) {
    EXPECT_EQ(pod->Wait(std::chrono::seconds(60)), 0) << pod->Stderr();
  }
  const std::string path = fs::path(kBin).parent_path().string() + ":" + std::getenv("PATH");
  // A shard whose pod died wrote no report: the merge gives up after --merge-wait, naming it.
  const fs::path report1 = dir_.path() / "run" / "shard-1" / "report.md";
  fs::rename(report1, dir_.path() / "report-1.md");
  const ProcessResult gave_up =
      RunProcess({"/bin/sh", "-c", local(merge_cmd[2])}, std::chrono::seconds(30),
                 {"PATH=" + path, "SERVEBENCH_STORE=off"});
  EXPECT_EQ(gave_up.exit_code, 1);
  EXPECT_NE(gave_up.err.find("shard-1/report.md after 2 s: did that shard fail?"),
            std::string::npos)
      << gave_up.err;
  fs::rename(dir_.path() / "report-1.md", report1);
  const ProcessResult merged =
      RunProcess({"/bin/sh", "-c", local(merge_cmd[2])}, std::chrono::seconds(60),
                 {"PATH=" + path, "SERVEBENCH_STORE=off"});
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  const json m = ReadJson(dir_.path() / "run" / "merged" / "results.json");
  EXPECT_EQ(m["shards"]["count"], 3);
  EXPECT_EQ(m["perf"]["rate"]["rates"][0]["sent"], 30);
  for (const json& s : m["shards"]["shards"]) {
    EXPECT_EQ(s["source"], "JOB_COMPLETION_INDEX");
  }

  // Without --endpoint every pod would load a simulator of its own: refused.
  const ProcessResult no_endpoint =
      RunProcess({kBin, "scale-out", "k8s", "--shards", "2", "--image", "x", "--", "--profile",
                  "rate", "--rates", "4"});
  EXPECT_EQ(no_endpoint.exit_code, 2);
  EXPECT_NE(no_endpoint.err.find("--endpoint"), std::string::npos) << no_endpoint.err;
}

}  // namespace
}  // namespace sb
