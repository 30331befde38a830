#include "core/result_rows.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace sb {
namespace {

using nlohmann::json;

std::vector<ResultRow> Walk(const json& object, const FigureWalk& how = {}) {
  std::vector<ResultRow> rows;
  WalkFigures(object, "", how, [&rows](ResultRow r) { rows.push_back(std::move(r)); });
  return rows;
}

const ResultRow* Find(const std::vector<ResultRow>& rows, std::string_view metric,
                      std::string_view stat = "value") {
  for (const ResultRow& r : rows) {
    if (r.metric == metric && r.stat == stat) {
      return &r;
    }
  }
  return nullptr;
}

TEST(ResultRows, NumbersFlagsAndNestedObjectsAreOneRowEach) {
  const json row = {{"throughput_tok_s", 710.5},
                    {"correct", true},
                    {"goodput", {{"goodput_rps", 3.5}, {"fraction", 0.875}}},
                    {"label", "text is not a figure"},
                    {"missing", nullptr}};
  const auto rows = Walk(row);
  ASSERT_EQ(rows.size(), 4U);
  const ResultRow* tput = Find(rows, "throughput_tok_s");
  ASSERT_NE(tput, nullptr);
  EXPECT_EQ(tput->value, 710.5);
  EXPECT_EQ(tput->unit, "tok/s");
  EXPECT_EQ(tput->kind, ResultRow::kNumber);
  EXPECT_FALSE(tput->n.has_value());
  const ResultRow* correct = Find(rows, "correct");
  ASSERT_NE(correct, nullptr);
  EXPECT_EQ(correct->value, 1);
  EXPECT_EQ(correct->unit, "bool");
  EXPECT_EQ(correct->kind, ResultRow::kFlag);
  const ResultRow* rps = Find(rows, "goodput.goodput_rps");
  ASSERT_NE(rps, nullptr);
  EXPECT_EQ(rps->unit, "req/s");
  ASSERT_NE(Find(rows, "goodput.fraction"), nullptr);
}

TEST(ResultRows, AStatisticsObjectGivesEveryStatisticAndItsMedianAnInterval) {
  const json row = {
      {"ttft_ms",
       {{"n", 8}, {"median", 45.0}, {"p99", 90.0}, {"values", {40, 41, 43, 44, 46, 48, 60, 90}}}}};
  const auto rows = Walk(row);
  ASSERT_EQ(rows.size(), 3U);  // n, median, p99 (values are not figures)
  const ResultRow* median = Find(rows, "ttft_ms", "median");
  ASSERT_NE(median, nullptr);
  EXPECT_EQ(median->kind, ResultRow::kStats);
  EXPECT_EQ(median->unit, "ms");
  EXPECT_EQ(median->n, 8);
  // n = 8: ranks 1 and 8 (P(Binomial(8, 1/2) < 2) = 3.5% > 2.5%).
  EXPECT_EQ(median->ci_lo, 40);
  EXPECT_EQ(median->ci_hi, 90);
  const ResultRow* n = Find(rows, "ttft_ms", "n");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->unit, "count");
  EXPECT_FALSE(n->ci_lo.has_value());
  const ResultRow* p99 = Find(rows, "ttft_ms", "p99");
  ASSERT_NE(p99, nullptr);
  EXPECT_FALSE(p99->ci_lo.has_value());
}

TEST(ResultRows, APercentileObjectIsToldFromAStatisticsObject) {
  const auto rows = Walk({{"from_send", {{"e2e_ms", {{"n", 3}, {"p50", 10}, {"p99", 30}}}}}});
  ASSERT_EQ(rows.size(), 3U);
  const ResultRow* p50 = Find(rows, "from_send.e2e_ms", "p50");
  ASSERT_NE(p50, nullptr);
  EXPECT_EQ(p50->kind, ResultRow::kPercentiles);
  EXPECT_EQ(p50->n, 3);
  EXPECT_EQ(p50->unit, "ms");
}

TEST(ResultRows, SkippedKeysCutTheirSubtreeAndArraysGoToTheCallback) {
  const json object = {{"seed", 7},
                       {"slo", {{"ttft_ms", 500}}},
                       {"search", {{"points", {{{"rate_rps", 2}}, {{"rate_rps", 4}}}}}},
                       {"ok", 3}};
  FigureWalk how;
  how.skip = [](std::string_view k) { return k == "seed" || k == "slo"; };
  std::vector<std::string> arrays;
  how.array = [&arrays](std::string_view key, const json& array, const std::string& prefix) {
    arrays.push_back(std::string(key) + "@" + prefix + ":" + std::to_string(array.size()));
  };
  const auto rows = Walk(object, how);
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0].metric, "ok");
  // The array's key, the prefix of the object that holds it, its elements.
  EXPECT_EQ(arrays, std::vector<std::string>{"points@search:2"});
  // Without a callback, arrays are left out; a prefix starts every name.
  std::vector<ResultRow> prefixed;
  WalkFigures(object, "rate", {}, [&prefixed](ResultRow r) { prefixed.push_back(std::move(r)); });
  ASSERT_EQ(prefixed.size(), 3U);
  EXPECT_NE(Find(prefixed, "rate.slo.ttft_ms"), nullptr);
  EXPECT_NE(Find(prefixed, "rate.seed"), nullptr);
}

TEST(ResultRows, MedianIntervalUsesOrderStatistics) {
  EXPECT_FALSE(MedianInterval({5}).has_value());
  auto three = MedianInterval({3, 1, 2});
  ASSERT_TRUE(three);
  EXPECT_EQ(three->first, 1);  // too few values for 95%: the whole range
  EXPECT_EQ(three->second, 3);
  std::vector<double> twenty;
  for (int i = 20; i >= 1; --i) {
    twenty.push_back(i);
  }
  auto ci = MedianInterval(twenty);
  ASSERT_TRUE(ci);
  // P(Binomial(20, 1/2) <= 5) = 2.07% <= 2.5% < P(<= 6): ranks 6 and 15.
  EXPECT_EQ(ci->first, 6);
  EXPECT_EQ(ci->second, 15);
}

}  // namespace
}  // namespace sb
