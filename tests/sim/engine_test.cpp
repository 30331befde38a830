// Pure parts of the simulator: tokenizer, engine (fixed seeds), option validation, HTTP parser,
// chunk serialisation and the JSON API layer.
#include "sim/engine.h"

#include <cmath>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/api.h"
#include "sim/chunks.h"
#include "sim/http.h"
#include "sim/metrics.h"
#include "sim/sim_server.h"
#include "sim/tokenizer.h"

namespace sb::sim {
namespace {

using nlohmann::json;

// ------------------------------------------------------------------------------ tokenizer

TEST(SimTokenizerTest, CountsRunsOfAlnumAndSingleOtherCharacters) {
  EXPECT_EQ(CountTokens(""), 0);
  EXPECT_EQ(CountTokens("   \n\t"), 0);
  EXPECT_EQ(CountTokens("Hello, world!"), 4);
  EXPECT_EQ(CountTokens("x=1.5"), 5);  // x = 1 . 5
  EXPECT_EQ(CountTokens("abc123def"), 1);
  EXPECT_EQ(CountTokens("h\xC3\xA9llo"), 3);              // h é llo: é is one code point
  EXPECT_EQ(CountTokens("\xE4\xB8\xAD\xE6\x96\x87"), 2);  // two CJK characters
  EXPECT_EQ(CountTokens("a\xFF"), 2);                     // an invalid byte counts as one
  const std::vector<std::string_view> want = {"Hello", ",", "world", "!"};
  EXPECT_EQ(SplitTokens("Hello,  world!"), want);
}

TEST(SimTokenizerTest, IdsAreStableAndAboveTheTemplateRange) {
  EXPECT_EQ(TokenId("model"), TokenId("model"));
  EXPECT_NE(TokenId("model"), TokenId("Model"));
  for (const auto w : FillerWords()) {
    EXPECT_GE(TokenId(w.substr(1)), kFirstTextId);
    EXPECT_LT(TokenId(w.substr(1)), std::int64_t{1} << 31);
  }
}

// ------------------------------------------------------------------------------ engine

ChatRequest Req(int prompt = 10) {
  ChatRequest r;
  r.prompt_tokens = prompt;
  r.text_hash = 42;
  return r;
}

TEST(SimEngineTest, RngIsDeterministicAndUniformEnough) {
  Rng a(7);
  Rng b(7);
  Rng c(8);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= x != c.Next();
  }
  EXPECT_TRUE(differs);
  Rng r(1);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = r.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
  for (int i = 0; i < 1000; ++i) {
    const auto v = r.Between(3, 5);
    ASSERT_GE(v, 3);
    ASSERT_LE(v, 5);
  }
}

TEST(SimEngineTest, NaturalLengthIsSeededInHalfToFullDefault) {
  SimOptions o;
  o.default_output_tokens = 64;
  std::set<int> seen;
  for (std::uint64_t h = 0; h < 300; ++h) {
    ChatRequest r = Req();
    r.text_hash = h;
    Rng rng(1);
    const Plan p = PlanChat(r, o, rng);
    ASSERT_GE(p.completion_tokens, 32);
    ASSERT_LE(p.completion_tokens, 64);
    EXPECT_EQ(p.finish_reason, "stop");
    seen.insert(p.completion_tokens);
    Rng rng2(999);  // the length does not depend on the per-request rng
    EXPECT_EQ(PlanChat(r, o, rng2).completion_tokens, p.completion_tokens);
  }
  EXPECT_GT(seen.size(), 20U);  // spread over the range
  EXPECT_TRUE(seen.count(32) == 1 && seen.count(64) == 1);
  // A different seed changes lengths.
  SimOptions o2 = o;
  o2.seed = 2;
  int changed = 0;
  for (std::uint64_t h = 0; h < 50; ++h) {
    ChatRequest r = Req();
    r.text_hash = h;
    Rng rng(1);
    changed += PlanChat(r, o, rng).completion_tokens != PlanChat(r, o2, rng).completion_tokens;
  }
  EXPECT_GT(changed, 30);
}

TEST(SimEngineTest, MaxTokensIgnoreEosAndMinTokens) {
  SimOptions o;
  Rng rng(1);
  ChatRequest r = Req();
  r.forced_tokens = 20;
  EXPECT_EQ(PlanChat(r, o, rng).completion_tokens, 20);
  r.max_tokens = 10;
  Plan p = PlanChat(r, o, rng);
  EXPECT_EQ(p.completion_tokens, 10);
  EXPECT_EQ(p.finish_reason, "length");
  r.max_tokens = 20;  // natural == max: EOS came in time
  p = PlanChat(r, o, rng);
  EXPECT_EQ(p.completion_tokens, 20);
  EXPECT_EQ(p.finish_reason, "stop");
  r.max_tokens = 100;
  r.ignore_eos = true;
  p = PlanChat(r, o, rng);
  EXPECT_EQ(p.completion_tokens, 100);
  EXPECT_EQ(p.finish_reason, "length");
  r.ignore_eos = false;
  r.min_tokens = 50;
  p = PlanChat(r, o, rng);
  EXPECT_EQ(p.completion_tokens, 50);
  EXPECT_EQ(p.finish_reason, "stop");
  r.min_tokens = 100;
  p = PlanChat(r, o, rng);
  EXPECT_EQ(p.completion_tokens, 100);
  // ignore_eos without max_tokens runs to the context window, as vLLM does.
  ChatRequest big = Req(100);
  big.ignore_eos = true;
  o.max_model_len = 1000;
  EXPECT_EQ(PlanChat(big, o, rng).completion_tokens, 900);
}

TEST(SimEngineTest, ThinkingComesFirstAndCountsInTheBudget) {
  SimOptions o;
  o.thinking_tokens = 8;
  Rng rng(1);
  ChatRequest r = Req();
  r.thinking = true;
  r.forced_tokens = 5;
  Plan p = PlanChat(r, o, rng);
  EXPECT_EQ(p.completion_tokens, 13);
  EXPECT_EQ(p.reasoning_tokens, 8);
  r.max_tokens = 6;  // the budget runs out while thinking
  p = PlanChat(r, o, rng);
  EXPECT_EQ(p.completion_tokens, 6);
  EXPECT_EQ(p.reasoning_tokens, 6);
  EXPECT_EQ(p.finish_reason, "length");
}

TEST(SimEngineTest, FaultsForcedOrDrawnAtTheConfiguredRate) {
  SimOptions o;
  ChatRequest r = Req();
  r.forced_fault = Fault::kMalformed;
  r.forced_tokens = 10;
  Rng rng(3);
  Plan p = PlanChat(r, o, rng);
  EXPECT_EQ(p.fault, Fault::kMalformed);
  EXPECT_EQ(p.fault_after_tokens, 3);
  r.forced_fault = Fault::kStall;
  r.forced_tokens = 2;
  EXPECT_EQ(PlanChat(r, o, rng).fault_after_tokens, 1);  // before the last token

  o.fault_rate = 0.25;
  o.fault_kinds = {"500", "reset"};
  int faults = 0;
  int http500 = 0;
  for (int i = 0; i < 4000; ++i) {
    ChatRequest q = Req();
    const Plan f = PlanChat(q, o, rng);
    if (f.fault != Fault::kNone) {
      ++faults;
      ASSERT_TRUE(f.fault == Fault::kHttp500 || f.fault == Fault::kReset);
      http500 += f.fault == Fault::kHttp500;
    }
  }
  EXPECT_NEAR(faults / 4000.0, 0.25, 0.03);
  EXPECT_NEAR(http500 / static_cast<double>(faults), 0.5, 0.06);
}

TEST(SimEngineTest, StepDurationFollowsSlowdownAndJitter) {
  SimOptions o;
  o.itl_ms = 4.0;
  o.concurrency_slowdown = 0.5;
  Rng rng(1);
  EXPECT_EQ(StepNs(o, 1, rng), 4'000'000);
  EXPECT_EQ(StepNs(o, 3, rng), 8'000'000);  // 4 * (1 + 0.5 * 2)
  EXPECT_EQ(FirstTokenDelayNs(o, 0), 40'000'000);
  o.prefill_us_per_token = 100;
  EXPECT_EQ(FirstTokenDelayNs(o, 250), 65'000'000);
  o.jitter_ms = 1.0;
  double lo = 1e18;
  double hi = 0;
  double sum = 0;
  for (int i = 0; i < 20000; ++i) {
    const double ns = static_cast<double>(StepNs(o, 1, rng));
    lo = std::min(lo, ns);
    hi = std::max(hi, ns);
    sum += ns;
  }
  EXPECT_GE(lo, 3'000'000);
  EXPECT_LE(hi, 5'000'000);
  EXPECT_LT(lo, 3'050'000);
  EXPECT_GT(hi, 4'950'000);
  EXPECT_NEAR(sum / 20000, 4'000'000, 20'000);
  o.jitter_ms = 10.0;  // never negative
  for (int i = 0; i < 1000; ++i) {
    ASSERT_GE(StepNs(o, 1, rng), 0);
  }
}

TEST(SimEngineTest, DraftAcceptancePerPositionConverges) {
  SimOptions o;
  o.spec_tokens = 3;
  o.spec_accept = {0.9, 0.6, 0.3};
  Rng rng(11);
  const int steps = 200000;
  std::vector<int> at_least(3, 0);
  for (int i = 0; i < steps; ++i) {
    const int a = DraftAccepted(o, rng);
    ASSERT_GE(a, 0);
    ASSERT_LE(a, 3);
    for (int k = 0; k < a; ++k) {
      ++at_least[k];
    }
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(at_least[k] / static_cast<double>(steps), o.spec_accept[k], 0.005) << k;
  }
  o.spec_accept = {0.5, 0.0, 0.0};
  for (int i = 0; i < 1000; ++i) {
    ASSERT_LE(DraftAccepted(o, rng), 1);
  }
}

TEST(SimEngineTest, TokenTextIsDeterministicFillerWords) {
  const std::set<std::string_view> words(FillerWords().begin(), FillerWords().end());
  EXPECT_EQ(words.size(), 64U);
  std::string a;
  std::string b;
  for (int i = 0; i < 200; ++i) {
    const auto w = TokenText(123, i, false);
    ASSERT_EQ(words.count(w), 1U);
    ASSERT_EQ(w.front(), ' ');
    EXPECT_EQ(CountTokens(w), 1);
    a += w;
    b += TokenText(123, i, false);
  }
  EXPECT_EQ(a, b);
  EXPECT_EQ(CountTokens(a), 200);
  std::string other;
  for (int i = 0; i < 200; ++i) {
    other += TokenText(124, i, false);
  }
  EXPECT_NE(a, other);  // another seed, another text
  // [[sim:loop]] repeats a six-word phrase.
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(TokenText(5, i, true), TokenText(9, i + 6, true));
  }
}

TEST(SimEngineTest, RequestIdsAreDistinctAndShaped) {
  const std::string a = RequestId(1, 1);
  EXPECT_EQ(a.size(), 9U + 32U);
  EXPECT_EQ(a.rfind("chatcmpl-", 0), 0U);
  EXPECT_NE(a, RequestId(1, 2));
  EXPECT_EQ(a, RequestId(1, 1));
}

// ------------------------------------------------------------------------------ options

TEST(SimOptionsTest, DefaultsAreValid) {
  EXPECT_TRUE(Validate(SimOptions{}).has_value());
}

TEST(SimOptionsTest, RejectsBadValuesWithClearMessages) {
  auto message = [](const SimOptions& o) {
    const auto r = Validate(o);
    EXPECT_FALSE(r.has_value());
    EXPECT_EQ(r ? ErrorCode::kInternal : r.error().code, ErrorCode::kUsage);
    return r ? std::string() : r.error().message;
  };
  SimOptions o;
  o.spec_tokens = 3;
  o.spec_accept = {0.9, 0.5};
  EXPECT_EQ(message(o),
            "spec_accept has 2 values but spec_tokens is 3 (give one acceptance rate per draft "
            "position)");
  o.spec_accept = {0.9, 0.95, 0.1};
  EXPECT_NE(message(o).find("non-increasing"), std::string::npos);
  o.spec_accept = {1.2, 0.5, 0.1};
  EXPECT_EQ(message(o), "spec_accept[0] = 1.2 is not in [0, 1]");
  o.spec_accept = {0.9, 0.5, -0.1};
  EXPECT_EQ(message(o), "spec_accept[2] = -0.1 is not in [0, 1]");
  o = SimOptions{};
  o.itl_ms = -1;
  EXPECT_EQ(message(o), "itl_ms must be a finite number >= 0, got -1");
  o = SimOptions{};
  o.max_batch = 0;
  EXPECT_EQ(message(o), "max_batch must be >= 1, got 0");
  o = SimOptions{};
  o.threads = 0;
  EXPECT_EQ(message(o), "threads must be in [1, 256], got 0");
  o.threads = 257;
  EXPECT_EQ(message(o), "threads must be in [1, 256], got 257");
  o = SimOptions{};
  o.reject = {"image", "smell"};
  EXPECT_NE(message(o).find("'smell'"), std::string::npos);
  o = SimOptions{};
  o.fault_kinds = {"boom"};
  EXPECT_NE(message(o).find("'boom'"), std::string::npos);
  o = SimOptions{};
  o.fault_rate = 1.5;
  EXPECT_NE(message(o).find("fault_rate"), std::string::npos);
  o = SimOptions{};
  o.reasoning_field = "thoughts";
  EXPECT_NE(message(o).find("reasoning_field"), std::string::npos);
  o = SimOptions{};
  o.port = 70000;
  EXPECT_NE(message(o).find("port"), std::string::npos);
  o = SimOptions{};
  o.retry_after_s = -0.5;
  EXPECT_EQ(message(o), "retry_after_s must be a finite number >= 0, got -0.5");
  o = SimOptions{};
  o.giant_event_bytes = 0;
  EXPECT_EQ(message(o), "giant_event_bytes must be in [1, 1073741824], got 0");
  o = SimOptions{};
  o.fault_kinds = {"giant", "huge"};
  EXPECT_EQ(message(o),
            "fault_kinds: unknown fault 'huge' (expected reset, stall, malformed, 500, 429, 503, "
            "giant, badutf8, endless, done_open, done_only, huge_usage or huge_header)");
}

TEST(SimHttpTest, AcceptsGzip) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("deflate, gzip, br, zstd"));  // what libcurl sends
  EXPECT_TRUE(AcceptsGzip("GZIP;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("deflate, br"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip; q=0.000, *"));  // named and refused: * does not bring it back
  EXPECT_FALSE(AcceptsGzip("*;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzipped"));
}

