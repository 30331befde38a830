// The client end to end against the built-in simulator (real HTTP over loopback; the two share
// no wire code): gzip, giant and invalid-UTF-8 events, 429/503 retries, stalls and time limits.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/chat.h"
#include "client/http_client.h"
#include "sim/sim_server.h"

namespace sb::client {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

constexpr std::int64_t kMs = 1'000'000;

std::unique_ptr<sim::SimServer> StartSim(const sim::SimOptions& options) {
  auto r = sim::SimServer::Start(options);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? std::move(r).value() : nullptr;
}

sim::SimOptions Fast() {
  sim::SimOptions o;
  o.ttft_ms = 2;
  o.prefill_us_per_token = 0;
  o.itl_ms = 1;
  o.concurrency_slowdown = 0;
  return o;
}

ClientOptions Options(const sim::SimServer& sim) {
  ClientOptions o;
  o.endpoint = sim.base_url();
  return o;
}

ChatCall Call(std::uint64_t id, const std::string& text, bool stream = true) {
  ChatParams p;
  p.model = "sim-model";
  p.messages = {{"user", text, ""}};
  p.max_tokens = 64;
  p.stream = stream;
  ChatCall c;
  c.id = id;
  c.body = BuildChatBody(p, ServerKind::kSim);
  c.stream = stream;
  return c;
}

std::vector<ChatResponse> RunAll(Client& client, const std::vector<ChatCall>& calls,
                                 std::stop_token stop = {}) {
  return client.RunChats(calls, RunHooks{}, stop);
}

// ---- gzip -------------------------------------------------------------------------------------

TEST(ClientSim, GzipStreamGivesTheSameAnswerWithPerEventTimes) {
  sim::SimOptions o = Fast();
  o.itl_ms = 15;
  auto plain_sim = StartSim(o);
  o.gzip = true;
  auto gzip_sim = StartSim(o);
  ASSERT_TRUE(plain_sim && gzip_sim);
  Client plain_client(Options(*plain_sim));
  Client gzip_client(Options(*gzip_sim));
  const std::vector<ChatCall> calls = {Call(1, "[[sim:tokens=12]] hello"),
                                       Call(2, "[[sim:tokens=7]] hi", /*stream=*/false)};
  const auto plain = RunAll(plain_client, calls);
  const auto gz = RunAll(gzip_client, calls);
  EXPECT_EQ(gzip_sim->stats().compressed_responses, 2U);  // it really was compressed
  EXPECT_EQ(plain_sim->stats().compressed_responses, 0U);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(gz[i].outcome, Outcome::kOk) << gz[i].reason;
    EXPECT_EQ(plain[i].outcome, Outcome::kOk) << plain[i].reason;
    EXPECT_EQ(gz[i].answer, plain[i].answer);
    EXPECT_FALSE(gz[i].answer.empty());
    EXPECT_EQ(gz[i].finish_reason, plain[i].finish_reason);
    EXPECT_EQ(gz[i].usage.completion_tokens, plain[i].usage.completion_tokens);
    EXPECT_EQ(gz[i].events.size(), plain[i].events.size());
    EXPECT_EQ(gz[i].streamed, calls[i].stream);
  }
  EXPECT_EQ(gz[0].usage.completion_tokens, 12);
  ASSERT_EQ(gz[0].events.size(), 12u);
  EXPECT_TRUE(gz[0].stream_done);
  // Each event was stamped when its bytes arrived, not when the compressed body ended: the
  // stamps follow the simulator's 15 ms steps, each no earlier than its write.
  const json truth = json::parse(gz[0].sim_json);
  EXPECT_GE(gz[0].events.front().t_ns, truth["first_token_ns"].get<std::int64_t>());
  EXPECT_GE(gz[0].events.back().t_ns, truth["last_token_ns"].get<std::int64_t>());
  const std::int64_t span = gz[0].events.back().t_ns - gz[0].events.front().t_ns;
  EXPECT_GE(span, 11 * 15 * kMs - 2 * kMs);
  for (std::size_t k = 1; k < gz[0].events.size(); ++k) {
    EXPECT_GT(gz[0].events[k].t_ns - gz[0].events[k - 1].t_ns, 5 * kMs) << "event " << k;
  }
  // Auxiliary requests are decoded too.
  const auto models = gzip_client.Get("/v1/models");
  ASSERT_TRUE(models) << models.error().message;
  EXPECT_EQ(json::parse(models->body)["data"][0]["id"], "sim-model");
  EXPECT_EQ(gzip_sim->stats().compressed_responses, 3U);
}

