// Load shapes against the simulator (a real HTTP server in this process): --input-tokens exact
// to the server's tokenizer for decode, concurrency and rate; the concurrency profile's
// sustained closed loop (--requests / --duration-s per level); the client-bound self-check that
// every profile's rows carry.
#include <chrono>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "perf/profiles.h"
#include "profiles_fixture.h"

namespace sb::perf {
namespace {

using fixture::Fixture;
using nlohmann::json;

sim::SimOptions Fast() {
  sim::SimOptions o = fixture::Quiet();
  o.ttft_ms = 2;
  o.itl_ms = 1;
  o.concurrency_slowdown = 0;
  return o;
}

// Every measured request record in a profile's result, wherever it sits.
void CollectRequests(const json& j, std::vector<json>& out) {
  if (j.is_object()) {
    if (j.contains("prompt_tokens") && j.contains("profile") && j.contains("status")) {
      out.push_back(j);
      return;
    }
    for (const auto& [k, v] : j.items()) {
      CollectRequests(v, out);
    }
  } else if (j.is_array()) {
    for (const auto& v : j) {
      CollectRequests(v, out);
    }
  }
}

TEST(LoadShapesTest, InputTokensAreExactToTheServersTokenizer) {
  Fixture f(Fast());
  Session s = f.MakeSession();
  ProfileOptions po;
  po.warmup = 0;
  po.tokens = 8;
  po.runs = 2;
  po.args.SetInts("--levels", {3});
  po.rate.rates = {40};
  po.rate.requests = 4;
  po.rate.tokens = 8;
  for (int size : {333, 1200}) {
    po.input_tokens = size;
    std::vector<json> reqs;
    json d = s.Decode(po);
    EXPECT_EQ(d["input_tokens"], size);
    CollectRequests(d, reqs);
    CollectRequests(s.Concurrency(po), reqs);
    CollectRequests(s.Rate(po), reqs);
    ASSERT_EQ(reqs.size(), 2u + 3u + 4u) << size;
    for (const json& r : reqs) {
      EXPECT_EQ(r["status"], "ok") << r.dump();
      // What the server billed, not what the client believes it sent.
      EXPECT_EQ(r["prompt_tokens"], size) << r["profile"] << " " << r["label"];
    }
  }
  // No warning but the client-bound self-check, which a loaded machine may honestly raise.
  for (const std::string& w : s.warnings()) {
    EXPECT_NE(w.find("may be the bottleneck"), std::string::npos) << w;
  }
}

TEST(LoadShapesTest, WithoutInputTokensThePromptStaysShort) {
  Fixture f(Fast());
  Session s = f.MakeSession();
  ProfileOptions po;
  po.warmup = 0;
  po.tokens = 4;
  po.runs = 1;
  json d = s.Decode(po);
  EXPECT_TRUE(d["input_tokens"].is_null());
  EXPECT_LT(d["runs"][0]["prompt_tokens"].get<int>(), 60);
}

TEST(LoadShapesTest, ClosedLoopSendsMRequestsPerLevelWithNeverMoreThanNInFlight) {
  Fixture f(Fast());
  Session s = f.MakeSession();
  ProfileOptions po;
  po.warmup = 0;
  po.tokens = 6;
  po.args.SetInts("--levels", {1, 3});
  po.level_requests = 11;
  json c = s.Concurrency(po);
  ASSERT_EQ(c["levels"].size(), 2u);
  EXPECT_EQ(c["closed_loop"]["requests"], 11);
  for (const json& level : c["levels"]) {
    const int n = level["concurrency"].get<int>();
    EXPECT_EQ(level["sent"], 11);
    EXPECT_EQ(level["ok"], 11);
    EXPECT_EQ(level["requests"].size(), 11u);
    // The client's own send/done times, and the server's peak below.
    EXPECT_EQ(level["peak_in_flight"], n) << level.dump(1);
    EXPECT_EQ(level["per_stream_decode_tok_s"]["n"], 11);
  }
  EXPECT_EQ(f.sim->stats().max_concurrent, 3);
  EXPECT_EQ(f.samples.size(), 22u);
}

TEST(LoadShapesTest, TimedClosedLoopKeepsNInFlightForTheDuration) {
  sim::SimOptions so = Fast();
  so.itl_ms = 2;
  Fixture f(so);
  Session s = f.MakeSession();
  ProfileOptions po;
  po.warmup = 0;
  po.tokens = 20;  // >= 40 ms a request: at most ~8 per slot in 0.3 s, far below the cap
  po.args.SetInts("--levels", {2});
  po.level_duration_s = 0.3;
  json c = s.Concurrency(po);
  const json& level = c["levels"][0];
  const int sent = level["sent"].get<int>();
  EXPECT_GT(sent, 4);       // far more than one request per stream ...
  EXPECT_LT(sent, 20 * 2);  // ... and the window, not the cap (20 x N), ended the level
  EXPECT_LE(level["peak_in_flight"].get<int>(), 2);
  double first = 1e18, last = 0;
  for (const json& r : level["requests"]) {
    first = std::min(first, r["sent_at_ms"].get<double>());
    last = std::max(last, r["sent_at_ms"].get<double>());
  }
  EXPECT_LT(last - first, 300.0 + 5.0);  // nothing started after the window closed
  EXPECT_LE(f.sim->stats().max_concurrent, 2);
  // Unsent calls are not requests: no sample, no row.
  EXPECT_EQ(f.samples.size(), static_cast<std::size_t>(sent));
}

TEST(LoadShapesTest, ClientBoundFlagAppearsOnlyWhenTheClientIsTheBottleneck) {
  sim::SimOptions so = Fast();
  so.itl_ms = 0.5;
  Fixture f(so);
  Session s = f.MakeSession();
  ProfileOptions po;
  po.warmup = 0;
  po.tokens = 40;
  po.runs = 1;
  po.args.SetInts("--levels", {2});
  // Easy load: a few streams the client handles in microseconds per event.
  json easy = s.Concurrency(po);
  ASSERT_TRUE(easy["levels"][0].contains("self_check")) << easy.dump(1);
  EXPECT_FALSE(easy["levels"][0]["self_check"]["client_bound"].get<bool>())
      << easy["levels"][0]["self_check"].dump();
  json decode_easy = s.Decode(po);
  EXPECT_FALSE(decode_easy["runs"][0]["self_check"]["client_bound"].get<bool>());
  // A client that burns 3 ms of CPU per event cannot keep up with 0.5 ms steps.
  s.SetEventHook([](const client::ChatResponse&) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(3);
    while (std::chrono::steady_clock::now() < until) {
    }
  });
  json hard = s.Run("concurrency", po);
  const json& check = hard["levels"][0]["self_check"];
  EXPECT_TRUE(check["client_bound"].get<bool>()) << check.dump();
  EXPECT_GT(check["event_delay_us"]["p99"].get<double>(), 1000.0);
  json decode_hard = s.Run("decode", po);
  EXPECT_TRUE(decode_hard["runs"][0]["self_check"]["client_bound"].get<bool>());
  bool warned = false;
  for (const auto& w : s.warnings()) {
    warned = warned || w.find("bottleneck") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace sb::perf
