// Trace readers: the four published layouts from tests/fixtures/workloads/ (written by
// scripts/make-trace-fixtures.py), format detection, failures skipped and counted, errors that
// name FILE:LINE, and the block-structured prompt text of a Mooncake trace.
#include "workload/trace.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "workload/prompt.h"

namespace sb::workload {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(SB_FIXTURES_DIR) + "/workloads/" + name;
}

TEST(TraceTest, MooncakeFixtureLoadsWithHashIds) {
  const auto t = ReadTrace(Fixture("mooncake-200.jsonl"), std::nullopt);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->format, TraceFormat::kMooncake);
  ASSERT_EQ(t->requests.size(), 200U);
  const auto& first = t->requests.front();
  EXPECT_EQ(first.at_us, 0);
  EXPECT_EQ(first.input_tokens, 141);
  EXPECT_EQ(first.output_tokens, 3);
  EXPECT_EQ(first.hash_ids, (std::vector<std::int64_t>{41, 42, 43, 44, 45, 46, 47, 53, 54}));
  EXPECT_EQ(t->requests[1].at_us, 40'000);  // timestamps are ms
  EXPECT_EQ(t->requests.back().at_us, 199 * 40'000);
  const auto capped = ReadTrace(Fixture("mooncake-200.jsonl"), TraceFormat::kMooncake, 10);
  ASSERT_TRUE(capped);
  EXPECT_EQ(capped->requests.size(), 10U);
}

TEST(TraceTest, BurstGptSkipsAndCountsFailures) {
  const auto t = ReadTrace(Fixture("burstgpt.csv"), std::nullopt);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->format, TraceFormat::kBurstGpt);
  EXPECT_EQ(t->requests.size(), 18U);
  EXPECT_EQ(t->skipped, 2);
  EXPECT_EQ(t->requests[0].input_tokens, 581);
  EXPECT_EQ(t->requests[0].output_tokens, 39);
  EXPECT_EQ(t->requests[0].at_us, 0);  // Timestamp 5 s is the trace's start
  EXPECT_EQ(t->requests[0].line, 2);
}

TEST(TraceTest, AzureTimestampsBecomeOffsets) {
  const auto t = ReadTrace(Fixture("azure-code.csv"), std::nullopt);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->format, TraceFormat::kAzure);
  ASSERT_EQ(t->requests.size(), 20U);
  EXPECT_EQ(t->requests[0].input_tokens, 2238);
  EXPECT_EQ(t->requests[0].output_tokens, 75);
  EXPECT_EQ(t->requests[1].at_us, 330'341);  // 18:15:46.3303410 - 18:15:46.0000000
  // Across a minute and a day boundary too.
  const auto wrap = ParseTrace(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-12-31 23:59:59.5,10,1\n"
      "2024-01-01 00:00:00.25,10,1\n",
      "wrap.csv", std::nullopt);
  ASSERT_TRUE(wrap) << wrap.error().message;
  EXPECT_EQ(wrap->requests[1].at_us, 750'000);
}

TEST(TraceTest, PlainJsonlKeepsPromptsAndMessages) {
  const auto t = ReadTrace(Fixture("plain.jsonl"), std::nullopt);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->format, TraceFormat::kJsonl);
  ASSERT_EQ(t->requests.size(), 5U);
  EXPECT_EQ(t->requests[1].at_us, 250'500);
  EXPECT_EQ(t->requests[1].prompt, "Summarise the plot of Hamlet in two sentences.");
  EXPECT_NE(t->requests[2].messages_json.find("You are terse."), std::string::npos);
  EXPECT_TRUE(t->requests[0].prompt.empty());
}

TEST(TraceTest, OutOfOrderLinesAreSortedByTime) {
  const auto t = ParseTrace(
      "{\"timestamp_ms\": 30, \"input_tokens\": 3, \"output_tokens\": 1}\n"
      "{\"timestamp_ms\": 10, \"input_tokens\": 1, \"output_tokens\": 1}\n",
      "x.jsonl", std::nullopt);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->requests[0].input_tokens, 1);
  EXPECT_EQ(t->requests[1].at_us, 20'000);
  EXPECT_EQ(t->requests[1].line, 1);
}

TEST(TraceTest, BadLinesNameFileAndLine) {
  struct Case {
    const char* text;
    std::optional<TraceFormat> format;
    const char* want;
  };

  const Case cases[] = {
      {"{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\n\nnot json\n", std::nullopt,
       "t:3: not a JSON object"},
      {"{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\n"
       "{\"timestamp\": 1, \"input_length\": 0, \"output_length\": 1}\n",
       std::nullopt, "t:2: \"input_length\" must be"},
      {"{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1, \"hash_ids\": [1, \"x\"]}\n",
       std::nullopt, "t:1: \"hash_ids\" must be"},
      {"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1,GPT-4,ten,3,13,x\n",
       std::nullopt, "t:2: Request tokens must be"},
      {"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1,GPT-4\n",
       std::nullopt, "t:2: expected at least 4 columns"},
      {"TIMESTAMP,ContextTokens,GeneratedTokens\n18:15:46,10,2\n", std::nullopt,
       "t:2: TIMESTAMP must look like"},
      {"TIMESTAMP,Context,GeneratedTokens\n", TraceFormat::kAzure,
       "t:1: the header has no column 'ContextTokens'"},
      {"a,b,c\n1,2,3\n", std::nullopt, "t:1: cannot tell the trace format"},
      {"\n\n", TraceFormat::kJsonl, "t: the trace holds no requests"},
  };
  for (const auto& c : cases) {
    const auto t = ParseTrace(c.text, "t", c.format);
    ASSERT_FALSE(t) << c.text;
    EXPECT_EQ(t.error().code, ErrorCode::kUsage);
    EXPECT_NE(t.error().message.find(c.want), std::string::npos)
        << "got: " << t.error().message << "\nwant: " << c.want;
  }
  const auto missing = ReadTrace("/nonexistent/trace.jsonl", std::nullopt);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kSetup);
}