// ---- giant and invalid UTF-8 events -----------------------------------------------------------

TEST(ClientSim, GiantEventEndsTheStreamAtTheLineCap) {
  sim::SimOptions o = Fast();
  o.giant_event_bytes = 6 << 20;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  Client client(Options(*sim));
  const auto out = RunAll(client, {Call(1, "[[sim:fault=giant]] [[sim:tokens=10]]")});
  EXPECT_EQ(out[0].outcome, Outcome::kProtocol);
  EXPECT_EQ(out[0].reason, "SSE line over 1 MiB (cap: 1048576 bytes)");
  EXPECT_EQ(out[0].events.size(), 2u);  // the tokens before it: the role+first, then the second
  EXPECT_LT(out[0].answer.size(), 100u);
  // With a cap that fits the event, and an answer cap that does not, the answer cap speaks.
  ClientOptions big = Options(*sim);
  big.max_line_bytes = 8 << 20;
  big.max_answer_bytes = 1 << 20;
  Client roomy(big);
  const auto capped = RunAll(roomy, {Call(2, "[[sim:fault=giant]] [[sim:tokens=10]]")});
  EXPECT_EQ(capped[0].outcome, Outcome::kProtocol);
  EXPECT_EQ(capped[0].reason.rfind("answer over 1048576 bytes (max_answer_bytes)", 0), 0u)
      << capped[0].reason;
}

TEST(ClientSim, InvalidUtf8ContentIsKeptAndSerialisable) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  Client client(Options(*sim));
  const auto out = RunAll(client, {Call(1, "[[sim:fault=badutf8]] [[sim:tokens=6]]"),
                                   Call(2, "[[sim:fault=badutf8]] [[sim:tokens=6]]", false)});
  for (const ChatResponse& r : out) {
    EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
    EXPECT_TRUE(r.invalid_utf8);
    EXPECT_NE(r.answer.find(" caf\xEF\xBF\xBD("), std::string::npos) << r.answer;
    EXPECT_NE(r.answer.find(" end"), std::string::npos);
    EXPECT_EQ(r.usage.completion_tokens, 6);
    json doc;
    doc["answer"] = r.answer;
    EXPECT_NO_THROW((void)doc.dump());
  }
}

// ---- retries ----------------------------------------------------------------------------------

TEST(ClientSim, RateLimitedCallsAreRetriedUntilTheyPass) {
  sim::SimOptions o = Fast();
  o.fault_rate = 0.5;
  o.fault_kinds = {"429", "503"};
  o.retry_after_s = 0;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  ClientOptions co = Options(*sim);
  co.retries = 40;  // 2^-41 per call that one still fails
  Client client(co);
  std::vector<ChatCall> calls;
  for (int i = 0; i < 20; ++i) {
    calls.push_back(Call(static_cast<std::uint64_t>(i), "[[sim:tokens=3]] q" + std::to_string(i)));
  }
  const auto out = RunAll(client, calls);
  int retries = 0;
  for (const ChatResponse& r : out) {
    EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
    EXPECT_EQ(r.usage.completion_tokens, 3);
    EXPECT_EQ(r.retry_reasons.size(), static_cast<std::size_t>(r.retries));
    for (const std::string& why : r.retry_reasons) {
      EXPECT_TRUE(why.rfind("HTTP 429: ", 0) == 0 || why.rfind("HTTP 503: ", 0) == 0) << why;
    }
    retries += r.retries;
  }
  EXPECT_EQ(static_cast<std::uint64_t>(retries), sim->stats().faults_injected);
  EXPECT_GT(retries, 0);
  EXPECT_EQ(sim->stats().chat_requests, 20U + static_cast<std::uint64_t>(retries));
}

TEST(ClientSim, RetryAfterIsHonouredAndOutsideLatency) {
  sim::SimOptions o = Fast();
  o.retry_after_s = 0.05;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  ClientOptions co = Options(*sim);
  co.retries = 2;
  co.retry_backoff = milliseconds(5000);  // would show if Retry-After were ignored
  Client client(co);
  const auto out = RunAll(client, {Call(1, "[[sim:fault=429]] x")});  // every attempt is a 429
  EXPECT_EQ(out[0].outcome, Outcome::kHttpError);
  EXPECT_EQ(out[0].http_status, 429);
  EXPECT_EQ(out[0].retries, 2);
  const std::int64_t waited = out[0].send_ns - out[0].first_send_ns;
  EXPECT_GE(waited, 100 * kMs);
  EXPECT_LT(waited, 2000 * kMs);
  EXPECT_LT(out[0].done_ns - out[0].send_ns, 1000 * kMs);  // latency: the last attempt only
  EXPECT_EQ(sim->stats().chat_requests, 3U);
}

