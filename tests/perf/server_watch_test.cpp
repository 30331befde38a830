// ServerWatch: the rule that judges a server gone (docs/bounds.md), on responses as the client
// reports them; the health probe is the caller's function (the end-to-end tests freeze a real
// simulator: tests/cli/limits_cli_test.cpp).
#include "perf/server_watch.h"

#include <string>

#include <gtest/gtest.h>

namespace sb::perf {
namespace {

client::ChatResponse Sent(client::Outcome outcome, std::string reason, bool first_byte) {
  client::ChatResponse r;
  r.outcome = outcome;
  r.reason = std::move(reason);
  r.send_ns = 1'000;
  r.first_byte_ns = first_byte ? 2'000 : 0;
  r.done_ns = 3'000;
  return r;
}

client::ChatResponse NoFirstByte() {
  return Sent(client::Outcome::kTimeout, "no first byte within 2000 ms", false);
}

TEST(ServerWatchTest, SilentIsNoAnswerAtAll) {
  EXPECT_TRUE(Silent(NoFirstByte()));
  EXPECT_TRUE(Silent(Sent(client::Outcome::kTimeout, "idle gap over 1000 ms", true)));
  EXPECT_TRUE(Silent(Sent(client::Outcome::kTimeout, "total time over 1000 ms", false)));
  EXPECT_TRUE(Silent(Sent(client::Outcome::kTransport, "Connection refused", false)));
  // Answered, however badly: a trickle cut by the whole-request limit, a reset stream, an error.
  EXPECT_FALSE(Silent(Sent(client::Outcome::kTimeout, "total time over 1000 ms", true)));
  EXPECT_FALSE(Silent(Sent(client::Outcome::kTransport, "Connection reset by peer", true)));
  EXPECT_FALSE(Silent(Sent(client::Outcome::kHttpError, "HTTP 500", true)));
  EXPECT_FALSE(Silent(Sent(client::Outcome::kOk, "", true)));
  client::ChatResponse replayed = NoFirstByte();
  replayed.replayed = true;
  EXPECT_FALSE(Silent(replayed));
}

TEST(ServerWatchTest, TwoSilentRequestsAndAFailedProbeMeanGone) {
  ServerWatch w;
  int probes = 0;
  w.SetProbe([&]() -> Result<void> {
    ++probes;
    return MakeError(ErrorCode::kTimeout, "GET /v1/models: total time over 1000 ms");
  });
  EXPECT_FALSE(w.Observe(NoFirstByte()));
  EXPECT_EQ(probes, 0);
  EXPECT_TRUE(w.Observe(NoFirstByte()));
  EXPECT_EQ(probes, 1);
  EXPECT_TRUE(w.gone());
  EXPECT_EQ(w.reason(),
            "2 requests in a row got no answer (last: no first byte within 2000 ms), and the "
            "health probe got none: GET /v1/models: total time over 1000 ms");
  EXPECT_FALSE(w.Observe(NoFirstByte()));  // said once
}

TEST(ServerWatchTest, AnAnsweredProbeOrRequestClearsTheCount) {
  ServerWatch w;
  int probes = 0;
  w.SetProbe([&]() -> Result<void> {
    ++probes;
    return {};
  });
  for (int i = 0; i < 6; ++i) {
    EXPECT_FALSE(w.Observe(NoFirstByte()));
  }
  EXPECT_EQ(probes, 3);  // every second silent request: the server answers the probe
  EXPECT_FALSE(w.gone());
  EXPECT_FALSE(w.Observe(NoFirstByte()));
  EXPECT_FALSE(w.Observe(Sent(client::Outcome::kHttpError, "HTTP 500", true)));
  EXPECT_FALSE(w.Observe(NoFirstByte()));
  EXPECT_EQ(probes, 3);  // the answer in between cleared the count
  // A request the user cancelled says nothing about the server.
  EXPECT_FALSE(w.Observe(Sent(client::Outcome::kCancelled, "cancelled", false)));
  EXPECT_FALSE(w.Observe(NoFirstByte()));
  EXPECT_EQ(probes, 4);
}

TEST(ServerWatchTest, ProbeLimitIsAQuarterOfTheFirstByteLimitWithinHalfToFiveSeconds) {
  using std::chrono::milliseconds;
  EXPECT_EQ(ServerWatch::ProbeLimit(milliseconds(60'000)), milliseconds(5'000));
  EXPECT_EQ(ServerWatch::ProbeLimit(milliseconds(4'000)), milliseconds(1'000));
  EXPECT_EQ(ServerWatch::ProbeLimit(milliseconds(500)), milliseconds(500));
}

TEST(ServerWatchTest, TimeoutReasonsNameTheirFlag) {
  EXPECT_EQ(TimeoutFlag("no first byte within 2000 ms"), "--first-byte-timeout-s");
  EXPECT_EQ(TimeoutFlag("idle gap over 1000 ms"), "--idle-timeout-s");
  EXPECT_EQ(TimeoutFlag("total time over 4000 ms"), "--request-timeout-s");
  EXPECT_EQ(TimeoutFlag("no connection within 10000 ms: x"), "--connect-timeout-s");
  EXPECT_EQ(TimeoutFlag("HTTP 500"), "");
  EXPECT_EQ(FailureNote(Sent(client::Outcome::kTimeout, "idle gap over 1000 ms", true)),
            "timeout: idle gap over 1000 ms (raise with --idle-timeout-s)");
}

}  // namespace
}  // namespace sb::perf
