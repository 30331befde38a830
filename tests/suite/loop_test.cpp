// The streaming loop detector: degenerate repetition is caught, however the stream is split;
// long text that merely reuses phrases is not.
#include "suite/loop.h"

#include <string>

#include <gtest/gtest.h>

#include "suite/text.h"

namespace sb::suite {
namespace {

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += s;
  }
  return out;
}

TEST(LoopDetector, FindsAPeriodicTailAndNamesTheSpan) {
  LoopDetector d(20, 10);
  const std::string phrase = "Let me try ordering A, B, C, D again and check each constraint. ";
  const std::string text = "Start thinking. " + Repeat(phrase, 40);
  EXPECT_TRUE(d.Feed(text));
  EXPECT_TRUE(d.found());
  EXPECT_NE(d.span_text().find("ordering"), std::string::npos);
  // Found before the end: about span x repeats units, not the whole text.
  EXPECT_LT(d.units(), 40u * 20u);
}

TEST(LoopDetector, ResultDoesNotDependOnHowTheStreamIsSplit) {
  const std::string text =
      "x " + Repeat("the model keeps saying the same thing over and over ", 30);
  LoopDetector whole(20, 10);
  ASSERT_TRUE(whole.Feed(text));
  for (std::size_t piece : {1u, 2u, 3u, 7u, 64u}) {
    LoopDetector d(20, 10);
    bool found = false;
    for (std::size_t i = 0; i < text.size() && !found; i += piece) {
      found = d.Feed(text.substr(i, piece));
    }
    EXPECT_TRUE(found) << "piece " << piece;
    EXPECT_EQ(d.units(), whole.units()) << "piece " << piece;
  }
}

TEST(LoopDetector, LongVariedTextIsNotALoop) {
  // 3,000 words of varied prose with recurring short phrases and numbered steps.
  std::string text;
  for (int i = 0; i < 300; ++i) {
    text += "Step " + std::to_string(i) + ": we add " + std::to_string(i * 7 % 13) +
            " to the running total and note that the result is " + std::to_string(i * 31 % 97) +
            ". ";
  }
  LoopDetector d(20, 10);
  EXPECT_FALSE(d.Feed(text));
}

TEST(LoopDetector, ShortSeparatorsAreNotLoopsButEndlessOnesAre) {
  LoopDetector d(20, 10);
  EXPECT_FALSE(d.Feed("Results\n" + std::string(60, '=') + "\nDone.\n"));
  LoopDetector e(20, 10);
  EXPECT_TRUE(e.Feed(std::string(400, '!')));
}

TEST(LoopDetector, CjkTextIsCutPerCharacter) {
  LoopDetector d(20, 10);
  EXPECT_TRUE(d.Feed(Repeat("同じことを何度も繰り返しています。", 20)));
}

TEST(LoopDetector, ZeroRepeatsTurnsItOff) {
  LoopDetector d(20, 0);
  EXPECT_FALSE(d.Feed(std::string(10000, 'a') + " " + Repeat("a b ", 1000)));
}

}  // namespace
}  // namespace sb::suite
