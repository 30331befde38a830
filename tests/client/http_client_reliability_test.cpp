// The client against servers that misbehave: caps on lines and answers, invalid UTF-8, bodies
// that ignore stream=true, retries (429/503, resets, refusals), option validation.
#include <atomic>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "client/test_streams.h"
#include "support/script_server.h"

namespace sb::client {
namespace {

using json = nlohmann::json;
using sb::testing::Chunk;
using sb::testing::FullResponse;
using sb::testing::HttpHead;
using sb::testing::LastChunk;
using sb::testing::Script;
using sb::testing::ScriptRequest;
using sb::testing::ScriptServer;
using sb::testing::SseHead;
using std::chrono::milliseconds;

Script GoodScript(const std::vector<std::string>& pieces = {"ok"}) {
  return Script().Send(SseHead()).Send(Chunk(GoodStream(pieces))).Send(LastChunk());
}

// ---- options ----------------------------------------------------------------------------------

TEST(HttpClientOptions, DefaultsEndADeadServerWithinAMinute) {
  const ClientOptions o;
  EXPECT_EQ(o.connect_timeout, milliseconds(10'000));
  EXPECT_EQ(o.first_byte_timeout, milliseconds(60'000));
  EXPECT_EQ(o.idle_timeout, milliseconds(30'000));
  EXPECT_EQ(o.total_timeout, milliseconds(0));
  EXPECT_EQ(o.max_line_bytes, 1u << 20);
  EXPECT_EQ(o.max_answer_bytes, 0u);
  EXPECT_EQ(o.retries, 0);
  EXPECT_FALSE(o.insecure);
  EXPECT_TRUE(ValidateOptions(o));
}

TEST(HttpClientOptions, NegativeValuesAreRefusedWithTheirName) {
  const auto message = [](auto mutate) {
    ClientOptions o;
    o.endpoint = "http://127.0.0.1:1";
    mutate(o);
    const Result<void> r = ValidateOptions(o);
    EXPECT_FALSE(r);
    const Result<void> v = Client(o).Validate();
    EXPECT_FALSE(v);
    if (r) {
      return std::string();
    }
    EXPECT_EQ(r.error().code, ErrorCode::kUsage);
    return r.error().message;
  };
  EXPECT_EQ(message([](ClientOptions& o) { o.first_byte_timeout = milliseconds(-1); }),
            "first_byte_timeout must be >= 0 ms (0 = no limit), got -1 ms");
  EXPECT_EQ(message([](ClientOptions& o) { o.idle_timeout = milliseconds(-5); }),
            "idle_timeout must be >= 0 ms (0 = no limit), got -5 ms");
  EXPECT_EQ(message([](ClientOptions& o) { o.connect_timeout = milliseconds(-5); }),
            "connect_timeout must be >= 0 ms (0 = no limit), got -5 ms");
  EXPECT_EQ(message([](ClientOptions& o) { o.total_timeout = milliseconds(-5); }),
            "total_timeout must be >= 0 ms (0 = no limit), got -5 ms");
  EXPECT_EQ(message([](ClientOptions& o) { o.retries = -1; }), "retries must be >= 0, got -1");
  EXPECT_EQ(message([](ClientOptions& o) { o.max_line_bytes = 0; }), "max_line_bytes must be > 0");
  EXPECT_EQ(message([](ClientOptions& o) {
              o.ca_cert = "/nonexistent/ca.pem";
            }).rfind("ca_cert '/nonexistent/ca.pem': cannot read it", 0),
            0u);
}

TEST(HttpClientOptions, ANegativeLimitNeverSilentlyDisablesIt) {
  // Without Validate(): the old client read -1 as "no limit" and waited for this server forever.
  ScriptServer server([](const ScriptRequest&) { return Script().Pause(10'000); });
  ClientOptions opts = Options(server);
  opts.first_byte_timeout = milliseconds(-1);
  Client client(opts);
  const auto t0 = std::chrono::steady_clock::now();
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(out[0].outcome, Outcome::kTransport);
  EXPECT_EQ(out[0].reason,
            "invalid client options: first_byte_timeout must be >= 0 ms (0 = no limit), got -1 ms");
  const auto got = client.Get("/health");
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("first_byte_timeout"), std::string::npos);
  EXPECT_TRUE(server.requests().empty());

  ChatCall call = Call(2);
  call.total_timeout = milliseconds(-3);
  Client fine(Options(server));
  const auto bad_call = RunCalls(fine, {call});
  EXPECT_EQ(bad_call[0].reason, "invalid ChatCall::total_timeout: -3 ms (must be >= 0)");
}

// ---- streamed or not --------------------------------------------------------------------------

TEST(HttpClientStreamed, StreamCallAnsweredWithOneJsonBodyIsFlagged) {
  const std::string body = json{{"object", "chat.completion"},
                                {"choices",
                                 {{{"index", 0},
                                   {"message", {{"role", "assistant"}, {"content", "whole"}}},
                                   {"finish_reason", "stop"}}}},
                                {"usage", {{"prompt_tokens", 3}, {"completion_tokens", 1}}}}
                               .dump();
  ScriptServer server([&](const ScriptRequest& req) {
    switch (IdOf(req)) {
      case 1:
        return Script().Send(FullResponse(200, "application/json", body));
      case 2:  // no useful Content-Type: the body's first byte tells
        return Script().Send(FullResponse(200, "text/plain", "\n " + body));
      default:
        return GoodScript({"a", "b"});
    }
  });
  Client client(Options(server));
  const auto out = RunCalls(client, {Call(1), Call(2), Call(3)});
  for (int i : {0, 1}) {
    EXPECT_EQ(out[i].outcome, Outcome::kOk) << out[i].reason;
    EXPECT_FALSE(out[i].streamed) << i;
    EXPECT_EQ(out[i].answer, "whole");
    EXPECT_EQ(out[i].events.size(), 1u);
  }
  EXPECT_EQ(out[2].outcome, Outcome::kOk) << out[2].reason;
  EXPECT_TRUE(out[2].streamed);
  EXPECT_EQ(out[2].answer, "ab");
  const auto plain = RunCalls(client, {Call(1, /*stream=*/false)});
  EXPECT_FALSE(plain[0].streamed);
}

// ---- caps -------------------------------------------------------------------------------------

TEST(HttpClientCaps, GiantSseLineEndsTheStreamWithBoundedBuffering) {
  // 8 MiB of one line, sent in 64 KiB chunks with no line end.
  ScriptServer server([](const ScriptRequest&) {
    Script s;
    s.Send(SseHead()).Send(
        Chunk(Ev(Delta("a")) + "data: {\"choices\":[{\"delta\":{\"content\":\""));
    const std::string piece(64 * 1024, 'x');
    for (int i = 0; i < 128; ++i) {
      s.Send(Chunk(piece));
    }
    return s.Send(Chunk("\"}}]}\n\n")).Send(Chunk(GoodStream({}))).Send(LastChunk());
  });
  ClientOptions opts = Options(server);
  opts.max_line_bytes = 256 * 1024;
  Client client(opts);
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kProtocol);
  EXPECT_EQ(out[0].reason, "SSE line over 256 KiB (cap: 262144 bytes)");
  EXPECT_EQ(out[0].answer, "a");  // what came before is kept
  EXPECT_TRUE(out[0].streamed);
}

TEST(HttpClientCaps, AnswerCapEndsARunawayStream) {
  ScriptServer server([](const ScriptRequest&) {
    Script s;
    s.Send(SseHead());
    for (int i = 0; i < 200; ++i) {
      s.Send(Chunk(Ev(Delta(std::string(100, 'w')))));
    }
    return s.Send(Chunk(GoodStream({}))).Send(LastChunk());
  });
  ClientOptions opts = Options(server);
  opts.max_answer_bytes = 1'000'000;  // ChatCall's own cap wins
  Client client(opts);
  ChatCall call = Call(1);
  call.max_answer_bytes = 1000;
  const auto out = RunCalls(client, {call, Call(2)});
  EXPECT_EQ(out[0].outcome, Outcome::kProtocol);
  EXPECT_EQ(out[0].reason, "answer over 1000 bytes (max_answer_bytes); got 1100");
  EXPECT_EQ(out[0].answer.size(), 1100u);  // stopped at the first event over the cap
  EXPECT_EQ(out[0].events.size(), 11u);
  EXPECT_EQ(out[1].outcome, Outcome::kOk) << out[1].reason;  // the options' cap: 1 MB
  EXPECT_EQ(out[1].answer.size(), 20'000u);

  // A non-streaming answer is held to the same cap.
  ScriptServer whole([](const ScriptRequest&) {
    const std::string body = json{{"choices",
                                   {{{"index", 0},
                                     {"message", {{"content", std::string(5000, 'q')}}},
                                     {"finish_reason", "stop"}}}}}
                                 .dump();
    return Script().Send(FullResponse(200, "application/json", body));
  });
  ClientOptions wopts = Options(whole);
  wopts.max_answer_bytes = 4096;
  Client wclient(wopts);
  const auto w = RunCalls(wclient, {Call(3, /*stream=*/false)});
  EXPECT_EQ(w[0].outcome, Outcome::kProtocol);
  EXPECT_EQ(w[0].reason, "answer over 4096 bytes (max_answer_bytes); got 5000");
}

// ---- invalid UTF-8 ----------------------------------------------------------------------------

TEST(HttpClientUtf8, InvalidUtf8IsReplacedAndTheTextKept) {
  // Raw bytes a JSON encoder should never emit: a lone continuation byte, 0xFF, and a
  // three-byte sequence cut short.
  const std::string bad =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\x80y\xFFz\xE2\x82\"}}]}\n\n";
  ScriptServer server([&](const ScriptRequest&) {
    return Script()
        .Send(SseHead())
        .Send(Chunk(Ev(Delta("a")) + bad + GoodStream({"b"})))
        .Send(LastChunk());
  });
  Client client(Options(server));
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kOk) << out[0].reason;
  EXPECT_TRUE(out[0].invalid_utf8);
  EXPECT_EQ(out[0].answer,
            "ax\xEF\xBF\xBDy\xEF\xBF\xBDz\xEF\xBF\xBD\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(out[0].events.size(), 3u);
  // Later serialisation (results.json) must not throw.
  json doc;
  doc["answer"] = out[0].answer;
  EXPECT_NO_THROW((void)doc.dump());

  ScriptServer clean([](const ScriptRequest&) { return GoodScript({"h\xC3\xA9"}); });
  Client c2(Options(clean));
  const auto fine = RunCalls(c2, {Call(1)});
  EXPECT_FALSE(fine[0].invalid_utf8);
  EXPECT_EQ(fine[0].answer, "h\xC3\xA9");
}

// ---- retries ----------------------------------------------------------------------------------

TEST(HttpClientRetry, Http429And503AreRetriedAfterRetryAfter) {
  std::atomic<int> attempts{0};
  ScriptServer server([&](const ScriptRequest&) {
    const int n = attempts.fetch_add(1);
    if (n == 0) {
      return Script().Send(FullResponse(429, "text/plain", "slow down", "Retry-After: 0.2\r\n"));
    }
    if (n == 1) {
      return Script().Send(FullResponse(503, "text/plain", "overloaded", "Retry-After: 0\r\n"));
    }
    return GoodScript({"fine"});
  });
  ClientOptions opts = Options(server);
  opts.retries = 3;
  Client client(opts);
  const auto out = RunCalls(client, {Call(1)});
  const ChatResponse& r = out[0];
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
  EXPECT_EQ(r.answer, "fine");
  EXPECT_EQ(r.retries, 2);
  ASSERT_EQ(r.retry_reasons.size(), 2u);
  EXPECT_EQ(r.retry_reasons[0], "HTTP 429: slow down");
  EXPECT_EQ(r.retry_reasons[1], "HTTP 503: overloaded");
  EXPECT_EQ(r.http_status, 200);
  EXPECT_TRUE(r.error_body.empty());
  // The wait is outside latency: send_ns is the last attempt's, first_send_ns the first's.
  EXPECT_GE(r.send_ns - r.first_send_ns, 200 * kMs);
  EXPECT_LT(r.send_ns - r.first_send_ns, 2000 * kMs);
  EXPECT_GE(r.first_byte_ns, r.send_ns);
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST(HttpClientRetry, NoRetriesByDefault) {
  ScriptServer server([](const ScriptRequest&) {
    return Script().Send(FullResponse(429, "text/plain", "slow down", "Retry-After: 0\r\n"));
  });
  Client client(Options(server));
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kHttpError);
  EXPECT_EQ(out[0].retries, 0);
  EXPECT_TRUE(out[0].retry_reasons.empty());
  EXPECT_EQ(out[0].send_ns, out[0].first_send_ns);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(HttpClientRetry, RetriesRunOutAndTheLastFailureStands) {
  ScriptServer server([](const ScriptRequest&) {
    return Script().Send(FullResponse(503, "text/plain", "busy"));  // no Retry-After: backoff
  });
  ClientOptions opts = Options(server);
  opts.retries = 2;
  opts.retry_backoff = milliseconds(20);
  Client client(opts);
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kHttpError);
  EXPECT_EQ(out[0].http_status, 503);
  EXPECT_EQ(out[0].reason, "HTTP 503: busy");
  EXPECT_EQ(out[0].retries, 2);
  EXPECT_EQ(out[0].retry_reasons.size(), 2u);
  EXPECT_GE(out[0].send_ns - out[0].first_send_ns, (20 + 40) * kMs);  // 20 ms, then doubled
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST(HttpClientRetry, WaitsBeyondTheBudgetAreNotMade) {
  ScriptServer server([](const ScriptRequest&) {
    return Script().Send(FullResponse(429, "text/plain", "later", "Retry-After: 5\r\n"));
  });
  ClientOptions opts = Options(server);
  opts.retries = 5;
  opts.retry_wait_cap = milliseconds(100);  // 5 s is capped to 100 ms
  opts.retry_wait_budget = milliseconds(250);
  Client client(opts);
  const auto t0 = std::chrono::steady_clock::now();
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(out[0].outcome, Outcome::kHttpError);
  EXPECT_EQ(out[0].retries, 2);  // 100 + 100 ms fit in 250 ms, a third 100 does not
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST(HttpClientRetry, ResetBeforeTheFirstByteIsRetried) {
  ScriptServer server([](const ScriptRequest& req) {
    if (req.connection == 0) {
      return Script().Reset();  // RST right after reading the request
    }
    return GoodScript({"second"});
  });
  ClientOptions opts = Options(server);
  opts.retries = 1;
  opts.retry_backoff = milliseconds(10);
  Client client(opts);
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kOk) << out[0].reason;
  EXPECT_EQ(out[0].answer, "second");
  EXPECT_EQ(out[0].retries, 1);
  ASSERT_EQ(out[0].retry_reasons.size(), 1u);
  EXPECT_FALSE(out[0].retry_reasons[0].empty());
  EXPECT_EQ(server.connections(), 2);

  // Without retries the same server's reset is a transport failure, as before.
  ScriptServer again([](const ScriptRequest&) { return Script().Reset(); });
  Client plain(Options(again));
  const auto failed = RunCalls(plain, {Call(1)});
  EXPECT_EQ(failed[0].outcome, Outcome::kTransport);
  EXPECT_EQ(failed[0].retries, 0);
}

TEST(HttpClientRetry, ResetAfterTheFirstByteIsNotRetried) {
  ScriptServer server([](const ScriptRequest&) {
    return Script().Send(SseHead()).Send(Chunk(Ev(Delta("a")))).Pause(20).Reset();
  });
  ClientOptions opts = Options(server);
  opts.retries = 3;
  opts.retry_backoff = milliseconds(10);
  Client client(opts);
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kTransport);
  EXPECT_EQ(out[0].answer, "a");
  EXPECT_EQ(out[0].retries, 0);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(HttpClientRetry, RefusedConnectionIsRetried) {
  ClientOptions opts;
  opts.endpoint = "http://127.0.0.1:" + std::to_string(sb::testing::ClosedPort());
  opts.retries = 2;
  opts.retry_backoff = milliseconds(10);
  Client client(opts);
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kTransport);
  EXPECT_EQ(out[0].retries, 2);
  ASSERT_EQ(out[0].retry_reasons.size(), 2u);
  EXPECT_NE(out[0].retry_reasons[0].find("127.0.0.1"), std::string::npos)
      << out[0].retry_reasons[0];
  EXPECT_GE(out[0].send_ns - out[0].first_send_ns, 30 * kMs);
}

TEST(HttpClientRetry, AWaitDoesNotBlockOtherStreams) {
  std::atomic<int> first_calls{0};
  ScriptServer server([&](const ScriptRequest& req) {
    if (IdOf(req) == 1 && first_calls.fetch_add(1) == 0) {
      return Script().Send(FullResponse(429, "text/plain", "wait", "Retry-After: 0.4\r\n"));
    }
    if (IdOf(req) == 2) {  // streams for ~100 ms while call 1 waits
      Script s;
      s.Send(SseHead());
      for (int i = 0; i < 5; ++i) {
        s.Send(Chunk(Ev(Delta("t")))).Pause(20);
      }
      return s.Send(Chunk(GoodStream({}))).Send(LastChunk());
    }
    return GoodScript({"late"});
  });
  ClientOptions opts = Options(server);
  opts.retries = 1;
  Client client(opts);
  const auto out = RunCalls(client, {Call(1), Call(2)});
  EXPECT_EQ(out[0].outcome, Outcome::kOk) << out[0].reason;
  EXPECT_EQ(out[0].retries, 1);
  EXPECT_EQ(out[1].outcome, Outcome::kOk) << out[1].reason;
  EXPECT_EQ(out[1].answer, "ttttt");
  EXPECT_LT(out[1].done_ns, out[0].send_ns);  // finished during the wait
  // Its events were timed as they came, 20 ms apart, not after the wait.
  ASSERT_EQ(out[1].events.size(), 5u);
  EXPECT_GE(out[1].events[4].t_ns - out[1].events[0].t_ns, 60 * kMs);
}

TEST(HttpClientRetry, StopEndsAWaitAtOnce) {
  std::latch answered(1);
  ScriptServer server([&](const ScriptRequest&) {
    return Script().Send(FullResponse(429, "text/plain", "later", "Retry-After: 20\r\n")).Call([&] {
      answered.count_down();
    });
  });
  ClientOptions opts = Options(server);
  opts.retries = 1;
  Client client(opts);
  std::stop_source source;
  RunHooks hooks;
  std::jthread stopper([&] {
    answered.wait();
    // The client reads the 429 within microseconds; then it waits 20 s unless stopped.
    std::this_thread::sleep_for(milliseconds(100));
    source.request_stop();
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto out = RunCalls(client, {Call(1)}, hooks, source.get_token());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  EXPECT_EQ(out[0].outcome, Outcome::kCancelled);
  EXPECT_EQ(out[0].reason, "cancelled while waiting to retry (after: HTTP 429: later)");
  EXPECT_EQ(out[0].retries, 0);
  EXPECT_EQ(out[0].retry_reasons.size(), 1u);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(HttpClientRetry, RetryAfterAsAnHttpDate) {
  std::atomic<int> attempts{0};
  ScriptServer server([&](const ScriptRequest&) {
    if (attempts.fetch_add(1) == 0) {  // a date in the past: retry at once
      return Script().Send(
          FullResponse(503, "text/plain", "x", "Retry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n"));
    }
    return GoodScript();
  });
  ClientOptions opts = Options(server);
  opts.retries = 1;
  opts.retry_backoff = milliseconds(5000);  // would be used if the date were not understood
  Client client(opts);
  const auto out = RunCalls(client, {Call(1)});
  EXPECT_EQ(out[0].outcome, Outcome::kOk) << out[0].reason;
  EXPECT_LT(out[0].send_ns - out[0].first_send_ns, 1000 * kMs);
}

// ---- compression ------------------------------------------------------------------------------

TEST(HttpClientEncoding, EveryRequestAsksForCompression) {
  ScriptServer server([](const ScriptRequest& req) {
    if (req.method == "GET") {
      return Script().Send(FullResponse(200, "application/json", "{}"));
    }
    return GoodScript();
  });
  Client client(Options(server));
  ASSERT_EQ(RunCalls(client, {Call(1)})[0].outcome, Outcome::kOk);
  ASSERT_TRUE(client.Get("/v1/models"));
  ASSERT_TRUE(client.Post("/tokenize", "{}"));
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  for (const ScriptRequest& r : reqs) {
    EXPECT_NE(r.head.find("Accept-Encoding: "), std::string::npos) << r.head;
    EXPECT_NE(r.head.find("gzip"), std::string::npos) << r.head;
  }
}

}  // namespace
}  // namespace sb::client
