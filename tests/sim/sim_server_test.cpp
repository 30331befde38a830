// The simulator over real sockets, checked with the tests' own raw HTTP client (raw_http.h):
// wire format, ground truth timing, queueing, speculative decoding, thinking, errors, faults,
// keep-alive and pipelining, back-pressure, disconnects, and many concurrent streams.
#include "sim/sim_server.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "sim/engine.h"
#include "sim/raw_http.h"
#include "sim/tokenizer.h"

namespace sb::sim {
namespace {

using nlohmann::json;
using testing::Connection;
using testing::GetRequest;
using testing::HttpResponse;
using testing::NowNs;
using testing::PostRequest;
using testing::ResponseParser;
using testing::Roundtrip;

std::unique_ptr<SimServer> StartSim(const SimOptions& options) {
  auto r = SimServer::Start(options);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? std::move(r).value() : nullptr;
}

SimOptions Fast() {
  SimOptions o;
  o.ttft_ms = 2;
  o.prefill_us_per_token = 0;
  o.itl_ms = 0.5;
  o.concurrency_slowdown = 0;
  return o;
}

json Chat(const std::string& text, const json& extra = json::object()) {
  json body = {{"model", "sim-model"}, {"messages", {{{"role", "user"}, {"content", text}}}}};
  for (const auto& [k, v] : extra.items()) {
    body[k] = v;
  }
  return body;
}

json Streamed(const std::string& text, json extra = json::object()) {
  extra["stream"] = true;
  if (!extra.contains("stream_options")) {
    extra["stream_options"] = {{"include_usage", true}};
  }
  return Chat(text, extra);
}

// A streamed chat, decoded.
struct ChatResult {
  HttpResponse http;
  std::vector<json> chunks;  // every JSON event, in order
  bool done = false;         // saw data: [DONE]
  std::string problem;       // structural violation found while decoding
  std::string content;
  std::string reasoning;
  std::vector<std::string> finish_reasons;
  json usage;  // the trailing usage chunk's usage
  json sim;    // the ground truth object
  int token_chunks = 0;
  std::vector<std::int64_t> token_arrival_ns;
  std::vector<std::string> token_chunk_text;
};

ChatResult Decode(HttpResponse http, const std::string& reasoning_field = "reasoning_content") {
  ChatResult c;
  c.http = std::move(http);
  std::string id;
  for (const auto& ev : c.http.events) {
    if (ev.data == "[DONE]") {
      if (c.done) {
        c.problem = "two [DONE]";
      }
      c.done = true;
      continue;
    }
    if (c.done) {
      c.problem = "event after [DONE]";
    }
    json j;
    try {
      j = json::parse(ev.data);
    } catch (const std::exception& e) {
      c.problem = "bad JSON event: " + ev.data;
      continue;
    }
    c.chunks.push_back(j);
    if (id.empty()) {
      id = j.value("id", "");
    } else if (j.value("id", "") != id) {
      c.problem = "id changed";
    }
    if (j.contains("sim")) {
      if (!c.sim.is_null()) {
        c.problem = "two sim objects";
      }
      c.sim = j["sim"];
    }
    if (j["choices"].empty()) {
      c.usage = j["usage"];
      continue;
    }
    const json& choice = j["choices"][0];
    const json& delta = choice["delta"];
    std::string text;
    if (delta.contains("content") && delta["content"].is_string()) {
      c.content += delta["content"].get<std::string>();
      text += delta["content"].get<std::string>();
    }
    if (delta.contains(reasoning_field)) {
      c.reasoning += delta[reasoning_field].get<std::string>();
      text += delta[reasoning_field].get<std::string>();
    }
    if (!text.empty()) {
      ++c.token_chunks;
      c.token_arrival_ns.push_back(ev.arrival_ns);
      c.token_chunk_text.push_back(text);
    }
    if (!choice["finish_reason"].is_null()) {
      c.finish_reasons.push_back(choice["finish_reason"]);
    }
  }
  return c;
}

ChatResult StreamChat(int port, const json& body,
                      const std::string& reasoning_field = "reasoning_content") {
  return Decode(Roundtrip(port, PostRequest("/v1/chat/completions", body.dump())), reasoning_field);
}

json PostJson(int port, const std::string& path, const json& body, int* status = nullptr) {
  const HttpResponse r = Roundtrip(port, PostRequest(path, body.dump()));
  if (status != nullptr) {
    *status = r.status;
  }
  return r.body.empty() ? json() : json::parse(r.body, nullptr, false);
}

// Value of one Prometheus series ("name{labels}" exactly as printed), or -1 if absent.
double Series(const std::string& text, const std::string& series) {
  const std::string key = series + " ";
  std::size_t pos = 0;
  while ((pos = text.find(key, pos)) != std::string::npos) {
    if (pos == 0 || text[pos - 1] == '\n') {
      return std::stod(text.substr(pos + key.size()));
    }
    pos += key.size();
  }
  return -1;
}

std::string Labels(const std::string& extra = "") {
  return "{model_name=\"sim-model\",engine=\"0\"" + (extra.empty() ? "" : "," + extra) + "}";
}

int Tokens(const std::string& text) {
  return CountTokens(text);
}

double LagMs(const json& sim) {
  return sim["max_emit_lag_us"].get<double>() / 1e3;
}

double SpanMs(const json& sim) {
  return static_cast<double>(sim["last_token_ns"].get<std::int64_t>() -
                             sim["first_token_ns"].get<std::int64_t>()) /
         1e6;
}

// The ground truth is the schedule plus the measured write lateness: a scheduled time is an
// exact lower bound, and the write is at most max_emit_lag_us after it. The lateness itself
// depends on the machine (a loaded CI box preempts the loop), so it gets its own generous bound.
void ExpectWithinLag(double actual_ms, double scheduled_ms, const json& sim) {
  EXPECT_GE(actual_ms, scheduled_ms - 1e-3);
  EXPECT_LE(actual_ms, scheduled_ms + LagMs(sim) + 1e-3);
  EXPECT_LT(LagMs(sim), 50.0);
}

// ------------------------------------------------------------------------------ wire format

TEST(SimServerTest, StreamHasVllmStructureAndExactUsage) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  EXPECT_EQ(sim->base_url(), "http://127.0.0.1:" + std::to_string(sim->port()) + "/v1");
  const ChatResult c = StreamChat(sim->port(), Streamed("hi [[sim:tokens=12]]"));
  ASSERT_TRUE(c.http.complete) << c.http.error;
  EXPECT_EQ(c.http.status, 200);
  EXPECT_TRUE(c.http.chunked);
  EXPECT_EQ(c.http.Header("server"), "servebench-sim/0.1.0");
  EXPECT_EQ(c.http.Header("content-type"), "text/event-stream; charset=utf-8");
  EXPECT_TRUE(c.problem.empty()) << c.problem;
  EXPECT_TRUE(c.done);
  ASSERT_GE(c.chunks.size(), 3U);
  EXPECT_EQ(c.chunks[0]["choices"][0]["delta"], json({{"role", "assistant"}, {"content", ""}}));
  EXPECT_EQ(c.chunks[0]["object"], "chat.completion.chunk");
  EXPECT_EQ(c.chunks[0]["model"], "sim-model");
  EXPECT_EQ(c.token_chunks, 12);  // one token per chunk without speculative decoding
  EXPECT_EQ(Tokens(c.content), 12);
  EXPECT_EQ(c.finish_reasons, std::vector<std::string>{"stop"});
  // The finish reason rides on the last content chunk, then the usage chunk, then [DONE].
  const json& last_content = c.chunks[c.chunks.size() - 2];
  EXPECT_EQ(last_content["choices"][0]["finish_reason"], "stop");
  EXPECT_FALSE(last_content["choices"][0]["delta"]["content"].get<std::string>().empty());
  EXPECT_TRUE(c.chunks.back()["choices"].empty());
  // "hi [[sim:tokens=12]]" = hi [ [ sim : tokens = 12 ] ] = 10 tokens, + 4 + 2.
  EXPECT_EQ(c.usage["prompt_tokens"], 16);
  EXPECT_EQ(c.usage["completion_tokens"], 12);
  EXPECT_EQ(c.usage["total_tokens"], 28);
  EXPECT_EQ(c.usage["completion_tokens_details"]["reasoning_tokens"], 0);
  EXPECT_EQ(c.sim["completion_tokens"], 12);
  EXPECT_EQ(c.sim["prompt_tokens"], 16);
  EXPECT_EQ(c.sim["steps"], 12);
  EXPECT_TRUE(c.chunks.back().contains("sim"));  // the ground truth rides on the usage chunk
}

TEST(SimServerTest, WithoutUsageTheLastContentChunkCarriesTheGroundTruth) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  json body = Chat("x [[sim:tokens=4]]", {{"stream", true}});
  const ChatResult c = StreamChat(sim->port(), body);
  ASSERT_TRUE(c.done) << c.http.error;
  EXPECT_TRUE(c.usage.is_null());
  ASSERT_FALSE(c.chunks.back()["choices"].empty());
  EXPECT_EQ(c.chunks.back()["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(c.chunks.back()["sim"]["completion_tokens"], 4);
  for (std::size_t i = 0; i + 1 < c.chunks.size(); ++i) {
    EXPECT_FALSE(c.chunks[i].contains("usage"));
    EXPECT_FALSE(c.chunks[i].contains("sim"));
  }
}

TEST(SimServerTest, NonStreamingBody) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  const HttpResponse r = Roundtrip(
      sim->port(),
      PostRequest("/v1/chat/completions", Chat("q [[sim:tokens=12]]", {{"max_tokens", 5}}).dump()));
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.chunked);
  EXPECT_EQ(r.Header("content-type"), "application/json");
  const json j = json::parse(r.body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(Tokens(j["choices"][0]["message"]["content"]), 5);
  EXPECT_TRUE(j["choices"][0]["message"]["reasoning_content"].is_null());
  EXPECT_EQ(j["usage"]["completion_tokens"], 5);
  EXPECT_EQ(j["sim"]["completion_tokens"], 5);
  EXPECT_GE(j["sim"]["last_token_ns"].get<std::int64_t>(),
            j["sim"]["first_token_ns"].get<std::int64_t>());
}

TEST(SimServerTest, LengthControlsAreHonoured) {
  SimOptions o = Fast();
  o.itl_ms = 0.05;
  o.default_output_tokens = 10;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  const int port = sim->port();
  // ignore_eos: exactly max_tokens.
  ChatResult c =
      StreamChat(port, Streamed("a [[sim:tokens=3]]", {{"ignore_eos", true}, {"max_tokens", 30}}));
  EXPECT_EQ(c.usage["completion_tokens"], 30);
  EXPECT_EQ(Tokens(c.content), 30);
  EXPECT_EQ(c.finish_reasons, std::vector<std::string>{"length"});
  // max_completion_tokens caps the natural length.
  c = StreamChat(port, Streamed("a [[sim:tokens=50]]", {{"max_completion_tokens", 7}}));
  EXPECT_EQ(c.usage["completion_tokens"], 7);
  EXPECT_EQ(c.finish_reasons, std::vector<std::string>{"length"});
  // min_tokens forces a longer answer that still stops naturally.
  c = StreamChat(port, Streamed("a [[sim:tokens=5]]", {{"min_tokens", 20}, {"max_tokens", 40}}));
  EXPECT_EQ(c.usage["completion_tokens"], 20);
  EXPECT_EQ(c.finish_reasons, std::vector<std::string>{"stop"});
  // No markers: the natural length is seeded in [5, 10], and repeatable for the same prompt.
  c = StreamChat(port, Streamed("tell me something"));
  const int n = c.usage["completion_tokens"];
  EXPECT_GE(n, 5);
  EXPECT_LE(n, 10);
  const ChatResult again = StreamChat(port, Streamed("tell me something"));
  EXPECT_EQ(again.usage["completion_tokens"], n);
  EXPECT_EQ(again.content, c.content);
}

// ------------------------------------------------------------------------------ timing truth

TEST(SimServerTest, TtftAndItlGroundTruthMatchTheConfiguration) {
  SimOptions o;
  o.ttft_ms = 30;
  o.prefill_us_per_token = 0;
  o.itl_ms = 5;
  o.concurrency_slowdown = 0;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  const std::int64_t sent = NowNs();
  const ChatResult c = StreamChat(sim->port(), Streamed("t [[sim:tokens=21]]"));
  ASSERT_TRUE(c.done) << c.http.error;
  // On an idle machine the lateness is microseconds: ttft_ms lands in [30, 30.1].
  ExpectWithinLag(c.sim["ttft_ms"], 30.0, c.sim);
  EXPECT_LT(c.sim["queue_ms"].get<double>(), 0.5);
  EXPECT_EQ(c.sim["start_ns"], c.sim["recv_ns"]);  // admitted at once
  // 20 steps of 5 ms between the first and the last token: 100 ms, 200 tok/s by write times.
  EXPECT_GE(SpanMs(c.sim), 100.0 - LagMs(c.sim));
  EXPECT_LE(SpanMs(c.sim), 100.0 + LagMs(c.sim));
  EXPECT_NEAR(c.sim["decode_tok_s"].get<double>(), 20.0 / (SpanMs(c.sim) / 1e3), 1e-6);
  // The client reads what the server wrote, no earlier than the schedule (same clock).
  ASSERT_EQ(c.token_arrival_ns.size(), 21U);
  const std::int64_t recv = c.sim["recv_ns"];
  EXPECT_GE(recv, sent);
  EXPECT_GE(c.token_arrival_ns.front(), c.sim["first_token_ns"].get<std::int64_t>());
  EXPECT_GE(c.token_arrival_ns.back(), c.sim["last_token_ns"].get<std::int64_t>());
  for (std::size_t i = 0; i < c.token_arrival_ns.size(); ++i) {
    EXPECT_GE(c.token_arrival_ns[i] - recv, (30 + 5 * static_cast<std::int64_t>(i)) * 1'000'000)
        << i;
  }
}

TEST(SimServerTest, SpinningBeforeDeadlinesKeepsTheSchedule) {
  SimOptions o = Fast();
  o.ttft_ms = 10;
  o.itl_ms = 2;
  o.spin_us = 300;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  const ChatResult c = StreamChat(sim->port(), Streamed("[[sim:tokens=11]]"));
  ASSERT_TRUE(c.done) << c.http.error;
  ExpectWithinLag(c.sim["ttft_ms"], 10.0, c.sim);
  EXPECT_GE(SpanMs(c.sim), 20.0 - LagMs(c.sim));
  EXPECT_LE(SpanMs(c.sim), 20.0 + LagMs(c.sim));
}

TEST(SimServerTest, PrefillCostScalesWithPromptTokens) {
  SimOptions o = Fast();
  o.ttft_ms = 5;
  o.prefill_us_per_token = 200;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  std::string long_prompt = "[[sim:tokens=2]]";
  for (int i = 0; i < 100; ++i) {
    long_prompt += " word";
  }
  const ChatResult a = StreamChat(sim->port(), Streamed("[[sim:tokens=2]]"));
  const ChatResult b = StreamChat(sim->port(), Streamed(long_prompt));
  const int pa = a.usage["prompt_tokens"];
  const int pb = b.usage["prompt_tokens"];
  EXPECT_EQ(pb - pa, 100);
  ExpectWithinLag(a.sim["ttft_ms"], 5 + 0.2 * pa, a.sim);
  ExpectWithinLag(b.sim["ttft_ms"], 5 + 0.2 * pb, b.sim);  // 20 ms more for 100 tokens
}

// Runs the bodies concurrently, one connection each; returns the decoded results in order.
std::vector<ChatResult> RunConcurrently(int port, const std::vector<json>& bodies,
                                        int timeout_ms = 20000) {
  std::vector<std::unique_ptr<Connection>> conns;
  for (const auto& b : bodies) {
    conns.push_back(std::make_unique<Connection>(port));
    EXPECT_TRUE(conns.back()->ok());
    EXPECT_TRUE(conns.back()->Send(PostRequest("/v1/chat/completions", b.dump())));
  }
  std::vector<std::string> bufs(bodies.size());
  std::vector<ResponseParser> parsers(bodies.size());
  std::vector<bool> finished(bodies.size(), false);
  std::size_t left = bodies.size();
  const std::int64_t deadline = NowNs() + std::int64_t{timeout_ms} * 1'000'000;
  std::vector<char> chunk(65536);
  while (left > 0 && NowNs() < deadline) {
    std::vector<pollfd> fds;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < conns.size(); ++i) {
      if (!finished[i]) {
        fds.push_back(pollfd{conns[i]->fd(), POLLIN, 0});
        index.push_back(i);
      }
    }
    if (::poll(fds.data(), fds.size(), 100) <= 0) {
      continue;
    }
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if ((fds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
        continue;
      }
      const std::size_t i = index[k];
      const ssize_t n = ::recv(conns[i]->fd(), chunk.data(), chunk.size(), 0);
      const std::int64_t now = NowNs();
      if (n > 0) {
        bufs[i].append(chunk.data(), static_cast<std::size_t>(n));
        if (parsers[i].Parse(bufs[i], now)) {
          finished[i] = true;
          --left;
        }
      } else {
        parsers[i].OnEof();
        finished[i] = true;
        --left;
      }
    }
  }
  std::vector<ChatResult> out;
  for (auto& p : parsers) {
    out.push_back(Decode(p.response()));
  }
  return out;
}