TEST(SimFaultTest, NewKindsParseAndNameRoundTrip) {
  for (const Fault f : kAllFaults) {
    const auto parsed = ParseFault(FaultName(f));
    ASSERT_TRUE(parsed) << FaultName(f);
    EXPECT_EQ(*parsed, f);
  }
  EXPECT_EQ(ParseFault("503"), Fault::kHttp503);
  EXPECT_EQ(ParseFault("giant"), Fault::kGiant);
  EXPECT_EQ(ParseFault("badutf8"), Fault::kBadUtf8);
  EXPECT_FALSE(ParseFault("utf8"));
  // Random faults without fault_kinds keep to the original five.
  SimOptions o;
  o.fault_rate = 1.0;
  Rng rng(7);
  ChatRequest req;
  req.max_tokens = 16;
  for (int i = 0; i < 500; ++i) {
    const Fault f = PlanChat(req, o, rng).fault;
    EXPECT_NE(f, Fault::kGiant);
    EXPECT_NE(f, Fault::kBadUtf8);
    EXPECT_NE(f, Fault::kHttp503);
  }
}

TEST(SimOptionsTest, StartRefusesInvalidOptions) {
  SimOptions o;
  o.max_batch = 0;
  const auto server = SimServer::Start(o);
  ASSERT_FALSE(server.has_value());
  EXPECT_EQ(server.error().code, ErrorCode::kUsage);
  EXPECT_NE(server.error().message.find("max_batch"), std::string::npos);
}

