#include "chart/scale.h"

#include <gtest/gtest.h>

namespace sb::chart {
namespace {

TEST(NiceTicksTest, CoversTheRangeWithOneTwoFiveSteps) {
  EXPECT_EQ(NiceTicks(0, 97, 5), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(NiceTicks(0, 1, 5), (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1}));
  EXPECT_EQ(NiceTicks(0, 1119.8, 5), (std::vector<double>{0, 500, 1000, 1500}));
  EXPECT_EQ(NiceTicks(12, 48, 4), (std::vector<double>{10, 20, 30, 40, 50}));
}

TEST(NiceTicksTest, TicksAreExactDecimalsWithoutBinaryNoise) {
  // 3 × 0.1 is 0.30000000000000004 in binary arithmetic; the tick must be 0.3.
  const auto t = NiceTicks(0, 0.5, 5);
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[3], 0.3);
}

TEST(NiceTicksTest, ADegenerateRangeStillGetsTicksAroundTheValue) {
  const auto t = NiceTicks(200, 200, 5);
  ASSERT_GE(t.size(), 2u);
  EXPECT_LE(t.front(), 200);
  EXPECT_GE(t.back(), 200);
  EXPECT_LT(t.front(), t.back());
}

TEST(NiceStepTest, PicksOneTwoOrFive) {
  EXPECT_EQ(NiceStep(0, 10, 5), 2);
  EXPECT_EQ(NiceStep(0, 100, 4), 50);  // 25 rounds up to 50
  EXPECT_EQ(NiceStep(0, 100, 10), 10);
  EXPECT_DOUBLE_EQ(NiceStep(0, 0.03, 3), 0.01);
}

TEST(LogTicksTest, PowersOfTenOverWideRanges) {
  EXPECT_EQ(LogTicks(77, 166400), (std::vector<double>{100, 1000, 10000, 100000}));
}

TEST(LogTicksTest, TwoAndFiveWithinFewDecades) {
  EXPECT_EQ(LogTicks(49, 1331), (std::vector<double>{50, 100, 200, 500, 1000}));
}

TEST(LogTicksTest, NarrowRangesFallBackToTheEnds) {
  EXPECT_EQ(LogTicks(110, 150), (std::vector<double>{110, 150}));
}

TEST(TickLabelTest, GroupsThousandsAndShowsTheStepsDecimals) {
  EXPECT_EQ(TickLabel(1000, 200), "1,000");
  EXPECT_EQ(TickLabel(0.2, 0.2), "0.2");
  EXPECT_EQ(TickLabel(0.05, 0.05), "0.05");
  EXPECT_EQ(TickLabel(0, 0.2), "0.0");
  EXPECT_EQ(TickLabel(-400, 200), "-400");
}

TEST(TickLabelTest, CompactLabelsForLogAxes) {
  EXPECT_EQ(TickLabel(10000, 10000, true), "10k");
  EXPECT_EQ(TickLabel(128000, 128000, true), "128k");
  EXPECT_EQ(TickLabel(1000000, 1000000, true), "1M");
  EXPECT_EQ(TickLabel(2500000, 2500000, true), "2.5M");
  EXPECT_EQ(TickLabel(500, 500, true), "500");
  EXPECT_EQ(TickLabel(1234, 1234, true), "1,234");  // not round: not shortened
}

TEST(ScaleTest, LinearMapsTheDomainOntoTheRange) {
  const Scale s = Scale::Linear(0, 200, 70, 616);
  EXPECT_DOUBLE_EQ(s(0), 70);
  EXPECT_DOUBLE_EQ(s(200), 616);
  EXPECT_DOUBLE_EQ(s(100), 343);
  // A y axis runs upwards: the range is reversed.
  const Scale y = Scale::Linear(0, 100, 272, 48);
  EXPECT_DOUBLE_EQ(y(0), 272);
  EXPECT_DOUBLE_EQ(y(100), 48);
  EXPECT_DOUBLE_EQ(y(25), 216);
}

TEST(ScaleTest, LogPlacesEachDecadeAtAnEqualDistance) {
  const Scale s = Scale::Log(100, 100000, 0, 300);
  EXPECT_NEAR(s(100), 0, 1e-9);
  EXPECT_NEAR(s(1000), 100, 1e-9);
  EXPECT_NEAR(s(10000), 200, 1e-9);
  EXPECT_NEAR(s(100000), 300, 1e-9);
  EXPECT_NEAR(s(0), 0, 1e-9);  // clamped to the low end, never NaN
  EXPECT_NEAR(s(-5), 0, 1e-9);
}

}  // namespace
}  // namespace sb::chart