TEST(SimServerTest, RequestsAboveMaxBatchQueueUntilASlotFrees) {
  SimOptions o = Fast();
  o.max_batch = 2;
  o.ttft_ms = 5;
  o.itl_ms = 2;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  const json body = Streamed("q", {{"ignore_eos", true}, {"max_tokens", 15}});
  const auto results = RunConcurrently(sim->port(), {body, body, body});
  std::vector<json> truths;
  for (const auto& r : results) {
    ASSERT_TRUE(r.done) << r.http.error;
    truths.push_back(r.sim);
  }
  std::sort(truths.begin(), truths.end(), [](const json& a, const json& b) {
    return a["start_ns"].get<std::int64_t>() < b["start_ns"].get<std::int64_t>();
  });
  EXPECT_LT(truths[0]["queue_ms"].get<double>(), 0.5);
  EXPECT_LT(truths[1]["queue_ms"].get<double>(), 0.5);
  // The third left the queue only after one of the first two wrote its last token, ~33 ms in.
  EXPECT_GT(truths[2]["queue_ms"].get<double>(), 20.0);
  const std::int64_t first_done = std::min(truths[0]["last_token_ns"].get<std::int64_t>(),
                                           truths[1]["last_token_ns"].get<std::int64_t>());
  EXPECT_GE(truths[2]["start_ns"].get<std::int64_t>(), first_done);
  // TTFT counts the queue; the prefill starts when the request leaves it.
  ExpectWithinLag(truths[2]["ttft_ms"].get<double>() - truths[2]["queue_ms"].get<double>(), 5.0,
                  truths[2]);
  EXPECT_EQ(sim->stats().max_concurrent, 2);
}

