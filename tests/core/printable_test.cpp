#include "core/printable.h"

#include <gtest/gtest.h>

namespace sb {
namespace {

TEST(PrintableLine, ControlCharactersBecomeSpaces) {
  EXPECT_EQ(PrintableLine("evil\x1b[31mred\r\nFAKE: x\t\x7f"), "evil [31mred  FAKE: x  ");
  EXPECT_EQ(PrintableLine(std::string("a\0b", 3)), "a b");
  EXPECT_EQ(PrintableLine("c1 \xc2\x9b"
                          "31m"),
            "c1  31m");  // U+009B, a CSI
  EXPECT_EQ(PrintableLine("Qwen/Qwen3-8B é ✓"), "Qwen/Qwen3-8B é ✓");
}

TEST(PrintableLine, InvalidUtf8AndTheLimit) {
  EXPECT_EQ(PrintableLine("a\xff"
                          "b"),
            "a?b");
  EXPECT_EQ(PrintableLine("abcdef", 4), "abcd");
  EXPECT_EQ(PrintableLine("ab\xc3\xa9", 3), "ab");  // never half a character
}

TEST(HasControlChar, FindsCrLfNulDel) {
  EXPECT_FALSE(HasControlChar("sk-abc123 with space"));
  EXPECT_TRUE(HasControlChar("sk\r\nX-Evil: 1"));
  EXPECT_TRUE(HasControlChar(std::string("a\0b", 3)));
  EXPECT_TRUE(HasControlChar("a\x7f"));
  EXPECT_TRUE(HasControlChar("a\tb"));
}

}  // namespace
}  // namespace sb
