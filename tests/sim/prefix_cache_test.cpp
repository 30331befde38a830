// The simulator's prefix cache (`servebench sim --prefix-cache-tokens N --block-tokens B`): the
// LRU block store on its own, then over real sockets: cached_tokens in usage, a prefill that
// costs time only for uncached tokens, and the vLLM prefix-cache counters in /metrics.
#include "sim/prefix_cache.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/raw_http.h"
#include "sim/sim_server.h"

namespace sb::sim {
namespace {

using nlohmann::json;
using testing::GetRequest;
using testing::PostRequest;
using testing::Roundtrip;

TEST(PrefixCacheTest, BlockKeysChainThePrefixAndDropAPartialBlock) {
  const std::vector<std::int64_t> a = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<std::int64_t> b = {9, 2, 3, 4, 5, 6, 7, 8};  // block 1 equal, block 0 not
  const auto ka = BlockKeys(a, 4);
  const auto kb = BlockKeys(b, 4);
  ASSERT_EQ(ka.size(), 2U);  // the 9th token is a partial block
  ASSERT_EQ(kb.size(), 2U);
  EXPECT_NE(ka[0], kb[0]);
  EXPECT_NE(ka[1], kb[1]);  // same content, different prefix: a different key
  EXPECT_EQ(BlockKeys(std::vector<std::int64_t>(a.begin(), a.begin() + 8), 4), ka);
}

TEST(PrefixCacheTest, LeadingHitsStopAtTheFirstMissAndLruEvicts) {
  PrefixCache cache(3);
  const std::vector<std::uint64_t> first = {10, 11};
  EXPECT_EQ(cache.LookupAndInsert(first), 0U);
  EXPECT_EQ(cache.LookupAndInsert(first), 2U);
  const std::vector<std::uint64_t> branch = {10, 12};  // shares block 0 only
  EXPECT_EQ(cache.LookupAndInsert(branch), 1U);
  EXPECT_EQ(cache.size(), 3U);  // 10, 11, 12
  // A key that is cached after a miss does not count: hits are leading blocks only.
  const std::vector<std::uint64_t> gap = {99, 11};
  EXPECT_EQ(cache.LookupAndInsert(gap), 0U);
  // Capacity 3: storing 99 evicted the least recently used key, 10 (11 was touched after it).
  EXPECT_EQ(cache.size(), 3U);
  const std::vector<std::uint64_t> again = {10};
  EXPECT_EQ(cache.LookupAndInsert(again), 0U);
  PrefixCache off(0);
  EXPECT_EQ(off.LookupAndInsert(first), 0U);
  EXPECT_EQ(off.LookupAndInsert(first), 0U);
}

std::unique_ptr<SimServer> StartCaching(int cache_tokens, int block) {
  SimOptions o;
  o.ttft_ms = 2;
  o.prefill_us_per_token = 200;  // 0.2 ms per uncached token: visible in the TTFT
  o.itl_ms = 0.5;
  o.concurrency_slowdown = 0;
  o.prefix_cache_tokens = cache_tokens;
  o.block_tokens = block;
  auto r = SimServer::Start(o);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? std::move(r).value() : nullptr;
}

std::string Words(int n, const std::string& word) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    s += (i ? " " : "") + word + std::to_string(i);
  }
  return s;
}

// A non-streamed chat; returns the body.
json Ask(int port, const std::string& text) {
  const json body = {{"model", "sim-model"},
                     {"max_tokens", 2},
                     {"messages", {{{"role", "user"}, {"content", text}}}}};
  const auto r = Roundtrip(port, PostRequest("/v1/chat/completions", body.dump()));
  EXPECT_EQ(r.status, 200) << r.body;
  return json::parse(r.body, nullptr, false);
}

double Metric(int port, const std::string& series) {
  const auto r = Roundtrip(port, GetRequest("/metrics"));
  const std::string key = "\n" + series + " ";
  const auto pos = r.body.find(key);
  return pos == std::string::npos ? -1 : std::stod(r.body.substr(pos + key.size()));
}