TEST(SimServerTest, DecodeSlowsDownWithConcurrentStreams) {
  SimOptions o = Fast();
  // All three requests arrive before the first decode step, even when this test's own client
  // is slow (unoptimised under ASan, the three sends once spread over more than 5 ms).
  o.ttft_ms = 40;
  o.itl_ms = 4;
  o.concurrency_slowdown = 0.5;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  const json body = Streamed("s", {{"ignore_eos", true}, {"max_tokens", 25}});
  const ChatResult alone = StreamChat(sim->port(), body);
  // 24 steps of 4 ms: 96 ms, 250 tok/s.
  EXPECT_GE(SpanMs(alone.sim), 96.0 - LagMs(alone.sim));
  EXPECT_LE(SpanMs(alone.sim), 96.0 + LagMs(alone.sim));
  const auto three = RunConcurrently(sim->port(), {body, body, body});
  for (const auto& r : three) {
    ASSERT_TRUE(r.done);
    // 4 ms * (1 + 0.5 * 2) = 8 ms per step while all three run (192 ms, 125 tok/s); the last
    // step of a stream may see another one finished already (6 or 4 ms).
    EXPECT_GE(SpanMs(r.sim), 23 * 8.0 + 4.0 - LagMs(r.sim));
    EXPECT_LE(SpanMs(r.sim), 24 * 8.0 + LagMs(r.sim));
    EXPECT_LT(r.sim["decode_tok_s"].get<double>(), 140.0);
  }
}

// ------------------------------------------------------------------------------ spec decoding

TEST(SimServerTest, SpeculativeDecodingAcceptanceConvergesAndMetricsAddUp) {
  SimOptions o = Fast();
  o.ttft_ms = 1;
  o.itl_ms = 0.02;
  o.spec_tokens = 3;
  o.spec_accept = {0.9, 0.6, 0.3};
  o.seed = 7;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  const json body = Streamed(
      "spec", {{"ignore_eos", true},
               {"max_tokens", 3000},
               {"stream_options", {{"include_usage", true}, {"continuous_usage_stats", true}}}});
  const auto results = RunConcurrently(sim->port(), {body, body, body, body});
  long long drafts = 0;
  long long draft_tokens = 0;
  long long accepted = 0;
  long long completion = 0;
  long long prompt = 0;
  for (const auto& r : results) {
    ASSERT_TRUE(r.done) << r.http.error;
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    EXPECT_EQ(r.usage["completion_tokens"], 3000);
    EXPECT_EQ(Tokens(r.content), 3000);
    // Bursts: 1 token for the prefill step, then 1 + accepted (<= 4) per chunk; the per-chunk
    // cumulative usage agrees with the text.
    EXPECT_EQ(r.sim["steps"].get<int>(), r.token_chunks);
    EXPECT_EQ(r.sim["drafts"].get<int>(), r.token_chunks - 1);
    EXPECT_EQ(Tokens(r.token_chunk_text.front()), 1);
    int cumulative = 0;
    int previous = 0;
    for (const auto& chunk : r.chunks) {
      if (chunk["choices"].empty()) {
        continue;
      }
      const int now = chunk["usage"]["completion_tokens"];
      const std::string text = chunk["choices"][0]["delta"].value("content", "");
      EXPECT_EQ(now - previous, Tokens(text));
      EXPECT_LE(now - previous, 4);
      previous = now;
      cumulative += Tokens(text);
    }
    EXPECT_EQ(cumulative, 3000);
    drafts += r.sim["drafts"].get<int>();
    draft_tokens += r.sim["draft_tokens"].get<int>();
    accepted += r.sim["accepted_tokens"].get<int>();
    completion += r.usage["completion_tokens"].get<int>();
    prompt += r.usage["prompt_tokens"].get<int>();
    // tokens = first + Σ(1 + accepted) over drafts, minus what the budget cut off at the end.
    EXPECT_LE(3000, 1 + r.sim["drafts"].get<int>() + r.sim["accepted_tokens"].get<int>());
    EXPECT_GT(3000, r.sim["drafts"].get<int>() + r.sim["accepted_tokens"].get<int>() - 4);
  }
  EXPECT_GT(drafts, 4000);
  EXPECT_EQ(draft_tokens, 3 * drafts);
  const HttpResponse m = Roundtrip(sim->port(), GetRequest("/metrics"));
  ASSERT_EQ(m.status, 200);
  const std::string& text = m.body;
  EXPECT_EQ(Series(text, "vllm:spec_decode_num_drafts_total" + Labels()), drafts);
  EXPECT_EQ(Series(text, "vllm:spec_decode_num_draft_tokens_total" + Labels()), draft_tokens);
  EXPECT_EQ(Series(text, "vllm:spec_decode_num_accepted_tokens_total" + Labels()), accepted);
  EXPECT_EQ(Series(text, "vllm:generation_tokens_total" + Labels()), completion);
  EXPECT_EQ(Series(text, "vllm:prompt_tokens_total" + Labels()), prompt);
  EXPECT_EQ(Series(text, "vllm:request_success_total" + Labels("finished_reason=\"length\"")), 4);
  EXPECT_EQ(Series(text, "vllm:num_requests_running" + Labels()), 0);
  double per_pos_sum = 0;
  for (int i = 0; i < 3; ++i) {
    const double n = Series(text, "vllm:spec_decode_num_accepted_tokens_per_pos_total" +
                                      Labels("position=\"" + std::to_string(i) + "\""));
    per_pos_sum += n;
    EXPECT_NEAR(n / static_cast<double>(drafts), o.spec_accept[i], 0.03) << "position " << i;
  }
  EXPECT_EQ(per_pos_sum, accepted);
  EXPECT_NEAR(1.0 + static_cast<double>(accepted) / static_cast<double>(drafts), 2.8, 0.06);
}