// ---- time limits ------------------------------------------------------------------------------

TEST(ClientSim, TotalTimeoutEndsAStalledStream) {
  sim::SimOptions o = Fast();
  o.stall_ms = 10'000;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  Client client(Options(*sim));
  ChatCall call = Call(1, "[[sim:fault=stall]] [[sim:tokens=20]]");
  call.total_timeout = milliseconds(300);
  const auto out = RunAll(client, {call});
  EXPECT_EQ(out[0].outcome, Outcome::kTimeout);
  EXPECT_EQ(out[0].reason, "total time over 300 ms");
  EXPECT_EQ(out[0].events.size(), 3u);  // what came before the stall is kept
  const std::int64_t took = out[0].done_ns - out[0].send_ns;
  EXPECT_GE(took, 300 * kMs);
  EXPECT_LT(took, 1500 * kMs);

  ClientOptions idle = Options(*sim);
  idle.idle_timeout = milliseconds(200);
  Client idle_client(idle);
  const auto gap = RunAll(idle_client, {Call(2, "[[sim:fault=stall]] [[sim:tokens=20]] b")});
  EXPECT_EQ(gap[0].outcome, Outcome::kTimeout);
  EXPECT_EQ(gap[0].reason, "idle gap over 200 ms");
}

// Preconnect against a server that answers at once (the simulator answers GET /v1/models
// within microseconds): each GET must keep its connection while the others start, or curl
// reuses one connection for all of them one after another and the batch's calls then open
// their connections as they are sent. A warm connection is idle in the cache first, as after
// every perf level's warm-up. Before the fix: 1 connection after preconnect, 63 of the 64
// calls opened their own.
TEST(ClientSim, PreconnectOpensOneConnectionPerStreamBeforeTheCallsLeave) {
  sim::SimOptions o = Fast();
  o.ttft_ms = 20;
  o.max_batch = 128;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  Client client(Options(*sim));
  ASSERT_EQ(RunAll(client, {Call(1000, "warm")}).at(0).outcome, Outcome::kOk);
  ASSERT_EQ(sim->stats().connections, 1u);
  std::vector<ChatCall> calls;
  for (std::uint64_t i = 1; i <= 64; ++i) {
    calls.push_back(Call(i, "hello " + std::to_string(i)));
  }
  RunHooks hooks;
  hooks.preconnect = true;
  const auto out = client.RunChats(calls, hooks, {});
  int opened = 0;
  for (const ChatResponse& r : out) {
    EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
    opened += r.new_connection ? 1 : 0;
  }
  EXPECT_EQ(opened, 0) << "calls that connected while being sent";
  EXPECT_EQ(sim->stats().connections, 64u);
  EXPECT_EQ(sim->stats().requests, 1u + 64u + 64u);  // the warm call, 64 GETs, 64 calls

  // Without preconnect the calls connect themselves (what new_connection reports).
  Client cold(Options(*sim));
  const auto cold_out = cold.RunChats({calls.begin(), calls.begin() + 4}, RunHooks{}, {});
  for (const ChatResponse& r : cold_out) {
    EXPECT_TRUE(r.new_connection);
  }
}

// A GET answered so fast that curl reads the answer in the same step that sent it (curl tries
// a read right after writing) is held there too, and must be let go before the loop sleeps:
// it used to wait for the 5 s limit (seen as a 5 s pause before every level of
// `servebench launch`). 20 one-stream batches on a warm connection, each far below 5 s.
TEST(ClientSim, PreconnectAnsweredAtOnceDoesNotWaitForTheTimeLimit) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  Client client(Options(*sim));
  ASSERT_EQ(RunAll(client, {Call(1000, "warm")}).at(0).outcome, Outcome::kOk);
  RunHooks hooks;
  hooks.preconnect = true;
  for (std::uint64_t i = 1; i <= 20; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<ChatCall> one = {Call(i, "one")};
    const auto out = client.RunChats(one, hooks, {});
    const auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_EQ(out.at(0).outcome, Outcome::kOk) << out.at(0).reason;
    EXPECT_LT(took, std::chrono::milliseconds(2'500)) << "batch " << i;
  }
}

}  // namespace
}  // namespace sb::client
