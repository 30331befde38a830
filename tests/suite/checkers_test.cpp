// Every checker passes what it should, fails what it should, and says why.
#include "suite/checkers.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace sb::suite {
namespace {

using nlohmann::json;

Check C(const std::string& type, const json& args) {
  Check c;
  c.type = type;
  c.args_json = args.dump();
  return c;
}

CheckOutcome Eval(const Check& c, const std::string& answer,
                  std::vector<client::ToolCall> calls = {}) {
  EXPECT_TRUE(ValidateCheck(c)) << ValidateCheck(c).error().message;
  return RunCheck(c, Reply{answer, std::move(calls), "stop"}, CheckEnv{});
}

TEST(Checkers, Exact) {
  Check c = C("exact", {{"expect", "Canberra"}});
  EXPECT_TRUE(Eval(c, "  **Canberra**. ").pass);
  EXPECT_TRUE(Eval(c, "canberra").pass);
  auto f = Eval(c, "Sydney");
  EXPECT_FALSE(f.pass);
  EXPECT_EQ(f.reason, "expected \"Canberra\", got \"Sydney\"");
  EXPECT_FALSE(
      Eval(C("exact", {{"expect", "Canberra"}, {"case_sensitive", true}}), "canberra").pass);
  EXPECT_TRUE(Eval(C("exact", {{"expect", json::array({"1989", "In 1989"})}}), "In 1989.").pass);
}

TEST(Checkers, Contains) {
  Check any = C("contains", {{"any", {"Canberra"}}});
  EXPECT_TRUE(Eval(any, "The capital is Canberra.").pass);
  auto f = Eval(any, "The capital is Sydney.");
  EXPECT_FALSE(f.pass);
  EXPECT_NE(f.reason.find("none of \"Canberra\""), std::string::npos);
  Check all = C("contains", {{"all", {"red", "blue"}}, {"none", {"green"}}});
  EXPECT_TRUE(Eval(all, "Red and BLUE").pass);
  EXPECT_EQ(Eval(all, "red only").reason.substr(0, 14), "missing \"blue\"");
  EXPECT_NE(Eval(all, "red, blue and green").reason.find("contains \"green\""), std::string::npos);
  Check word = C("contains", {{"any", {"cat"}}, {"word", true}});
  EXPECT_FALSE(Eval(word, "concatenate").pass);
  EXPECT_TRUE(Eval(word, "a cat.").pass);
}

TEST(Checkers, Regex) {
  Check c = C("regex", {{"pattern", "^\\d{4}-\\d{2}-\\d{2}$"}});
  EXPECT_TRUE(Eval(c, "Date:\n2026-03-14\n").pass);  // multiline: ^ and $ match lines
  EXPECT_FALSE(Eval(c, "14 March 2026").pass);
  EXPECT_TRUE(
      Eval(C("regex", {{"pattern", "ok"}, {"ignore_case", true}, {"full", true}}), "OK").pass);
  EXPECT_FALSE(Eval(C("regex", {{"pattern", "ok"}, {"full", true}}), "ok then").pass);
  Check bad = C("regex", {{"pattern", "("}});
  EXPECT_FALSE(ValidateCheck(bad));
}

TEST(Checkers, NumberPicksTheFinalAnswer) {
  Check c = C("number", {{"expect", 842}});
  EXPECT_TRUE(Eval(c, "17×23 = 391, 45×12 = 540, so 391 + 540 − 89 = 842").pass);
  EXPECT_TRUE(Eval(c, "The answer is 842 (391 + 540 - 89).").pass);
  auto f = Eval(c, "The answer is 841.");
  EXPECT_FALSE(f.pass);
  EXPECT_EQ(f.reason, "expected 842, found 841 (the answer's final number)");
  EXPECT_EQ(Eval(c, "no idea").reason, "expected 842, found no number in the answer \"no idea\"");
  Check tol = C("number", {{"expect", 0.6667}, {"tolerance", 0.001}});
  EXPECT_TRUE(Eval(tol, "It is 2/3").pass);
  Check rel = C("number", {{"expect", 100}, {"tolerance", 0.05}, {"relative", true}});
  EXPECT_TRUE(Eval(rel, "about 104").pass);
  EXPECT_FALSE(Eval(rel, "about 106").pass);
  EXPECT_TRUE(Eval(C("number", {{"expect", 5}, {"pick", "any"}}), "3, 5, 8").pass);
  EXPECT_FALSE(Eval(C("number", {{"expect", 5}, {"pick", "only"}}), "5 or 6").pass);
  EXPECT_TRUE(Eval(C("number", {{"expect", 5}, {"pick", "first"}}), "5 then 6").pass);
}

TEST(Checkers, NumberReadsCommaGroupsBothWays) {
  // "120,135,150" is 120135150 with thousands separators, or the list 120, 135, 150.
  const std::string seq = "The next three terms are 120,135,150";
  EXPECT_TRUE(Eval(C("number", {{"expect", 150}}), seq).pass);
  EXPECT_TRUE(Eval(C("number", {{"expect", 120}, {"pick", "first"}}), seq).pass);
  EXPECT_TRUE(Eval(C("number", {{"expect", 135}, {"pick", "any"}}), seq).pass);
  EXPECT_TRUE(Eval(C("number", {{"expect", {120, 135, 150}}, {"pick", "only"}}), seq).pass);
  EXPECT_TRUE(Eval(C("number", {{"expect", 120135150}}), seq).pass);
  auto f = Eval(C("number", {{"expect", {120, 135}}, {"pick", "only"}}), seq);
  EXPECT_FALSE(f.pass);
  EXPECT_EQ(f.reason,
            "expected only one of 120, 135, the answer also says 120,135,150 (read as 120135150 "
            "or as 120, 135, 150)");
  // Thousands separators still read as one number.
  EXPECT_TRUE(Eval(C("number", {{"expect", 1234567}}), "It costs 1,234,567 dollars.").pass);
  EXPECT_TRUE(
      Eval(C("number", {{"expect", 1234567}, {"pick", "only"}}), "It costs 1,234,567.").pass);
  auto g = Eval(C("number", {{"expect", 151}}), seq);
  EXPECT_FALSE(g.pass);
  EXPECT_EQ(g.reason,
            "expected 151, found 120,135,150 (read as 120135150 or as 120, 135, 150) (the "
            "answer's final number)");
  EXPECT_FALSE(Eval(C("number", {{"expect", 50}}), "1,050").pass);
}

TEST(Checkers, Choice) {
  Check c = C("choice", {{"expect", "B"}});
  EXPECT_TRUE(Eval(c, "B").pass);
  EXPECT_TRUE(Eval(c, "The answer is (B), because A is wrong.").pass);
  EXPECT_TRUE(Eval(c, "**B.** Because a circle has no corners.").pass);
  EXPECT_EQ(Eval(c, "Answer: C").reason, "expected \"B\", the answer chose \"C\"");
  EXPECT_NE(Eval(c, "Either A or C, hard to say").reason.find("ambiguous"), std::string::npos);
  EXPECT_TRUE(Eval(c, "A dog is not it; B is.").pass);  // "A dog": the article, not option A
  Check words = C("choice", {{"expect", "right"}, {"options", {"left", "right"}}});
  EXPECT_TRUE(Eval(words, "It moves to the Right.").pass);
  EXPECT_FALSE(Eval(words, "left").pass);
}

TEST(Checkers, Json) {
  Check c =
      C("json", {{"required", {"color", "count"}}, {"values", {{"count", 3}, {"color", "Red"}}}});
  EXPECT_TRUE(Eval(c, "Here:\n```json\n{\"color\": \"red\", \"count\": 3}\n```").pass);
  EXPECT_TRUE(Eval(c, "The result {\"color\":\"red\",\"count\":\"3\"} as asked").pass);
  EXPECT_EQ(Eval(c, "{\"color\": \"red\"}").reason, "the JSON lacks the field 'count'");
  EXPECT_EQ(Eval(c, "{\"color\": \"red\", \"count\": 4}").reason, "field 'count' is 4, expected 3");
  EXPECT_NE(Eval(c, "no json here").reason.find("no JSON object"), std::string::npos);
  Check arr = C("json", {{"type", "array"}, {"items", 3}});
  EXPECT_TRUE(Eval(arr, "[1, 2, 3]").pass);
  EXPECT_FALSE(Eval(arr, "[1, 2]").pass);
}

client::ToolCall Call(const std::string& name, const std::string& args) {
  return client::ToolCall{"id", name, args};
}

TEST(Checkers, ToolCallMatchesNamesArgumentsAndOrder) {
  Check c = C("tool_call", {{"calls",
                             {{{"name", "get_weather"},
                               {"arguments", {{"city", {"Tokyo", "Tokyo, Japan"}}}},
                               {"optional", {"unit"}}}}}});
  EXPECT_TRUE(Eval(c, "", {Call("get_weather", R"({"city": "tokyo"})")}).pass);
  EXPECT_TRUE(
      Eval(c, "", {Call("get_weather", R"({"city": "Tokyo, Japan", "unit": "celsius"})")}).pass);
  EXPECT_EQ(
      Eval(c, "", {Call("get_weather", R"({"city": "Kyoto"})")}).reason,
      "get_weather: argument 'city' is \"Kyoto\", expected one of \"Tokyo\", \"Tokyo, Japan\"");
  EXPECT_EQ(Eval(c, "", {Call("get_weather", R"({})")}).reason,
            "get_weather: missing argument 'city'");
  EXPECT_EQ(Eval(c, "", {Call("get_weather", R"({"city": "Tokyo", "days": 3})")}).reason,
            "get_weather: unexpected argument 'days'");
  EXPECT_EQ(Eval(c, "", {Call("calculate", R"({"expression": "1"})")}).reason,
            "called calculate, expected get_weather");
  EXPECT_NE(Eval(c, "I would call get_weather(city=Tokyo)").reason.find("no tool-call parser"),
            std::string::npos);
  EXPECT_NE(Eval(c, "", {Call("get_weather", "{not json")}).reason.find("not a JSON object"),
            std::string::npos);
  // Parallel calls in any order; numbers compare numerically, strings without spaces.
  Check two = C("tool_call", {{"calls",
                               {{{"name", "calculate"}, {"arguments", {{"expression", "45 * 73"}}}},
                                {{"name", "get_weather"}, {"arguments", {{"city", "Paris"}}}}}}});
  EXPECT_TRUE(Eval(two, "",
                   {Call("get_weather", R"({"city":"Paris"})"),
                    Call("calculate", R"({"expression":"45*73"})")})
                  .pass);
  EXPECT_NE(Eval(two, "", {Call("calculate", R"({"expression":"45*73"})")})
                .reason.find("expected 2 tool calls"),
            std::string::npos);
  Check none = C("tool_call", {{"none", true}});
  EXPECT_TRUE(Eval(none, "I can't help with that.").pass);
  EXPECT_EQ(Eval(none, "", {Call("get_weather", "{}")}).reason,
            "expected no tool call, got get_weather({})");
  EXPECT_FALSE(ValidateCheck(C("tool_call", json::object())));
}

TEST(Checkers, LengthCountsCodePointsWordsLinesItems) {
  EXPECT_TRUE(Eval(C("length", {{"unit", "chars"}, {"max", 11}}), "東京は日本の首都です。").pass);
  EXPECT_EQ(Eval(C("length", {{"unit", "chars"}, {"max", 5}}), "abcdefg").reason,
            "7 characters, expected at most 5");
  EXPECT_EQ(Eval(C("length", {{"unit", "words"}, {"min", 3}, {"max", 4}}), "one two").reason,
            "2 words, expected 3 to 4");
  EXPECT_TRUE(Eval(C("length", {{"unit", "lines"}, {"exact", 2}}), "a\n\nb\n").pass);
  EXPECT_EQ(Eval(C("length", {{"unit", "items"}, {"exact", 3}}), "- a\n- b\n").reason,
            "2 items, expected exactly 3");
  EXPECT_FALSE(ValidateCheck(C("length", {{"unit", "bytes"}, {"max", 3}})));
  EXPECT_FALSE(ValidateCheck(C("length", {{"unit", "words"}})));
}

TEST(Checkers, Format) {
  EXPECT_TRUE(Eval(C("format", {{"bullets", 3}}), "- a\n- b\n- c").pass);
  EXPECT_EQ(Eval(C("format", {{"bullets", 3}}), "- a\n- b").reason,
            "2 bullets, expected exactly 3");
  EXPECT_TRUE(Eval(C("format", {{"starts_with", "Subject:"}}), "**Subject:** Delay").pass);
  EXPECT_FALSE(Eval(C("format", {{"starts_with", "Subject:"}}), "Hi team").pass);
  EXPECT_TRUE(
      Eval(C("format", {{"ends_with", "Best regards, Sam"}}), "...\nBest regards, Sam.").pass);
  EXPECT_TRUE(Eval(C("format", {{"script", "japanese"}}), "東京は日本の首都です。").pass);
  EXPECT_NE(Eval(C("format", {{"script", "japanese"}}), "Tokyo is the capital.")
                .reason.find("mostly latin"),
            std::string::npos);
  EXPECT_TRUE(Eval(C("format", {{"case", "lower"}}), "all lower").pass);
  EXPECT_FALSE(Eval(C("format", {{"forbid", ","}}), "a, b").pass);
}

TEST(Checkers, Combinators) {
  Check all;
  all.type = "all_of";
  all.children = {C("contains", {{"any", {"4"}}}), C("length", {{"unit", "words"}, {"max", 3}})};
  EXPECT_TRUE(RunCheck(all, Reply{"It is 4", {}, "stop"}, {}).pass);
  EXPECT_EQ(RunCheck(all, Reply{"The answer is 4 of course", {}, "stop"}, {}).reason,
            "6 words, expected at most 3");
  Check any;
  any.type = "any_of";
  any.children = {C("exact", {{"expect", "yes"}}), C("exact", {{"expect", "y"}})};
  EXPECT_TRUE(RunCheck(any, Reply{"Y", {}, "stop"}, {}).pass);
  EXPECT_NE(RunCheck(any, Reply{"no", {}, "stop"}, {}).reason.find("; or "), std::string::npos);
  Check no;
  no.type = "not";
  no.children = {C("contains", {{"any", {","}}})};
  EXPECT_TRUE(RunCheck(no, Reply{"no commas here", {}, "stop"}, {}).pass);
  EXPECT_FALSE(RunCheck(no, Reply{"a, b", {}, "stop"}, {}).pass);
}

TEST(Checkers, CodeRunsTheAnswerAgainstTheTests) {
  Check c = C("code", {{"language", "python"},
                       {"entry", "add"},
                       {"tests", "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n"}});
  EXPECT_TRUE(Eval(c, "Sure:\n```python\ndef add(a, b):\n    return a + b\n```\n").pass);
  auto wrong = Eval(c, "```python\ndef add(a, b):\n    return a - b\n```");
  EXPECT_FALSE(wrong.pass);
  EXPECT_NE(wrong.reason.find("AssertionError"), std::string::npos) << wrong.reason;
  EXPECT_FALSE(wrong.detail.empty());
  EXPECT_EQ(Eval(c, "Use a + b.").reason, "no Python code block in the answer");
  EXPECT_EQ(Eval(c, "```python\ndef plus(a, b):\n    return a + b\n```").reason,
            "the code does not define 'add'");
  Check io = C(
      "code", {{"language", "python"},
               {"cases",
                {{{"stdin", "3\n4\n"}, {"stdout", "7"}}, {{"stdin", "1\n1\n"}, {"stdout", "2"}}}}});
  EXPECT_TRUE(Eval(io, "```python\nprint(int(input()) + int(input()))\n```").pass);
  auto io_wrong = Eval(io, "```python\nprint(int(input()) * int(input()))\n```");
  EXPECT_EQ(io_wrong.reason, "case 1: expected output \"7\", got \"12\"");
  Check loop = C("code", {{"language", "python"}, {"tests", "pass"}, {"timeout_s", 1}});
  auto spin = Eval(loop, "```python\nwhile True:\n    pass\n```");
  EXPECT_FALSE(spin.pass);
  EXPECT_FALSE(spin.reason.empty());
}

TEST(Checkers, CodeCppWithTestMainAndTheAnswersOwnMain) {
  Check c = C("code", {{"language", "cpp"},
                       {"tests", "#include <cassert>\nint main() { assert(square(7) == 49); }\n"}});
  EXPECT_TRUE(Eval(c,
                   "```cpp\nint square(int x) { return x * x; }\n"
                   "int main() { return square(2) == 4 ? 0 : 1; }\n```")
                  .pass);
  auto bad = Eval(c, "```cpp\nint square(int x) { return x + x }\n```");
  EXPECT_FALSE(bad.pass);
  EXPECT_EQ(bad.reason.rfind("compile error", 0), 0u) << bad.reason;
}

TEST(Checkers, ValidationNamesTheKnownKeys) {
  auto r = ValidateCheck(C("contains", {{"anyy", {"x"}}}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "unknown key 'anyy' for contains (known: any, all, none, case_sensitive, word)");
  EXPECT_FALSE(ValidateCheck(C("number", {{"expect", "abc"}})));
  EXPECT_FALSE(ValidateCheck(C("number", {{"expect", 1}, {"pick", "middle"}})));
  EXPECT_FALSE(ValidateCheck(C("choice", {{"expect", "X"}, {"options", {"A", "B"}}})));
  EXPECT_FALSE(ValidateCheck(C("code", {{"language", "rust"}, {"tests", "x"}})));
  EXPECT_FALSE(ValidateCheck(C("code", {{"language", "python"}})));
  EXPECT_FALSE(ValidateCheck(C("format", json::object())));
}

// A number written over a megabyte (a hostile answer of digits) is cut in the FAIL reason, which
// goes to results.json and the console: the reason stays a line.
TEST(Checkers, NumberReasonCutsAHugeNumber) {
  const std::string digits(1 << 20, '7');
  auto f = Eval(C("number", {{"expect", 842}}), digits);
  EXPECT_FALSE(f.pass);
  EXPECT_LT(f.reason.size(), 200u) << f.reason.substr(0, 300);
  EXPECT_NE(f.reason.find("found 7777777777"), std::string::npos) << f.reason.substr(0, 300);
  EXPECT_NE(f.reason.find("…"), std::string::npos) << f.reason.substr(0, 300);
  auto only = Eval(C("number", {{"expect", 842}, {"pick", "only"}}), "842 and " + digits);
  EXPECT_LT(only.reason.size(), 200u) << only.reason.substr(0, 300);
  // A long comma list keeps its first ten items.
  std::string list = "1";
  for (int i = 0; i < 5000; ++i) {
    list += ",234";
  }
  auto l = Eval(C("number", {{"expect", 842}}), list);
  EXPECT_FALSE(l.pass);
  EXPECT_LT(l.reason.size(), 400u) << l.reason.substr(0, 500);
}

}  // namespace
}  // namespace sb::suite