// ------------------------------------------------------------------------------ thinking

TEST(SimServerTest, ThinkingEmitsReasoningThenContent) {
  SimOptions o = Fast();
  o.thinking_tokens = 5;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  const ChatResult c = StreamChat(
      sim->port(), Streamed("think", {{"ignore_eos", true},
                                      {"max_tokens", 12},
                                      {"chat_template_kwargs", {{"enable_thinking", true}}}}));
  ASSERT_TRUE(c.done) << c.http.error;
  EXPECT_EQ(Tokens(c.reasoning), 5);
  EXPECT_EQ(Tokens(c.content), 7);
  ASSERT_EQ(c.token_chunks, 12);
  // The first five token chunks are reasoning only, the rest content only.
  int index = 0;
  for (const auto& chunk : c.chunks) {
    if (chunk["choices"].empty()) {
      continue;
    }
    const json& delta = chunk["choices"][0]["delta"];
    if (delta.contains("role")) {
      continue;
    }
    if (index < 5) {
      EXPECT_TRUE(delta.contains("reasoning_content")) << delta.dump();
      EXPECT_FALSE(delta.contains("content")) << delta.dump();
    } else {
      EXPECT_FALSE(delta.contains("reasoning_content")) << delta.dump();
    }
    ++index;
  }
  EXPECT_EQ(c.usage["completion_tokens"], 12);
  EXPECT_EQ(c.usage["completion_tokens_details"]["reasoning_tokens"], 5);
  EXPECT_EQ(c.sim["reasoning_tokens"], 5);

  // Off: no reasoning at all.
  const ChatResult off = StreamChat(
      sim->port(), Streamed("think", {{"max_tokens", 6},
                                      {"ignore_eos", true},
                                      {"chat_template_kwargs", {{"enable_thinking", false}}}}));
  EXPECT_TRUE(off.reasoning.empty());
  EXPECT_EQ(Tokens(off.content), 6);
}

TEST(SimServerTest, ReasoningFieldCanBeNamedReasoning) {
  SimOptions o = Fast();
  o.thinking_tokens = 3;
  o.reasoning_field = "reasoning";
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  const json kwargs = {{"enable_thinking", true}};
  const ChatResult c = StreamChat(
      sim->port(), Streamed("r [[sim:tokens=2]]", {{"chat_template_kwargs", kwargs}}), "reasoning");
  EXPECT_EQ(Tokens(c.reasoning), 3);
  EXPECT_EQ(Tokens(c.content), 2);
  const HttpResponse r =
      Roundtrip(sim->port(),
                PostRequest("/v1/chat/completions",
                            Chat("r [[sim:tokens=2]]", {{"chat_template_kwargs", kwargs}}).dump()));
  const json j = json::parse(r.body);
  EXPECT_EQ(Tokens(j["choices"][0]["message"]["reasoning"]), 3);
  EXPECT_EQ(Tokens(j["choices"][0]["message"]["content"]), 2);
  EXPECT_FALSE(j["choices"][0]["message"].contains("reasoning_content"));
}

// ------------------------------------------------------------------------------ errors

TEST(SimServerTest, RejectedModalityAndUnknownModelLookLikeVllm) {
  SimOptions o = Fast();
  o.reject = {"image", "audio"};
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  json body = Chat("");
  body["messages"][0]["content"] = {{{"type", "text"}, {"text", "what is this?"}},
                                    {{"type", "image_url"}, {"image_url", {{"url", "data:,"}}}}};
  int status = 0;
  json j = PostJson(sim->port(), "/v1/chat/completions", body, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(j, json::parse(R"({"error":{"message":"At most 0 image(s) may be provided in one )"
                           R"(prompt.","type":"BadRequestError","param":null,"code":400}})"));
  body["messages"][0]["content"][1] = {{"type", "audio_url"}, {"audio_url", {{"url", "x"}}}};
  j = PostJson(sim->port(), "/v1/chat/completions", body, &status);
  EXPECT_EQ(j["error"]["message"], "At most 0 audio(s) may be provided in one prompt.");
  body["messages"][0]["content"][1] = {{"type", "video_url"}, {"video_url", {{"url", "x"}}}};
  j = PostJson(sim->port(), "/v1/chat/completions", body, &status);
  EXPECT_EQ(status, 200);  // video is not rejected here

  j = PostJson(sim->port(), "/v1/chat/completions", Chat("hi", {{"model", "gpt-x"}}), &status);
  EXPECT_EQ(status, 404);
  EXPECT_EQ(j["error"]["message"], "The model `gpt-x` does not exist.");
  EXPECT_EQ(j["error"]["type"], "NotFoundError");
  EXPECT_EQ(j["error"]["code"], 404);
}

TEST(SimServerTest, ContextOverflowIs400) {
  SimOptions o = Fast();
  o.max_model_len = 20;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  int status = 0;
  const json j = PostJson(sim->port(), "/v1/chat/completions",
                          Chat("one two three four five six seven eight nine ten eleven twelve "
                               "thirteen fourteen"),
                          &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(j["error"]["message"].get<std::string>().find("maximum context length is 20"),
            std::string::npos);
}

// ------------------------------------------------------------------------------ faults

TEST(SimServerTest, ResetFaultResetsTheConnectionMidStream) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  const ChatResult c = StreamChat(sim->port(), Streamed("[[sim:fault=reset]] [[sim:tokens=20]]"));
  EXPECT_FALSE(c.http.complete);
  EXPECT_FALSE(c.http.error.empty());
  EXPECT_FALSE(c.done);
  EXPECT_LE(c.token_chunks, 3);
  EXPECT_EQ(sim->stats().faults_injected, 1U);
}

