// Text utilities: code points, words, lists, numbers, reasoning tags, code fences, scripts.
#include "suite/text.h"

#include <gtest/gtest.h>

namespace sb::suite {
namespace {

TEST(Text, CodePointsCountEmojiOnce) {
  EXPECT_EQ(CountCodePoints(""), 0u);
  EXPECT_EQ(CountCodePoints("abc"), 3u);
  EXPECT_EQ(CountCodePoints("東京は日本の首都です。"), 11u);
  EXPECT_EQ(CountCodePoints("ok 👍"), 4u);
  EXPECT_EQ(CountCodePoints("a\xff"
                            "b"),
            3u);  // an invalid byte counts once
}

TEST(Text, WordsFollowWordCharactersAndApostrophes) {
  EXPECT_EQ(CountWords("Hello, world!"), 2u);
  EXPECT_EQ(CountWords("Don't stop - it's 3.5 times faster"), 7u);
  EXPECT_EQ(CountWords("snake_case counts once"), 3u);
  EXPECT_EQ(CountWords("東京"), 2u);  // each ideograph is a word
  EXPECT_EQ(CountWords("   "), 0u);
  EXPECT_EQ(Words("The QUICK fox"), (std::vector<std::string>{"the", "quick", "fox"}));
}

TEST(Text, LinesParagraphsAndItems) {
  const std::string s = "Title\n\n- one\n* two\n+ three\n\n1. first\n2) second\n   • dot\n";
  EXPECT_EQ(CountLines(s), 7u);
  EXPECT_EQ(CountParagraphs(s), 3u);
  EXPECT_EQ(CountListItems(s), 6u);
  EXPECT_EQ(CountBullets(s), 4u);
  EXPECT_EQ(CountBullets("**Bold** start\n-not a bullet\n"), 0u);
}

TEST(Text, FindNumbersHandlesSeparatorsSignsFractionsAndWordDigits) {
  auto values = [](std::string_view t) {
    std::vector<double> v;
    for (const auto& n : FindNumbers(t)) {
      v.push_back(n.value);
    }
    return v;
  };
  EXPECT_EQ(values("47,716 tokens in 444.8 s"), (std::vector<double>{47716, 444.8}));
  EXPECT_EQ(values("x = -3 or x = −5"), (std::vector<double>{-3, -5}));
  EXPECT_EQ(values("17×23+45×12-89"), (std::vector<double>{17, 23, 45, 12, 89}));
  EXPECT_EQ(values("Q3 is the highest, mp4 at 2x"), (std::vector<double>{2}));
  EXPECT_NEAR(values("probability 2/3")[0], 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(values("\\frac{2}{3}")[0], 2.0 / 3.0, 1e-12);
  EXPECT_EQ(values("45% of 1,2,3"), (std::vector<double>{45, 1, 2, 3}));
  EXPECT_EQ(values("答案是42"), (std::vector<double>{42}));
  EXPECT_EQ(values("It is 742."), (std::vector<double>{742}));
  EXPECT_EQ(values("There are two blue circles and Twelve dots; someone, often"),
            (std::vector<double>{2, 12}));
}

TEST(Text, CommaGroupsWithoutSpacesAlsoReadAsAList) {
  const auto n = FindNumbers("The next terms are 120,135,150.");
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].value, 120135150);
  EXPECT_EQ(n[0].items, (std::vector<double>{120, 135, 150}));
  EXPECT_EQ(FindNumbers("1,234,567")[0].value, 1234567);
  EXPECT_EQ(FindNumbers("1,234,567")[0].items, (std::vector<double>{1, 234, 567}));
  EXPECT_EQ(FindNumbers("-12,500.5")[0].items, (std::vector<double>{-12, 500.5}));
  EXPECT_TRUE(FindNumbers("1,050 people")[0].items.empty()) << "050 is no list item";
  EXPECT_TRUE(FindNumbers("47716 and 12")[0].items.empty());
  EXPECT_TRUE(FindNumbers("1,234/2")[0].items.empty()) << "a fraction has one reading";
  EXPECT_EQ(FinalNumber("So the sequence goes 120,135,150")->items.back(), 150);
}

TEST(Text, FinalNumberPrefersMarkersOverTheLastNumber) {
  EXPECT_EQ(FinalNumber("The answer is 842. Check: 931 - 89 = 842, 17 * 23 = 391")->value, 842);
  EXPECT_EQ(FinalNumber("Steps: 391, 540. **Answer: 842** (not 841)")->value, 842);
  EXPECT_EQ(FinalNumber("\\boxed{56} and then 57")->value, 56);
  EXPECT_EQ(FinalNumber("First 3, then 5, finally 8")->value, 8);
  EXPECT_EQ(FinalNumber("I will answer the question: 7 times 8 is 56")->value, 56);
  EXPECT_FALSE(FinalNumber("no digits here").has_value());
}

TEST(Text, SplitThinkingHandlesPrefilledAndUnclosedTags) {
  SplitReply a = SplitThinking("<think>\nlet me see\n</think>\n\nThe answer is 4.");
  EXPECT_TRUE(a.had_tags);
  EXPECT_EQ(a.reasoning, "let me see");
  EXPECT_EQ(a.answer, "The answer is 4.");
  SplitReply b = SplitThinking("thinking without the opening tag</think>Paris");
  EXPECT_EQ(b.reasoning, "thinking without the opening tag");
  EXPECT_EQ(b.answer, "Paris");
  SplitReply c = SplitThinking("<think>the budget ran out in here");
  EXPECT_TRUE(c.unclosed);
  EXPECT_EQ(c.answer, "");
  EXPECT_EQ(c.reasoning, "the budget ran out in here");
  SplitReply d = SplitThinking("plain answer, no tags");
  EXPECT_FALSE(d.had_tags);
  EXPECT_EQ(d.answer, "plain answer, no tags");
}

// A 1 MiB answer of tags took 10 s of CPU (each tag searched for again from every position);
// each tag is now searched for once per occurrence. The result is the same as for a short one.
TEST(Text, SplitThinkingOfAMebibyteOfTagsIsOnePass) {
  std::string text;
  int pairs = 0;
  while (text.size() < (std::size_t{1} << 20)) {
    text += "<think>why</think>a";
    ++pairs;
  }
  text += "<thinking>last</thinking>";
  SplitReply r = SplitThinking(text);
  EXPECT_TRUE(r.had_tags);
  EXPECT_FALSE(r.unclosed);
  EXPECT_EQ(r.answer, std::string(static_cast<std::size_t>(pairs), 'a'));
  EXPECT_EQ(r.reasoning.size(), 3u * static_cast<std::size_t>(pairs) + 4u);
  EXPECT_TRUE(r.reasoning.ends_with("whywhylast"));
}

TEST(Text, CodeBlocksWithLanguagesAndUnterminatedFence) {
  auto blocks =
      CodeBlocks("Intro\n```python\nprint(1)\n```\ntext\n~~~ C++ {.x}\nint x;\n~~~\n```\nopen");
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].language, "python");
  EXPECT_EQ(blocks[0].code, "print(1)\n");
  EXPECT_EQ(blocks[1].language, "c++");
  EXPECT_EQ(blocks[1].code, "int x;\n");
  EXPECT_EQ(blocks[2].language, "");
  EXPECT_EQ(blocks[2].code, "open\n");
}

TEST(Text, ScriptsAndShares) {
  double share = 0;
  EXPECT_EQ(DominantScript("東京は日本の首都です。", &share), "japanese");
  EXPECT_DOUBLE_EQ(share, 1.0);
  EXPECT_EQ(DominantScript("北京是中国的首都"), "chinese");
  EXPECT_EQ(DominantScript("Привет мир"), "cyrillic");
  EXPECT_EQ(DominantScript("Hello"), "latin");
  EXPECT_EQ(DominantScript("123 !!"), "");
  EXPECT_NEAR(ScriptShare("東京 Tokyo", "japanese"), 2.0 / 7.0, 1e-12);
}

TEST(Text, ExcerptsCutOnCharacters) {
  EXPECT_EQ(Excerpt("héllo wörld", 5), "héllo…");
  EXPECT_EQ(Excerpt("short", 10), "short");
  EXPECT_EQ(OneLine("a\n\n  b\tc", 10), "a b c");
  EXPECT_EQ(StripMarkdown("**Canberra** is `x_y` _z_"), "Canberra is x_y z");
  EXPECT_EQ(NormalizeSpace("  A  b\nC "), "a b c");
}

}  // namespace
}  // namespace sb::suite
