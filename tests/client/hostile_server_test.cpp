// The client against the simulator's hostile-server faults (docs/simulator.md "Faults"): a
// server that ignores max_tokens, keeps the connection open after [DONE], answers only [DONE],
// claims 10^15 completion tokens or sends a 10 MB header. Each ends in bounded time with a
// status and a reason that say what happened. Real HTTP over loopback.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "client/chat.h"
#include "client/http_client.h"
#include "sim/sim_server.h"

namespace sb::client {
namespace {

using Clock = std::chrono::steady_clock;

std::unique_ptr<sim::SimServer> StartSim(double itl_ms = 1) {
  sim::SimOptions o;
  o.ttft_ms = 2;
  o.prefill_us_per_token = 0;
  o.itl_ms = itl_ms;
  o.concurrency_slowdown = 0;
  auto r = sim::SimServer::Start(o);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? std::move(r).value() : nullptr;
}

ChatCall Call(const std::string& text, int max_tokens = 16, bool stream = true) {
  ChatParams p;
  p.model = "sim-model";
  p.messages = {{"user", text, ""}};
  p.max_tokens = max_tokens;
  p.stream = stream;
  p.continuous_usage = true;
  ChatCall c;
  c.id = 1;
  c.body = BuildChatBody(p, ServerKind::kSim);
  c.stream = stream;
  return c;
}

struct Timed {
  ChatResponse r;
  double seconds = 0;
};

// One call with the given limits (short ones: a bug shows as a timeout, not as a hung test).
Timed RunOne(const sim::SimServer& sim, const ChatCall& call,
             std::chrono::milliseconds idle = std::chrono::seconds(5)) {
  ClientOptions o;
  o.endpoint = sim.base_url();
  o.idle_timeout = idle;
  o.total_timeout = std::chrono::seconds(20);
  Client client(o);
  const auto start = Clock::now();
  auto rs = client.RunChats(std::vector<ChatCall>{call}, RunHooks{}, {});
  Timed t;
  t.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  t.r = std::move(rs.front());
  return t;
}

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// [DONE] ends the stream: a server that then keeps the connection open costs kDoneGrace, not
// the idle limit, and the answer is complete (done_ns is [DONE]'s arrival).
TEST(HostileServer, DoneThenConnectionKeptOpenIsACompleteAnswer) {
  auto sim = StartSim();
  ASSERT_TRUE(sim);
  const Timed t = RunOne(*sim, Call("[[sim:fault=done_open]] hi", 12));
  EXPECT_EQ(t.r.outcome, Outcome::kOk) << t.r.reason;
  EXPECT_TRUE(t.r.stream_done);
  EXPECT_EQ(t.r.usage.completion_tokens, 12);
  EXPECT_EQ(t.r.events.size(), 12u);
  EXPECT_LT(t.seconds, 2.0);  // the idle limit is 5 s
  ASSERT_FALSE(t.r.events.empty());
  EXPECT_GE(t.r.done_ns, t.r.events.back().t_ns);
  EXPECT_LT(t.r.done_ns - t.r.events.back().t_ns, 100'000'000);  // [DONE] time, not the grace's
}

// The same through a second call on the same client: the held connection is not reused, the
// next call is served normally.
TEST(HostileServer, NextCallAfterAHeldConnectionIsServed) {
  auto sim = StartSim();
  ASSERT_TRUE(sim);
  ClientOptions o;
  o.endpoint = sim->base_url();
  o.idle_timeout = std::chrono::seconds(5);
  Client client(o);
  for (const char* text : {"[[sim:fault=done_open]] a", "b", "[[sim:fault=done_open]] c"}) {
    auto rs = client.RunChats(std::vector<ChatCall>{Call(text, 8)}, RunHooks{}, {});
    EXPECT_EQ(rs.front().outcome, Outcome::kOk) << text << ": " << rs.front().reason;
    EXPECT_EQ(rs.front().usage.completion_tokens, 8) << text;
  }
}

// A 200 whose body is only "data: [DONE]" is no answer (as an empty 200 is not).
TEST(HostileServer, OnlyDoneIsMalformed) {
  auto sim = StartSim();
  ASSERT_TRUE(sim);
  const Timed t = RunOne(*sim, Call("[[sim:fault=done_only]] hi"));
  EXPECT_EQ(t.r.outcome, Outcome::kProtocol);
  EXPECT_TRUE(Has(t.r.reason, "only data: [DONE]")) << t.r.reason;
  EXPECT_EQ(t.r.http_status, 200);
  // Asked without streaming, the same body is no JSON answer either.
  const Timed body = RunOne(*sim, Call("[[sim:fault=done_only]] hi", 16, /*stream=*/false));
  EXPECT_EQ(body.r.outcome, Outcome::kProtocol) << body.r.reason;
}

// usage.completion_tokens 10^15 after 16 streamed tokens is refused, and the reason says so.
TEST(HostileServer, ImplausibleUsageIsRefused) {
  auto sim = StartSim();
  ASSERT_TRUE(sim);
  for (const bool stream : {true, false}) {
    const Timed t = RunOne(*sim, Call("[[sim:fault=huge_usage]] hi", 16, stream));
    EXPECT_EQ(t.r.outcome, Outcome::kProtocol) << stream;
    EXPECT_TRUE(Has(t.r.reason, "implausible usage: usage.completion_tokens 2147483647 or more"))
        << t.r.reason;
  }
}

// A 10 MB response header: the reason names the header, not "out of memory".
TEST(HostileServer, HugeHeaderIsReportedAsAHeaderOverTheLimit) {
  auto sim = StartSim();
  ASSERT_TRUE(sim);
  const Timed t = RunOne(*sim, Call("[[sim:fault=huge_header]] hi"));
  EXPECT_EQ(t.r.outcome, Outcome::kProtocol) << t.r.reason;
  EXPECT_TRUE(Has(t.r.reason, "response header over the limit")) << t.r.reason;
  EXPECT_FALSE(Has(t.r.reason, "Out of memory")) << t.r.reason;
}

// A server that ignores max_tokens is stopped at the call's token cap; text beyond the keep cap
// is dropped while every event's count and time is kept.
TEST(HostileServer, EndlessStreamIsStoppedAtTheTokenCap) {
  auto sim = StartSim(/*itl_ms=*/0);
  ASSERT_TRUE(sim);
  ChatCall call = Call("[[sim:fault=endless]] hi", 16);
  call.max_stream_tokens = 4 * 16 + 16;
  call.keep_text_bytes = 200;
  const Timed t = RunOne(*sim, call);
  EXPECT_EQ(t.r.outcome, Outcome::kProtocol);
  EXPECT_TRUE(Has(t.r.reason, "stream over 80 tokens")) << t.r.reason;
  EXPECT_TRUE(Has(t.r.reason, "ignores max_tokens")) << t.r.reason;
  EXPECT_EQ(t.r.events.size(), 81u);
  EXPECT_LE(t.r.answer.size(), 200u);
  EXPECT_GT(t.r.answer.size(), 150u);
  EXPECT_LE(t.r.events.back().answer_end, 200u);
  EXPECT_LT(t.seconds, 5.0);
}

// Without a cap the same call would run to the total limit: the cap is what ends it.
TEST(HostileServer, EndlessStreamWithoutACapRunsToTheTotalLimit) {
  auto sim = StartSim(/*itl_ms=*/1);
  ASSERT_TRUE(sim);
  ClientOptions o;
  o.endpoint = sim->base_url();
  o.total_timeout = std::chrono::milliseconds(300);
  Client client(o);
  auto rs =
      client.RunChats(std::vector<ChatCall>{Call("[[sim:fault=endless]] hi", 16)}, RunHooks{}, {});
  EXPECT_EQ(rs.front().outcome, Outcome::kTimeout) << rs.front().reason;
  EXPECT_GT(rs.front().events.size(), 16u);  // it did ignore max_tokens
}

}  // namespace
}  // namespace sb::client
