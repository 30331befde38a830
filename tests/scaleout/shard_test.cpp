// The shard module (run/shard.h): which shard a process is (flag and launcher variables), its
// share of the load, --start-at parsing and waiting (on a ManualClock), the HTTP Date parser and
// the clock probe against a real simulator.
#include "scaleout/shard.h"

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "core/clock.h"
#include "run/plan.h"
#include "sim/http.h"
#include "sim/sim_server.h"

namespace sb::scaleout {
namespace {

using namespace std::chrono_literals;
using run::CheckPlan;
using run::Plan;

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it != vars.end() ? std::optional<std::string>(it->second) : std::nullopt;
  };
}

TEST(ShardTest, ConcurrencyTenOverFourIsThreeThreeTwoTwo) {
  std::vector<long long> shares;
  long long sum = 0;
  for (int i = 0; i < 4; ++i) {
    shares.push_back(ShareOf(10, ShardSpec{i, 4, "--shard"}));
    sum += shares.back();
  }
  EXPECT_EQ(shares, (std::vector<long long>{3, 3, 2, 2}));
  EXPECT_EQ(sum, 10);
  EXPECT_EQ(ShareOf(3, ShardSpec{3, 4, ""}), 0);
  EXPECT_EQ(ShareOf(8, ShardSpec{1, 4, ""}), 2);
}

TEST(ShardTest, RateSplitDividesRatesAndRequestsWithDistinctSeeds) {
  std::set<std::uint64_t> seeds;
  int total_requests = 0;
  for (int i = 0; i < 4; ++i) {
    perf::RateOptions r;
    r.rates = {8, 20};
    r.requests = 101;
    r.seed = 7;
    r.max_concurrency = 10;
    ASSERT_TRUE(ApplyShare(ShardSpec{i, 4, "--shard"}, r));
    EXPECT_EQ(r.rates, (std::vector<double>{2, 5}));
    EXPECT_EQ(r.max_concurrency, i < 2 ? 3 : 2);
    EXPECT_TRUE(r.histograms);
    total_requests += r.requests;
    seeds.insert(r.seed);
  }
  EXPECT_EQ(total_requests, 101);
  EXPECT_EQ(seeds.size(), 4u);
  EXPECT_EQ(seeds.count(7), 0u);  // no shard replays the unsharded run's arrivals
  EXPECT_EQ(ShardSeed(7, ShardSpec{0, 1, ""}), 7u);
  EXPECT_EQ(ShardSeed(7, ShardSpec{2, 4, ""}), ShardSeed(7, ShardSpec{2, 4, ""}));
}

TEST(ShardTest, EmptyShareAndSearchAreRefused) {
  perf::RateOptions r;
  r.rates = {1};
  r.requests = 3;
  auto e = ApplyShare(ShardSpec{3, 4, "--shard"}, r);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("--requests 3 cannot be split over 4 shards"),
            std::string::npos);
  perf::RateOptions s;
  s.search = std::make_pair(1.0, 10.0);
  auto e2 = ApplyShare(ShardSpec{0, 2, "--shard"}, s);
  ASSERT_FALSE(e2);
  EXPECT_NE(e2.error().message.find("--search-rate"), std::string::npos);
}

TEST(ShardTest, ParsesTheShardFlag) {
  auto s = ParseShardFlag("2/4");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 4);
  for (const char* bad : {"4/4", "-1/4", "1", "1/0", "a/b", "1/4/2", "", "1/5000"}) {
    auto e = ParseShardFlag(bad);
    ASSERT_FALSE(e) << bad;
    EXPECT_EQ(e.error().code, ErrorCode::kUsage);
    EXPECT_NE(e.error().message.find("--shard"), std::string::npos);
  }
}

TEST(ShardTest, DetectsTheRankOfEachLauncher) {
  struct Case {
    std::map<std::string, std::string> env;
    int index, count;
    const char* source;
  };

  const std::vector<Case> cases = {
      {{{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}},
       3,
       4,
       "OMPI_COMM_WORLD_RANK"},
      {{{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}, 1, 2, "PMI_RANK"},
      {{{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}}, 5, 8, "SLURM_PROCID"},
      // Open MPI first when several launchers' variables are set (srun inside an MPI job).
      {{{"SLURM_PROCID", "0"},
        {"SLURM_NTASKS", "1"},
        {"OMPI_COMM_WORLD_RANK", "1"},
        {"OMPI_COMM_WORLD_SIZE", "2"}},
       1,
       2,
       "OMPI_COMM_WORLD_RANK"},
  };
  for (const Case& c : cases) {
    auto s = DetectShard("", 0, Env(c.env));
    ASSERT_TRUE(s) << s.error().message;
    ASSERT_TRUE(s.value()) << c.source;
    EXPECT_EQ(s.value()->index, c.index);
    EXPECT_EQ(s.value()->count, c.count);
    EXPECT_EQ(s.value()->source, c.source);
  }
  // One process, or nothing set: not sharded.
  auto single = DetectShard("", 0, Env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}));
  ASSERT_TRUE(single);
  EXPECT_FALSE(single.value());
  auto none = DetectShard("", 0, Env({}));
  ASSERT_TRUE(none);
  EXPECT_FALSE(none.value());
  // The flag wins over the environment.
  auto flag = DetectShard("0/3", 0, Env({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}));
  ASSERT_TRUE(flag && flag.value());
  EXPECT_EQ(flag.value()->count, 3);
  EXPECT_EQ(flag.value()->source, "--shard");
}