TEST(PrefixCacheTest, ServerReportsCachedTokensAndSkipsTheirPrefill) {
  auto sim = StartCaching(1'000'000, 16);
  ASSERT_TRUE(sim);
  // 100 words + 6 template tokens (BOS, message start, role, separator ... end, assistant):
  // 106 prompt tokens, 6 full blocks of 16.
  const std::string text = Words(100, "w");
  const json a = Ask(sim->port(), text);
  ASSERT_EQ(a["usage"]["prompt_tokens"], 106);
  EXPECT_EQ(a["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  const json b = Ask(sim->port(), text);
  EXPECT_EQ(b["usage"]["prompt_tokens_details"]["cached_tokens"], 96);
  // Shares the 4 leading template tokens and the first 40 words: 44 tokens, 2 full blocks.
  const json c = Ask(sim->port(), Words(40, "w") + " " + Words(60, "x"));
  EXPECT_EQ(c["usage"]["prompt_tokens_details"]["cached_tokens"], 32);
  // Prefill: 2 ms + 0.2 ms per uncached token (the ground truth's ttft counts from receipt).
  const double ttft_a = a["sim"]["ttft_ms"];
  const double ttft_b = b["sim"]["ttft_ms"];
  EXPECT_GE(ttft_a, 2 + 0.2 * 106 - 1e-3);
  EXPECT_GE(ttft_b, 2 + 0.2 * 10 - 1e-3);
  EXPECT_LT(ttft_b, ttft_a - 10);  // 96 tokens x 0.2 ms = 19.2 ms less prefill
  EXPECT_EQ(b["sim"]["cached_tokens"], 96);
  EXPECT_EQ(Metric(sim->port(),
                   "vllm:prefix_cache_queries_total{model_name=\"sim-model\","
                   "engine=\"0\"}"),
            106 * 3);
  EXPECT_EQ(
      Metric(sim->port(), "vllm:prefix_cache_hits_total{model_name=\"sim-model\",engine=\"0\"}"),
      96 + 32);
}

TEST(PrefixCacheTest, StreamedUsageCarriesCachedTokens) {
  auto sim = StartCaching(1'000'000, 8);
  ASSERT_TRUE(sim);
  const json body = {{"model", "sim-model"},
                     {"max_tokens", 3},
                     {"stream", true},
                     {"stream_options", {{"include_usage", true}}},
                     {"messages", {{{"role", "user"}, {"content", Words(30, "s")}}}}};
  int last_cached = -1;
  for (int round = 0; round < 2; ++round) {
    const auto r = Roundtrip(sim->port(), PostRequest("/v1/chat/completions", body.dump()));
    ASSERT_EQ(r.status, 200);
    for (const auto& ev : r.events) {
      const json j = json::parse(ev.data, nullptr, false);
      if (j.is_object() && j.contains("usage") && j["usage"].is_object()) {
        last_cached = j["usage"]["prompt_tokens_details"]["cached_tokens"];
      }
    }
    EXPECT_EQ(last_cached, round == 0 ? 0 : 32);  // 36 tokens: 4 full blocks of 8
  }
}

TEST(PrefixCacheTest, SmallCacheEvictsAndOffSaysNothing) {
  auto small = StartCaching(32, 16);  // two blocks
  ASSERT_TRUE(small);
  Ask(small->port(), Words(100, "a"));
  // The last two blocks stored were 4 and 5; block 0 was evicted, so nothing leads with a hit.
  EXPECT_EQ(Ask(small->port(), Words(100, "a"))["usage"]["prompt_tokens_details"]["cached_tokens"],
            0);
  auto off = StartCaching(0, 16);
  ASSERT_TRUE(off);
  Ask(off->port(), Words(50, "a"));
  const json again = Ask(off->port(), Words(50, "a"));
  EXPECT_FALSE(again["usage"].contains("prompt_tokens_details"));
  EXPECT_FALSE(again["sim"].contains("cached_tokens"));
  EXPECT_EQ(Metric(off->port(),
                   "vllm:prefix_cache_hits_total{model_name=\"sim-model\","
                   "engine=\"0\"}"),
            -1);
}

TEST(PrefixCacheTest, BadOptionsAreRefused) {
  SimOptions o;
  o.prefix_cache_tokens = -1;
  EXPECT_FALSE(Validate(o).has_value());
  o.prefix_cache_tokens = 100;
  o.block_tokens = 0;
  const auto v = Validate(o);
  ASSERT_FALSE(v.has_value());
  EXPECT_NE(v.error().message.find("block_tokens"), std::string::npos);
}

}  // namespace
}  // namespace sb::sim
