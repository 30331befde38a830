// The sources: NVML against a library with NVML's C ABI built by the tests (fake_nvml.cpp,
// loaded by path as SERVEBENCH_NVML_LIB would), the /proc process tree of a real child process,
// the Prometheus gauges of each server, and --power-cmd with real shell commands.
#include "resources/sources.h"

#include <cstdlib>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sb::resources {
namespace {

const std::string kFakeNvml = SB_FAKE_NVML;

using SetFn = void (*)(unsigned, long long, unsigned long long);  // NOLINT(runtime/int)

SetFn FakeSet() {
  // The same file: dlopen hands back the library OpenNvml loaded, so they share its state.
  void* lib = dlopen(kFakeNvml.c_str(), RTLD_NOW | RTLD_LOCAL);
  return lib != nullptr ? reinterpret_cast<SetFn>(dlsym(lib, "fake_nvml_set")) : nullptr;
}

using Vars = std::vector<std::pair<std::string, std::string>>;

class Env {
 public:
  explicit Env(Vars vars) : vars_(std::move(vars)) {
    for (const auto& [k, v] : vars_) {
      setenv(k.c_str(), v.c_str(), 1);
    }
  }

  ~Env() {
    for (const auto& [k, v] : vars_) {
      unsetenv(k.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::string>> vars_;
};

TEST(Nvml, ReadsMemoryPowerEnergyUtilizationAndClockSummedOverGpus) {
  Env env(Vars{{"FAKE_NVML_DEVICES", "2"}, {"FAKE_NVML_POWER_MW", "150000"}});
  std::string notes;
  auto nvml = OpenNvml(kFakeNvml, &notes);
  ASSERT_TRUE(nvml) << nvml.error().message;
  EXPECT_EQ((*nvml)->name(), "nvml");
  EXPECT_NE((*nvml)->detail().find("2 × Fake GPU H200"), std::string::npos) << (*nvml)->detail();
  EXPECT_NE((*nvml)->detail().find("total-energy counter"), std::string::npos);
  EXPECT_TRUE(notes.empty());
  SetFn set = FakeSet();
  ASSERT_NE(set, nullptr);
  set(123456, 7'000'000, 30ULL << 30);
  Fields f;
  ASSERT_TRUE((*nvml)->Read(f));
  EXPECT_DOUBLE_EQ(f.at(kGpuPower), 2 * 123.456);               // mW -> W, two GPUs
  EXPECT_DOUBLE_EQ(f.at(kGpuEnergy), 2 * 7000.0);               // mJ -> J
  EXPECT_DOUBLE_EQ(f.at(kGpuMemoryUsed), 2.0 * (30ULL << 30));  // bytes
  EXPECT_DOUBLE_EQ(f.at(kGpuMemoryTotal), 2.0 * (141ULL << 30));
  EXPECT_DOUBLE_EQ(f.at(kGpuUtil), 87);       // mean over GPUs
  EXPECT_DOUBLE_EQ(f.at(kGpuSmClock), 1980);  // mean over GPUs
}

TEST(Nvml, UnifiedMemoryDeviceReportsNoGpuMemoryAndSaysTheRssStandsIn) {
  Env env(Vars{{"FAKE_NVML_UNIFIED", "1"}, {"FAKE_NVML_NO_ENERGY", "1"}});
  std::string notes;
  auto nvml = OpenNvml(kFakeNvml, &notes);
  ASSERT_TRUE(nvml) << nvml.error().message;
  EXPECT_NE(notes.find("unified-memory"), std::string::npos) << notes;
  EXPECT_NE((*nvml)->detail().find("integrated power"), std::string::npos) << (*nvml)->detail();
  Fields f;
  ASSERT_TRUE((*nvml)->Read(f));
  EXPECT_FALSE(f.contains(kGpuMemoryUsed));  // absent, never 0
  EXPECT_FALSE(f.contains(kGpuEnergy));
  EXPECT_DOUBLE_EQ(f.at(kGpuPower), 150.0);
}

TEST(Nvml, TheEnvironmentVariableChoosesTheLibrary) {
  Env env(Vars{{kNvmlLibraryEnv, kFakeNvml}});
  auto nvml = OpenNvml("");
  ASSERT_TRUE(nvml) << nvml.error().message;
  EXPECT_NE((*nvml)->detail().find("Fake GPU H200"), std::string::npos);
}

TEST(Nvml, AMissingLibraryOrAFailedInitIsNotAvailableWithTheReason) {
  auto missing = OpenNvml("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("could not be loaded"), std::string::npos)
      << missing.error().message;
  Env env(Vars{{"FAKE_NVML_INIT_ERROR", "9"}});
  auto failed = OpenNvml(kFakeNvml);
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("Driver Not Loaded"), std::string::npos)
      << failed.error().message;
}

TEST(ProcessTree, ReadsRssAndCpuOfAChildSessionAndItsDescendants) {
  // A real child in its own session (as launch starts servers) that starts a busy grandchild.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setsid();
    execl("/bin/sh", "sh", "-c", "while :; do :; done & wait", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::vector<pid_t> tree;
  for (int i = 0; i < 200 && tree.size() < 2; ++i) {
    usleep(10'000);
    tree = ProcessTree(pid);
  }
  ASSERT_GE(tree.size(), 2U);  // sh and its looping child
  auto source = OpenProcessTree(pid);
  ASSERT_TRUE(source) << source.error().message;
  usleep(200'000);
  Fields f;
  ASSERT_TRUE((*source)->Read(f));
  EXPECT_GT(f.at(kServerRss), 100'000);  // two shells: well over 100 KB resident
  EXPECT_GE(f.at(kServerProcesses), 2);
  // The busy loop burns about one core; allow for a loaded machine.
  EXPECT_GT(f.at(kServerCpu), 20.0);
  EXPECT_LT(f.at(kServerCpu), 250.0);
  // Reads 5 ms apart: /proc counts 10 ms ticks, so a rate over 5 ms read one tick as 200% of a
  // core (240% was seen for one busy process). The rate is taken over at least 200 ms instead.
  for (int i = 0; i < 20; ++i) {
    usleep(5'000);
    Fields quick;
    ASSERT_TRUE((*source)->Read(quick));
    ASSERT_TRUE(quick.contains(kServerCpu));
    EXPECT_LT(quick.at(kServerCpu), 130.0) << "read " << i;  // one busy loop: one core at most
  }
  // A source read at once after it was opened has no CPU figure yet: absent (null), not 0.
  auto fresh = OpenProcessTree(pid);
  ASSERT_TRUE(fresh) << fresh.error().message;
  Fields first;
  ASSERT_TRUE((*fresh)->Read(first));
  EXPECT_FALSE(first.contains(kServerCpu)) << first.at(kServerCpu);
  EXPECT_TRUE(first.contains(kServerRss));
  kill(-pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  for (int i = 0; i < 200 && !ProcessTree(pid).empty(); ++i) {
    usleep(10'000);
  }
  Fields after;
  auto gone = (*source)->Read(after);
  EXPECT_FALSE(gone);
  EXPECT_FALSE(after.contains(kServerRss));
  EXPECT_FALSE(OpenProcessTree(pid));
}

TEST(Gauges, ReadsEachServersNames) {
  auto parse = [](const char* text) { return ReadGauges(*perf::ParsePrometheus(text)); };
  Fields v = parse(
      "vllm:kv_cache_usage_perc{engine=\"0\"} 0.25\nvllm:kv_cache_usage_perc{engine=\"1\"} 0.5\n"
      "vllm:num_requests_running{engine=\"0\"} 3\nvllm:num_requests_running{engine=\"1\"} 1\n"
      "vllm:num_requests_waiting{engine=\"0\"} 2\n");
  EXPECT_DOUBLE_EQ(v.at(kKvCacheUsage), 0.5);  // the fullest engine
  EXPECT_DOUBLE_EQ(v.at(kRequestsRunning), 4);
  EXPECT_DOUBLE_EQ(v.at(kRequestsWaiting), 2);
  v = parse("vllm:gpu_cache_usage_perc 0.125\n");
  EXPECT_DOUBLE_EQ(v.at(kKvCacheUsage), 0.125);
  v = parse("sglang:token_usage 0.75\nsglang:num_running_reqs 5\nsglang:num_queue_reqs 7\n");
  EXPECT_DOUBLE_EQ(v.at(kKvCacheUsage), 0.75);
  EXPECT_DOUBLE_EQ(v.at(kRequestsRunning), 5);
  EXPECT_DOUBLE_EQ(v.at(kRequestsWaiting), 7);
  v = parse(
      "llamacpp:kv_cache_usage_ratio 0.0625\nllamacpp:requests_processing 1\n"
      "llamacpp:requests_deferred 0\n");
  EXPECT_DOUBLE_EQ(v.at(kKvCacheUsage), 0.0625);
  EXPECT_DOUBLE_EQ(v.at(kRequestsRunning), 1);
  EXPECT_DOUBLE_EQ(v.at(kRequestsWaiting), 0);
  EXPECT_TRUE(parse("process_cpu_seconds_total 12\n").empty());
}

TEST(Gauges, ASourceReadsEachScrapeAndIsNotAvailableWithoutGauges) {
  int calls = 0;
  auto source = OpenPrometheusGauges([&calls]() -> Result<std::string> {
    ++calls;
    return "vllm:num_requests_running " + std::to_string(calls) + "\n";
  });
  ASSERT_TRUE(source);
  Fields f;
  ASSERT_TRUE((*source)->Read(f));
  EXPECT_DOUBLE_EQ(f.at(kRequestsRunning), 2);  // the second scrape's value
  auto none = OpenPrometheusGauges([]() -> Result<std::string> { return std::string("up 1\n"); });
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("none of the gauges"), std::string::npos);
  auto refused = OpenPrometheusGauges([]() -> Result<std::string> {
    return MakeError(ErrorCode::kHttp, "GET /metrics: HTTP 404");
  });
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "GET /metrics: HTTP 404");
}

TEST(PowerCommand, ReadsTheWattsACommandPrints) {
  auto source = OpenPowerCommand("echo 'GPU power: 42.5 W'");
  ASSERT_TRUE(source) << source.error().message;
  Fields f;
  ASSERT_TRUE((*source)->Read(f));
  EXPECT_DOUBLE_EQ(f.at(kCommandPower), 42.5);
}

TEST(PowerCommand, FailuresAreNotAvailableWithTheReason) {
  auto failing = OpenPowerCommand("exit 3");
  ASSERT_FALSE(failing);
  EXPECT_NE(failing.error().message.find("exit code 3"), std::string::npos);
  auto words = OpenPowerCommand("echo no reading");
  ASSERT_FALSE(words);
  EXPECT_NE(words.error().message.find("no number of watts"), std::string::npos);
  auto slow = OpenPowerCommand("sleep 5; echo 10", 200);
  ASSERT_FALSE(slow);
  EXPECT_NE(slow.error().message.find("took over 200 ms"), std::string::npos);
  EXPECT_DOUBLE_EQ(*ParseWatts("  17\n"), 17.0);
  EXPECT_DOUBLE_EQ(*ParseWatts("power=.5"), 0.5);
  EXPECT_FALSE(ParseWatts("-3"));
  // A reading no machine gives would make every mean and energy infinite ("inf W").
  auto huge = ParseWatts("1e308");
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("printed 1e+308 W, over 1e+07 W"), std::string::npos)
      << huge.error().message;
  EXPECT_DOUBLE_EQ(*ParseWatts("10000000"), 1e7);
}

}  // namespace
}  // namespace sb::resources
