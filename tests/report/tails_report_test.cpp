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

// A sessions run's level in compare: its tails, with intervals from all its requests.
json SessionsRun(double ttft_scale) {
  json requests = json::array();
  std::vector<double> ttft;
  for (int i = 1; i <= 20; ++i) {
    ttft.push_back(ttft_scale * (40 + i));
    requests.push_back({{"status", "ok"},
                        {"ttft_ms", ttft.back()},
                        {"tpot_ms", 5.0 + i * 0.01},
                        {"e2e_ms", 600.0 + i}});
  }
  const auto pct = [](double p50, double p90, double p99) {
    return json{{"p50", p50}, {"p90", p90}, {"p99", p99}, {"n", 20}};
  };
  json level = {{"concurrency", 4},
                {"requests", 20},
                {"ttft_ms", pct(ttft[9], ttft[17], ttft[19])},
                {"itl_ms", pct(5, 5.5, 6)},
                {"tpot_ms", pct(5.1, 5.2, 5.2)},
                {"e2e_ms", pct(610, 618, 620)}};
  return {{"schema", "servebench.results/1"},
          {"status", "complete"},
          {"target", {{"model", "m"}}},
          {"perf", {{"sessions", {{"levels", json::array({level})}, {"requests", requests}}}}}};
}

TEST(TailsReportTest, CompareHasTailRowsForASessionsLevel) {
  std::vector<CompareRun> runs(2);
  runs[0].results = SessionsRun(1.0);
  runs[1].results = SessionsRun(2.0);
  auto c = BuildComparison(runs, {"A", "B"});
  ASSERT_TRUE(c.has_value());
  int rows = 0;
  for (const CompareSection& s : c->sections) {
    for (const CompareRow& r : s.rows) {
      if (!r.key.starts_with("tails.sessions_c4.")) {
        continue;
      }
      ++rows;
      if (r.key == "tails.sessions_c4.ttft_ms.p50") {
        EXPECT_EQ(r.metric, "TTFT p50, sessions concurrency 4");
        ASSERT_EQ(r.cells.size(), 2u);
        EXPECT_EQ(r.cells[0].text, "50 ms");
        EXPECT_EQ(r.cells[1].text, "100 ms");
        // The interval comes from the 20 requests: A is twice as fast, outside the noise.
        EXPECT_TRUE(r.judgement.text.starts_with("A 2.00× faster (95% CI")) << r.judgement.text;
      }
    }
  }
  EXPECT_EQ(rows, 12);  // TTFT, TPOT, E2E, ITL at p50, p90, p99
}

}  // namespace
}  // namespace sb::report