TEST(SimServerTest, MalformedFaultSendsBrokenJsonThenEnds) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  const ChatResult c =
      StreamChat(sim->port(), Streamed("[[sim:fault=malformed]] [[sim:tokens=20]]"));
  EXPECT_TRUE(c.http.complete) << c.http.error;  // the HTTP framing itself ends cleanly
  EXPECT_FALSE(c.done);
  EXPECT_EQ(c.problem, "bad JSON event: {\"choices\": [");
  EXPECT_EQ(c.token_chunks, 3);
}

TEST(SimServerTest, NonStreamingFaultsBreakTheBodyOrTheConnection) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  HttpResponse r = Roundtrip(
      sim->port(),
      PostRequest("/v1/chat/completions", Chat("[[sim:fault=malformed]] [[sim:tokens=9]]").dump()));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"choices\": [");
  EXPECT_TRUE(json::parse(r.body, nullptr, false).is_discarded());
  r = Roundtrip(sim->port(), PostRequest("/v1/chat/completions",
                                         Chat("[[sim:fault=reset]] [[sim:tokens=9]]").dump()));
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(r.error.empty());
  EXPECT_EQ(sim->stats().faults_injected, 2U);
}

TEST(SimServerTest, HttpFaults500And429) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  HttpResponse r = Roundtrip(
      sim->port(), PostRequest("/v1/chat/completions", Streamed("[[sim:fault=500]]").dump()));
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(json::parse(r.body)["error"]["message"], "simulated internal error");
  EXPECT_EQ(json::parse(r.body)["error"]["type"], "InternalServerError");
  r = Roundtrip(sim->port(), PostRequest("/v1/chat/completions", Chat("[[sim:fault=429]]").dump()));
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.Header("retry-after"), "1");
  EXPECT_EQ(json::parse(r.body)["error"]["code"], 429);
  EXPECT_EQ(sim->stats().faults_injected, 2U);
}

TEST(SimServerTest, StallFaultPausesTheStream) {
  SimOptions o = Fast();
  o.stall_ms = 150;
  o.itl_ms = 1;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  const ChatResult c = StreamChat(sim->port(), Streamed("[[sim:fault=stall]] [[sim:tokens=8]]"));
  ASSERT_TRUE(c.done) << c.http.error;
  EXPECT_EQ(c.token_chunks, 8);
  std::int64_t max_gap = 0;
  std::size_t at = 0;
  for (std::size_t i = 1; i < c.token_arrival_ns.size(); ++i) {
    const std::int64_t gap = c.token_arrival_ns[i] - c.token_arrival_ns[i - 1];
    if (gap > max_gap) {
      max_gap = gap;
      at = i;
    }
  }
  EXPECT_EQ(at, 3U);  // after the third token
  EXPECT_GE(max_gap, 100'000'000);
  EXPECT_LT(max_gap, 1'000'000'000);
  // Exact lower bound: the last token was scheduled 2 + 7 * 1 + 150 ms after receipt.
  EXPECT_GE(c.sim["last_token_ns"].get<std::int64_t>() - c.sim["recv_ns"].get<std::int64_t>(),
            159'000'000);
}

TEST(SimServerTest, FaultRateAppliesToEveryRequestAtOne) {
  SimOptions o = Fast();
  o.fault_rate = 1.0;
  o.fault_kinds = {"500"};
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Roundtrip(sim->port(), PostRequest("/v1/chat/completions", Chat("x").dump())).status,
              500);
  }
  EXPECT_EQ(sim->stats().faults_injected, 3U);
}

TEST(SimServerTest, Http503FaultAndFractionalRetryAfter) {
  SimOptions o = Fast();
  o.retry_after_s = 0.05;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  HttpResponse r = Roundtrip(
      sim->port(), PostRequest("/v1/chat/completions", Streamed("[[sim:fault=503]]").dump()));
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.Header("retry-after"), "0.05");
  EXPECT_EQ(json::parse(r.body)["error"]["type"], "ServiceUnavailableError");
  r = Roundtrip(sim->port(), PostRequest("/v1/chat/completions", Chat("[[sim:fault=429]]").dump()));
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.Header("retry-after"), "0.05");
  const std::string metrics = Roundtrip(sim->port(), GetRequest("/metrics")).body;
  EXPECT_EQ(Series(metrics, "sim_faults_injected_total" + Labels("kind=\"503\"")), 1);
  EXPECT_EQ(Series(metrics, "sim_faults_injected_total" + Labels("kind=\"giant\"")), 0);
  EXPECT_EQ(Series(metrics, "sim_compressed_responses_total" + Labels()), 0);
}

TEST(SimServerTest, GiantFaultSendsOneHugeEventThenGoesOn) {
  SimOptions o = Fast();
  o.giant_event_bytes = 3 << 20;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  const ChatResult c = StreamChat(sim->port(), Streamed("[[sim:fault=giant]] [[sim:tokens=6]]"));
  ASSERT_TRUE(c.done) << c.http.error << c.problem;
  EXPECT_TRUE(c.problem.empty()) << c.problem;
  std::size_t biggest = 0;
  for (const auto& ev : c.http.events) {
    biggest = std::max(biggest, ev.data.size());
  }
  EXPECT_GT(biggest, std::size_t{3} << 20);
  EXPECT_LT(biggest, (std::size_t{3} << 20) + 1024);
  EXPECT_NE(c.content.find(std::string(3 << 20, 'x')), std::string::npos);
  EXPECT_EQ(c.usage["completion_tokens"], 6);  // the giant event is no token
  // Non-streaming: the content holds it too.
  const json body =
      PostJson(sim->port(), "/v1/chat/completions", Chat("[[sim:fault=giant]] [[sim:tokens=6]]"));
  EXPECT_GE(body["choices"][0]["message"]["content"].get<std::string>().size(),
            std::size_t{3} << 20);
}

TEST(SimServerTest, BadUtf8FaultPutsInvalidBytesInTheContent) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  HttpResponse r = Roundtrip(
      sim->port(), PostRequest("/v1/chat/completions",
                               Streamed("[[sim:fault=badutf8]] [[sim:tokens=6]]").dump()));
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_NE(r.body.find(std::string(kBadUtf8Text)), std::string::npos);
  int strict_failures = 0;  // a strict JSON parser refuses exactly that event
  for (const auto& ev : r.events) {
    strict_failures += ev.data != "[DONE]" && json::parse(ev.data, nullptr, false).is_discarded();
  }
  EXPECT_EQ(strict_failures, 1);
  r = Roundtrip(sim->port(), PostRequest("/v1/chat/completions",
                                         Chat("[[sim:fault=badutf8]] [[sim:tokens=6]]").dump()));
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find(std::string(kBadUtf8Text)), std::string::npos);
}

// ------------------------------------------------------------------------------ gzip

std::string Gunzip(std::string_view in, bool* ok = nullptr) {
  z_stream z{};
  inflateInit2(&z, 15 + 16);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[65536];
  int rc = Z_OK;
  do {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_SYNC_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  } while (rc == Z_OK && (z.avail_in > 0 || z.avail_out == 0));
  if (ok != nullptr) {
    *ok = rc == Z_STREAM_END;
  }
  inflateEnd(&z);
  return out;
}

