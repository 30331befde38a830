// The sessions profile's tails and frontier point (issue 23 for sessions): exact figures from
// known request facts.
#include "perf/sessions_summary.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perf/sessions.h"

namespace sb::perf {
namespace {

using nlohmann::json;

TurnFact Fact(std::size_t session, int turn, int round, double ttft, double tpot, double decode) {
  TurnFact f;
  f.session = session;
  f.turn = turn;
  f.tool_round = round;
  f.ok = true;
  f.prompt_tokens = 100 * turn;
  f.completion_tokens = 11;
  f.ttft_ms = ttft;
  f.tpot_ms = tpot;
  f.e2e_ms = ttft + 10 * tpot;
  f.decode_tok_s = decode;
  f.itl_ms = {tpot, tpot};
  return f;
}

TEST(SessionsSummaryTest, TurnsReportTtftItlTpotE2eTails) {
  std::vector<TurnFact> facts;
  for (int k = 1; k <= 10; ++k) {
    facts.push_back(Fact(k, 1, 0, k, 2.0 * k, 500.0 / k));
  }
  facts.push_back(Fact(1, 2, 0, 50, 4, 250));
  const json turns = TurnsJson(facts);
  ASSERT_EQ(turns.size(), 2U);
  for (const char* key : {"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"}) {
    for (const char* p : {"p50", "p90", "p99"}) {
      EXPECT_TRUE(turns[0][key].contains(p)) << key << " " << p;
    }
  }
  EXPECT_EQ(turns[0]["tpot_ms"]["n"], 10);
  EXPECT_EQ(turns[0]["tpot_ms"]["max"], 20.0);
  EXPECT_EQ(turns[1]["tpot_ms"]["n"], 1);
  EXPECT_EQ(turns[1]["tpot_ms"]["p50"], 4.0);
}

TEST(SessionsSummaryTest, TheSessionConcurrencyLevelHasTailsAndAFrontierPoint) {
  SessionsOptions so;
  so.concurrency = 3;
  SessionsTally t;
  t.turns = {Fact(0, 1, 0, 10, 5, 200), Fact(0, 1, 1, 12, 5, 200), Fact(1, 1, 0, 30, 10, 100)};
  TurnFact failed;
  failed.turn = 2;
  t.turns.push_back(failed);  // a failed request has no latency to rank
  t.ok = 3;
  t.failed = 1;
  t.tokens = 33;
  t.ok_first = 0;
  t.ok_last = 1'000'000'000;  // 33 tokens in 1 s
  const json out = SessionsJson(so, 2, -1, t, json::array(), 2);
  ASSERT_EQ(out["levels"].size(), 1U);
  const json& level = out["levels"][0];
  EXPECT_EQ(level["session_concurrency"], 3);
  EXPECT_EQ(level["requests"], 3);  // tool rounds count; the failed request does not
  EXPECT_EQ(level["ttft_ms"]["n"], 3);
  EXPECT_EQ(level["ttft_ms"]["p50"], 12.0);
  EXPECT_EQ(level["ttft_ms"]["max"], 30.0);
  EXPECT_EQ(level["tpot_ms"]["p50"], 5.0);
  EXPECT_EQ(level["itl_ms"]["n"], 6);
  EXPECT_TRUE(level["e2e_ms"].contains("p99"));
  EXPECT_EQ(level["per_stream_decode_tok_s"]["median"], 200.0);
  EXPECT_DOUBLE_EQ(level["throughput_tok_s"].get<double>(), 33.0);
  ASSERT_EQ(out["frontier"].size(), 1U);
  const json& p = out["frontier"][0];
  EXPECT_EQ(p["level"], 3.0);
  EXPECT_EQ(p["tok_s_per_user"], 200.0);
  EXPECT_DOUBLE_EQ(p["tok_s_per_user_tpot"].get<double>(), 200.0);  // 1000 / 5 ms
  EXPECT_DOUBLE_EQ(p["total_tok_s"].get<double>(), 33.0);
  EXPECT_DOUBLE_EQ(p["total_tok_s_per_gpu"].get<double>(), 16.5);
  EXPECT_EQ(p["pareto"], true);
}

TEST(SessionsSummaryTest, NothingSucceededMeansNoFrontierPoint) {
  SessionsOptions so;
  SessionsTally t;
  TurnFact failed;
  failed.turn = 1;
  t.turns.push_back(failed);
  t.failed = 1;
  const json out = SessionsJson(so, 1, -1, t, json::array());
  EXPECT_EQ(out["levels"][0]["requests"], 0);
  EXPECT_EQ(out["levels"][0]["ttft_ms"]["n"], 0);
  EXPECT_TRUE(out["frontier"].empty()) << out["frontier"].dump();
}

}  // namespace
}  // namespace sb::perf
