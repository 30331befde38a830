#include "perf/prometheus.h"

#include <cmath>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "core/clock.h"
#include "perf/profiles.h"
#include "sim/sim_server.h"
#include "support/fixture.h"

namespace sb::perf {
namespace {

using nlohmann::json;

TEST(PrometheusTest, ParsesNamesLabelsValuesAndSkipsComments) {
  auto r = ParsePrometheus(
      "# HELP x help\n# TYPE x counter\n"
      "vllm:prompt_tokens_total{model_name=\"a \\\"b\\\"\",engine=\"0\"} 42.0\n"
      "plain 3\r\n"
      "\n"
      "with_ts{a=\"1\"} 1.5e3 1712345678000\n"
      "nan_value NaN\n"
      "inf_value +Inf\n");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto& s = r.value();
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].name, "vllm:prompt_tokens_total");
  EXPECT_EQ(s[0].labels.at("model_name"), "a \"b\"");
  EXPECT_EQ(s[0].labels.at("engine"), "0");
  EXPECT_DOUBLE_EQ(s[0].value, 42.0);
  EXPECT_DOUBLE_EQ(s[1].value, 3.0);
  EXPECT_DOUBLE_EQ(s[2].value, 1500.0);
  EXPECT_TRUE(std::isnan(s[3].value));
  EXPECT_TRUE(std::isinf(s[4].value));
}

TEST(PrometheusTest, MalformedLineIsAnErrorNamingIt) {
  auto r = ParsePrometheus("good 1\nbad{x=\"1\" 2\n");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kProtocol);
  EXPECT_NE(r.error().message.find("bad{x="), std::string::npos) << r.error().message;
  EXPECT_FALSE(ParsePrometheus("metric notanumber\n").has_value());
}

TEST(PrometheusTest, SumOfFiltersByLabels) {
  auto s = ParsePrometheus("req{reason=\"stop\"} 3\nreq{reason=\"length\"} 4\nother 9\n").value();
  EXPECT_DOUBLE_EQ(*SumOf(s, "req"), 7.0);
  EXPECT_DOUBLE_EQ(*SumOf(s, "req", {{"reason", "length"}}), 4.0);
  EXPECT_FALSE(SumOf(s, "missing").has_value());
}