TEST(ShardTest, KubernetesIndexNeedsShards) {
  auto k = DetectShard("", 6, Env({{"JOB_COMPLETION_INDEX", "5"}}));
  ASSERT_TRUE(k && k.value());
  EXPECT_EQ(k.value()->index, 5);
  EXPECT_EQ(k.value()->count, 6);
  EXPECT_EQ(k.value()->source, "JOB_COMPLETION_INDEX");
  // Without --shards, an index alone does not shard (Kubernetes does not say how many).
  auto alone = DetectShard("", 0, Env({{"JOB_COMPLETION_INDEX", "5"}}));
  ASSERT_TRUE(alone);
  EXPECT_FALSE(alone.value());
  auto out_of_range = DetectShard("", 4, Env({{"JOB_COMPLETION_INDEX", "4"}}));
  ASSERT_FALSE(out_of_range);
  EXPECT_NE(out_of_range.error().message.find("JOB_COMPLETION_INDEX=4"), std::string::npos);
  auto no_rank = DetectShard("", 4, Env({}));
  ASSERT_FALSE(no_rank);
  EXPECT_NE(no_rank.error().message.find("JOB_COMPLETION_INDEX"), std::string::npos);
  auto disagree =
      DetectShard("", 4, Env({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}}));
  ASSERT_FALSE(disagree);
  EXPECT_NE(disagree.error().message.find("disagrees"), std::string::npos);
  auto both = DetectShard("0/2", 2, Env({}));
  ASSERT_FALSE(both);
}

TEST(ShardTest, MalformedLauncherVariablesAreNamed) {
  auto e = DetectShard("", 0, Env({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "4"}}));
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("SLURM_PROCID=x"), std::string::npos);
  auto e2 = DetectShard("", 0, Env({{"PMI_RANK", "2"}, {"PMI_SIZE", "2"}}));
  ASSERT_FALSE(e2);
  EXPECT_NE(e2.error().message.find("PMI_RANK=2"), std::string::npos);
}

TEST(ShardTest, ParsesStartAt) {
  const auto at = [](std::int64_t s, std::int64_t ms = 0) {
    return WallTime(std::chrono::seconds(s)) + std::chrono::milliseconds(ms);
  };

  struct Case {
    const char* text;
    WallTime want;
  };

  for (const Case& c :
       {Case{"2026-05-01T12:00:00Z", at(1777636800)},
        Case{"2026-05-01T14:00:00+02:00", at(1777636800)},
        Case{"2026-05-01T11:30:00.250-00:30", at(1777636800, 250)},
        Case{"1777636800", at(1777636800)}, Case{"1777636800.5", at(1777636800, 500)}}) {
    auto t = ParseStartAt(c.text);
    ASSERT_TRUE(t) << c.text << ": " << t.error().message;
    EXPECT_EQ(*t, c.want) << c.text;
  }
  for (const char* bad : {"", "tomorrow", "2026-05-01 12:00", "2026-02-30T00:00:00Z",
                          "2026-05-01T12:00:00", "2026-05-01T12:00:00+2", "-5"}) {
    auto t = ParseStartAt(bad);
    ASSERT_FALSE(t) << bad;
    EXPECT_NE(t.error().message.find("--start-at"), std::string::npos);
  }
  EXPECT_EQ(Rfc3339(at(1777636800, 250)), "2026-05-01T12:00:00.250Z");
}

TEST(ShardTest, StartAtBecomesASteadyTimeOrAClearError) {
  const WallTime wall = WallTime(std::chrono::seconds(1777636800));
  const SteadyTime steady = SteadyTime(std::chrono::hours(5));
  auto ahead = StartAtSteady(wall + 3s, wall, steady);
  ASSERT_TRUE(ahead);
  EXPECT_EQ(*ahead, steady + 3s);
  auto just_past = StartAtSteady(wall - 1s, wall, steady);  // within the tolerance
  ASSERT_TRUE(just_past);
  EXPECT_EQ(*just_past, steady - 1s);
  auto past = StartAtSteady(wall - 10s, wall, steady);
  ASSERT_FALSE(past);
  EXPECT_EQ(past.error().code, ErrorCode::kUsage);
  EXPECT_NE(past.error().message.find("passed 10.0 s ago"), std::string::npos);
  auto far = StartAtSteady(wall + 48h, wall, steady);
  ASSERT_FALSE(far);
  EXPECT_NE(far.error().message.find("more than a day"), std::string::npos);
}