// ------------------------------------------------------------------------------ HTTP parser

const std::string kPost =
    "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello";
const std::string kGet = "GET /health HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";

TEST(SimHttpParserTest, ParsesPipelinedRequestsSplitAtEveryByte) {
  const std::string both = kPost + kGet;
  for (std::size_t split = 0; split <= both.size(); ++split) {
    RequestParser parser;
    std::string buf;
    std::vector<HttpRequest> got;
    auto feed = [&](std::string_view bytes) {
      for (const char ch : bytes) {  // one byte at a time within each half
        buf.push_back(ch);
        for (;;) {
          ParseResult r = parser.Parse(buf);
          ASSERT_NE(r.kind, ParseResult::Kind::kError) << r.error_message << " split " << split;
          if (r.kind != ParseResult::Kind::kRequest) {
            break;
          }
          got.push_back(std::move(r.request));
        }
      }
    };
    feed(std::string_view(both).substr(0, split));
    feed(std::string_view(both).substr(split));
    ASSERT_EQ(got.size(), 2U) << split;
    EXPECT_EQ(got[0].method, "POST");
    EXPECT_EQ(got[0].path, "/v1/chat/completions");
    EXPECT_EQ(got[0].body, "hello");
    EXPECT_TRUE(got[0].keep_alive);
    EXPECT_EQ(got[1].method, "GET");
    EXPECT_EQ(got[1].path, "/health");
    EXPECT_FALSE(got[1].keep_alive);
    EXPECT_TRUE(buf.empty());
  }
}

