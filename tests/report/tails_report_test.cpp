// Tails per level in report.md, report.html and compare (issue 23 item 2), from the h2h_a/h2h_b
// fixtures, whose levels and lengths carry itl_ms/tpot_ms/e2e_ms tails (pct objects computed from
// each fixture's own request records when the tails were added).
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/compare.h"
#include "report/golden.h"
#include "report/html.h"
#include "report/markdown.h"
#include "support/text.h"

namespace sb::report {
namespace {

using nlohmann::json;
using testing::LoadData;

using ::sb::testing::Contains;

TEST(TailsReportTest, MarkdownHasATailsRowPerConcurrencyLevelAndLength) {
  const std::string md = RenderMarkdown(LoadData("h2h_a.json"));
  EXPECT_TRUE(Contains(md, "| Concurrency | TTFT | ITL | TPOT | E2E |")) << md;
  EXPECT_TRUE(Contains(md,
                       "| 8 | 118 / 124 / 125 | 17 / 17 / 17 | 17 / 17 / 17 | "
                       "4,417 / 4,515 / 4,515 |"));
  EXPECT_TRUE(Contains(md, "| Max tokens | TTFT | ITL | TPOT | E2E |"));
}

TEST(TailsReportTest, AnOldRunWithoutTailsKeepsItsReport) {
  json doc = LoadData("h2h_a.json");
  for (json& l : doc["perf"]["concurrency"]["levels"]) {
    l.erase("itl_ms");
  }
  for (json& l : doc["perf"]["max_tokens"]["lengths"]) {
    l.erase("itl_ms");
  }
  EXPECT_FALSE(Contains(RenderMarkdown(doc), "Latency tails per level"));
  EXPECT_FALSE(Contains(RenderHtml(doc), "data-tails="));
}

TEST(TailsReportTest, HtmlHasATailsTablePerSweep) {
  const std::string html = RenderHtml(LoadData("h2h_a.json"));
  EXPECT_TRUE(Contains(html, "data-tails=\"concurrency\""));
  EXPECT_TRUE(Contains(html, "data-tails=\"max-tokens\""));
  EXPECT_TRUE(Contains(html, "<td class=\"num\">118 / 124 / 125</td>"));
}

TEST(TailsReportTest, CompareHasTailRowsPerLevelWithQuantiles) {
  std::vector<CompareRun> runs(2);
  runs[0].results = LoadData("h2h_a.json");
  runs[1].results = LoadData("h2h_b.json");
  auto c = BuildComparison(runs, {});
  ASSERT_TRUE(c.has_value());
  const CompareSection* tails = nullptr;
  for (const CompareSection& s : c->sections) {
    if (s.id == "tails") {
      tails = &s;
    }
  }
  ASSERT_NE(tails, nullptr);
  bool p99 = false;
  for (const CompareRow& r : tails->rows) {
    if (r.key == "tails.c8.ttft_ms.p99") {
      p99 = true;
      EXPECT_DOUBLE_EQ(r.quantile, 0.99);
      ASSERT_EQ(r.cells.size(), 2u);
      EXPECT_EQ(r.cells[0].text, "125 ms");
      EXPECT_EQ(r.better, Better::kLower);
    }
  }
  EXPECT_TRUE(p99);
}

}  // namespace
}  // namespace sb::report
