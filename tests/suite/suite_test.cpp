// The suite file loader: the format, defaults, placeholders, and errors that name the line.
#include "suite/suite.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "media/media.h"

namespace sb::suite {
namespace {

using nlohmann::json;

Result<Suite> Parse(const std::string& yaml) {
  return ParseSuite(yaml, "t.yaml", ".");
}

std::string ErrorOf(const std::string& yaml) {
  auto s = Parse(yaml);
  EXPECT_FALSE(s.has_value()) << yaml;
  return s ? std::string() : s.error().message;
}

TEST(SuiteFile, PromptFormWithDefaultsMediaAndTools) {
  auto s = Parse(R"(
suite: mine
description: my suite
defaults: {max_tokens: 512, temperature: 0, thinking: off, timeout_s: 60, system: Be brief.}
tests:
  - id: a.one
    name: First
    category: image
    section: single
    prompt: How many red squares?
    image: color_grid
    check: {number: 3}
    reference_answer: "3"
    bad_answers: ["4", {text: "four"}]
  - id: b.two
    category: tool_calling
    prompt: Weather in Paris?
    thinking: on
    max_tokens: 99
    tools:
      - name: get_weather
        parameters: {type: object, properties: {city: {type: string}}}
    tool_choice: auto
    check:
      tool_call:
        calls: [{name: get_weather, arguments: {city: Paris}}]
    reference_answer:
      tool_calls: [{name: get_weather, arguments: {city: Paris}}]
)");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->name, "mine");
  ASSERT_EQ(s->tests.size(), 2u);
  const TestSpec& a = s->tests[0];
  EXPECT_EQ(a.DisplayName(), "First");
  EXPECT_EQ(a.max_tokens, 512);
  EXPECT_EQ(*a.temperature, 0);
  EXPECT_EQ(*a.thinking, false);
  EXPECT_EQ(a.timeout_s, 60);
  ASSERT_EQ(a.messages.size(), 2u);
  EXPECT_EQ(a.messages[0].role, "system");
  EXPECT_EQ(a.messages[1].media.size(), 1u);
  EXPECT_EQ(a.Modalities(), std::vector<std::string>{"image"});
  EXPECT_EQ(a.check->type, "number");
  EXPECT_EQ(json::parse(a.check->args_json)["expect"], 3);
  EXPECT_EQ(a.bad_answers.size(), 2u);
  EXPECT_EQ(PromptKey(a), "Be brief.\nHow many red squares?");
  const TestSpec& b = s->tests[1];
  EXPECT_EQ(b.DisplayName(), "b.two");
  EXPECT_EQ(*b.thinking, true);
  EXPECT_EQ(b.max_tokens, 99);
  const json tools = json::parse(b.tools_json);
  EXPECT_EQ(tools[0]["type"], "function");
  EXPECT_EQ(tools[0]["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(b.tool_choice_json), "auto");
  ASSERT_EQ(b.reference_answer->tool_calls.size(), 1u);
  EXPECT_EQ(json::parse(b.reference_answer->tool_calls[0].arguments)["city"], "Paris");
}

TEST(SuiteFile, MessagesFormAndListCheckIsAllOf) {
  auto s = Parse(R"(
suite: m
tests:
  - id: conv
    category: reasoning
    messages:
      - {role: system, text: You are a calculator.}
      - {role: user, text: "2+2?", images: [shapes_a, shapes_b]}
    check:
      - contains: "4"
      - length: {unit: words, max: 5}
)");
  ASSERT_TRUE(s) << s.error().message;
  const TestSpec& t = s->tests[0];
  EXPECT_EQ(t.messages[1].media.size(), 2u);
  EXPECT_EQ(t.check->type, "all_of");
  ASSERT_EQ(t.check->children.size(), 2u);
  EXPECT_EQ(t.check->children[0].type, "contains");
  EXPECT_EQ(json::parse(t.check->children[0].args_json)["any"][0], "4");
}

TEST(SuiteFile, PlaceholdersTakeTheGeneratorsGroundTruth) {
  auto s = Parse(R"(
suite: p
tests:
  - id: grid
    category: image
    prompt: Count the red squares.
    image: color_grid
    check: {number: {expect: "{{color_grid.counts.red}}"}}
    reference_answer: "There are {{color_grid.counts.red}} red squares ({{color_grid.total}} in all)."
)");
  ASSERT_TRUE(s) << s.error().message;
  auto asset = media::Generate("color_grid");
  ASSERT_TRUE(asset);
  const json truth = json::parse(asset->truth_json);
  const json args = json::parse(s->tests[0].check->args_json);
  EXPECT_EQ(args["expect"], truth["counts"]["red"]);  // stays a number
  EXPECT_EQ(s->tests[0].reference_answer->text, "There are " + truth["counts"]["red"].dump() +
                                                    " red squares (" + truth["total"].dump() +
                                                    " in all).");
}

TEST(SuiteFile, SpeedProfileTests) {
  auto s = Parse(R"(
suite: speed
tests:
  - {id: speed.c, category: concurrency, profile: concurrency, levels: [1, 2], tokens: 64}
  - {id: speed.ctx, category: context, profile: context, sizes: [100, 500], depth: 0.25}
)");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->tests[0].profile, "concurrency");
  EXPECT_EQ(json::parse(s->tests[0].profile_args_json)["levels"], json::array({1, 2}));
  EXPECT_FALSE(s->tests[0].check.has_value());
  EXPECT_EQ(json::parse(s->tests[1].profile_args_json)["depth"], 0.25);
}

TEST(SuiteFile, ErrorsNameTheLineAndTheProblem) {
  EXPECT_EQ(ErrorOf("suite: x\ntests:\n  - id: a\n    category: c\n    prompt: p\n"
                    "    max_token: 3\n    check: {exact: x}\n"),
            "t.yaml:6: test 'a': unknown key 'max_token' (known: id, name, category, section, "
            "description, prompt, system, messages, image, images, video, videos, audio, audios, "
            "max_tokens, temperature, thinking, timeout_s, tools, tool_choice, check, "
            "reference_answer, bad_answers, loop, profile, levels, lengths, sizes, runs, tokens, "
            "depth, context_max_tokens)");
  EXPECT_NE(ErrorOf("suite: x\ntests:\n  - id: a\n    category: c\n    prompt: p\n"
                    "    check: {containz: x}\n")
                .find("t.yaml:6: test 'a': unknown checker 'containz'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("suite: x\ntests:\n  - id: a\n    category: c\n    prompt: p\n"
                    "    check: {contains: {anyy: [x]}}\n")
                .find("t.yaml:6: test 'a': unknown key 'anyy' for contains"),
            std::string::npos);
  EXPECT_NE(ErrorOf("suite: x\ntests:\n  - id: a\n    category: c\n    prompt: p\n"
                    "    image: no_such_picture\n    check: {exact: x}\n")
                .find("t.yaml:6: test 'a': 'no_such_picture' is neither a catalogue asset"),
            std::string::npos);
  EXPECT_NE(ErrorOf("suite: x\ntests:\n  - {id: a, category: c, prompt: p, check: {exact: x}}\n"
                    "  - {id: a, category: c, prompt: q, check: {exact: y}}\n")
                .find("t.yaml:4: test id 'a' appears twice"),
            std::string::npos);
  EXPECT_NE(ErrorOf("suite: x\ntests:\n  - id: a\n    category: c\n    prompt: p\n"
                    "    check: {number: {expect: '{{color_grid.nope}}'}}\n")
                .find("no 'nope' in the ground truth (keys:"),
            std::string::npos);
  EXPECT_NE(ErrorOf("suite: x\ntests:\n  - id: a\n    category: c\n    prompt: p\n"
                    "    check: {regex: '(unclosed'}\n")
                .find("does not compile"),
            std::string::npos);
  EXPECT_NE(ErrorOf("suite: x\ntests: [\n").find("t.yaml:"), std::string::npos);
  EXPECT_NE(ErrorOf("suite: x\ntests:\n  - {id: a, category: c, check: {exact: x}}\n")
                .find("give either 'prompt'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("suite: x\ntests:\n  - {id: A B, category: c, prompt: p, check: {exact: x}}\n")
                .find("an id uses only"),
            std::string::npos);
  EXPECT_NE(ErrorOf("suite: x\ntests:\n  - {id: s, category: c, profile: ttft, prompt: p}\n")
                .find("'prompt' does not apply to a speed-profile test"),
            std::string::npos);
}

TEST(SuiteFile, FilesAndRelativeMedia) {
  const auto dir = std::filesystem::temp_directory_path() / "sb_suite_file_test";
  std::filesystem::create_directories(dir);
  auto png = media::Generate("shapes_a");
  ASSERT_TRUE(png);
  {
    std::ofstream(dir / "pic.png", std::ios::binary) << png->bytes;
    std::ofstream(dir / "s.yaml") << "suite: f\ntests:\n  - {id: a, category: image, prompt: p, "
                                     "image: pic.png, check: {exact: x}}\n";
    std::ofstream(dir / "bad.yaml") << "suite: f\ntests:\n  - {id: a, category: image, prompt: p, "
                                       "audio: pic.png, check: {exact: x}}\n";
  }
  auto s = LoadSuiteFile(dir / "s.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE(s->tests[0].messages[0].media[0].is_file);
  auto bad = LoadSuiteFile(dir / "bad.yaml");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("is not an audio file"), std::string::npos);
  auto missing = LoadSuiteFile(dir / "nope.yaml");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kSetup);
  std::filesystem::remove_all(dir);
}

// yaml-cpp says "bad file" when it stops at its nesting limit, and little about indentation:
// the message names the file, the line and what is wrong.
TEST(SuiteFile, NestingErrorsSayWhatIsWrong) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sb_nesting_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "deep.yaml")
        << "suite: d\ntests: " << std::string(2000, '[') << std::string(2000, ']') << "\n";
    std::ofstream(dir / "indent.yaml")
        << "suite: i\ntests:\n  - id: a\n    category: c\n    prompt: hi\n"
           "  check: {contains: x}\n";
    std::ofstream(dir / "open.yaml")
        << "suite: o\ntests:\n  - id: a\n    category: c\n    prompt: hi\n"
           "    check: {contains: {any: [x]}\n";
  }
  auto deep = LoadSuiteFile(dir / "deep.yaml");
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().code, ErrorCode::kUsage);
  EXPECT_EQ(deep.error().message,
            (dir / "deep.yaml").string() +
                ":2: not valid YAML: lists and mappings nested too deeply (the YAML reader "
                "stops at about 500 levels)");
  auto indent = LoadSuiteFile(dir / "indent.yaml");
  ASSERT_FALSE(indent);
  EXPECT_EQ(indent.error().message,
            (dir / "indent.yaml").string() +
                ":6: not valid YAML: end of map not found (this line's indentation does not fit "
                "the block above it)");
  auto open = LoadSuiteFile(dir / "open.yaml");
  ASSERT_FALSE(open);
  EXPECT_NE(open.error().message.find("(a '{' opened above is not closed)"), std::string::npos)
      << open.error().message;
  EXPECT_EQ(open.error().message.rfind((dir / "open.yaml").string() + ":", 0), 0u);
  std::filesystem::remove_all(dir);
}

TEST(SuiteFile, BuiltinNamesAndUnknownNames) {
  ASSERT_GE(BuiltinSuites().size(), 3u);
  EXPECT_EQ(BuiltinSuites()[0].name, "quick");
  auto q = LoadSuite("quick");
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(q->source, "built-in");
  auto none = LoadSuite("no-such-suite");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("quick, standard, full"), std::string::npos);
}

}  // namespace
}  // namespace sb::suite
