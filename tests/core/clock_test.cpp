#include "core/clock.h"

#include <regex>
#include <thread>

#include <gtest/gtest.h>

namespace sb {
namespace {

TEST(ManualClockTest, MovesOnlyWhenAdvanced) {
  ManualClock clock;
  SteadyTime t0 = clock.Now();
  EXPECT_EQ(clock.Now(), t0);
  clock.Advance(std::chrono::milliseconds(5));
  EXPECT_EQ(clock.Now() - t0, std::chrono::milliseconds(5));
}

TEST(ManualClockTest, SleepUntilWakesWhenTimeReachesTarget) {
  ManualClock clock;
  SteadyTime target = clock.Now() + std::chrono::seconds(3);
  std::stop_source stop;
  bool woke = false;
  std::thread sleeper([&] { woke = clock.SleepUntil(target, stop.get_token()); });
  clock.Advance(std::chrono::seconds(1));
  clock.Advance(std::chrono::seconds(2));
  sleeper.join();
  EXPECT_TRUE(woke);
}

TEST(ManualClockTest, SleepUntilReturnsFalseOnStop) {
  ManualClock clock;
  std::stop_source stop;
  bool woke = true;
  std::thread sleeper(
      [&] { woke = clock.SleepUntil(clock.Now() + std::chrono::hours(1), stop.get_token()); });
  stop.request_stop();
  sleeper.join();
  EXPECT_FALSE(woke);
}

TEST(SteadyClockTest, SleepUntilPastTimeReturnsAtOnce) {
  SteadyClock clock;
  std::stop_source stop;
  EXPECT_TRUE(clock.SleepUntil(clock.Now() - std::chrono::seconds(1), stop.get_token()));
}

TEST(ClockTest, UtcTimestampsHaveTheDocumentedShape) {
  EXPECT_TRUE(std::regex_match(UtcTimestamp(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  EXPECT_TRUE(std::regex_match(UtcTimestampCompact(), std::regex(R"(\d{8}T\d{6}Z)")));
}

}  // namespace
}  // namespace sb
