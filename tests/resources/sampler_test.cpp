// The sampler's arithmetic (energy, mean power, J per token, peaks) against a fake source of
// known watts on a ManualClock: every figure below is computed by hand from the samples.
#include "resources/sampler.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/clock.h"

namespace sb::resources {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Reports whatever the test put in `values` (shared), and counts reads.
class FakeSource final : public Source {
 public:
  explicit FakeSource(std::shared_ptr<Fields> values) : values_(std::move(values)) {}

  std::string name() const override { return "fake"; }

  std::string detail() const override { return "known watts"; }

  Result<void> Read(Fields& out) override {
    ++*reads_;
    if (values_->empty()) {
      return MakeError(ErrorCode::kSetup, "fake read failed");
    }
    for (const auto& [k, v] : *values_) {
      out[k] = v;
    }
    return {};
  }

  std::shared_ptr<std::atomic<int>> reads_ = std::make_shared<std::atomic<int>>(0);

 private:
  std::shared_ptr<Fields> values_;
};

std::int64_t Ns(const ManualClock& c) {
  return ToNanos(c.Now());
}

TEST(Energy, ConstantPowerOverAWindowIsPowerTimesTime) {
  ManualClock clock;
  Sampler s(clock, milliseconds(250));
  auto values = std::make_shared<Fields>(Fields{{kGpuPower, 200.0}});
  s.Add(std::make_unique<FakeSource>(values));
  const std::int64_t t0 = Ns(clock);
  for (int i = 0; i <= 8; ++i) {  // samples at 0, 0.25, ..., 2.0 s
    s.SampleNow();
    clock.Advance(milliseconds(250));
  }
  // Window 0.5 s .. 1.5 s, 400 output tokens: 200 W × 1 s = 200 J, 0.5 J/token, 2 tokens/J.
  const json w = WindowFigures(s.samples(), t0 + 500'000'000, t0 + 1'500'000'000, 400);
  ASSERT_TRUE(w.is_object()) << w;
  EXPECT_DOUBLE_EQ(w["window_s"].get<double>(), 1.0);
  EXPECT_NEAR(w["energy_j"].get<double>(), 200.0, 1e-9);
  EXPECT_EQ(w["energy_from"], "integrated_power");
  EXPECT_EQ(w["power_source"], "nvml");
  EXPECT_NEAR(w["power_w"]["mean"].get<double>(), 200.0, 1e-9);
  EXPECT_NEAR(w["j_per_token"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(w["tokens_per_j"].get<double>(), 2.0, 1e-12);
  EXPECT_EQ(w["samples"], 5);  // 0.5, 0.75, 1.0, 1.25, 1.5
}

TEST(Energy, ARampIsIntegratedAsATrapezoidIncludingPartialIntervals) {
  ManualClock clock;
  Sampler s(clock, seconds(1));
  auto values = std::make_shared<Fields>();
  s.Add(std::make_unique<FakeSource>(values));
  const std::int64_t t0 = Ns(clock);
  // 100 W at t=0, 300 W at t=1 s, 300 W at t=2 s.
  for (double w : {100.0, 300.0, 300.0}) {
    (*values)[kGpuPower] = w;
    s.SampleNow();
    clock.Advance(seconds(1));
  }
  // Window 0.5 .. 1.5 s: P(0.5) = 200 W; ∫ = (200+300)/2 × 0.5 + 300 × 0.5 = 275 J.
  const json w = WindowFigures(s.samples(), t0 + 500'000'000, t0 + 1'500'000'000, 50);
  EXPECT_NEAR(w["energy_j"].get<double>(), 275.0, 1e-9);
  EXPECT_NEAR(w["power_w"]["mean"].get<double>(), 275.0, 1e-9);
  EXPECT_NEAR(w["j_per_token"].get<double>(), 5.5, 1e-12);
  EXPECT_DOUBLE_EQ(w["power_w"]["peak"].get<double>(), 300.0);  // the one sample in the window
}

TEST(Energy, TheEnergyCounterWinsOverIntegratedPowerAndIsInterpolated) {
  ManualClock clock;
  Sampler s(clock, seconds(1));
  auto values = std::make_shared<Fields>();
  s.Add(std::make_unique<FakeSource>(values));
  const std::int64_t t0 = Ns(clock);
  // The counter says 1000 J over the second (power readings say 10 W: the counter is used).
  for (double e : {5000.0, 6000.0}) {
    *values = {{kGpuPower, 10.0}, {kGpuEnergy, e}};
    s.SampleNow();
    clock.Advance(seconds(1));
  }
  const json w = WindowFigures(s.samples(), t0 + 250'000'000, t0 + 750'000'000, 100);
  EXPECT_EQ(w["energy_from"], "gpu_energy_counter");
  EXPECT_NEAR(w["energy_j"].get<double>(), 500.0, 1e-9);  // half a second of 1000 W
  EXPECT_NEAR(w["power_w"]["mean"].get<double>(), 1000.0, 1e-9);
  EXPECT_NEAR(w["j_per_token"].get<double>(), 5.0, 1e-12);
}

TEST(Energy, ACounterThatWentBackFallsBackToIntegratedPower) {
  ManualClock clock;
  Sampler s(clock, seconds(1));
  auto values = std::make_shared<Fields>();
  s.Add(std::make_unique<FakeSource>(values));
  const std::int64_t t0 = Ns(clock);
  for (double e : {5000.0, 10.0}) {  // a driver reload reset the counter
    *values = {{kGpuPower, 40.0}, {kGpuEnergy, e}};
    s.SampleNow();
    clock.Advance(seconds(1));
  }
  const json w = WindowFigures(s.samples(), t0, t0 + 1'000'000'000, 10);
  EXPECT_EQ(w["energy_from"], "integrated_power");
  EXPECT_NEAR(w["energy_j"].get<double>(), 40.0, 1e-9);
}

TEST(Energy, PowerCommandIsUsedWithoutNvmlAndNothingIsMadeUpWithoutPower) {
  ManualClock clock;
  Sampler s(clock, seconds(1));
  auto values = std::make_shared<Fields>(Fields{{kCommandPower, 65.0}, {kServerRss, 1e9}});
  s.Add(std::make_unique<FakeSource>(values));
  const std::int64_t t0 = Ns(clock);
  s.SampleNow();
  clock.Advance(seconds(2));
  s.SampleNow();
  json w = WindowFigures(s.samples(), t0, t0 + 2'000'000'000, 13);
  EXPECT_EQ(w["power_source"], "power-cmd");
  EXPECT_NEAR(w["energy_j"].get<double>(), 130.0, 1e-9);
  EXPECT_NEAR(w["tokens_per_j"].get<double>(), 0.1, 1e-12);
  // Memory falls back to the server's RSS when there is no GPU memory figure.
  EXPECT_EQ(w["memory_source"], "server_rss");
  EXPECT_DOUBLE_EQ(w["memory_bytes"]["peak"].get<double>(), 1e9);

  // No power source at all: energy figures are null, never 0.
  Sampler bare(clock, seconds(1));
  auto rss_only = std::make_shared<Fields>(Fields{{kServerRss, 5e8}});
  bare.Add(std::make_unique<FakeSource>(rss_only));
  const std::int64_t t1 = Ns(clock);
  bare.SampleNow();
  clock.Advance(seconds(1));
  bare.SampleNow();
  w = WindowFigures(bare.samples(), t1, t1 + 1'000'000'000, 10);
  EXPECT_TRUE(w["energy_j"].is_null());
  EXPECT_TRUE(w["j_per_token"].is_null());
  EXPECT_TRUE(w["tokens_per_j"].is_null());
  EXPECT_TRUE(w["power_w"].is_null());
  EXPECT_TRUE(w["kv_cache_usage"].is_null());
}

TEST(Window, PeaksAndMeansComeFromTheSamplesInsideElseTheTwoAround) {
  ManualClock clock;
  Sampler s(clock, milliseconds(100));
  auto values = std::make_shared<Fields>();
  s.Add(std::make_unique<FakeSource>(values));
  const std::int64_t t0 = Ns(clock);
  const double kv[] = {0.1, 0.5, 0.3, 0.9};
  for (double v : kv) {  // t = 0, 0.1, 0.2, 0.3 s
    *values = {{kKvCacheUsage, v}, {kGpuMemoryUsed, v * 1e10}};
    s.SampleNow();
    clock.Advance(milliseconds(100));
  }
  json w = WindowFigures(s.samples(), t0 + 50'000'000, t0 + 250'000'000, 1);
  EXPECT_DOUBLE_EQ(w["kv_cache_usage"]["peak"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(w["kv_cache_usage"]["mean"].get<double>(), 0.4);
  EXPECT_EQ(w["memory_source"], "gpu");
  EXPECT_DOUBLE_EQ(w["memory_bytes"]["peak"].get<double>(), 5e9);
  // A window between two samples (shorter than the period) takes the two around it.
  w = WindowFigures(s.samples(), t0 + 210'000'000, t0 + 220'000'000, 1);
  EXPECT_DOUBLE_EQ(w["kv_cache_usage"]["peak"].get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(w["kv_cache_usage"]["mean"].get<double>(), 0.6);
  // No samples at all, or an empty window: null.
  EXPECT_TRUE(WindowFigures({}, t0, t0 + 1, 1).is_null());
  EXPECT_TRUE(WindowFigures(s.samples(), t0 + 5, t0 + 5, 1).is_null());
}

TEST(Window, WindowTakesASampleWhenNoneIsAfterTheEnd) {
  ManualClock clock;
  Sampler s(clock, seconds(1));
  auto values = std::make_shared<Fields>(Fields{{kGpuPower, 100.0}});
  auto source = std::make_unique<FakeSource>(values);
  auto reads = source->reads_;
  s.Add(std::move(source));
  const std::int64_t t0 = Ns(clock);
  s.SampleNow();
  clock.Advance(milliseconds(400));
  const json w = s.Window(t0 + 100'000'000, t0 + 300'000'000, 20);
  EXPECT_EQ(reads->load(), 2);  // the window's end had no sample after it: one was taken
  EXPECT_NEAR(w["energy_j"].get<double>(), 20.0, 1e-9);
  EXPECT_NEAR(w["j_per_token"].get<double>(), 1.0, 1e-12);
}

TEST(SamplerThread, SamplesAtTheFixedPeriodOnTheInjectedClock) {
  ManualClock clock;
  Sampler s(clock, milliseconds(250));
  auto values = std::make_shared<Fields>(Fields{{kGpuPower, 1.0}});
  auto source = std::make_unique<FakeSource>(values);
  auto reads = source->reads_;
  s.Add(std::move(source));
  const std::int64_t t0 = Ns(clock);
  s.Start();
  auto wait_reads = [&](int n) {
    for (int i = 0; i < 2000 && reads->load() < n; ++i) {
      std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    return reads->load();
  };
  EXPECT_EQ(wait_reads(1), 1);  // one sample at once
  clock.Advance(milliseconds(250));
  EXPECT_EQ(wait_reads(2), 2);
  clock.Advance(milliseconds(250));
  EXPECT_EQ(wait_reads(3), 3);
  s.Stop();
  const auto samples = s.samples();
  ASSERT_EQ(samples.size(), 3U);
  EXPECT_EQ(samples[0].t_ns, t0);
  EXPECT_EQ(samples[1].t_ns, t0 + 250'000'000);
  EXPECT_EQ(samples[2].t_ns, t0 + 500'000'000);
}

TEST(Sources, UnavailableSourcesAreListedWithTheirReasonAndFailedReadsCounted) {
  ManualClock clock;
  Sampler s(clock, seconds(1));
  s.AddUnavailable("nvml", "libnvidia-ml.so.1 could not be loaded");
  auto values = std::make_shared<Fields>();  // empty: every read fails
  s.Add(std::make_unique<FakeSource>(values));
  s.SampleNow();
  const json run = s.RunJson(ToNanos(clock.Now()), 0);
  ASSERT_EQ(run["sources"].size(), 2U);
  EXPECT_EQ(run["sources"][0]["name"], "fake");  // available first
  EXPECT_EQ(run["sources"][0]["failed_reads"], 1);
  EXPECT_EQ(run["sources"][0]["last_error"], "fake read failed");
  EXPECT_EQ(run["sources"][1]["available"], false);
  EXPECT_EQ(run["sources"][1]["reason"], "libnvidia-ml.so.1 could not be loaded");
  EXPECT_EQ(run["period_ms"], 1000.0);
}

TEST(Series, KeepsEverySampleAndMergesLongRunsIntoBuckets) {
  std::vector<Sample> samples;
  for (int i = 0; i < 10; ++i) {
    Sample s;
    s.t_ns = 1'000'000'000LL + i * 100'000'000LL;
    s.values[kGpuPower] = i;
    if (i % 2 == 0) {
      s.values[kServerRss] = 100.0 * i;
    }
    samples.push_back(s);
  }
  json all = SeriesJson(samples, 1'000'000'000LL);
  ASSERT_EQ(all["t_s"].size(), 10U);
  EXPECT_DOUBLE_EQ(all["t_s"][3].get<double>(), 0.3);
  EXPECT_TRUE(all[kServerRss][1].is_null());  // missing, never 0
  EXPECT_FALSE(all.contains("merged"));
  json merged = SeriesJson(samples, 1'000'000'000LL, 5);
  ASSERT_EQ(merged["t_s"].size(), 5U);
  EXPECT_EQ(merged["merged"], true);
  EXPECT_DOUBLE_EQ(merged[kGpuPower][0].get<double>(), 0.5);     // mean of 0, 1
  EXPECT_DOUBLE_EQ(merged[kServerRss][4].get<double>(), 800.0);  // peak of 800, (none)
}

}  // namespace
}  // namespace sb::resources
