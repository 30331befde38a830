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

TEST(LoopDetector, LongVariedTextIsNotAnExactLoop) {
  // 3,000 words of one sentence template whose numbers vary: no exact loop (the near-loop
  // detector, off here, does catch it: NearLoopWhoseNumbersChangeIsFound).
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

std::string Steps(int n) {
  std::string text = "Let me add them one at a time.\n";
  int total = 1;
  for (int i = 1; i <= n; ++i) {
    total += 3;
    text += "Step " + std::to_string(i) + ": add 3 to get " + std::to_string(total) + ". ";
  }
  return text;
}

TEST(LoopDetector, NearLoopWhoseNumbersChangeIsFound) {
  const std::string text = Steps(1000);  // ~10,000 units
  LoopDetector exact(20, 10);
  EXPECT_FALSE(exact.Feed(text)) << "no span repeats exactly";
  LoopDetector d(20, 10, 50);
  ASSERT_TRUE(d.Feed(text));
  EXPECT_TRUE(d.near());
  EXPECT_EQ(d.repeats(), 50);
  EXPECT_NE(d.span_text().find("add 3 to get"), std::string::npos) << d.span_text();
  // Caught after about span x near_repeats units, not at the end of the text.
  EXPECT_LT(d.units(), 1500u);
  EXPECT_GT(d.units(), 50u * 10u);  // not before it repeated near_repeats times
  // The template of LongVariedTextIsNotAnExactLoop is a near loop too.
  std::string varied;
  for (int i = 0; i < 300; ++i) {
    varied += "Step " + std::to_string(i) + ": we add " + std::to_string(i * 7 % 13) +
              " to the running total and note that the result is " + std::to_string(i * 31 % 97) +
              ". ";
  }
  LoopDetector v(20, 10, 50);
  EXPECT_TRUE(v.Feed(varied));
  EXPECT_TRUE(v.near());
}

TEST(LoopDetector, NearLoopWithACounterIsFoundHoweverTheStreamIsSplit) {
  std::string text = "Counting the dots. ";
  for (int i = 1; i <= 400; ++i) {
    text += "I will verify the count once more to be sure (check " + std::to_string(i) + "). ";
  }
  for (std::size_t piece : {1u, 3u, 64u, 100000u}) {
    LoopDetector d(20, 10, 50);
    bool found = false;
    for (std::size_t i = 0; i < text.size() && !found; i += piece) {
      found = d.Feed(text.substr(i, piece));
    }
    EXPECT_TRUE(found) << "piece " << piece;
    EXPECT_TRUE(d.near()) << "piece " << piece;
  }
}

TEST(LoopDetector, ExactLoopsStillWinWithTheNearDetectorOn) {
  LoopDetector d(20, 10, 50);
  EXPECT_TRUE(d.Feed(Repeat("the model keeps saying the same thing over and over 7 ", 30)));
  EXPECT_FALSE(d.near());
  EXPECT_EQ(d.repeats(), 10);
}

TEST(LoopDetector, ListsTablesAndCodeAreNotNearLoops) {
  // A numbered list of 20 distinct items.
  const char* items[] = {"apples", "bread", "carrots", "dates", "eggs",    "flour",   "grapes",
                         "honey",  "ice",   "jam",     "kale",  "lemons",  "milk",    "nuts",
                         "oats",   "pears", "quinoa",  "rice",  "spinach", "tomatoes"};
  std::string list;
  for (int i = 0; i < 20; ++i) {
    list += std::to_string(i + 1) + ". Buy " + std::to_string(i % 4 + 1) + " bags of " + items[i] +
            " from the market.\n";
  }
  LoopDetector l(20, 10, 50);
  EXPECT_FALSE(l.Feed(list));
  // A table of numbers, 500 rows: no words in the rows.
  std::string table = "| n | square | cube |\n|---|---|---|\n";
  for (int i = 1; i <= 500; ++i) {
    table += "| " + std::to_string(i) + " | " + std::to_string(i * i) + " | " +
             std::to_string(i * i * i) + " |\n";
  }
  LoopDetector t(20, 10, 50);
  EXPECT_FALSE(t.Feed(table));
  // Code with one structure and different identifiers (and numbers), 300 lines.
  std::string code;
  for (int i = 0; i < 300; ++i) {
    const std::string name = std::string(1, static_cast<char>('a' + i % 26)) +
                             std::string(1, static_cast<char>('a' + i / 26 % 26));
    code += "  const int width_" + name + " = measure_" + name + "(frame, " + std::to_string(i) +
            ");\n";
  }
  LoopDetector c(20, 10, 50);
  EXPECT_FALSE(c.Feed(code));
}

TEST(LoopDetector, NearRepeatsBelowRepeatsAreRaisedAndZeroIsOff) {
  LoopDetector raised(20, 10, 3);
  EXPECT_EQ(raised.near_repeats(), 10);
  LoopDetector off(20, 10, 0);
  EXPECT_FALSE(off.Feed(Steps(1000)));
  LoopDetector all_off(20, 0, 50);
  EXPECT_FALSE(all_off.Feed(Steps(1000)));
}

}  // namespace
}  // namespace sb::suite
