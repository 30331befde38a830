// Live progress (issue 23 item 3): what the status line says and how often it is written, on an
// injected clock (ManualClock) so no test sleeps.
#include "core/progress.h"

#include <string>

#include <gtest/gtest.h>

#include "support/text.h"

namespace sb {
namespace {

constexpr std::int64_t kS = 1'000'000'000;

using ::sb::testing::Count;

TEST(ProgressTest, ModesParseAndAutoFollowsTheTerminal) {
  EXPECT_EQ(*ParseProgressMode("auto", true), ProgressMode::kTty);
  EXPECT_EQ(*ParseProgressMode("auto", false), ProgressMode::kPlain);
  EXPECT_EQ(*ParseProgressMode("tty", false), ProgressMode::kTty);
  EXPECT_EQ(*ParseProgressMode("plain", true), ProgressMode::kPlain);
  EXPECT_EQ(*ParseProgressMode("off", true), ProgressMode::kOff);
  auto bad = ParseProgressMode("loud", true);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::kUsage);
  EXPECT_NE(bad.error().message.find("auto, tty, plain, off"), std::string::npos);
}

TEST(ProgressTest, PlainWritesAtMostOneLinePerTenSecondsOfClock) {
  ManualClock clock;
  const std::int64_t t0 = ToNanos(clock.Now());
  ProgressLine line(ProgressMode::kPlain, t0);
  ProgressState state;
  state.AddTotal(100);
  std::string out;
  std::vector<std::int64_t> written_at;
  for (int i = 1; i <= 65; ++i) {  // a tick per second for 65 s, a request finishing each
    clock.Advance(std::chrono::seconds(1));
    state.Finished(true, 10, "concurrency c4", ToNanos(clock.Now()));
    std::string text = line.Tick(state.Read(), ToNanos(clock.Now()));
    if (!text.empty()) {
      written_at.push_back(ToNanos(clock.Now()) - t0);
      EXPECT_EQ(Count(text, "\n"), 1);
      EXPECT_EQ(text.find('\r'), std::string::npos);
      out += text;
    }
  }
  ASSERT_EQ(written_at.size(), 6u) << out;  // at 10, 20, ..., 60 s
  for (std::size_t i = 1; i < written_at.size(); ++i) {
    EXPECT_GE(written_at[i] - written_at[i - 1], 10 * kS);
  }
  EXPECT_NE(out.find("progress: 10/100 requests · 10 ok, 0 failed · concurrency c4"),
            std::string::npos)
      << out;
  EXPECT_TRUE(line.Clear().empty());
}

TEST(ProgressTest, TtyRedrawsOneLineInPlace) {
  ManualClock clock;
  const std::int64_t t0 = ToNanos(clock.Now());
  ProgressLine line(ProgressMode::kTty, t0);
  ProgressState state;
  for (int i = 1; i <= 4; ++i) {
    clock.Advance(std::chrono::milliseconds(500));
    state.Finished(i != 3, 100, "test reasoning.math", ToNanos(clock.Now()));
    const std::string text = line.Tick(state.Read(), ToNanos(clock.Now()));
    EXPECT_TRUE(text.starts_with("\r")) << text;
    EXPECT_TRUE(text.ends_with("\x1b[K"));
    EXPECT_EQ(text.find('\n'), std::string::npos);
  }
  EXPECT_EQ(line.Clear(), "\r\x1b[K");
  EXPECT_EQ(line.Clear(), "");  // nothing drawn any more
}

TEST(ProgressTest, StatusHasTokensPerSecondElapsedEtaAndSaysWhatItIsWaitingFor) {
  ManualClock clock;
  const std::int64_t t0 = ToNanos(clock.Now());
  ProgressLine line(ProgressMode::kTty, t0);
  ProgressState state;
  state.AddTotal(40);
  // 10 requests of 50 tokens over 10 s: 50 tok/s; a quarter done in 10 s leaves 30 s.
  for (int i = 0; i < 10; ++i) {
    line.Status(state.Read(), ToNanos(clock.Now()));
    clock.Advance(std::chrono::seconds(1));
    state.Finished(true, 50, "rate 4 req/s", ToNanos(clock.Now()));
  }
  std::string s = line.Status(state.Read(), ToNanos(clock.Now()));
  EXPECT_NE(s.find("10/40 requests · 10 ok, 0 failed · rate 4 req/s"), std::string::npos) << s;
  EXPECT_NE(s.find("· 50 tok/s"), std::string::npos) << s;  // over the last 5 s
  EXPECT_NE(s.find("0:10 elapsed, ETA 0:30"), std::string::npos) << s;
  EXPECT_EQ(s.find("waiting"), std::string::npos);
  // A long rate point: nothing finishes for 37 s.
  state.SetCurrent("rate 8 req/s");
  for (int i = 0; i < 37; ++i) {
    clock.Advance(std::chrono::seconds(1));
    s = line.Status(state.Read(), ToNanos(clock.Now()));
  }
  EXPECT_NE(s.find("still waiting for rate 8 req/s: 37 s"), std::string::npos) << s;
  EXPECT_NE(s.find("· 0 tok/s"), std::string::npos) << s;  // the window holds no new tokens
}

TEST(ProgressTest, OffWritesNothing) {
  ProgressLine line(ProgressMode::kOff, 0);
  ProgressState state;
  state.Finished(true, 1, "x", 20 * kS);
  EXPECT_EQ(line.Tick(state.Read(), 20 * kS), "");
  EXPECT_EQ(line.Clear(), "");
}

}  // namespace
}  // namespace sb