TEST(ShardTest, WaitsOnTheInjectedClockUntilTheLead) {
  ManualClock clock;
  const SteadyTime start = clock.Now() + 10s;
  std::stop_source stop;
  std::atomic<bool> done{false};
  std::jthread waiter([&] {
    EXPECT_TRUE(WaitForStart(clock, start, 3s, stop.get_token()));
    done = true;
  });
  clock.Advance(6s);  // 4 s before the start: still waiting (the lead is 3 s)
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(done.load());
  clock.Advance(1s);  // exactly start - lead
  waiter.join();
  EXPECT_TRUE(done.load());
  EXPECT_EQ(clock.Now(), start - 3s);
  // Already past: returns at once; stopped: false.
  EXPECT_TRUE(WaitForStart(clock, start - 10s, 3s, stop.get_token()));
  std::stop_source stopped;
  stopped.request_stop();
  EXPECT_FALSE(WaitForStart(clock, clock.Now() + 1h, 0s, stopped.get_token()));
}

TEST(ShardTest, ParsesHttpDates) {
  EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
  EXPECT_EQ(ParseHttpDate(sim::HttpDate(1777636800)), 1777636800);
  EXPECT_FALSE(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"));
  EXPECT_FALSE(ParseHttpDate(""));
  EXPECT_FALSE(ParseHttpDate("Sun, 06 Foo 1994 08:49:37 GMT"));
}

// The simulator's Date header and this machine's clock are one clock: the probe must find an
// offset of about zero, within its stated uncertainty (plus the Date header's truncation).
TEST(ShardTest, ClockProbeAgainstTheSimulatorFindsNoOffset) {
  sim::SimOptions o;
  o.port = 0;
  auto server = sim::SimServer::Start(o);
  ASSERT_TRUE(server) << server.error().message;
  client::ClientOptions co;
  co.endpoint = (*server)->base_url();
  client::Client c(co);
  const ClockOffset off = ProbeClockOffset(c, "/v1/models");
  ASSERT_TRUE(off.offset_s) << off.note;
  EXPECT_EQ(off.method, "date-tick");
  EXPECT_GT(off.probes, 1);
  EXPECT_LT(off.uncertainty_s, 0.25);
  EXPECT_LE(std::abs(*off.offset_s), off.uncertainty_s + 0.002);
  const nlohmann::json j = ShardJson(ShardSpec{1, 2, "--shard"}, "h", off, std::nullopt);
  EXPECT_EQ(j["clock"]["method"], "date-tick");
  EXPECT_EQ(j["index"], 1);
}

// CheckPlan: a shard's directory, and the refusals.
TEST(ShardTest, PlanGetsItsShareAndDirectory) {
  Plan p;
  p.profiles = {"rate"};
  p.profile.rate.rates = {9};
  p.profile.rate.requests = 10;
  p.out = "/tmp/x";
  p.shard = "2/3";
  ASSERT_TRUE(CheckPlan(p, Env({})));
  EXPECT_EQ(p.out, "/tmp/x/shard-2");
  EXPECT_EQ(p.profile.rate.rates, (std::vector<double>{3}));
  EXPECT_EQ(p.profile.rate.requests, 3);
  ASSERT_TRUE(p.shard_spec);

  Plan no_out;
  no_out.profiles = {"rate"};
  no_out.profile.rate.rates = {9};
  auto e = CheckPlan(no_out, Env({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "4"}}));
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("--out DIR"), std::string::npos);
  EXPECT_NE(e.error().message.find("rank 1 of 4 (OMPI_COMM_WORLD_RANK)"), std::string::npos);

  // A launcher's rank is recorded as --shard I/N (plan.json's args): a resumed shard has no
  // launcher, and --shards N would then contradict it.
  Plan mpi;
  mpi.profiles = {"rate"};
  mpi.profile.rate.rates = {8};
  mpi.out = "/tmp/z";
  mpi.args = {"perf", "--profile", "rate", "--rates", "8", "--out", "/tmp/z"};
  ASSERT_TRUE(CheckPlan(mpi, Env({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}})));
  EXPECT_EQ(mpi.args, (std::vector<std::string>{"perf", "--profile", "rate", "--rates", "8",
                                                "--out", "/tmp/z", "--shard", "3/4"}));
  Plan k8s;
  k8s.profiles = {"rate"};
  k8s.profile.rate.rates = {8};
  k8s.out = "/results/run";
  k8s.shards = 4;
  k8s.args = {"perf", "--shards", "4", "--out", "/results/run", "--shards=4"};
  ASSERT_TRUE(CheckPlan(k8s, Env({{"JOB_COMPLETION_INDEX", "2"}})));
  EXPECT_EQ(k8s.args,
            (std::vector<std::string>{"perf", "--out", "/results/run", "--shard", "2/4"}));
  // The recorded args parse back to the same shard, whatever the environment then.
  auto again = DetectShard("2/4", 0, Env({}));
  ASSERT_TRUE(again && again.value());
  EXPECT_EQ(again.value()->index, 2);

  Plan decode;
  decode.profiles = {"decode"};
  decode.out = "/tmp/y";
  decode.shard = "0/2";
  auto e2 = CheckPlan(decode, Env({}));
  ASSERT_FALSE(e2);
  EXPECT_NE(e2.error().message.find("only `servebench perf --profile rate` runs sharded"),
            std::string::npos);
}

}  // namespace
}  // namespace sb::scaleout
