// Session files (workload/session_file.h): every key read, per-turn lists, and every bad line
// named FILE:LINE with what is wrong.
#include "workload/session_file.h"

#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace sb::workload {
namespace {

TEST(SessionFileTest, ReadsEveryKeyAndSkipsBlankAndCommentLines) {
  const auto s = ParseSessionFile(
      "# two sessions\n"
      "\n"
      "{\"system\": \"S\", \"turns\": [\"a\", \"b\"], \"think_ms\": 5, \"output_tokens\": [3, 4],"
      " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\"}}],"
      " \"tool_results\": {\"f\": \"R\"}}\n"
      "{\"turns\": [\"c\"], \"tool_results\": [\"x\", \"y\"], \"think_ms\": [7.5]}\n",
      "s.jsonl");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->size(), 2U);
  const ScriptedSession& a = (*s)[0];
  EXPECT_EQ(a.line, 3);
  EXPECT_EQ(a.system, "S");
  EXPECT_EQ(a.turns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(a.think_ms, (std::vector<double>{5, 5}));
  EXPECT_EQ(a.output_tokens, (std::vector<int>{3, 4}));
  EXPECT_NE(a.tools_json.find("\"name\":\"f\""), std::string::npos);
  EXPECT_EQ(a.tool_results_by.at("f"), "R");
  const ScriptedSession& b = (*s)[1];
  EXPECT_EQ(b.line, 4);
  EXPECT_EQ(b.tool_results, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(b.think_ms, (std::vector<double>{7.5}));
  EXPECT_TRUE(b.output_tokens.empty());
}

TEST(SessionFileTest, EveryBadLineIsNamedByFileAndLine) {
  const struct {
    const char* line;
    const char* error;
  } cases[] = {
      {"not json", "f:2: not valid JSON"},
      {"[1]", "f:2: a session must be a JSON object"},
      {"{\"turns\": []}", "f:2: \"turns\" must be a non-empty array"},
      {"{\"turns\": [\"a\", 3]}", "f:2: turns[1] must be a non-empty string"},
      {"{\"turns\": [\"a\"], \"turn\": 1}", "f:2: unknown key \"turn\""},
      {"{\"turns\": [\"a\"], \"think_ms\": -1}", "f:2: think_ms must be a number"},
      {"{\"turns\": [\"a\", \"b\"], \"output_tokens\": [1]}",
       "f:2: output_tokens has 1 values but the session has 2 turns"},
      {"{\"turns\": [\"a\"], \"output_tokens\": [0.5]}", "f:2: output_tokens[0] must be a whole"},
      {"{\"turns\": [\"a\"], \"tools\": [{\"type\": \"function\"}]}", "f:2: tools[0] must be"},
      {"{\"turns\": [\"a\"], \"tool_results\": [1]}", "f:2: tool_results[0] must be a string"},
      {"{\"turns\": [\"a\"], \"system\": 1}", "f:2: system must be a string"},
  };

  for (const auto& c : cases) {
    const auto s = ParseSessionFile(std::string("{\"turns\": [\"ok\"]}\n") + c.line + "\n", "f");
    ASSERT_FALSE(s) << c.line;
    EXPECT_EQ(s.error().code, ErrorCode::kUsage);
    EXPECT_EQ(s.error().message.rfind(c.error, 0), 0U) << s.error().message;
  }
  EXPECT_FALSE(ParseSessionFile("# nothing\n", "f"));
  const auto missing = ReadSessionFile("/nonexistent/sessions.jsonl");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kSetup);
}

TEST(SessionFileTest, TheDocumentedExampleFileParses) {
  const auto s = ReadSessionFile(std::string(SB_FIXTURES_DIR) + "/sessions/example.jsonl");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->size(), 3U);
  EXPECT_EQ((*s)[0].think_ms, (std::vector<double>{20, 40, 0}));
  EXPECT_EQ((*s)[1].turns.size(), 4U);
  EXPECT_EQ((*s)[2].tool_results.size(), 2U);
}

}  // namespace
}  // namespace sb::workload

namespace sb::workload {
namespace {

// "images": one list for the first turn, or one list per turn; a path is read relative to the
// file's folder and sent as a data: URL; nothing is fetched from the network.
TEST(SessionFileTest, ImagesGoWithTheFirstTurnOrWithEachTurn) {
  testing::TempDir dir;
  { std::ofstream(dir.path() / "dot.png", std::ios::binary) << "\x89PNG\r\n\x1a\nxyz"; }
  const std::string file = (dir.path() / "s.jsonl").string();
  {
    std::ofstream out(file);
    out << "{\"turns\": [\"a\", \"b\"], \"images\": [\"dot.png\", "
           "\"data:image/png;base64,QUJD\"]}\n"
        << "{\"turns\": [\"a\", \"b\", \"c\"], \"images\": [[], [\"dot.png\"], []]}\n";
  }
  const auto s = ReadSessionFile(file);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->size(), 2U);
  const auto& first = (*s)[0].images;
  ASSERT_EQ(first.size(), 2U);  // one list per turn
  ASSERT_EQ(first[0].size(), 2U);
  // "\x89PNG\r\n\x1a\nxyz" in base64.
  EXPECT_EQ(first[0][0], "data:image/png;base64,iVBORw0KGgp4eXo=");
  EXPECT_EQ(first[0][1], "data:image/png;base64,QUJD");
  EXPECT_TRUE(first[1].empty());
  const auto& per_turn = (*s)[1].images;
  ASSERT_EQ(per_turn.size(), 3U);
  EXPECT_TRUE(per_turn[0].empty());
  EXPECT_EQ(per_turn[1], (std::vector<std::string>{"data:image/png;base64,iVBORw0KGgp4eXo="}));
  EXPECT_TRUE(per_turn[2].empty());
}

TEST(SessionFileTest, BadImagesAreNamedByFileAndLine) {
  const struct {
    const char* line;
    const char* what;
  } cases[] = {
      {R"({"turns": ["a", "b"], "images": [["x.png"]]})", "images has 1 lists for 2 turns"},
      {R"({"turns": ["a"], "images": "x.png"})", "images must be an array"},
      {R"({"turns": ["a"], "images": [1]})", "images must be an array"},
      {R"({"turns": ["a"], "images": ["https://example.com/x.png"]})",
       "nothing is read from the network"},
      {R"({"turns": ["a"], "images": ["no-such-file.png"]})", "cannot read image"},
  };

  for (const auto& c : cases) {
    const auto s = ParseSessionFile(std::string("\n") + c.line + "\n", "f.jsonl", "/nonexistent");
    ASSERT_FALSE(s) << c.line;
    EXPECT_EQ(s.error().message.rfind("f.jsonl:2: ", 0), 0U) << s.error().message;
    EXPECT_NE(s.error().message.find(c.what), std::string::npos) << s.error().message;
  }
  EXPECT_EQ(std::size(cases), 5U);
}

}  // namespace
}  // namespace sb::workload