TEST(SimHttpParserTest, ParsesBothRequestsFromOneBuffer) {
  RequestParser parser;
  std::string buf = "\r\n" + kPost + kGet;
  EXPECT_EQ(parser.Parse(buf).kind, ParseResult::Kind::kRequest);
  ParseResult r = parser.Parse(buf);
  EXPECT_EQ(r.kind, ParseResult::Kind::kRequest);
  EXPECT_EQ(r.request.path, "/health");
  EXPECT_EQ(parser.Parse(buf).kind, ParseResult::Kind::kIncomplete);
}

int ErrorStatus(const std::string& input) {
  RequestParser parser;
  std::string buf = input;
  const ParseResult r = parser.Parse(buf);
  return r.kind == ParseResult::Kind::kError ? r.error_status : 0;
}

TEST(SimHttpParserTest, RejectsGarbageAndOversizedInput) {
  EXPECT_EQ(ErrorStatus("hello there\r\n"), 400);                     // no target, no version
  const char tls[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03";  // a TLS ClientHello
  EXPECT_EQ(ErrorStatus(std::string(tls, sizeof tls - 1)), 400);      // refused without a line end
  EXPECT_EQ(ErrorStatus(std::string(40, 'G')), 400);                  // no method is that long
  EXPECT_EQ(ErrorStatus("GE"), 0);                                    // a method in progress
  EXPECT_EQ(ErrorStatus("GET / HTTP/2.0\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\n"), 400);  // bare LF
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nbad header\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Length: 67108865\r\n\r\n"), 413);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Length: 67108864\r\n\r\n"), 0);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), 411);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nX: " + std::string(70000, 'a')), 431);
}

