// The regex checker on hostile answers and patterns: answers that overflowed std::regex's stack
// (it recursed per character) and patterns that backtracked for ever now finish, with the same
// meaning for the suites' own patterns; a pattern RE2 cannot run is refused when the suite
// loads, naming the file, the test and the pattern.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "suite/checkers.h"
#include "suite/suite.h"

namespace sb::suite {
namespace {

using nlohmann::json;

Check Regex(const std::string& pattern, bool ignore_case = false, bool full = false) {
  Check c;
  c.type = "regex";
  c.args_json = json{{"pattern", pattern}, {"ignore_case", ignore_case}, {"full", full}}.dump();
  return c;
}

CheckOutcome Eval(const Check& c, const std::string& answer) {
  EXPECT_TRUE(ValidateCheck(c)) << ValidateCheck(c).error().message;
  return RunCheck(c, Reply{answer, {}, "stop"}, CheckEnv{});
}

std::string Repeat(std::string_view piece, std::size_t bytes) {
  std::string s;
  s.reserve(bytes + piece.size());
  while (s.size() < bytes) {
    s += piece;
  }
  return s;
}

constexpr std::size_t kMiB = 1 << 20;

// std::regex recursed once per character: these crashed the process (SIGSEGV) from about
// 20,000 characters on.
TEST(RegexChecker, LongAnswersDoNotOverflowTheStack) {
  EXPECT_TRUE(Eval(Regex("^(a|b)*$"), Repeat("ab", kMiB)).pass);
  EXPECT_FALSE(Eval(Regex("^(a|b)*$"), Repeat("ab", kMiB) + "c").pass);
  EXPECT_TRUE(Eval(Regex("(.|\\n)*end"), Repeat("xy\n", kMiB) + "end").pass);
  // full.yaml's own patterns, on answers far past the old 32 KiB search cap.
  const std::string filler = Repeat("some words and more words ", kMiB);
  EXPECT_TRUE(Eval(Regex("first:\\s*red\\b[\\s\\S]*second:\\s*blue\\b", true),
                   "First: red " + filler + "second: blue")
                  .pass);
  EXPECT_TRUE(Eval(Regex("red[^\\n]*green"), "red" + filler + "green").pass);
  EXPECT_FALSE(Eval(Regex("red[^\\n]*green"), "red" + filler + "\ngreen").pass);
}

// Patterns that backtracked exponentially under std::regex: they now take linear time.
TEST(RegexChecker, CatastrophicPatternsFinish) {
  const std::string words = Repeat("word ", 89) + "!";
  EXPECT_FALSE(Eval(Regex("^(\\w+\\s?)+$"), words).pass);
  EXPECT_FALSE(Eval(Regex("(a+)+$"), std::string(5000, 'a') + "b").pass);
  EXPECT_FALSE(Eval(Regex("(a+)+$"), std::string(kMiB, 'a') + "b").pass);
  EXPECT_TRUE(Eval(Regex("(a|aa)+$", false, true), std::string(kMiB, 'a')).pass);
}

// The meaning suites rely on: ^ and $ at line ends, . not across a newline, ignore_case,
// full, and UTF-8 text (a code point is one character).
TEST(RegexChecker, SameMeaningAsBefore) {
  EXPECT_TRUE(Eval(Regex("^# "), "intro\n# Heading").pass);
  EXPECT_TRUE(Eval(Regex("^\\s*\\|.*\\|\\s*$"), "Table:\n| a | b |\nend").pass);
  EXPECT_FALSE(Eval(Regex("a.b"), "a\nb").pass);
  EXPECT_TRUE(Eval(Regex("RED", true), "it is red").pass);
  EXPECT_FALSE(Eval(Regex("RED"), "it is red").pass);
  EXPECT_TRUE(Eval(Regex("caf.$", false, true), "café").pass);
  EXPECT_TRUE(Eval(Regex("ok", false, true), "  ok \n").pass);  // the answer is trimmed
  // Invalid UTF-8 in an answer is matched, not a crash.
  EXPECT_TRUE(Eval(Regex("a.*b"), std::string("a\xff\xfe b")).pass);
}

TEST(RegexChecker, UnsupportedSyntaxSaysWhatIsSupported) {
  auto look = ValidateCheck(Regex("x(?!y)"));
  ASSERT_FALSE(look);
  EXPECT_NE(look.error().message.find("regex pattern \"x(?!y)\" does not compile"),
            std::string::npos)
      << look.error().message;
  EXPECT_NE(look.error().message.find("lookahead and lookbehind"), std::string::npos)
      << look.error().message;
  EXPECT_NE(look.error().message.find("RE2 syntax"), std::string::npos) << look.error().message;
  auto back = ValidateCheck(Regex("(a)\\1"));
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().message.find("backreferences"), std::string::npos) << back.error().message;
  auto behind = ValidateCheck(Regex("(?<=a)b"));
  ASSERT_FALSE(behind);
  EXPECT_NE(behind.error().message.find("lookahead and lookbehind"), std::string::npos)
      << behind.error().message;
}

// Refused when the file loads (usage error, exit 2), with the file, line, test and pattern.
TEST(RegexChecker, UnsupportedPatternIsALoadErrorNamingFileTestAndPattern) {
  auto s = ParseSuite(R"yaml(suite: mine
tests:
  - id: algebra
    category: reasoning
    prompt: Solve it.
    check:
      regex: {pattern: "x = 5(?![\\s\\S]*x =)"}
)yaml",
                      "mine.yaml", ".");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kUsage);
  const std::string& m = s.error().message;
  EXPECT_EQ(m.rfind("mine.yaml:7: test 'algebra': regex pattern \"x = 5(?![\\s\\S]*x =)\"", 0), 0u)
      << m;
  EXPECT_NE(m.find("RE2 syntax"), std::string::npos) << m;
}

// Every pattern of the built-in suites compiles under RE2 (their reference answers passing and
// bad answers failing is BuiltinSuite.ReferenceAnswersPassAndBadAnswersFail).
TEST(RegexChecker, BuiltinSuitesLoad) {
  for (const char* name : {"quick", "standard", "full"}) {
    auto s = LoadSuite(name);
    EXPECT_TRUE(s) << name << ": " << s.error().message;
  }
}

// full.yaml's algebra check without lookahead: "x = 5" with no later "x =".
TEST(RegexChecker, AlgebraPatternKeepsItsMeaning) {
  auto s = LoadSuite("full");
  ASSERT_TRUE(s) << s.error().message;
  const TestSpec* algebra = nullptr;
  for (const TestSpec& t : s->tests) {
    algebra = t.id == "reasoning.algebra" ? &t : algebra;
  }
  ASSERT_NE(algebra, nullptr);
  auto eval = [&](const std::string& answer) {
    return RunCheck(*algebra->check, Reply{answer, {}, "stop"}, CheckEnv{}).pass;
  };
  EXPECT_TRUE(eval("3x = 15, so x = 5"));
  EXPECT_TRUE(eval("x = 5.0"));
  EXPECT_TRUE(eval("**x = 5**\n\nCheck: 3(5) + 7 = 22, and x is right."));
  EXPECT_TRUE(eval("x = 5 (xx x y)"));
  EXPECT_FALSE(eval("x = 15"));
  EXPECT_FALSE(eval("x = 5 or maybe x = 6"));
  EXPECT_FALSE(eval("x = 5, then xx  = 6"));
  EXPECT_FALSE(eval("x = 5x"));
}

}  // namespace
}  // namespace sb::suite
