#include "chart/svg.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace sb::chart {
namespace {

TEST(XmlEscapeTest, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(XmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(XmlEscape("</svg><script>alert(1)</script>"),
            "&lt;/svg&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(XmlEscape("plain — ✓"), "plain — ✓");
  EXPECT_EQ(XmlEscape(""), "");
}

TEST(PxTest, TwoDecimalsAtMostWithoutTrailingZeros) {
  EXPECT_EQ(Px(12.3456), "12.35");
  EXPECT_EQ(Px(40.0), "40");
  EXPECT_EQ(Px(40.5), "40.5");
  EXPECT_EQ(Px(-0.001), "0");
  EXPECT_EQ(Px(-3.2), "-3.2");
}

TEST(NumTest, ReadsBackAsTheSameDouble) {
  for (double v : {198.7, 0.1, 0.7, 1119.84, 3.0, 1e-7, 123456789.123, 2.0 / 3.0}) {
    const std::string s = Num(v);
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
  }
  EXPECT_EQ(Num(198.7), "198.7");
  EXPECT_EQ(Num(3.0), "3");
  EXPECT_EQ(Num(0.1), "0.1");
}

TEST(ReadableTest, GroupsThousands) {
  EXPECT_EQ(Readable(1119.84, 1), "1,119.8");
  EXPECT_EQ(Readable(47716, 0), "47,716");
  EXPECT_EQ(Readable(-1234567.5, 1), "-1,234,567.5");
  EXPECT_EQ(Readable(999.96, 1), "1,000.0");
  EXPECT_EQ(Readable(-0.01, 1), "0.0");  // no "-0.0"
}

}  // namespace
}  // namespace sb::chart