TEST(SimServerTest, GzipStreamFlushesEveryEvent) {
  SimOptions o = Fast();
  o.gzip = true;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  const std::string body = Streamed("[[sim:tokens=12]]").dump();
  const HttpResponse plain = Roundtrip(sim->port(), PostRequest("/v1/chat/completions", body));
  EXPECT_EQ(plain.Header("content-encoding"), "");  // the request did not ask for it
  EXPECT_EQ(sim->stats().compressed_responses, 0U);

  const HttpResponse r = Roundtrip(
      sim->port(), PostRequest("/v1/chat/completions", body, "Accept-Encoding: deflate, gzip\r\n"));
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.Header("content-encoding"), "gzip");
  EXPECT_EQ(r.Header("vary"), "Accept-Encoding");
  bool ended = false;
  const std::string sse = Gunzip(r.body, &ended);
  EXPECT_TRUE(ended);
  EXPECT_NE(sse.find("data: [DONE]\n\n"), std::string::npos);
  // Each write is flushed: a sync-flush marker (00 00 FF FF) ends a piece of the compressed
  // body that decodes to whole events.
  const std::string marker("\x00\x00\xff\xff", 4);
  z_stream z{};
  inflateInit2(&z, 15 + 16);
  std::string out;
  int pieces = 0;
  std::size_t at = 0;
  for (std::size_t m = r.body.find(marker); m != std::string::npos;
       m = r.body.find(marker, m + 4)) {
    const std::string_view piece = std::string_view(r.body).substr(at, m + 4 - at);
    at = m + 4;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(piece.data()));
    z.avail_in = static_cast<uInt>(piece.size());
    char buf[65536];
    while (z.avail_in > 0) {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof buf;
      ASSERT_GE(inflate(&z, Z_SYNC_FLUSH), Z_OK);
      out.append(buf, sizeof buf - z.avail_out);
    }
    ++pieces;
    ASSERT_GE(out.size(), 2u);
    EXPECT_EQ(out.substr(out.size() - 2), "\n\n") << "piece " << pieces << " ends mid-event";
  }
  inflateEnd(&z);
  EXPECT_GE(pieces, 11);  // the role + first token write, then one per step before the last
  EXPECT_EQ(sim->stats().compressed_responses, 1U);
  EXPECT_EQ(Series(Roundtrip(sim->port(), GetRequest("/metrics")).body,
                   "sim_compressed_responses_total" + Labels()),
            1);
  // Same events as the uncompressed stream, up to ids and times.
  ResponseParser check;
  std::string raw = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(sse.size()) +
                    "\r\nContent-Type: text/event-stream\r\n\r\n" + sse;
  ASSERT_TRUE(check.Parse(raw, NowNs()));
  EXPECT_EQ(check.response().events.size(), plain.events.size());
}

TEST(SimServerTest, GzipWholeBodies) {
  SimOptions o = Fast();
  o.gzip = true;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  const HttpResponse r =
      Roundtrip(sim->port(), PostRequest("/v1/chat/completions", Chat("[[sim:tokens=5]]").dump(),
                                         "Accept-Encoding: gzip\r\n"));
  EXPECT_EQ(r.Header("content-encoding"), "gzip");
  bool ended = false;
  const json body = json::parse(Gunzip(r.body, &ended));
  EXPECT_TRUE(ended);
  EXPECT_EQ(body["usage"]["completion_tokens"], 5);
  const HttpResponse models =
      Roundtrip(sim->port(), GetRequest("/v1/models", "Accept-Encoding: gzip;q=0\r\n"));
  EXPECT_EQ(models.Header("content-encoding"), "");
  EXPECT_TRUE(json::parse(models.body).contains("data"));
}

// ------------------------------------------------------------------------------ endpoints

TEST(SimServerTest, AuxiliaryEndpoints) {
  SimOptions o = Fast();
  o.max_model_len = 4096;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  const int port = sim->port();
  HttpResponse r = Roundtrip(port, GetRequest("/health"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.Header("server"), "servebench-sim/0.1.0");
  r = Roundtrip(port, GetRequest("/v1/models"));
  EXPECT_EQ(r.status, 200);
  json j = json::parse(r.body);
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["data"][0]["id"], "sim-model");
  EXPECT_EQ(j["data"][0]["max_model_len"], 4096);
  EXPECT_EQ(json::parse(Roundtrip(port, GetRequest("/models")).body)["data"][0]["id"], "sim-model");
  r = Roundtrip(port, GetRequest("/version"));
  EXPECT_EQ(json::parse(r.body)["version"], "servebench-sim/0.1.0");
  r = Roundtrip(port, GetRequest("/metrics"));
  EXPECT_EQ(r.Header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(r.body.find("# TYPE vllm:num_requests_waiting gauge"), std::string::npos);
  EXPECT_EQ(r.body.find("spec_decode"), std::string::npos);  // no speculative decoding here
  r = Roundtrip(port, GetRequest("/nope"));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.Header("server"), "servebench-sim/0.1.0");
  r = Roundtrip(port, GetRequest("/v1/chat/completions"));
  EXPECT_EQ(r.status, 405);
  // The chat route without /v1, as some servers accept it.
  r = Roundtrip(port, PostRequest("/chat/completions", Chat("[[sim:tokens=2]]").dump()));
  EXPECT_EQ(r.status, 200);
}

TEST(SimServerTest, TokenizeCountsMatchTheChatUsage) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  const int port = sim->port();
  int status = 0;
  json j =
      PostJson(port, "/tokenize", {{"model", "sim-model"}, {"prompt", "Hello, world!"}}, &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(j["count"], 4);
  EXPECT_EQ(j["max_model_len"], 132096);  // 128K + 1K: `sim` and the built-in demo alike
  ASSERT_EQ(j["tokens"].size(), 4U);
  EXPECT_EQ(j["tokens"][0], TokenId("Hello"));
  EXPECT_EQ(j["tokens"][1], TokenId(","));
  const json ids = j["tokens"];

  const json messages = {{{"role", "system"}, {"content", "Be brief."}},
                         {{"role", "user"}, {"content", "What is 2+2?"}}};
  j = PostJson(port, "/tokenize", {{"messages", messages}});
  const ChatResult c = StreamChat(port, Streamed("", {{"messages", messages}}));
  EXPECT_EQ(j["count"], c.usage["prompt_tokens"]);
  EXPECT_EQ(j["count"], (3 + 4) + (6 + 4) + 2);
  EXPECT_EQ(j["tokens"].size(), j["count"].get<std::size_t>());

  j = PostJson(port, "/tokenize", {{"content", "Hello, world!"}});  // llama.cpp shape
  EXPECT_EQ(j["tokens"], ids);
  EXPECT_FALSE(j.contains("count"));
  j = PostJson(port, "/tokenize", {{"content", "a b"}, {"with_pieces", true}});
  EXPECT_EQ(j["tokens"][1]["piece"], "b");

  j = PostJson(port, "/detokenize", {{"tokens", ids}});
  EXPECT_EQ(j["prompt"], "Hello , world !");
  PostJson(port, "/detokenize", {{"tokens", {123456789}}}, &status);
  EXPECT_EQ(status, 400);
  PostJson(port, "/tokenize", {{"model", "other"}, {"prompt", "x"}}, &status);
  EXPECT_EQ(status, 404);
}

// ------------------------------------------------------------------------------ HTTP behaviour

TEST(SimServerTest, PortInUseIsASetupErrorAndStopIsFinal) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  SimOptions same = Fast();
  same.port = sim->port();
  const auto second = SimServer::Start(same);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kSetup);
  const int port = sim->port();
  sim->Stop();
  sim->Stop();  // idempotent
  EXPECT_FALSE(Roundtrip(port, GetRequest("/health")).error.empty());
}

