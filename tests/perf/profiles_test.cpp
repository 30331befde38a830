// The speed profiles against the built-in simulator, whose ground truth is known: what the
// client measures must agree with what the simulator did, within bounds that cannot pass by
// accident (a wrong definition -- TTFT including decode, decode speed including TTFT, chunk
// counts instead of tokens -- misses them by far more).
#include "perf/profiles.h"

#include <algorithm>
#include <memory>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/resource.h>

#include "client/http_client.h"
#include "core/clock.h"
#include "perf/profiles_fixture.h"
#include "sim/sim_server.h"
#include "support/script_server.h"

namespace sb::perf {
namespace {

using nlohmann::json;

using fixture::Fixture;
using fixture::Quiet;

TEST(ProfilesTest, MaxTokensReportsOneRowPerLength) {
  Fixture f(Quiet());
  Session s = f.MakeSession();
  ProfileOptions o;
  o.args.SetInts("--lengths", {16, 48});
  json m = s.MaxTokens(o);
  ASSERT_EQ(m["lengths"].size(), 2u);
  EXPECT_EQ(m["lengths"][1]["max_tokens"], 48);
  EXPECT_EQ(m["lengths"][1]["runs"][0]["completion_tokens"], 48);
  // Wall tok/s includes TTFT, so it is below the decode speed.
  EXPECT_LT(m["lengths"][1]["tok_s"]["median"].get<double>(),
            m["lengths"][1]["decode_tok_s"]["median"].get<double>());
}

TEST(ProfilesTest, FailedRequestsAreRecordedNotHidden) {
  Fixture f(Quiet());
  Session s = f.MakeSession();
  ProfileOptions o;
  o.tokens = 16;
  o.args.SetInts("--levels", {2});
  o.warmup = 0;
  // Aim a session at a model the server does not serve: every request fails with HTTP 404.
  Session wrong(
      *f.client, {"no-such-model", client::ServerKind::kSim},
      [&](const json& j) { f.samples.push_back(j); }, nullptr, f.stop.get_token(),
      ToNanos(std::chrono::steady_clock::now()));
  json c = wrong.Concurrency(o);
  const json& l = c["levels"][0];
  EXPECT_EQ(l["ok"], 0);
  EXPECT_EQ(l["errors"], 2);
  EXPECT_EQ(l["requests"][0]["status"], "http_error");
  EXPECT_EQ(l["requests"][0]["http_status"], 404);
  EXPECT_TRUE(l["throughput_tok_s"].is_null());
  EXPECT_EQ(wrong.Summary()["failed_requests"], 2);
}

TEST(ProfilesTest, FailedStreamsHaveNoSpeedAndAddNothingToTheSummary) {
  sim::SimOptions so = Quiet();
  so.fault_rate = 1;
  so.fault_kinds = {"reset"};
  Fixture f(so);
  Session s = f.MakeSession();
  ProfileOptions o;
  o.tokens = 64;
  o.runs = 4;
  o.warmup = 0;
  json d = s.Decode(o);
  ASSERT_EQ(d["runs"].size(), 4u);  // a reset from a live server: the run goes on
  for (const auto& run : d["runs"]) {
    EXPECT_EQ(run["status"], "transport");
    EXPECT_TRUE(run["decode_tok_s"].is_null()) << run.dump();
    EXPECT_TRUE(run["tpot_ms"].is_null());
    EXPECT_FALSE(run["tokens_estimated"].get<bool>());
  }
  EXPECT_EQ(d["decode_tok_s"]["n"], 0);
  json sum = s.Summary();
  EXPECT_EQ(sum["failed_requests"], 4);
  EXPECT_EQ(sum["completion_tokens"], 0);
  EXPECT_TRUE(sum["avg_tok_s"].is_null());
  // No bogus "estimated tokens" warning. The only warning allowed is the client-bound self-check,
  // which a slow build (ASan under load) may honestly raise.
  for (const std::string& w : s.warnings()) {
    EXPECT_NE(w.find("may be the bottleneck"), std::string::npos) << w;
  }
}

TEST(ProfilesTest, ALevelWhereEveryStreamFailedHasNoThroughput) {
  // Every stream is reset after some tokens arrived: those tokens are no throughput.
  sim::SimOptions so = Quiet();
  so.fault_rate = 1;
  so.fault_kinds = {"reset"};
  Fixture f(so);
  Session s = f.MakeSession();
  ProfileOptions o;
  o.tokens = 64;
  o.args.SetInts("--levels", {4});
  o.warmup = 0;
  json c = s.Concurrency(o);
  const json& l = c["levels"][0];
  EXPECT_EQ(l["ok"], 0);
  EXPECT_EQ(l["errors"], 4);
  EXPECT_TRUE(l["throughput_tok_s"].is_null()) << l["throughput_tok_s"];
  EXPECT_EQ(l["per_stream_decode_tok_s"]["n"], 0);
}

TEST(ProfilesTest, RequestTimeoutEndsAStalledDecodeRequest) {
  sim::SimOptions so = Quiet();
  so.fault_rate = 1;
  so.fault_kinds = {"stall"};
  so.stall_ms = 20000;
  Fixture f(so);
  Session s = f.MakeSession();
  ProfileOptions o;
  o.tokens = 64;
  o.runs = 1;
  o.warmup = 0;
  o.request_timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  json d = s.Run("decode", o);
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(d["runs"].size(), 1u);
  EXPECT_EQ(d["runs"][0]["status"], "timeout") << d["runs"][0].dump();
  EXPECT_NE(d["runs"][0]["reason"].get<std::string>().find("300 ms"), std::string::npos)
      << d["runs"][0]["reason"];
  EXPECT_LT(took_s, 5.0);  // the stall lasts 20 s
}

TEST(ProfilesTest, MetricsAnsweredWithJsonIsNoWarning) {
  using testing::Chunk;
  using testing::FullResponse;
  using testing::LastChunk;
  using testing::Script;
  using testing::ScriptRequest;
  using testing::SseHead;
  testing::ScriptServer server([](const ScriptRequest& req) {
    if (req.path == "/metrics") {
      return Script().Send(
          FullResponse(200, "application/json", R"({"requests": 12, "uptime_s": 99})"));
    }
    Script script;
    script.Send(SseHead());
    for (int i = 0; i < 8; ++i) {
      script
          .Send(Chunk(R"(data: {"choices":[{"index":0,"delta":{"content":"tok "}}]})"
                      "\n\n"))
          .Pause(2);
    }
    return script
        .Send(Chunk(R"(data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}],)"
                    R"("usage":{"prompt_tokens":5,"completion_tokens":8}})"
                    "\n\ndata: [DONE]\n\n"))
        .Send(LastChunk());
  });
  client::ClientOptions co;
  co.endpoint = server.url();
  client::Client c(co);
  std::stop_source stop;
  Session s(c, {"m", client::ServerKind::kUnknown}, nullptr, nullptr, stop.get_token(),
            ToNanos(std::chrono::steady_clock::now()));
  ProfileOptions o;
  o.tokens = 8;
  o.runs = 2;
  o.warmup = 0;
  json d = s.Decode(o);
  EXPECT_EQ(d["decode_tok_s"]["n"], 2) << d.dump();
  for (const auto& w : s.warnings()) {
    EXPECT_EQ(w.find("metrics"), std::string::npos) << w;
  }
  EXPECT_TRUE(s.SpecDecode().is_null());
}

TEST(ProfilesTest, AServerThatIgnoresStreamTrueGetsNoSpeed) {
  using testing::FullResponse;
  using testing::Script;
  using testing::ScriptRequest;
  // One JSON body for a stream request: before, this read as 10,000+ tok/s.
  testing::ScriptServer server([](const ScriptRequest&) {
    return Script().Send(FullResponse(
        200, "application/json",
        R"({"choices":[{"index":0,"message":{"role":"assistant","content":"a b c d e f g h"},)"
        R"("finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":64}})"));
  });
  client::ClientOptions co;
  co.endpoint = server.url();
  client::Client c(co);
  std::stop_source stop;
  Session s(c, {"m", client::ServerKind::kUnknown}, nullptr, nullptr, stop.get_token(),
            ToNanos(std::chrono::steady_clock::now()));
  ProfileOptions o;
  o.tokens = 64;
  o.runs = 2;
  o.args.SetInts("--levels", {2});
  o.warmup = 0;
  json d = s.Decode(o);
  ASSERT_EQ(d["runs"].size(), 2u);
  EXPECT_EQ(d["runs"][0]["status"], "ok");
  EXPECT_EQ(d["runs"][0]["streamed"], false);
  EXPECT_TRUE(d["runs"][0]["ttft_ms"].is_null());
  EXPECT_TRUE(d["runs"][0]["decode_tok_s"].is_null());
  EXPECT_TRUE(d["runs"][0]["e2e_ms"].is_number());
  EXPECT_EQ(d["decode_tok_s"]["n"], 0);
  json conc = s.Concurrency(o);
  EXPECT_TRUE(conc["levels"][0]["throughput_tok_s"].is_null()) << conc["levels"][0].dump();
  bool warned = false;
  for (const auto& w : s.warnings()) {
    warned = warned || w.find("ignored stream=true") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

TEST(ProfilesTest, TheContextFirstByteLimitGrowsWithThePrompt) {
  using std::chrono::milliseconds;
  EXPECT_EQ(ScaledFirstByteTimeout(milliseconds(60'000), 100), milliseconds(60'000));
  EXPECT_EQ(ScaledFirstByteTimeout(milliseconds(60'000), 8'000), milliseconds(60'000));
  EXPECT_EQ(ScaledFirstByteTimeout(milliseconds(60'000), 128'000), milliseconds(960'000));
  EXPECT_EQ(ScaledFirstByteTimeout(milliseconds(0), 128'000), milliseconds(0));
}

TEST(ProfilesTest, CachedPromptTokensComeFromUsageOrLlamaCppTimings) {
  client::ChatResponse r;
  EXPECT_EQ(CachedPromptTokens(r), -1);
  r.timings_json = R"({"cache_n": 37, "prompt_n": 63, "prompt_ms": 21.9})";
  EXPECT_EQ(CachedPromptTokens(r), 37);
  r.usage.cached_tokens = 12;  // the OpenAI field wins where both exist
  EXPECT_EQ(CachedPromptTokens(r), 12);
  r.usage.cached_tokens = -1;
  r.timings_json = "not json";
  EXPECT_EQ(CachedPromptTokens(r), -1);
}

TEST(ProfilesTest, AServerThatStopsAnsweringEndsTheRun) {
  std::string url;
  {
    auto gone = std::move(sim::SimServer::Start(Quiet()).value());
    url = gone->base_url();
  }  // the port is closed now
  client::ClientOptions co;
  co.endpoint = url;
  client::Client c(co);
  std::vector<json> samples;
  Session s(
      c, {"sim-model", client::ServerKind::kSim}, [&](const json& j) { samples.push_back(j); },
      nullptr, std::stop_token(), ToNanos(std::chrono::steady_clock::now()));
  ProfileOptions o;
  o.runs = 20;
  o.warmup = 0;
  json d = s.Decode(o);
  // Two requests with no answer, then an unanswered probe: no more requests (docs/bounds.md).
  EXPECT_EQ(d["runs"].size(), 2u);
  EXPECT_TRUE(s.Halted());
  EXPECT_FALSE(s.interrupted());
  ASSERT_FALSE(s.warnings().empty());
  EXPECT_NE(s.warnings().back().find("stopped answering"), std::string::npos);
}

TEST(ProfilesTest, StopRequestEndsTheProfileEarlyAndKeepsWhatWasMeasured) {
  Fixture f(Quiet());
  Session s = f.MakeSession();
  ProfileOptions o;
  o.tokens = 16;
  o.runs = 50;
  o.warmup = 0;
  // Stop after the second finished request.
  Session stopping(
      *f.client, {"sim-model", client::ServerKind::kSim},
      [&](const json& j) {
        f.samples.push_back(j);
        if (f.samples.size() == 2) {
          f.stop.request_stop();
        }
      },
      nullptr, f.stop.get_token(), ToNanos(std::chrono::steady_clock::now()));
  json d = stopping.Decode(o);
  EXPECT_EQ(d["runs"].size(), 2u);
  EXPECT_EQ(d["decode_tok_s"]["n"], 2);
  EXPECT_TRUE(stopping.interrupted());
}

TEST(ProfilesTest, FillerTextIsDeterministicAndSized) {
  std::string a = FillerText(200, 7);
  EXPECT_EQ(a, FillerText(200, 7));
  EXPECT_NE(a, FillerText(200, 8));
  EXPECT_EQ(std::count(a.begin(), a.end(), ' '), 200);  // every word is followed by one space
}

TEST(ProfilesTest, OneProcessDrivesAThousandConcurrentStreams) {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < 2100) {
    GTEST_SKIP() << "open-file limit " << lim.rlim_cur << " is below the 2,100 this test needs";
  }
  sim::SimOptions so = Quiet();
  so.itl_ms = 20;
  so.concurrency_slowdown = 0;
  so.max_batch = 1000;
  Fixture f(so);
  Session s = f.MakeSession();
  ProfileOptions o;
  o.tokens = 8;
  o.args.SetInts("--levels", {1000});
  o.warmup = 0;
  json c = s.Concurrency(o);
  const json& l = c["levels"][0];
  EXPECT_EQ(l["ok"], 1000) << l["errors"];
  EXPECT_EQ(l["requests"].size(), 1000u);
  // All 1,000 ran at once: the whole level takes about one stream's time (20 ms TTFT + 7 steps
  // of 20 ms), not 1,000 of them.
  EXPECT_LT(l["wall_s"].get<double>(), 5.0);
  EXPECT_EQ(f.samples.size(), 1000u);
}

TEST(ProfilesTest, StatsJsonKeepsEveryRawValue) {
  json j = StatsJson({3.0, 1.0, 2.0});
  EXPECT_EQ(j["n"], 3);
  EXPECT_EQ(j["median"], 2.0);
  EXPECT_EQ(j["values"], json({3.0, 1.0, 2.0}));
  EXPECT_EQ(StatsJson({}), json({{"n", 0}}));
}

}  // namespace
}  // namespace sb::perf
