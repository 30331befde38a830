// Dataset readers (--dataset): the ShareGPT and JSONL fixtures of tests/fixtures/workloads/
// (written by scripts/make-trace-fixtures.py), format detection, errors that name FILE:LINE,
// --skip-bad-lines counts, and the seeded order.
#include "workload/dataset.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace sb::workload {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(SB_FIXTURES_DIR) + "/workloads/" + name;
}

TEST(DatasetTest, ShareGptFixtureLoadsFirstHumanTurnAndReply) {
  const auto d = ReadDataset(Fixture("sharegpt.json"), std::nullopt, false);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->format, DatasetFormat::kShareGpt);
  ASSERT_EQ(d->entries.size(), 11U);  // 12 conversations, one without a reply
  EXPECT_EQ(d->skipped_no_reply, 1);
  EXPECT_EQ(d->skipped_bad, 0);
  EXPECT_EQ(d->entries[0].prompt.rfind("Question 1: explain rivers", 0), 0U);
  EXPECT_EQ(d->entries[0].reply.rfind("word word", 0), 0U);
  EXPECT_EQ(d->entries[0].line, 2);  // where the entry's object starts
  EXPECT_EQ(d->entries[1].line, 23);
  // Conversation 4 starts with a gpt turn: the first human turn is the prompt.
  EXPECT_EQ(d->entries[3].prompt.rfind("Question 4:", 0), 0U);
  EXPECT_NE(d->entries[3].reply, "Hello, how can I help?");
}

TEST(DatasetTest, JsonlFixtureLoadsPromptsMessagesImages) {
  const auto d = ReadDataset(Fixture("dataset.jsonl"), std::nullopt, false);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->format, DatasetFormat::kJsonl);
  ASSERT_EQ(d->entries.size(), 5U);
  EXPECT_EQ(d->entries[0].prompt, "Name the largest planet of the solar system.");
  EXPECT_EQ(d->entries[0].output_tokens, 12);
  EXPECT_EQ(d->entries[1].output_tokens, 0);  // not given
  EXPECT_TRUE(d->entries[2].prompt.empty());
  EXPECT_NE(d->entries[2].messages_json.find("List three prime numbers."), std::string::npos);
  ASSERT_EQ(d->entries[3].image_urls.size(), 1U);
  // A path is read (relative to the dataset's folder) into the same data: URL as written inline.
  EXPECT_EQ(d->entries[3].image_urls[0].rfind("data:image/png;base64,iVBOR", 0), 0U);
  ASSERT_EQ(d->entries[4].image_urls.size(), 1U);
  EXPECT_EQ(d->entries[3].image_urls[0], d->entries[4].image_urls[0]);
}

TEST(DatasetTest, MalformedLineNamesFileAndLine) {
  const std::string path = Fixture("dataset-bad.jsonl");
  const auto d = ReadDataset(path, std::nullopt, false);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, ErrorCode::kUsage);
  EXPECT_EQ(d.error().message.rfind(path + ":3: not a JSON object", 0), 0U) << d.error().message;
}

TEST(DatasetTest, SkipBadLinesSkipsAndCounts) {
  const auto d = ReadDataset(Fixture("dataset-bad.jsonl"), std::nullopt, true);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->entries.size(), 4U);
  EXPECT_EQ(d->skipped_bad, 1);
  EXPECT_EQ(d->entries[2].line, 4);
}

TEST(DatasetTest, ShareGptBadEntryNamesItsLine) {
  const std::string text =
      "[\n  {\"id\": \"a\", \"conversations\": [{\"from\": \"human\", \"value\": \"hi\"},\n"
      "   {\"from\": \"gpt\", \"value\": \"hello\"}]},\n  {\"id\": \"b\", \"conversations\": "
      "7}\n]\n";
  const auto d = ParseDataset(text, "sg.json", std::nullopt, false);
  ASSERT_FALSE(d);
  EXPECT_EQ(
      d.error().message.rfind("sg.json:4: a ShareGPT entry needs a \"conversations\" array", 0), 0U)
      << d.error().message;
  const auto skipped = ParseDataset(text, "sg.json", std::nullopt, true);
  ASSERT_TRUE(skipped) << skipped.error().message;
  EXPECT_EQ(skipped->entries.size(), 1U);
  EXPECT_EQ(skipped->skipped_bad, 1);
  const auto broken = ParseDataset("[\n{\"id\": 1,\n", "sg.json", std::nullopt, true);
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().message.rfind("sg.json:3: not valid JSON", 0), 0U)
      << broken.error().message;
}

TEST(DatasetTest, FormatIsDetectedOrNamed) {
  EXPECT_EQ(DetectDatasetFormat("  \n[{}]"), DatasetFormat::kShareGpt);
  EXPECT_EQ(DetectDatasetFormat("{\"prompt\": \"x\"}\n"), DatasetFormat::kJsonl);
  EXPECT_FALSE(DetectDatasetFormat("prompt,output\n"));
  const auto d = ParseDataset("prompt\n", "x.txt", std::nullopt, false);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message.find("--dataset-format"), std::string::npos);
  // Named, a JSONL file that the detector would also take is read as JSONL.
  const auto named = ParseDataset("{\"prompt\": \"hi\"}\n", "x", DatasetFormat::kJsonl, false);
  ASSERT_TRUE(named);
  EXPECT_EQ(named->entries.size(), 1U);
  EXPECT_FALSE(ParseDataset("{\"prompt\": \"hi\", \"images\": [\"http://x/a.png\"]}", "x",
                            DatasetFormat::kJsonl, false));
}

TEST(DatasetTest, OrderIsFileOrSeededShuffle) {
  EXPECT_EQ(DatasetOrder(4, false, 1, 0), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(DatasetOrder(4, false, 1, 2), (std::vector<std::size_t>{0, 1}));
  const auto a = DatasetOrder(50, true, 7, 0);
  EXPECT_EQ(a, DatasetOrder(50, true, 7, 0));
  EXPECT_NE(a, DatasetOrder(50, true, 8, 0));
  EXPECT_EQ(std::set<std::size_t>(a.begin(), a.end()).size(), 50U);
  EXPECT_NE(a, DatasetOrder(50, false, 7, 0));
}

}  // namespace
}  // namespace sb::workload