TEST(SimServerTest, KeepAliveServesTwoRequestsOnOneSocket) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  Connection c(sim->port());
  ASSERT_TRUE(c.Send(PostRequest("/v1/chat/completions", Streamed("[[sim:tokens=3]]").dump())));
  HttpResponse a = c.Read();
  ASSERT_TRUE(a.complete) << a.error;
  EXPECT_EQ(Decode(a).usage["completion_tokens"], 3);
  EXPECT_EQ(a.Header("connection"), "keep-alive");
  ASSERT_TRUE(c.Send(PostRequest("/v1/chat/completions", Chat("[[sim:tokens=4]]").dump())));
  HttpResponse b = c.Read();
  ASSERT_TRUE(b.complete) << b.error;
  EXPECT_EQ(json::parse(b.body)["usage"]["completion_tokens"], 4);
  EXPECT_EQ(sim->stats().requests, 2U);
}

TEST(SimServerTest, PipelinedRequestsSentByteByByte) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  Connection c(sim->port());
  const std::string both =
      PostRequest("/v1/chat/completions", Streamed("[[sim:tokens=5]]").dump()) +
      GetRequest("/version") + PostRequest("/v1/chat/completions", Chat("[[sim:tokens=2]]").dump());
  for (std::size_t i = 0; i < both.size(); ++i) {
    ASSERT_TRUE(c.Send(both.substr(i, 1)));
    if (i % 64 == 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // force split reads
    }
  }
  const HttpResponse first = c.Read();
  ASSERT_TRUE(first.complete) << first.error;
  EXPECT_EQ(Decode(first).usage["completion_tokens"], 5);
  const HttpResponse second = c.Read();
  EXPECT_EQ(json::parse(second.body)["version"], "servebench-sim/0.1.0");
  const HttpResponse third = c.Read();
  ASSERT_TRUE(third.complete) << third.error;
  EXPECT_EQ(json::parse(third.body)["usage"]["completion_tokens"], 2);
}

TEST(SimServerTest, ReadLagIsHowLongARequestWaitedInTheSocket) {
  SimOptions o = Fast();
  o.ttft_ms = 5;
  o.itl_ms = 2;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  // A request read at once: the kernel's receive time is microseconds before the loop's. The
  // kernel turns receive timestamps on a moment after the listening socket asks (a deferred
  // static-key switch), so the first requests of a fresh process may have none.
  ChatResult alone;
  for (int i = 0; i < 100 && !alone.sim.contains("read_lag_us"); ++i) {
    alone = StreamChat(sim->port(), Streamed("[[sim:tokens=3]]"));
    ASSERT_TRUE(alone.done);
  }
  ASSERT_TRUE(alone.sim.contains("read_lag_us")) << alone.sim.dump();
  EXPECT_GE(alone.sim["read_lag_us"].get<double>(), 0.0);
  // The first token's lateness is one of the writes max_emit_lag_us is the largest of.
  EXPECT_GE(alone.sim["first_emit_lag_us"].get<double>(), 0.0);
  EXPECT_LE(alone.sim["first_emit_lag_us"].get<double>(),
            alone.sim["max_emit_lag_us"].get<double>());
  EXPECT_LT(alone.sim["read_lag_us"].get<double>(), 50'000.0);
  // Two requests in one write: the second waits in the simulator for the first's answer
  // (5 ms + 19 steps of 2 ms), and its read lag says so.
  Connection c(sim->port());
  const std::string both =
      PostRequest("/v1/chat/completions",
                  Streamed("first", {{"ignore_eos", true}, {"max_tokens", 20}}).dump()) +
      PostRequest("/v1/chat/completions", Streamed("[[sim:tokens=2]]").dump());
  ASSERT_TRUE(c.Send(both));
  const ChatResult first = Decode(c.Read());
  const ChatResult second = Decode(c.Read());
  ASSERT_TRUE(first.done && second.done);
  const double first_ms = static_cast<double>(first.sim["last_token_ns"].get<std::int64_t>() -
                                              first.sim["recv_ns"].get<std::int64_t>()) /
                          1e6;
  EXPECT_GE(first_ms, 5.0 + 19 * 2.0 - 1e-3);
  EXPECT_GE(second.sim["read_lag_us"].get<double>() / 1e3, first_ms);
}

TEST(SimServerTest, GarbageGets400AndOversizedBodies413) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  HttpResponse r = Roundtrip(sim->port(), "this is not http\r\n\r\n");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.Header("connection"), "close");
  r = Roundtrip(sim->port(),
                "POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 67108865\r\n\r\n{");
  EXPECT_EQ(r.status, 413);
  // The server still serves others.
  EXPECT_EQ(Roundtrip(sim->port(), GetRequest("/health")).status, 200);
}

TEST(SimServerTest, ExpectContinueGetsAnInterimResponse) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  Connection c(sim->port());
  const std::string body = Chat("[[sim:tokens=2]]").dump();
  ASSERT_TRUE(
      c.Send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
             "Content-Length: " +
             std::to_string(body.size()) + "\r\n\r\n"));
  char buf[256];
  pollfd p{c.fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 2000), 1);
  const ssize_t n = ::recv(c.fd(), buf, sizeof buf, 0);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<std::size_t>(n)), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(c.Send(body));
  EXPECT_EQ(c.Read().status, 200);
}

TEST(SimServerTest, Http10StreamIsCloseDelimited) {
  auto sim = StartSim(Fast());
  ASSERT_TRUE(sim);
  const std::string body = Streamed("[[sim:tokens=3]]").dump();
  const ChatResult c =
      Decode(Roundtrip(sim->port(), "POST /v1/chat/completions HTTP/1.0\r\nContent-Length: " +
                                        std::to_string(body.size()) + "\r\n\r\n" + body));
  EXPECT_TRUE(c.http.complete) << c.http.error;
  EXPECT_FALSE(c.http.chunked);
  EXPECT_TRUE(c.done);
  EXPECT_EQ(c.usage["completion_tokens"], 3);
}

TEST(SimServerTest, SlowReaderGetsEveryByteDespiteBackPressure) {
  SimOptions o = Fast();
  o.ttft_ms = 0;
  o.itl_ms = 0;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  Connection c(sim->port(), 4096);
  ASSERT_TRUE(
      c.Send(PostRequest("/v1/chat/completions",
                         Streamed("bp", {{"ignore_eos", true}, {"max_tokens", 4000}}).dump())));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let the server hit EAGAIN
  const ChatResult r = Decode(c.Read());
  ASSERT_TRUE(r.done) << r.http.error;
  EXPECT_TRUE(r.problem.empty()) << r.problem;
  EXPECT_EQ(Tokens(r.content), 4000);
  EXPECT_EQ(r.usage["completion_tokens"], 4000);
}

