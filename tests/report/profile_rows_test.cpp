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
      "by name",          {},      kMetrics, "Named"};
  const std::string bars = html::RowsSection(
      kNamed,
      json::parse(
          R"({"points": [{"name": "short", "cold_ms": 5}, {"name": "long", "cold_ms": 9}]})"),
      none);
  EXPECT_EQ(none, 1);
  EXPECT_TRUE(Contains(bars, "data-x=\"short\"")) << bars;
  EXPECT_TRUE(Contains(bars, "data-y=\"9\"")) << bars;
}

TEST(ProfileRows, PlacesAreQuantitiesWithTheirUnitOrNamesAfterIt) {
  // A quantity: the unit follows; its key is the whole number.
  auto place = PlaceOf(json{{"prefix_tokens", 1024}}, kSpec);
  ASSERT_TRUE(place.has_value());
  EXPECT_EQ(place->phrase, "1,024 tokens");
  EXPECT_EQ(place->key, "1024");
  EXPECT_EQ(PlaceOf(json{{"prefix_tokens", 2.5}}, kSpec)->key, "2.5");
  // A place that names its own unit (turn, class): the unit leads; a name's key is a slug.
  const ProfileSpec& sessions = Profile(ProfileId::kSessions);
  EXPECT_EQ(PlaceOf(json{{"turn", 3}}, sessions)->phrase, "turn 3");
  const ProfileSpec& replay = Profile(ProfileId::kReplay);
  place = PlaceOf(json{{"class", "trace:mooncake v2"}}, replay);
  ASSERT_TRUE(place.has_value());
  EXPECT_EQ(place->phrase, "class trace:mooncake v2");
  EXPECT_EQ(place->key, "trace_mooncake_v2");
  EXPECT_EQ(PlaceOf(json{{"class", "shared-prefix_2"}}, replay)->key, "shared-prefix_2");
  // No place, or one that is neither a number nor a name.
  EXPECT_FALSE(PlaceOf(json{{"other", 1}}, kSpec).has_value());
  EXPECT_FALSE(PlaceOf(json{{"prefix_tokens", nullptr}}, kSpec).has_value());
  EXPECT_FALSE(PlaceOf(json{{"prefix_tokens", json::array()}}, kSpec).has_value());
}

TEST(ProfileRows, ComparedCellsCarryTheirUnit) {
  EXPECT_EQ(FormatMetricWithUnit(41.0, "ms"), FormatMetric(41.0, "ms") + " ms");
  EXPECT_EQ(FormatMetricWithUnit(198.74, "tok/s"), "198.7 tok/s");
  EXPECT_EQ(FormatMetricWithUnit(4096, "tokens"), "4,096 tokens");
  EXPECT_EQ(FormatMetricWithUnit(0.909, "%"), FormatMetric(0.909, "%"));
  EXPECT_EQ(FormatMetricWithUnit(std::nullopt, "ms"), FormatMetric(std::nullopt, "ms"));
}

TEST(ProfileRows, ProfilesWithSectionsOfTheirOwnAreComparedButNotDrawnFromRows) {
  const ProfileSpec& context = Profile(ProfileId::kContext);
  EXPECT_TRUE(ComparedFromRows(context));
  EXPECT_FALSE(DrawnFromRows(context));
  EXPECT_TRUE(DrawnFromRows(Profile(ProfileId::kPrefixCache)));
  EXPECT_FALSE(ComparedFromRows(Profile(ProfileId::kConcurrency)));  // its rows are glance's
}

}  // namespace
}  // namespace sb::report
