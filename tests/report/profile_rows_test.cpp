// A profile drawn from its rows alone (report/profile_rows.h): the table, chart and numbers
// come from the entry's metrics, whatever the profile is. The spec here is a test's own, so
// the writers are checked apart from any real profile.
#include "report/profile_rows.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/text.h"

namespace sb::report {
namespace {

using nlohmann::json;
using ::sb::testing::Contains;
using ::sb::testing::Count;

constexpr MetricSpec kMetrics[] = {
    {"cold_ms", "Cold", "ms", -1},
    {"warm_ms", "Warm", "ms", -1},
    {"ratio", "Ratio", "x", +1},
    {"share", "Share", "%", 0},
};

constexpr ProfileSpec kSpec = {ProfileId::kDecode,
                               "demo-cache",
                               "demo_cache",
                               "points",
                               "prefix_tokens",
                               "tokens",
                               false,
                               false,
                               "cold and warm time to first token",
                               "",
                               {},
                               kMetrics,
                               "Demo cache"};

json Section() {
  return json::parse(R"J({"points": [
    {"prefix_tokens": 1000, "cold_ms": {"n": 3, "median": 120.4, "values": [110, 120.4, 130]},
     "warm_ms": {"n": 3, "median": 20.0, "values": [19, 20, 21]}, "ratio": 6.02, "share": 0.96,
     "errors": 0},
    {"prefix_tokens": 4000, "cold_ms": {"n": 0}, "warm_ms": null, "ratio": null,
     "share": 0.5, "errors": 2},
    {"prefix_tokens": 100000, "skipped": "over the server's max model length (8192 tokens)",
     "errors": 0}
  ]})J");
}

TEST(ProfileRows, MetricValuesAreMediansOrNumbersAndNothingIsMadeUp) {
  const json rows = Section()["points"];
  EXPECT_EQ(MetricValue(rows[0], kMetrics[0]), 120.4);
  EXPECT_EQ(MetricValue(rows[0], kMetrics[2]), 6.02);
  EXPECT_EQ(MetricValue(rows[1], kMetrics[0]), std::nullopt);  // {"n": 0}: no median
  EXPECT_EQ(MetricValue(rows[1], kMetrics[1]), std::nullopt);  // null
  EXPECT_EQ(MetricValue(rows[2], kMetrics[2]), std::nullopt);  // absent
  EXPECT_EQ(MetricSamples(rows[0], kMetrics[1]), (std::vector<double>{19, 20, 21}));
  EXPECT_TRUE(MetricSamples(rows[0], kMetrics[2]).empty());
  EXPECT_EQ(FormatMetric(41.2, "ms"), "41");
  EXPECT_EQ(FormatMetric(6.02, "x"), "6.0×");
  EXPECT_EQ(FormatMetric(0.83, "x"), "0.83×");
  EXPECT_EQ(FormatMetric(4096, "tokens"), "4,096");
  EXPECT_EQ(FormatMetric(0.909, "%"), "90.9%");
  EXPECT_EQ(FormatMetric(std::nullopt, "ms"), "—");
  EXPECT_EQ(DimHeader(kSpec), "Prefix tokens");
  EXPECT_EQ(Capitalized("cold and warm"), "Cold and warm");
  EXPECT_EQ(Capitalized(""), "");  // an empty summary is no crash
  EXPECT_EQ(RowPlace(rows[2], kSpec), "100,000");
  EXPECT_TRUE(DrawnFromRows(kSpec));
}

TEST(ProfileRows, MarkdownTableHasTheDimEveryMetricErrorsAndSkippedRows) {
  std::string out;
  md::RenderRows(kSpec, Section(), out);
  EXPECT_TRUE(Contains(out, "### Demo cache\n\nCold and warm time to first token. Medians;"))
      << out;
  EXPECT_TRUE(Contains(out, "| Prefix tokens | Cold (ms) | Warm (ms) | Ratio | Share | Errors |"))
      << out;
  EXPECT_TRUE(Contains(out, "| 1,000 | 120 | 20 | 6.0× | 96% | 0 |")) << out;
  EXPECT_TRUE(Contains(out, "| 4,000 | — | — | — | 50% | 2 |")) << out;
  EXPECT_TRUE(Contains(out,
                       "- 100,000: not sent, over the server's max model length (8192 "
                       "tokens).\n"))
      << out;
  // No errors anywhere: no Errors column.
  json clean = Section();
  clean["points"][1]["errors"] = 0;
  std::string quiet;
  md::RenderRows(kSpec, clean, quiet);
  EXPECT_FALSE(Contains(quiet, "Errors")) << quiet;
  std::string none;
  md::RenderRows(kSpec, json::object(), none);
  EXPECT_EQ(none, "");
}

TEST(ProfileRows, HtmlChartDrawsTheMetricsOfTheFirstUnitAgainstTheDim) {
  int charts = 0;
  const std::string html = html::RowsSection(kSpec, Section(), charts);
  EXPECT_EQ(charts, 1);
  EXPECT_TRUE(Contains(html, "<h3>Demo cache</h3>")) << html;
  EXPECT_TRUE(Contains(html, "data-chart=\"demo-cache\"")) << html;
  // Cold and Warm (ms) are drawn; Ratio and Share (other units) are not.
  EXPECT_TRUE(Contains(html, ">Cold<") || Contains(html, "Cold")) << html;
  EXPECT_FALSE(Contains(html, "Ratio")) << html;
  EXPECT_EQ(Count(html, "data-y=\"120.4\""), 1) << html;
  EXPECT_EQ(Count(html, "data-y=\"20\""), 1) << html;
  // Nothing to draw: no section, no chart counted.
  int none = 0;
  EXPECT_EQ(html::RowsSection(kSpec, json::parse(R"({"points": [{"prefix_tokens": 1}]})"), none),
            "");
  EXPECT_EQ(none, 0);
  // Rows placed by name: bars.
  constexpr ProfileSpec kNamed = {
      ProfileId::kDecode, "named", "named", "points", "name", "prompt", false, false,
      "by name",          "",      {},      kMetrics, "Named"};
  const std::string bars = html::RowsSection(
      kNamed,
      json::parse(
          R"({"points": [{"name": "short", "cold_ms": 5}, {"name": "long", "cold_ms": 9}]})"),
      none);
  EXPECT_EQ(none, 1);
  EXPECT_TRUE(Contains(bars, "data-x=\"short\"")) << bars;
  EXPECT_TRUE(Contains(bars, "data-y=\"9\"")) << bars;
}

}  // namespace
}  // namespace sb::report
