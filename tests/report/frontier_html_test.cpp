// The frontier chart of report.html and compare --format html (issue 23 item 1), from fixtures:
// h2h_a/h2h_b (runs written before the frontier arrays: points derived from their levels) and a
// stored frontier with --gpus.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/compare.h"
#include "report/golden.h"
#include "report/html.h"
#include "support/text.h"

namespace sb::report {
namespace {

using nlohmann::json;
using testing::LoadData;

using ::sb::testing::Count;

std::string FigureOf(const std::string& html, const std::string& id) {
  const auto start = html.find("data-figure=\"" + id + "\"");
  if (start == std::string::npos) {
    return "";
  }
  return html.substr(start, html.find("</figure>", start) - start);
}

TEST(FrontierHtmlTest, ReportHtmlDrawsAPointPerLevelLabelledAndTheParetoLine) {
  const std::string fig = FigureOf(RenderHtml(LoadData("h2h_a.json")), "frontier");
  ASSERT_FALSE(fig.empty());
  EXPECT_NE(fig.find("Throughput vs interactivity"), std::string::npos);
  EXPECT_NE(fig.find(">Per user (tok/s)</text>"), std::string::npos);
  EXPECT_NE(fig.find(">Total output (tok/s)</text>"), std::string::npos);
  // h2h_a: c1 92.8 tok/s per user, 90.6 total ... c8 59.1, 453.6: each level a labelled mark.
  EXPECT_EQ(Count(fig, "<circle class=\"mark\""), 4);
  for (const char* level : {">c1</text>", ">c2</text>", ">c4</text>", ">c8</text>"}) {
    EXPECT_NE(fig.find(level), std::string::npos) << level;
  }
  EXPECT_NE(fig.find("data-series=\"concurrency\" data-x=\"92.8\" data-y=\"90.6\""),
            std::string::npos)
      << fig;
  // Per-user speed falls and total rises with each level: all four are Pareto-optimal.
  EXPECT_EQ(Count(fig, "data-pareto=\"true\""), 4);
  EXPECT_EQ(Count(fig, "<polyline class=\"line\""), 1);
}

TEST(FrontierHtmlTest, StoredPointsPerGpuAreDrawnPerGpuAndOnlyParetoPointsAreJoined) {
  json doc = LoadData("perf_sim.json");
  doc["perf"]["concurrency"]["gpus"] = 4;
  doc["perf"]["concurrency"]["frontier"] = {{{"level", 1},
                                             {"label", "c1"},
                                             {"tok_s_per_user", 200.0},
                                             {"tok_s_per_user_tpot", 190.0},
                                             {"total_tok_s", 200.0},
                                             {"total_tok_s_per_gpu", 50.0},
                                             {"pareto", true}},
                                            {{"level", 2},
                                             {"label", "c2"},
                                             {"tok_s_per_user", 150.0},
                                             {"tok_s_per_user_tpot", 140.0},
                                             {"total_tok_s", 180.0},
                                             {"total_tok_s_per_gpu", 45.0},
                                             {"pareto", false}},
                                            {{"level", 4},
                                             {"label", "c4"},
                                             {"tok_s_per_user", 120.0},
                                             {"tok_s_per_user_tpot", 110.0},
                                             {"total_tok_s", 480.0},
                                             {"total_tok_s_per_gpu", 120.0},
                                             {"pareto", true}}};
  const std::string fig = FigureOf(RenderHtml(doc), "frontier");
  ASSERT_FALSE(fig.empty());
  EXPECT_NE(fig.find("Throughput per GPU vs interactivity"), std::string::npos);
  EXPECT_NE(fig.find("data-x=\"120\" data-y=\"120\""), std::string::npos) << fig;
  EXPECT_EQ(Count(fig, "data-pareto=\"false\""), 1);
  // The Pareto line has two vertices (c4, c1), not three.
  const auto line = fig.find("<polyline class=\"line\" points=\"");
  ASSERT_NE(line, std::string::npos);
  const std::string pts = fig.substr(line, fig.find("\"/>", line) - line);
  EXPECT_EQ(Count(pts, ","), 2) << pts;
}

TEST(FrontierHtmlTest, CompareHtmlOverlaysBothRunsFrontiersInOneChart) {
  auto page = Compare(std::vector<json>{LoadData("h2h_a.json"), LoadData("h2h_b.json")}, {"A", "B"},
                      OutputFormat::kHtml);
  ASSERT_TRUE(page.has_value());
  const std::string fig = FigureOf(*page, "compare-frontier");
  ASSERT_FALSE(fig.empty());
  EXPECT_EQ(Count(fig, "<circle class=\"mark\" cx"), 8);
  EXPECT_EQ(Count(fig, "data-series=\"A · concurrency\" data-x"), 4);
  EXPECT_EQ(Count(fig, "data-series=\"B · concurrency\" data-x"), 4);
  EXPECT_NE(fig.find("data-series=\"B · concurrency (Pareto)\""), std::string::npos);
  // One run alone has nothing to overlay.
  json no_sweep = LoadData("h2h_b.json");
  no_sweep["perf"].erase("concurrency");
  auto single =
      Compare(std::vector<json>{LoadData("h2h_a.json"), no_sweep}, {"A", "B"}, OutputFormat::kHtml);
  ASSERT_TRUE(single.has_value());
  EXPECT_TRUE(FigureOf(*single, "compare-frontier").empty());
}

}  // namespace
}  // namespace sb::report
