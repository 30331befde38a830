// Pins every per-request definition of docs/metrics.md on hand-built responses.
#include "perf/metrics.h"

#include <vector>

#include <gtest/gtest.h>

namespace sb::perf {
namespace {

using client::ChatResponse;
using client::TokenEvent;

constexpr std::int64_t kMs = 1'000'000;

// send at 1000 ms; token events at the given ms offsets after send.
ChatResponse Response(std::vector<std::pair<double, std::uint8_t>> events, int usage_tokens) {
  ChatResponse r;
  r.send_ns = 1000 * kMs;
  for (auto [ms, kinds] : events) {
    TokenEvent e;
    e.t_ns = r.send_ns + static_cast<std::int64_t>(ms * kMs);
    e.kinds = kinds;
    r.events.push_back(e);
  }
  r.usage.completion_tokens = usage_tokens;
  return r;
}

TEST(MetricsTest, TtftIsFirstTokenBearingEventMinusSend) {
  auto r = Response({{50, TokenEvent::kAnswer}, {60, TokenEvent::kAnswer}}, 2);
  EXPECT_DOUBLE_EQ(*ComputeMetrics(r).ttft_ms, 50.0);
}

TEST(MetricsTest, ReasoningCountsForTtftButNotForTtfa) {
  auto r = Response({{30, TokenEvent::kReasoning},
                     {40, TokenEvent::kReasoning},
                     {90, TokenEvent::kAnswer},
                     {100, TokenEvent::kAnswer}},
                    4);
  RequestMetrics m = ComputeMetrics(r);
  EXPECT_DOUBLE_EQ(*m.ttft_ms, 30.0);
  EXPECT_DOUBLE_EQ(*m.ttfa_ms, 90.0);
}

TEST(MetricsTest, ToolCallDeltaIsATokenEvent) {
  auto r = Response({{25, TokenEvent::kTool}, {35, TokenEvent::kTool}}, 2);
  RequestMetrics m = ComputeMetrics(r);
  EXPECT_DOUBLE_EQ(*m.ttft_ms, 25.0);
  EXPECT_FALSE(m.ttfa_ms.has_value());
}

TEST(MetricsTest, DecodeSpeedExcludesTtft) {
  // 101 tokens, first at 200 ms, last at 1200 ms: 100 tokens in 1 s after the first.
  std::vector<std::pair<double, std::uint8_t>> ev;
  for (int i = 0; i <= 100; ++i) {
    ev.push_back({200.0 + 10.0 * i, TokenEvent::kAnswer});
  }
  RequestMetrics m = ComputeMetrics(Response(ev, 101));
  EXPECT_NEAR(*m.decode_tok_s, 100.0, 1e-9);
  EXPECT_NEAR(*m.e2e_ms, 1200.0, 1e-9);
  EXPECT_NEAR(*m.tpot_ms, (1200.0 - 200.0) / 100.0, 1e-9);
  // Wall tok/s includes TTFT: 101 tokens / 1.2 s.
  EXPECT_NEAR(*m.wall_tok_s, 101.0 / 1.2, 1e-9);
}

TEST(MetricsTest, DecodeSpeedUsesServerTokenCountNotChunkCount) {
  // Speculative decoding: 4 chunks carrying 10 tokens. (10 - 1) tokens over 30 ms.
  auto r = Response({{100, TokenEvent::kAnswer},
                     {110, TokenEvent::kAnswer},
                     {120, TokenEvent::kAnswer},
                     {130, TokenEvent::kAnswer}},
                    10);
  RequestMetrics m = ComputeMetrics(r);
  EXPECT_EQ(m.chunks, 4);
  EXPECT_EQ(m.completion_tokens, 10);
  EXPECT_FALSE(m.tokens_estimated);
  EXPECT_NEAR(*m.decode_tok_s, 9 / 0.030, 1e-6);
}

TEST(MetricsTest, WithoutUsageTheCountIsMarkedEstimated) {
  auto r = Response({{100, TokenEvent::kAnswer}, {110, TokenEvent::kAnswer}}, -1);
  RequestMetrics m = ComputeMetrics(r);
  EXPECT_TRUE(m.tokens_estimated);
  EXPECT_EQ(m.completion_tokens, 2);
}

TEST(MetricsTest, PerChunkTokenCountsAreUsedWhenUsageIsMissing) {
  auto r = Response({{100, TokenEvent::kAnswer}, {110, TokenEvent::kAnswer}}, -1);
  r.events[0].tokens = 3;
  r.events[1].tokens = 2;
  EXPECT_EQ(ComputeMetrics(r).completion_tokens, 5);
}

TEST(MetricsTest, SingleTokenHasNoDecodeSpeed) {
  RequestMetrics m = ComputeMetrics(Response({{40, TokenEvent::kAnswer}}, 1));
  EXPECT_DOUBLE_EQ(*m.ttft_ms, 40.0);
  EXPECT_FALSE(m.decode_tok_s.has_value());
  EXPECT_FALSE(m.tpot_ms.has_value());
}

TEST(MetricsTest, NoTokensMeansNoTimes) {
  RequestMetrics m = ComputeMetrics(Response({}, 0));
  EXPECT_FALSE(m.ttft_ms.has_value());
  EXPECT_FALSE(m.e2e_ms.has_value());
}

TEST(MetricsTest, CombinedThroughputSpansFirstSendToLastToken) {
  // Two streams: sent at 0 and 10 ms; last tokens at 510 and 1010 ms; 100 tokens each.
  ChatResponse a = Response({{10, TokenEvent::kAnswer}, {510, TokenEvent::kAnswer}}, 100);
  ChatResponse b = Response({{20, TokenEvent::kAnswer}, {1000, TokenEvent::kAnswer}}, 100);
  b.send_ns += 10 * kMs;
  for (auto& e : b.events) {
    e.t_ns += 10 * kMs;
  }
  std::vector<ChatResponse> rs = {a, b};
  // 200 tokens over 1010 ms.
  EXPECT_NEAR(*CombinedThroughput(rs), 200 / 1.010, 1e-9);
}

TEST(MetricsTest, CombinedThroughputOfNothingIsEmpty) {
  std::vector<ChatResponse> rs = {Response({}, 0)};
  EXPECT_FALSE(CombinedThroughput(rs).has_value());
}

}  // namespace
}  // namespace sb::perf
