// A report.md table declared as columns (report/columns.h): each column's path, statistics,
// format and Show rule, the client-bound mark, and the list of rows not sent. The columns and
// the profile here are the test's own, so the renderer is checked apart from any real table.
#include "report/columns.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/text.h"

namespace sb::report {
namespace {

using nlohmann::json;
using ::sb::testing::Contains;

constexpr ProfileSpec kSpec = {ProfileId::kDecode, "demo", "demo", "points",      "level",
                               "streams",          false,  false,  "a demo sweep"};

constexpr ColumnSpec kColumns[] = {
    {.header = "Level", .format = CellFormat::kPlace},
    {"Tok/s", {"tok_s"}, CellFormat::kFixed1},
    {"TTFT p50 / p99 (ms)", {"lat", "ttft_ms"}, CellFormat::kMs, {"p50", "p99"}},
    {"Errors", {"errors"}, CellFormat::kErrors, {}, Show::kAnyNonZero},
    {"Cached", {"cached_ms"}, CellFormat::kMs, {}, Show::kAnyPresent},
    {.header = "Note",
     .align = Align::kLeft,
     .cell =
         [](const json& row, std::size_t i) {
           return std::to_string(i) + ":" + row.value("note", std::string("none"));
         }},
};

std::vector<const json*> Pointers(const json& rows) {
  std::vector<const json*> out;
  for (const json& r : rows) {
    out.push_back(&r);
  }
  return out;
}

std::string Render(const json& rows) {
  return ColumnsTable(kSpec, Pointers(rows), kColumns).Render();
}

TEST(ColumnsTest, EachColumnReadsItsPathAndStatisticsInItsFormat) {
  const json rows = json::array({
      {{"level", 1},
       {"tok_s", 198.74},
       {"lat", {{"ttft_ms", {{"p50", 41.2}, {"p99", 5.04}}}}},
       {"errors", 0},
       {"note", "ok"}},
      {{"level", 4096}, {"tok_s", nullptr}, {"errors", 2}},
  });
  const std::string t = Render(rows);
  EXPECT_EQ(t,
            "| Level | Tok/s | TTFT p50 / p99 (ms) | Errors | Note |\n"
            "|---:|---:|---:|---:|---|\n"
            "| 1 | 198.7 | 41 / 5.0 | 0 | 0:ok |\n"
            "| 4,096 | — | — / — | **2** | 1:none |\n");
}

TEST(ColumnsTest, OptionalColumnsAppearOnlyWhenARowNeedsThem) {
  const json clean = json::array({{{"level", 1}, {"errors", 0}}, {{"level", 2}}});
  const std::string without = Render(clean);
  EXPECT_FALSE(Contains(without, "Errors"));
  EXPECT_FALSE(Contains(without, "Cached"));

  const json cached = json::array({{{"level", 1}}, {{"level", 2}, {"cached_ms", 7.0}}});
  const std::string with = Render(cached);
  EXPECT_TRUE(Contains(with, "| Level | Tok/s | TTFT p50 / p99 (ms) | Cached | Note |\n"));
  EXPECT_TRUE(Contains(with, "| 1 | — | — / — | — | 0:none |\n"));
  EXPECT_TRUE(Contains(with, "| 2 | — | — / — | 7.0 | 1:none |\n"));
}

TEST(ColumnsTest, AClientBoundRowIsMarkedAndExplained) {
  const json rows = json::array({
      {{"level", 1}, {"self_check", {{"client_bound", false}}}},
      {{"level", 8}, {"self_check", {{"client_bound", true}}}},
  });
  const std::string t = Render(rows);
  EXPECT_TRUE(Contains(t, "| 1 | —")) << t;
  EXPECT_TRUE(Contains(t, "| 8 (client-bound) | —")) << t;
  const auto ptrs = Pointers(rows);
  EXPECT_TRUE(Contains(ClientBoundNote(ptrs), "**client-bound**: in the rows marked so"));
  const json fine = json::array({rows[0]});
  EXPECT_EQ(ClientBoundNote(Pointers(fine)), "");
  EXPECT_TRUE(ClientBound(rows[1]));
  EXPECT_FALSE(ClientBound(rows[0]));
  EXPECT_FALSE(ClientBound(json::object()));
}

TEST(ColumnsTest, RowsNotSentAreListedByTheirPlace) {
  const json rows = json::array({
      {{"level", 1}},
      {{"level", 65536}, {"skipped", "over the server's max model length (4096 tokens)"}},
      {{"level", "<x>"}, {"skipped", "too long"}},
  });
  EXPECT_EQ(SkippedList(kSpec, Pointers(rows)),
            "- 65,536: not sent, over the server's max model length (4096 tokens).\n"
            "- \\<x>: not sent, too long.\n\n");
  EXPECT_EQ(SkippedList(kSpec, Pointers(json::array({rows[0]}))), "");
}

TEST(ColumnsTest, APlaceIsEscapedForACell) {
  const json rows = json::array({{{"level", "a|b"}}});
  const std::string t = Render(rows);
  EXPECT_TRUE(Contains(t, "| a\\|b | —")) << t;
}

// A numeric sweep's level is a count; a name where a number belongs is not measured data.
TEST(ColumnsTest, ALevelIsACountAndNothingElse) {
  constexpr ColumnSpec kLevelOnly[] = {{.header = "Level", .format = CellFormat::kLevel}};
  const json rows = json::array({{{"level", 4096}}, {{"level", "four"}}, json::object()});
  EXPECT_EQ(ColumnsTable(kSpec, Pointers(rows), kLevelOnly).Render(),
            "| Level |\n|---:|\n| 4,096 |\n| — |\n| — |\n");
}

}  // namespace
}  // namespace sb::report
