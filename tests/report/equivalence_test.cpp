// compare --equivalence (issue 23 item 5): a difference whose 95% interval lies inside +-PCT is
// "same (within PCT%)", and a ratio is printed at the precision of its interval, which is widened
// where rounding would leave the point outside it.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/compare.h"
#include "report/compare_gates.h"

namespace sb::report {
namespace {

using nlohmann::json;

json Run(const std::string& model, std::vector<double> decode) {
  double median = decode[decode.size() / 2];
  return json{
      {"schema", "servebench.results/1"},
      {"status", "complete"},
      {"target", {{"model", model}, {"simulated", true}}},
      {"summary", json::object()},
      {"tests", json::array()},
      {"perf",
       {{"decode",
         {{"tokens", 256},
          {"decode_tok_s", {{"n", decode.size()}, {"median", median}, {"values", decode}}}}}}},
      {"warnings", json::array()}};
}

const CompareRow& Decode(const Comparison& c) {
  for (const auto& s : c.sections) {
    for (const auto& r : s.rows) {
      if (r.key == "decode_tok_s") {
        return r;
      }
    }
  }
  throw std::runtime_error("no decode row");
}

std::vector<CompareRun> Runs(std::vector<double> a, std::vector<double> b) {
  return {CompareRun{Run("m", std::move(a)), {}, false, {}},
          CompareRun{Run("m", std::move(b)), {}, false, {}}};
}

TEST(EquivalenceTest, IntervalInsideTheMarginReadsSame) {
  EXPECT_TRUE(WithinEquivalence(0.99, 1.02, 2.5));
  EXPECT_FALSE(WithinEquivalence(0.99, 1.03, 2.5));
  EXPECT_FALSE(WithinEquivalence(0.97, 1.01, 2.5));
  EXPECT_TRUE(WithinEquivalence(0.97, 1.01, 5));
}

// Two runs of one simulator differ by run-to-run noise (here 1%, no spread): "same".
TEST(EquivalenceTest, RunsOnePercentApartAreSame) {
  auto c = BuildComparison(Runs({101, 101, 101, 101, 101}, {100, 100, 100, 100, 100}), {"A", "B"});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(Decode(*c).judgement.text, "same (within 2.5%)");
  EXPECT_TRUE(Decode(*c).judgement.same);
  // A margin of 0.5% leaves them a 1.01x difference.
  auto strict =
      BuildComparison(Runs({101, 101, 101, 101, 101}, {100, 100, 100, 100, 100}), {"A", "B"}, 0.5);
  ASSERT_TRUE(strict.has_value());
  EXPECT_EQ(Decode(*strict).judgement.text, "A 1.01× faster (95% CI 1.01–1.01×)");
}

TEST(EquivalenceTest, TenPercentSlowerIsNotSame) {
  auto c = BuildComparison(Runs({100, 101, 99, 100, 100}, {90, 91, 89, 90, 90}), {"A", "B"});
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(Decode(*c).judgement.same);
  EXPECT_TRUE(Decode(*c).judgement.text.starts_with("A 1.1")) << Decode(*c).judgement.text;
}

// The gate never fails a metric judged "same", even with a limit below the difference.
TEST(EquivalenceTest, GateDoesNotFailSame) {
  auto c = BuildComparison(Runs({100, 100, 100, 100, 100}, {99, 99, 99, 99, 99}), {"A", "B"});
  ASSERT_TRUE(c.has_value());
  auto gate = ParseMaxRegression("0.5%");
  ASSERT_TRUE(gate.has_value());
  auto r = ApplyRegressionGate(*c, *gate);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->failed) << r->summary;
  // With no margin the same 1% fails the 0.5% limit.
  auto c0 = BuildComparison(Runs({100, 100, 100, 100, 100}, {99, 99, 99, 99, 99}), {"A", "B"}, 0);
  ASSERT_TRUE(c0.has_value());
  auto r0 = ApplyRegressionGate(*c0, *gate);
  ASSERT_TRUE(r0.has_value());
  EXPECT_TRUE(r0->failed) << r0->summary;
}

// Seen: "1.3x (95% CI 1.34-1.45x)". The point and the interval share two decimals, and the
// printed interval always holds the printed point.
TEST(EquivalenceTest, PrintedPointLiesInItsPrintedInterval) {
  PrintedRatio p = PrintRatioInterval(1.336, 1.344, 1.45);
  EXPECT_EQ(p.point, "1.34");
  EXPECT_EQ(p.lo, "1.34");
  EXPECT_EQ(p.hi, "1.45");
  p = PrintRatioInterval(1.30, 1.34, 1.45);  // the point below its interval: widened down
  EXPECT_EQ(p.point, "1.30");
  EXPECT_EQ(p.lo, "1.30");
  p = PrintRatioInterval(1.50, 1.34, 1.45);  // above: widened up
  EXPECT_EQ(p.hi, "1.50");
  p = PrintRatioInterval(1.2, 1.1, 1.3);  // inside: untouched, same precision
  EXPECT_EQ(p.point, "1.20");
  EXPECT_EQ(p.lo, "1.10");
  EXPECT_EQ(p.hi, "1.30");
}

}  // namespace
}  // namespace sb::report
