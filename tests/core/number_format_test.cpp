// Issue 24 item 26: the one number format of the console and the reports.
#include "core/number_format.h"

#include <gtest/gtest.h>

namespace sb {
namespace {

TEST(NumberFormatTest, FixedGroupedGroupsThousandsAndNeverPrintsMinusZero) {
  EXPECT_EQ(FixedGrouped(3317.62, 1), "3,317.6");
  EXPECT_EQ(FixedGrouped(1234567.891, 2), "1,234,567.89");
  EXPECT_EQ(FixedGrouped(999.96, 1), "1,000.0");
  EXPECT_EQ(FixedGrouped(-1234.5, 0), "-1,234");  // printf rounds half to even: 1234
  EXPECT_EQ(FixedGrouped(-0.04, 1), "0.0");
  EXPECT_EQ(FixedGrouped(2.828427, 2), "2.83");
}

TEST(NumberFormatTest, MillisecondsAndCounts) {
  EXPECT_EQ(MillisecondsText(5.04), "5.0");
  EXPECT_EQ(MillisecondsText(9.96), "10");
  EXPECT_EQ(MillisecondsText(1204.4), "1,204");
  EXPECT_EQ(CountOf(1, "token", "tokens"), "1 token");
  EXPECT_EQ(CountOf(0, "token", "tokens"), "0 tokens");
  EXPECT_EQ(CountOf(18184, "token", "tokens"), "18,184 tokens");
}

}  // namespace
}  // namespace sb