TEST(PrometheusTest, VllmV1CountersGiveSeedStyleFigures) {
  // Window: 100 drafts of 3 tokens; 86 steps accepted >= 1, 67 >= 2, 55 >= 3.
  auto before = ReadSpecCounters(
      ParsePrometheus("vllm:spec_decode_num_drafts_total 10\n"
                      "vllm:spec_decode_num_draft_tokens_total 30\n"
                      "vllm:spec_decode_num_accepted_tokens_total 20\n"
                      "vllm:spec_decode_num_accepted_tokens_per_pos_total{position=\"0\"} 8\n"
                      "vllm:spec_decode_num_accepted_tokens_per_pos_total{position=\"1\"} 7\n"
                      "vllm:spec_decode_num_accepted_tokens_per_pos_total{position=\"2\"} 5\n")
          .value());
  auto after = ReadSpecCounters(
      ParsePrometheus("vllm:spec_decode_num_drafts_total 110\n"
                      "vllm:spec_decode_num_draft_tokens_total 330\n"
                      "vllm:spec_decode_num_accepted_tokens_total 228\n"
                      "vllm:spec_decode_num_accepted_tokens_per_pos_total{position=\"0\"} 94\n"
                      "vllm:spec_decode_num_accepted_tokens_per_pos_total{position=\"1\"} 74\n"
                      "vllm:spec_decode_num_accepted_tokens_per_pos_total{position=\"2\"} 60\n")
          .value());
  ASSERT_TRUE(before && after);
  EXPECT_EQ(after->source, "vllm");
  SpecWindow w;
  w.Add(*before, *after);
  json j = SpecJson(w);
  EXPECT_DOUBLE_EQ(j["num_drafts"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(j["num_draft_tokens"].get<double>(), 300);
  EXPECT_DOUBLE_EQ(j["num_accepted_tokens"].get<double>(), 208);
  EXPECT_NEAR(j["acceptance_rate"].get<double>(), 208.0 / 300.0, 1e-12);
  EXPECT_NEAR(j["mean_acceptance_length"].get<double>(), 1.0 + 208.0 / 100.0, 1e-12);
  ASSERT_EQ(j["per_position"].size(), 3u);
  EXPECT_NEAR(j["per_position"][0].get<double>(), 0.86, 1e-12);
  EXPECT_NEAR(j["per_position"][1].get<double>(), 0.67, 1e-12);
  EXPECT_NEAR(j["per_position"][2].get<double>(), 0.55, 1e-12);
}

TEST(PrometheusTest, OtherServersAndAbsence) {
  auto v0 = ReadSpecCounters(ParsePrometheus("vllm:spec_decode_num_draft_tokens_total 9\n"
                                             "vllm:spec_decode_num_accepted_tokens_total 3\n")
                                 .value());
  ASSERT_TRUE(v0);
  EXPECT_EQ(v0->source, "vllm-v0");
  EXPECT_FALSE(v0->drafts.has_value());
  auto l = ReadSpecCounters(ParsePrometheus("llamacpp:spec_decode_num_draft_tokens_total 9\n"
                                            "llamacpp:spec_decode_num_drafts_total 3\n"
                                            "llamacpp:spec_decode_num_accepted_tokens_total 4\n")
                                .value());
  ASSERT_TRUE(l);
  EXPECT_EQ(l->source, "llama.cpp");
  auto sg = ReadSpecCounters(ParsePrometheus("sglang:spec_accept_length 2.4\n").value());
  ASSERT_TRUE(sg);
  SpecWindow w;
  w.Add(*sg, *sg);
  EXPECT_DOUBLE_EQ(SpecJson(w)["mean_acceptance_length"].get<double>(), 2.4);
  EXPECT_TRUE(SpecJson(w)["gauge"].get<bool>());
  // The real llama.cpp b9821 /metrics (no speculative counters in that release).
  auto real = ParsePrometheus(sb::testing::ReadTestFile(
      sb::testing::FixturePath("llama.cpp/b9821-spec/resp_metrics_after.txt")));
  ASSERT_TRUE(real.has_value()) << real.error().message;
  EXPECT_DOUBLE_EQ(*SumOf(real.value(), "llamacpp:tokens_predicted_total"), 2186);
  EXPECT_FALSE(ReadSpecCounters(real.value()).has_value());
}

TEST(PrometheusTest, PrefixCacheCountersGiveTheWindowsCachedShare) {
  auto read = [](const std::string& text) {
    return ReadPrefixCacheCounters(ParsePrometheus(text).value());
  };
  // vLLM v1 counts prompt tokens looked up and found, with a model label.
  const auto before = read(
      "vllm:prefix_cache_queries_total{model_name=\"m\"} 1000\n"
      "vllm:prefix_cache_hits_total{model_name=\"m\"} 200\n");
  const auto after = read(
      "vllm:prefix_cache_queries_total{model_name=\"m\"} 5000\n"
      "vllm:prefix_cache_hits_total{model_name=\"m\"} 3200\n");
  ASSERT_TRUE(before && after);
  EXPECT_EQ(after->source, "vllm");
  const json w = PrefixCacheWindowJson(*before, *after);
  EXPECT_EQ(w["prompt_tokens"], 4000);
  EXPECT_EQ(w["cached_tokens"], 3000);
  EXPECT_DOUBLE_EQ(w["share"].get<double>(), 0.75);
  // Nothing looked up: no share (never 0%).
  EXPECT_TRUE(PrefixCacheWindowJson(*after, *after)["share"].is_null());
  // A server restarted between the scrapes: its counters went down; no figure.
  EXPECT_TRUE(PrefixCacheWindowJson(*after, *before).is_null());
  // SGLang: a gauge, reported as it reads after the window.
  const auto sg = read("sglang:cache_hit_rate{model_name=\"m\"} 0.62\n");
  ASSERT_TRUE(sg);
  EXPECT_EQ(sg->source, "sglang");
  EXPECT_DOUBLE_EQ(PrefixCacheWindowJson(*sg, *sg)["hit_rate_gauge"].get<double>(), 0.62);
  // Only one of vLLM's two counters, or neither: nothing to read.
  EXPECT_FALSE(read("vllm:prefix_cache_queries_total 5\n"));
  EXPECT_FALSE(read("vllm:num_requests_running 1\n"));
}

TEST(PrometheusTest, LlamaCppPerResponseTimingsGiveAcceptanceRate) {
  // From the real b9821 speculative capture (resp_gen256_chat_stream.txt).
  SpecWindow w;
  EXPECT_TRUE(AddTimingsDrafts(R"({"predicted_n":256,"draft_n":307,"draft_n_accepted":216})", w));
  EXPECT_FALSE(AddTimingsDrafts(R"({"predicted_n":256})", w));
  EXPECT_FALSE(AddTimingsDrafts("", w));
  json j = SpecJson(w);
  EXPECT_NEAR(j["acceptance_rate"].get<double>(), 216.0 / 307.0, 1e-12);
  EXPECT_FALSE(j.contains("mean_acceptance_length"));  // no draft-step count to divide by
}

struct SimTarget {
  std::unique_ptr<sim::SimServer> sim;
  std::unique_ptr<client::Client> client;

  explicit SimTarget(const sim::SimOptions& o) {
    sim = std::move(sim::SimServer::Start(o).value());
    client::ClientOptions co;
    co.endpoint = sim->base_url();
    client = std::make_unique<client::Client>(co);
  }
};

TEST(SpecDecodeTest, SessionFiguresEqualTheSimulatorsOwnCountsAndConfiguredRates) {
  sim::SimOptions o;
  o.ttft_ms = 5;
  o.itl_ms = 0.5;
  o.jitter_ms = 0;
  o.spec_tokens = 3;
  o.spec_accept = {0.86, 0.67, 0.55};
  SimTarget t(o);
  Session s(*t.client, {"sim-model", client::ServerKind::kSim}, nullptr, nullptr, std::stop_token(),
            ToNanos(std::chrono::steady_clock::now()));
  ProfileOptions po;
  po.tokens = 1000;
  po.runs = 3;
  json d = s.Decode(po);
  ASSERT_EQ(d["runs"].size(), 3u);
  // Exact: the scraped deltas equal the sum of what the simulator reported per response.
  double drafts = 0, accepted = 0;
  for (const auto& run : d["runs"]) {
    drafts += run["server"]["sim"]["drafts"].get<double>();
    accepted += run["server"]["sim"]["accepted_tokens"].get<double>();
    EXPECT_NEAR(run["spec_decode"]["num_drafts"].get<double>(),
                run["server"]["sim"]["drafts"].get<double>(), 1e-9);
  }
  json total = s.SpecDecode();
  ASSERT_FALSE(total.is_null());
  EXPECT_EQ(total["source"], "vllm");
  EXPECT_DOUBLE_EQ(total["num_drafts"].get<double>(), drafts);
  EXPECT_DOUBLE_EQ(total["num_accepted_tokens"].get<double>(), accepted);
  // Statistical: ~3,000 tokens / 3.08 tokens per step ≈ 975 steps; the standard error of a rate
  // near 0.5 is ≈ 0.016, so ±0.06 is over 3.5 standard errors.
  ASSERT_EQ(total["per_position"].size(), 3u);
  EXPECT_NEAR(total["per_position"][0].get<double>(), 0.86, 0.06);
  EXPECT_NEAR(total["per_position"][1].get<double>(), 0.67, 0.06);
  EXPECT_NEAR(total["per_position"][2].get<double>(), 0.55, 0.06);
  EXPECT_NEAR(total["mean_acceptance_length"].get<double>(), 1 + 0.86 + 0.67 + 0.55, 0.15);
  // Several tokens per chunk, counted exactly from continuous usage.
  ASSERT_TRUE(d.contains("tokens_per_chunk"));
  EXPECT_TRUE(d["tokens_per_chunk"].contains("4"));
  EXPECT_TRUE(d["tokens_per_chunk"].contains("1"));
  // Per-token ITL is the step time divided over the burst: well under one step (0.5 ms).
  EXPECT_LT(d["itl_ms"]["median"].get<double>(), 0.45);
}

TEST(SpecDecodeTest, NoCountersMeansNull) {
  sim::SimOptions o;
  o.ttft_ms = 5;
  o.itl_ms = 0.5;
  SimTarget t(o);
  Session s(*t.client, {"sim-model", client::ServerKind::kSim}, nullptr, nullptr, std::stop_token(),
            ToNanos(std::chrono::steady_clock::now()));
  ProfileOptions po;
  po.tokens = 16;
  po.runs = 1;
  json d = s.Decode(po);
  EXPECT_TRUE(s.SpecDecode().is_null());
  EXPECT_FALSE(d["runs"][0].contains("spec_decode"));
}

TEST(SpecDecodeTest, ForeignTrafficInTheWindowIsFlagged) {
  sim::SimOptions o;
  o.ttft_ms = 5;
  o.itl_ms = 1;
  o.spec_tokens = 2;
  o.spec_accept = {0.8, 0.5};
  SimTarget t(o);
  // Somebody else's long request, running on the server while we measure.
  client::ClientOptions co;
  co.endpoint = t.sim->base_url();
  client::Client other(co);
  client::ChatParams p;
  p.model = "sim-model";
  p.messages.push_back({"user", "long", ""});
  p.max_tokens = 4000;
  p.force_length = true;
  std::vector<client::ChatCall> calls(1);
  calls[0].body = client::BuildChatBody(p, client::ServerKind::kSim);
  std::stop_source stop_other;
  std::thread bg([&] { other.RunChats(calls, {}, stop_other.get_token()); });
  // Wait until the server reports it running (bounded).
  for (int i = 0; i < 200 && t.sim->stats().running == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Session s(*t.client, {"sim-model", client::ServerKind::kSim}, nullptr, nullptr, std::stop_token(),
            ToNanos(std::chrono::steady_clock::now()));
  ProfileOptions po;
  po.tokens = 16;
  po.runs = 1;
  s.Decode(po);
  stop_other.request_stop();
  bg.join();
  bool flagged = false;
  for (const auto& w : s.warnings()) {
    flagged = flagged || w.find("not ours") != std::string::npos;
  }
  EXPECT_TRUE(flagged);
}

}  // namespace
}  // namespace sb::perf