TEST(SimHttpParserTest, AsksForContinueOnceAndHonoursHttp10) {
  RequestParser parser;
  std::string buf = "POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n";
  EXPECT_EQ(parser.Parse(buf).kind, ParseResult::Kind::kContinue);
  EXPECT_EQ(parser.Parse(buf).kind, ParseResult::Kind::kIncomplete);
  buf += "abc";
  ParseResult r = parser.Parse(buf);
  ASSERT_EQ(r.kind, ParseResult::Kind::kRequest);
  EXPECT_EQ(r.request.body, "abc");

  std::string old = "GET / HTTP/1.0\r\n\r\n";
  r = parser.Parse(old);
  ASSERT_EQ(r.kind, ParseResult::Kind::kRequest);
  EXPECT_FALSE(r.request.keep_alive);
  EXPECT_TRUE(r.request.http10);
  std::string old_ka = "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n";
  EXPECT_TRUE(parser.Parse(old_ka).request.keep_alive);
}

TEST(SimHttpTest, ChunkFramingAndHead) {
  std::string out;
  AppendChunk(out, "");
  EXPECT_EQ(out, "");
  AppendChunk(out, std::string(300, 'x'));
  EXPECT_EQ(out.substr(0, 5), "12c\r\n");
  EXPECT_EQ(out.size(), 5U + 300U + 2U);
  std::string head = ResponseHead(429, "application/json", 7, true, "Retry-After: 1\r\n");
  // Every head carries the current time as an IMF-fixdate (perf --shard reads it).
  static const std::regex kDate(
      "\r\nDate: (Mon|Tue|Wed|Thu|Fri|Sat|Sun), \\d{2} [A-Z][a-z]{2} \\d{4} "
      "\\d{2}:\\d{2}:\\d{2} GMT\r\n");
  std::smatch date;
  ASSERT_TRUE(std::regex_search(head, date, kDate)) << head;
  head.erase(static_cast<std::size_t>(date.position(0)) + 2, date.length(0) - 2);
  EXPECT_EQ(HttpDate(784111777), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(head,
            "HTTP/1.1 429 Too Many Requests\r\nServer: servebench-sim/0.1.0\r\nContent-Type: "
            "application/json\r\nContent-Length: 7\r\nConnection: keep-alive\r\nRetry-After: "
            "1\r\n\r\n");
  EXPECT_NE(ResponseHead(200, "text/event-stream", kChunkedBody, false)
                .find("Transfer-Encoding: chunked\r\nConnection: close\r\n"),
            std::string::npos);
}

// ------------------------------------------------------------------------------ chunks, API

TEST(SimChunksTest, EventsAreValidJsonOfVllmShape) {
  ChunkBuilder b("chatcmpl-1", 1700000000, "we\"ird", "reasoning", true, 12);
  std::string out;
  b.AppendRole(out);
  b.AppendDelta(out, " a b", " c", "", 3, 2, "");
  b.AppendDelta(out, "", " d", "length", 4, 2, R"({"x":1})");
  b.AppendUsageChunk(out, 4, 2, "");
  ChunkBuilder::AppendDone(out);
  std::vector<json> events;
  std::size_t pos = 0;
  while (pos < out.size()) {
    const std::size_t end = out.find("\n\n", pos);
    ASSERT_NE(end, std::string::npos);
    const std::string ev = out.substr(pos, end - pos);
    ASSERT_EQ(ev.rfind("data: ", 0), 0U);
    if (ev != "data: [DONE]") {
      events.push_back(json::parse(ev.substr(6)));
    }
    pos = end + 2;
  }
  ASSERT_EQ(events.size(), 4U);
  EXPECT_EQ(events[0]["model"], "we\"ird");
  EXPECT_EQ(events[0]["object"], "chat.completion.chunk");
  EXPECT_EQ(events[0]["choices"][0]["delta"], json({{"role", "assistant"}, {"content", ""}}));
  EXPECT_EQ(events[0]["usage"]["completion_tokens"], 0);
  EXPECT_EQ(events[1]["choices"][0]["delta"]["reasoning"], " a b");
  EXPECT_EQ(events[1]["choices"][0]["delta"]["content"], " c");
  EXPECT_TRUE(events[1]["choices"][0]["finish_reason"].is_null());
  EXPECT_EQ(events[1]["usage"]["total_tokens"], 15);
  EXPECT_EQ(events[2]["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(events[2]["sim"]["x"], 1);
  EXPECT_TRUE(events[3]["choices"].empty());
  EXPECT_EQ(events[3]["usage"]["completion_tokens_details"]["reasoning_tokens"], 2);
}

std::variant<ChatRequest, Reply> Parse(const json& body, const SimOptions& o = SimOptions{}) {
  return ParseChatRequest(body.dump(), o);
}

TEST(SimApiTest, PromptTokensFollowTheDocumentedTemplate) {
  const json body = {{"model", "sim-model"},
                     {"messages",
                      {{{"role", "system"}, {"content", "Be brief."}},
                       {{"role", "user"},
                        {"content",
                         {{{"type", "text"}, {"text", "Hello, world!"}},
                          {{"type", "image_url"}, {"image_url", {{"url", "data:x"}}}},
                          {{"type", "text"}, {"text", "two words"}}}}}}}};
  const auto r = Parse(body);
  ASSERT_TRUE(std::holds_alternative<ChatRequest>(r));
  // (3 + 4) + (4 + 64 + 2 + 4) + 2
  EXPECT_EQ(std::get<ChatRequest>(r).prompt_tokens, 83);
}

TEST(SimApiTest, ReadsFieldsAndMarkers) {
  const json body = {
      {"messages", {{{"role", "user"}, {"content", "hi [[sim:tokens=7]] [[sim:fault=stall]]"}}}},
      {"max_completion_tokens", 50},
      {"max_tokens", 10},
      {"min_tokens", 5},
      {"ignore_eos", true},
      {"stream", true},
      {"stream_options", {{"include_usage", true}, {"continuous_usage_stats", true}}},
      {"chat_template_kwargs", {{"enable_thinking", true}}},
      {"temperature", 0}};
  const auto r = Parse(body);
  ASSERT_TRUE(std::holds_alternative<ChatRequest>(r)) << std::get<Reply>(r).body;
  const auto& q = std::get<ChatRequest>(r);
  EXPECT_EQ(q.max_tokens, 50);  // max_completion_tokens wins
  EXPECT_EQ(q.min_tokens, 5);
  EXPECT_TRUE(q.ignore_eos && q.stream && q.include_usage && q.continuous_usage && q.thinking);
  EXPECT_EQ(q.forced_tokens, 7);
  EXPECT_EQ(q.forced_fault, Fault::kStall);
}

void ExpectError(const std::variant<ChatRequest, Reply>& r, int status,
                 const std::string& message_part) {
  ASSERT_TRUE(std::holds_alternative<Reply>(r));
  const Reply& reply = std::get<Reply>(r);
  EXPECT_EQ(reply.status, status);
  const json j = json::parse(reply.body);
  EXPECT_EQ(j["error"]["code"], status);
  EXPECT_NE(j["error"]["message"].get<std::string>().find(message_part), std::string::npos)
      << j.dump();
}

TEST(SimApiTest, ValidationErrorsLookLikeVllm) {
  const json user = {{{"role", "user"}, {"content", "hi"}}};
  ExpectError(ParseChatRequest("{nope", SimOptions{}), 400, "JSON decode error");
  ExpectError(Parse(json{{"model", "x"}, {"messages", user}}), 404,
              "The model `x` does not exist.");
  ExpectError(Parse(json{{"model", "sim-model"}}), 400, "messages");
  ExpectError(Parse(json{{"messages", json::array()}}), 400, "at least 1");
  ExpectError(Parse(json{{"messages", user}, {"max_tokens", 0}}), 400,
              "max_tokens must be at least 1, got 0.");
  ExpectError(Parse(json{{"messages", user}, {"max_tokens", 5}, {"min_tokens", 6}}), 400,
              "min_tokens must be less than or equal to max_tokens=5, got 6.");
  ExpectError(Parse(json{{"messages", user}, {"stream_options", {{"include_usage", true}}}}), 400,
              "stream=True");
  ExpectError(Parse(json{{"messages", {{{"role", "user"}, {"content", "[[sim:fault=boom]]"}}}}}),
              400, "boom");
  ExpectError(Parse(json{{"messages", {{{"role", "user"}, {"content", {{{"type", "weird"}}}}}}}}),
              400, "Unknown part type: weird");
  SimOptions small;
  small.max_model_len = 10;
  ExpectError(Parse(json{{"messages", {{{"role", "user"}, {"content", "a b c d e f"}}}}}, small),
              400,
              "maximum context length is 10 tokens. However, your request has 12 input tokens");
  ExpectError(Parse(json{{"messages", user}, {"max_tokens", 5}}, small), 400,
              "'max_tokens' or 'max_completion_tokens' is too large: 5.");
  SimOptions reject;
  reject.reject = {"audio"};
  ExpectError(
      Parse(
          json{{"messages",
                {{{"role", "user"},
                  {"content", {{{"type", "input_audio"}, {"input_audio", {{"data", "AAAA"}}}}}}}}}},
          reject),
      400, "At most 0 audio(s) may be provided in one prompt.");
  // Not rejected: image passes when only audio is rejected.
  EXPECT_TRUE(std::holds_alternative<ChatRequest>(
      Parse(json{{"messages",
                  {{{"role", "user"}, {"content", {{{"type", "image_url"}, {"image_url", {}}}}}}}}},
            reject)));
}

TEST(SimMetricsTest, RendersVllmNamesWithLabels) {
  SimOptions o;
  o.spec_tokens = 2;
  o.spec_accept = {0.5, 0.2};
  Counters c;
  c.accepted_per_pos = {7, 3};
  c.prompt_tokens = 12;
  c.success_length = 2;
  c.running = 3;
  const std::string text = RenderPrometheus(c, o);
  EXPECT_NE(text.find("vllm:num_requests_running{model_name=\"sim-model\",engine=\"0\"} 3.0\n"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE vllm:prompt_tokens counter\n"), std::string::npos);
  EXPECT_NE(text.find("vllm:prompt_tokens_total{model_name=\"sim-model\",engine=\"0\"} 12.0\n"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:request_success_total{model_name=\"sim-model\",engine=\"0\","
                      "finished_reason=\"length\"} 2.0\n"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"sim-"
                      "model\",engine=\"0\",position=\"1\"} 3.0\n"),
            std::string::npos);
  o.spec_tokens = 0;
  o.spec_accept.clear();
  EXPECT_EQ(RenderPrometheus(c, o).find("spec_decode"), std::string::npos);
}

}  // namespace
}  // namespace sb::sim