// Polls stats() until `done` holds or 5 s pass.
template <typename Pred>
bool WaitForStats(const SimServer& sim, Pred done) {
  const std::int64_t deadline = NowNs() + 5'000'000'000;
  while (!done(sim.stats())) {
    if (NowNs() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// How many event loops accepted at least one connection.
long LoopsUsed(const SimServer::Stats& s) {
  return std::count_if(s.loop_connections.begin(), s.loop_connections.end(),
                       [](std::uint64_t n) { return n > 0; });
}

TEST(SimServerTest, ClientDisconnectFreesTheBatchSlot) {
  SimOptions o = Fast();
  o.max_batch = 1;
  o.itl_ms = 5;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  {
    Connection c(sim->port());
    ASSERT_TRUE(
        c.Send(PostRequest("/v1/chat/completions",
                           Streamed("long", {{"ignore_eos", true}, {"max_tokens", 5000}}).dump())));
    char buf[512];
    pollfd p{c.fd(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 2000), 1);
    ASSERT_GT(::recv(c.fd(), buf, sizeof buf, 0), 0);
    EXPECT_EQ(sim->stats().running, 1);
  }  // closed mid-stream
  EXPECT_TRUE(WaitForStats(*sim, [](const SimServer::Stats& s) { return s.streams_active == 0; }));
  EXPECT_EQ(sim->stats().disconnects, 1U);
  const ChatResult next = StreamChat(sim->port(), Streamed("[[sim:tokens=2]]"));
  ASSERT_TRUE(next.done);
  EXPECT_LT(next.sim["queue_ms"].get<double>(), 0.5);
  const std::string metrics = Roundtrip(sim->port(), GetRequest("/metrics")).body;
  EXPECT_EQ(Series(metrics, "vllm:request_success_total" + Labels("finished_reason=\"abort\"")), 1);
}

TEST(SimServerTest, ManyConcurrentStreamsAllComplete) {
  SimOptions o = Fast();
  o.ttft_ms = 400;  // every request arrives before the first one finishes, even on a busy box
  o.itl_ms = 20;
  o.max_batch = 2000;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  constexpr int kStreams = 1000;
  const json body = Streamed("many", {{"ignore_eos", true}, {"max_tokens", 10}});
  const std::int64_t t0 = NowNs();
  const auto results = RunConcurrently(sim->port(), std::vector<json>(kStreams, body), 15000);
  const double seconds = static_cast<double>(NowNs() - t0) / 1e9;
  int ok = 0;
  for (const auto& r : results) {
    ok += r.done && r.usage["completion_tokens"] == 10 && r.problem.empty();
  }
  EXPECT_EQ(ok, kStreams);
  EXPECT_LT(seconds, 10.0);
  const SimServer::Stats s = sim->stats();
  EXPECT_GE(s.max_concurrent, kStreams * 9 / 10);
  EXPECT_EQ(s.streams_active, 0);
  EXPECT_EQ(s.emits, static_cast<std::uint64_t>(kStreams) * 10);
  std::printf("[ sim ] %d streams in %.2f s; emit lag mean %.1f us, max %.1f us\n", kStreams,
              seconds, s.emit_lag_mean_us, s.emit_lag_max_us);
}

// ------------------------------------------------------------------------------ event loops

std::uint64_t Sum(const std::vector<std::uint64_t>& v) {
  std::uint64_t sum = 0;
  for (const std::uint64_t x : v) {
    sum += x;
  }
  return sum;
}

TEST(SimServerTest, LoopsShareThePortAndTheKernelSpreadsConnections) {
  SimOptions o = Fast();
  o.threads = 4;
  o.ttft_ms = 50;  // every connection is made before the first answer
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  constexpr int kStreams = 64;
  const json body = Streamed("spread", {{"ignore_eos", true}, {"max_tokens", 5}});
  const auto results = RunConcurrently(sim->port(), std::vector<json>(kStreams, body));
  int ok = 0;
  for (const auto& r : results) {
    ok += r.done && r.usage["completion_tokens"] == 5 && r.problem.empty();
  }
  EXPECT_EQ(ok, kStreams);
  const SimServer::Stats s = sim->stats();
  EXPECT_EQ(s.connections, static_cast<std::uint64_t>(kStreams));
  ASSERT_EQ(s.loop_connections.size(), 4U);
  EXPECT_EQ(Sum(s.loop_connections), s.connections);
  // SO_REUSEPORT hashes each connection's addresses: all 64 on one loop of 4 has odds 4^-63.
  EXPECT_GE(LoopsUsed(s), 2);
  EXPECT_EQ(s.emits, static_cast<std::uint64_t>(kStreams) * 5);
  EXPECT_EQ(s.streams_active, 0);
  const std::string metrics = Roundtrip(sim->port(), GetRequest("/metrics")).body;
  double series = 0;
  for (int i = 0; i < 4; ++i) {
    const double v = Series(
        metrics, "sim_loop_connections_total" + Labels("loop=\"" + std::to_string(i) + "\""));
    ASSERT_GE(v, 0) << "loop " << i;
    series += v;
  }
  EXPECT_EQ(series, kStreams + 1);  // and the /metrics request's own
}

TEST(SimServerTest, LoopsShareOneBatchAndItsQueue) {
  SimOptions o = Fast();
  o.threads = 4;
  o.max_batch = 2;
  o.ttft_ms = 5;
  o.itl_ms = 2;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  const json body = Streamed("q", {{"ignore_eos", true}, {"max_tokens", 10}});
  const auto results = RunConcurrently(sim->port(), std::vector<json>(8, body));
  std::vector<std::int64_t> starts;
  std::vector<std::int64_t> ends;
  for (const auto& r : results) {
    ASSERT_TRUE(r.done) << r.http.error;
    starts.push_back(r.sim["start_ns"].get<std::int64_t>());
    ends.push_back(r.sim["last_token_ns"].get<std::int64_t>());
  }
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  // Two slots for all the loops: the k-th stream to start waited for the (k-1)-th to finish,
  // whichever loop either was on.
  for (std::size_t k = 2; k < starts.size(); ++k) {
    EXPECT_GE(starts[k], ends[k - 2]) << "stream " << k << " started before a slot was free";
  }
  const SimServer::Stats s = sim->stats();
  EXPECT_EQ(s.max_concurrent, 2);
  EXPECT_EQ(s.streams_active, 0);
  EXPECT_EQ(s.waiting, 0);
  EXPECT_GE(LoopsUsed(s), 2);
}

TEST(SimServerTest, LoopsGiveBackTheSlotOfWaitingClientsThatLeft) {
  SimOptions o = Fast();
  o.threads = 2;
  o.max_batch = 1;
  o.itl_ms = 5;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  auto holder = std::make_unique<Connection>(sim->port());
  ASSERT_TRUE(holder->Send(
      PostRequest("/v1/chat/completions",
                  Streamed("long", {{"ignore_eos", true}, {"max_tokens", 5000}}).dump())));
  ASSERT_TRUE(WaitForStats(*sim, [](const SimServer::Stats& s) { return s.running == 1; }));
  {
    std::vector<std::unique_ptr<Connection>> waiters;
    for (int i = 0; i < 8; ++i) {
      waiters.push_back(std::make_unique<Connection>(sim->port()));
      ASSERT_TRUE(
          waiters.back()->Send(PostRequest("/v1/chat/completions", Streamed("wait").dump())));
    }
    ASSERT_TRUE(WaitForStats(*sim, [](const SimServer::Stats& s) { return s.waiting == 8; }));
  }  // the waiters leave
  ASSERT_TRUE(WaitForStats(*sim, [](const SimServer::Stats& s) { return s.waiting == 0; }));
  EXPECT_EQ(sim->stats().running, 1);
  holder.reset();  // and the holder
  ASSERT_TRUE(WaitForStats(*sim, [](const SimServer::Stats& s) { return s.streams_active == 0; }));
  EXPECT_EQ(sim->stats().disconnects, 9U);
  // The slot is free, on whichever loop the next connection lands.
  for (int i = 0; i < 4; ++i) {
    const ChatResult next = StreamChat(sim->port(), Streamed("[[sim:tokens=2]]"));
    ASSERT_TRUE(next.done);
    EXPECT_LT(next.sim["queue_ms"].get<double>(), 0.5);
  }
  EXPECT_EQ(sim->stats().max_concurrent, 1);
}

TEST(SimServerTest, LoopsRefuseAPortAlreadyInUse) {
  SimOptions o = Fast();
  o.threads = 2;
  auto sim = StartSim(o);
  ASSERT_TRUE(sim);
  SimOptions same = o;
  same.port = sim->port();
  // SO_REUSEPORT would let a second simulator share the port and take half its connections.
  const auto second = SimServer::Start(same);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kSetup);
  EXPECT_NE(second.error().message.find("bind"), std::string::npos) << second.error().message;
  EXPECT_EQ(Roundtrip(sim->port(), GetRequest("/health")).status, 200);
}

}  // namespace
}  // namespace sb::sim
