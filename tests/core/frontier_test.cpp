// The frontier's Pareto selection and points (issue 23 item 1).
#include "core/frontier.h"

#include <gtest/gtest.h>

namespace sb {
namespace {

TEST(FrontierTest, ParetoKeepsOnlyPointsNoOtherBeatsOnBothAxes) {
  // (per-user tok/s, total tok/s) of a concurrency sweep: 1, 2, 4, 8, 16 streams, plus a level
  // that lost on both (a noisy c6 below c4 and c8) and one tied with c8.
  const std::vector<std::pair<double, double>> xy = {{100, 100}, {95, 190}, {85, 340}, {70, 560},
                                                     {40, 640},  {60, 500}, {70, 560}};
  const std::vector<bool> want = {true, true, true, true, true, false, true};
  EXPECT_EQ(ParetoOptimal(xy), want);
}

TEST(FrontierTest, APointBeatenOnOneAxisAndTiedOnTheOtherIsNotOptimal) {
  EXPECT_EQ(ParetoOptimal({{10, 5}, {10, 6}}), (std::vector<bool>{false, true}));
  EXPECT_EQ(ParetoOptimal({{9, 6}, {10, 6}}), (std::vector<bool>{false, true}));
  EXPECT_TRUE(ParetoOptimal({}).empty());
}

TEST(FrontierTest, PointsArePerUserAgainstTotalAndPerGpu) {
  std::vector<FrontierInput> in = {
      {1, "c1", 100.0, 10.0, 98.0},
      {2, "c2", std::nullopt, 11.0, 180.0},  // every stream failed: no per-user figure
      {4, "c4", 80.0, 12.5, 300.0},
      {8, "c8", 90.0, 11.0, 290.0},  // more per-user than c4, less total: both optimal
  };
  auto pts = BuildFrontier(in, 4);
  ASSERT_EQ(pts.size(), 3u);
  EXPECT_EQ(pts[0].label, "c1");
  EXPECT_DOUBLE_EQ(*pts[0].per_user_tpot, 100.0);
  EXPECT_DOUBLE_EQ(*pts[1].total_per_gpu, 75.0);
  EXPECT_DOUBLE_EQ(*pts[1].per_user_tpot, 80.0);
  EXPECT_TRUE(pts[0].pareto);
  EXPECT_TRUE(pts[1].pareto);
  EXPECT_TRUE(pts[2].pareto);
  in[3].total = 250.0;  // c4 (80, 300) now beats c8 (79, 250) on both axes
  in[3].per_user = 79.0;
  pts = BuildFrontier(in, 0);
  EXPECT_FALSE(pts[2].pareto);
  EXPECT_FALSE(pts[2].total_per_gpu.has_value());
}

}  // namespace
}  // namespace sb