TEST(TraceTest, FormatNamesRoundTrip) {
  for (const char* name : {"mooncake", "burstgpt", "azure", "jsonl"}) {
    const auto f = ParseTraceFormat(name);
    ASSERT_TRUE(f) << name;
    EXPECT_EQ(TraceFormatName(*f), name);
  }
  EXPECT_FALSE(ParseTraceFormat("sharegpt"));
}

// Counts words (the simulator's tokens for this text).
int Words(const std::string& text) {
  int n = text.empty() ? 0 : 1;
  for (const char c : text) {
    n += c == ' ';
  }
  return n;
}

TEST(PromptTest, SharedHashIdsGiveIdenticalLeadingBlocks) {
  const PromptShape shape{4, 6};
  const std::vector<std::int64_t> a = {1, 2, 3};
  const std::vector<std::int64_t> b = {1, 2, 9, 10};
  const std::string ta = BlockPromptText(a, 45, 16, shape, 100);
  const std::string tb = BlockPromptText(b, 64, 16, shape, 200);
  EXPECT_EQ(Words(ta), 45 - 6);
  EXPECT_EQ(Words(tb), 64 - 6);
  // Blocks 0 and 1 of the sequence are positions 0..31: 4 template tokens + 28 words.
  auto words = [](const std::string& t, int n) {
    std::size_t at = 0;
    for (int i = 0; i < n; ++i) {
      at = t.find(' ', at) + 1;
    }
    return t.substr(0, at);
  };
  EXPECT_EQ(words(ta, 28), words(tb, 28));
  EXPECT_NE(words(ta, 29), words(tb, 29));  // block 2 differs from its first word on (ids 3, 9)
  // Without hash ids: unique text per seed, from the first words on.
  EXPECT_NE(words(BlockPromptText({}, 40, 16, shape, 1), 4),
            words(BlockPromptText({}, 40, 16, shape, 2), 4));
  EXPECT_EQ(BlockPromptText({}, 40, 16, shape, 1), BlockPromptText({}, 40, 16, shape, 1));
}

}  // namespace
}  // namespace sb::workload
