#include "chart/chart.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace sb::chart {
namespace {

// The attributes of every element named `tag` in `svg`, in order.
std::vector<std::map<std::string, std::string>> Elements(const std::string& svg,
                                                         const std::string& tag) {
  std::vector<std::map<std::string, std::string>> out;
  const std::regex element("<" + tag + R"(\s([^>]*)>)");
  const std::regex attr(R"re(([\w:-]+)="([^"]*)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), element);
       it != std::sregex_iterator(); ++it) {
    std::map<std::string, std::string> attrs;
    const std::string body = (*it)[1];
    for (auto a = std::sregex_iterator(body.begin(), body.end(), attr); a != std::sregex_iterator();
         ++a) {
      attrs[(*a)[1]] = (*a)[2];
    }
    out.push_back(attrs);
  }
  return out;
}

double D(const std::string& s) {
  return std::strtod(s.c_str(), nullptr);
}

XYChart Simple() {
  XYChart c;
  c.id = "tput";
  c.title = "Throughput vs concurrency";
  c.x = Axis{.label = "Concurrency", .unit = "streams"};
  c.y = Axis{.label = "Throughput", .unit = "tok/s"};
  c.series.push_back(Series{.name = "combined", .points = {{1, 0, ""}, {2, 50, ""}, {4, 100, ""}}});
  return c;
}

TEST(XYChartTest, APointsPixelPositionFollowsItsValue) {
  const std::string svg = RenderXY(Simple());
  const auto dots = Elements(svg, "circle");
  ASSERT_EQ(dots.size(), 3u);
  // Plot area of a 640x320 chart with one legend row: x 72..616, y 48..272; the x domain is
  // 0..4 (ticks 0,1,2,3,4), the y domain 0..100 (ticks every 20).
  EXPECT_DOUBLE_EQ(D(dots[1].at("cx")), 72 + 544 * 0.5);
  EXPECT_DOUBLE_EQ(D(dots[1].at("cy")), 272 - 224 * 0.5);
  EXPECT_DOUBLE_EQ(D(dots[0].at("cx")), 72 + 544 * 0.25);
  EXPECT_DOUBLE_EQ(D(dots[0].at("cy")), 272);
  EXPECT_DOUBLE_EQ(D(dots[2].at("cx")), 616);
  EXPECT_DOUBLE_EQ(D(dots[2].at("cy")), 48);
}

TEST(XYChartTest, EveryMarkCarriesItsExactValueAndAHoverTitle) {
  XYChart c = Simple();
  c.series[0].points = {{1, 198.7, ""}, {8, 1119.84, "8 streams: 1,119.8 tok/s"}};
  const std::string svg = RenderXY(c);
  const auto dots = Elements(svg, "circle");
  ASSERT_EQ(dots.size(), 2u);
  EXPECT_EQ(dots[0].at("data-series"), "combined");
  EXPECT_EQ(dots[0].at("data-x"), "1");
  EXPECT_EQ(dots[0].at("data-y"), "198.7");
  EXPECT_EQ(dots[1].at("data-y"), "1119.84");
  EXPECT_NE(svg.find("<title>combined: 1.0 streams, 198.7 tok/s</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>8 streams: 1,119.8 tok/s</title>"), std::string::npos);
  // Title, axis titles with units, the legend.
  EXPECT_NE(svg.find(">Throughput vs concurrency</text>"), std::string::npos);
  EXPECT_NE(svg.find(">Concurrency (streams)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">Throughput (tok/s)</text>"), std::string::npos);
  EXPECT_NE(svg.find("class=\"legend-item\" data-series=\"combined\""), std::string::npos);
}

TEST(XYChartTest, APointsLabelIsDrawnBesideItsMarkAndEscaped) {
  XYChart c = Simple();
  c.series[0].points = {{1, 10, "", "c1"}, {2, 50, ""}, {4, 100, "", "<c4>"}};
  const std::string svg = RenderXY(c);
  const auto dots = Elements(svg, "circle");
  const auto labels = Elements(svg, "text class=\"point-label\"");
  ASSERT_EQ(labels.size(), 2u);  // the unlabelled point has none
  EXPECT_GT(D(labels[0].at("x")), D(dots[0].at("cx")));
  EXPECT_LT(D(labels[0].at("y")), D(dots[0].at("cy")));
  EXPECT_EQ(labels[1].at("data-series"), "combined");
  EXPECT_NE(svg.find(">c1</text>"), std::string::npos);
  EXPECT_NE(svg.find(">&lt;c4&gt;</text>"), std::string::npos);
}

TEST(XYChartTest, LogXPlacesDecadesEvenly) {
  XYChart c = Simple();
  c.x.log = true;
  c.series[0].points = {{100, 1, ""}, {1000, 2, ""}, {10000, 3, ""}};
  const auto dots = Elements(RenderXY(c), "circle");
  ASSERT_EQ(dots.size(), 3u);
  const double a = D(dots[0].at("cx")), b = D(dots[1].at("cx")), d = D(dots[2].at("cx"));
  EXPECT_NEAR(b - a, d - b, 0.02);  // two decimals of rounding
  EXPECT_GT(b - a, 100);
}

TEST(XYChartTest, ValuesALogAxisCannotShowAreLeftOut) {
  XYChart c = Simple();
  c.x.log = true;
  c.series[0].points = {{0, 1, ""}, {100, 2, ""}, {1000, 3, ""}};
  const auto dots = Elements(RenderXY(c), "circle");
  ASSERT_EQ(dots.size(), 2u);
  EXPECT_EQ(dots[0].at("data-x"), "100");
}

TEST(XYChartTest, SeriesNamesAndTitlesAreEscaped) {
  XYChart c = Simple();
  c.title = "<script>x</script>";
  c.series[0].name = "a\"b<c>&";
  const std::string svg = RenderXY(c);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;x&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("data-series=\"a&quot;b&lt;c&gt;&amp;\""), std::string::npos);
}

TEST(XYChartTest, OutputIsDeterministic) {
  EXPECT_EQ(RenderXY(Simple()), RenderXY(Simple()));
}

TEST(XYChartTest, DotPlotHasNoLineAndAMarkedMedian) {
  XYChart c;
  c.id = "decode";
  c.title = "Decode";
  c.x = Axis{.label = "Run", .zero = false, .integer = true};
  c.y = Axis{.label = "Decode", .unit = "tok/s"};
  c.series.push_back(Series{
      .name = "run", .points = {{1, 198.1, ""}, {2, 198.7, ""}, {3, 199.0, ""}}, .line = false});
  c.refs.push_back(RefLine{.name = "median", .y = 198.7, .label = ""});
  const std::string svg = RenderXY(c);
  EXPECT_EQ(svg.find("<polyline"), std::string::npos);
  EXPECT_EQ(Elements(svg, "circle").size(), 3u);
  const auto refs = Elements(svg, "g class=\"ref\"");
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0].at("data-y"), "198.7");
  EXPECT_NE(svg.find(">median 198.7 tok/s</text>"), std::string::npos);
  // The median line sits at the median dot's height.
  const auto lines = Elements(svg, "line");
  bool found = false;
  const double cy = D(Elements(svg, "circle")[1].at("cy"));
  for (const auto& l : lines) {
    if (l.count("y1") && l.count("x1") && D(l.at("y1")) == cy && D(l.at("x1")) == 72) {
      found = true;
    }
  }
  EXPECT_TRUE(found);
  // Integer x axis: ticks 1, 2, 3 only (no 1.5).
  EXPECT_EQ(svg.find(">1.5<"), std::string::npos);
}

// Issue 24 item 12: the median's label never covers a dot. Runs at the median itself and one
// just above it sit where the label used to go (the right end, just above the line); the
// label's box (the generous box of RefLabelBox-sized text: 7.2 px a character, 11 px above the
// baseline, 3.5 below) must clear every circle (radius 4 and its outline).
TEST(XYChartTest, TheMedianLabelCoversNoDot) {
  XYChart c;
  c.id = "decode";
  c.title = "Decode";
  c.x = Axis{.label = "Run", .zero = false, .integer = true};
  c.y = Axis{.label = "Decode", .unit = "tok/s"};
  c.series.push_back(Series{.name = "run",
                            .points = {{1, 100.2, ""},
                                       {2, 100.6, ""},
                                       {3, 100.4, ""},
                                       {4, 101.5, ""},
                                       {5, 100.4, ""},
                                       {6, 102.0, ""}},
                            .line = false});
  c.refs.push_back(RefLine{.name = "median", .y = 100.4, .label = ""});
  const std::string svg = RenderXY(c);
  const std::regex text(R"re(<g class="ref"[^>]*>.*<text x="([^"]+)" y="([^"]+)" )re"
                        R"re(text-anchor="end">([^<]*)</text>)re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, text)) << svg;
  const std::string label = m[3];
  EXPECT_EQ(label, "median 100.4 tok/s");
  const double right = D(m[1]) + 1, left = D(m[1]) - 7.2 * label.size() - 2;
  const double top = D(m[2]) - 11, bottom = D(m[2]) + 3.5;
  const auto circles = Elements(svg, "circle");
  ASSERT_EQ(circles.size(), 6u);
  for (const auto& circle : circles) {
    const double cx = D(circle.at("cx")), cy = D(circle.at("cy")), r = D(circle.at("r")) + 0.5;
    const bool overlap = cx + r > left && cx - r < right && cy + r > top && cy - r < bottom;
    EXPECT_FALSE(overlap) << "label box [" << left << ", " << top << ", " << right << ", " << bottom
                          << "] covers the dot at " << cx << "," << cy;
  }
  // Nothing under the usual place: the label stays at the right end, just above the line.
  c.series[0].points = {{1, 100.4, ""}};
  const std::string alone = RenderXY(c);
  ASSERT_TRUE(std::regex_search(alone, m, text));
  EXPECT_EQ(D(m[1]), 616);  // the plot area's right edge (640 - 24)
}

// Issue 24 item 11: a time axis ends at the run's end (Axis::end), not at the next round time.
TEST(XYChartTest, ATimeAxisEndsAtTheRunsEnd) {
  XYChart c = TimeSeriesChart(
      "tok", "Output", Axis{.label = "Output", .unit = "tok/s"},
      {Series{.name = "tok/s", .points = {{0, 1, ""}, {5, 3, ""}, {10.3, 2, ""}}, .dots = true}});
  std::string svg = RenderXY(c);
  EXPECT_NE(svg.find(">15</text>"), std::string::npos);  // the nice tick past the end, before
  c.x.end = 10.3;
  svg = RenderXY(c);
  EXPECT_EQ(svg.find(">15</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">10</text>"), std::string::npos);
  // The last sample is at the right edge of the plot area.
  const auto circles = Elements(svg, "circle");
  ASSERT_EQ(circles.size(), 3u);
  EXPECT_EQ(D(circles[2].at("cx")), 616);
  EXPECT_EQ(D(circles[0].at("cx")), 72);
}

TEST(XYChartTest, AnEmptyChartSaysSo) {
  XYChart c = Simple();
  c.series[0].points.clear();
  const std::string svg = RenderXY(c);
  EXPECT_NE(svg.find(">no data</text>"), std::string::npos);
  EXPECT_TRUE(Elements(svg, "circle").empty());
}

TEST(XYChartTest, TimeSeriesHasATimeAxisInSeconds) {
  const XYChart c = TimeSeriesChart(
      "gpu", "GPU memory", Axis{.label = "Memory", .unit = "GiB"},
      {Series{
          .name = "used", .points = {{0, 10, ""}, {0.5, 12, ""}, {1.0, 11, ""}}, .line = false}});
  const std::string svg = RenderXY(c);
  EXPECT_NE(svg.find(">Time (s)</text>"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);  // always a line
  EXPECT_EQ(Elements(svg, "circle").size(), 3u);
}

// A NaN y is a missing sample: the line stops there and starts again after it, with no mark
// and no vertex for the gap (a joined line would draw values nobody measured).
TEST(XYChartTest, ANaNBreaksTheLineIntoSegments) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const XYChart c = TimeSeriesChart(
      "kv", "KV", Axis{.label = "KV", .unit = "%"},
      {Series{.name = "kv",
              .points = {{0, 1, ""}, {1, 2, ""}, {2, nan, ""}, {3, 4, ""}, {4, 5, ""}, {5, 6, ""}},
              .dots = false}});
  const std::string svg = RenderXY(c);
  const auto lines = Elements(svg, "polyline");
  ASSERT_EQ(lines.size(), 2u);
  auto vertices = [](const std::string& pts) { return std::count(pts.begin(), pts.end(), ','); };
  EXPECT_EQ(vertices(lines[0].at("points")), 2);
  EXPECT_EQ(vertices(lines[1].at("points")), 3);
  EXPECT_TRUE(Elements(svg, "circle").empty());
  EXPECT_EQ(svg.find("nan"), std::string::npos);
}

BarChart Bars(bool stacked) {
  BarChart c;
  c.id = "bars";
  c.title = "Bars";
  c.x_label = "Category";
  c.categories = {"image", "text"};
  c.y = Axis{.label = "Tests", .decimals = 0};
  c.series.push_back(BarSeries{.name = "PASS", .values = {3, 10}, .css = "st-pass"});
  c.series.push_back(BarSeries{.name = "FAIL", .values = {1, std::nullopt}, .css = "st-fail"});
  c.stacked = stacked;
  return c;
}

TEST(BarChartTest, GroupedBarsStandSideBySide) {
  const std::string svg = RenderBars(Bars(false));
  const auto rects = Elements(svg, "rect class=\"mark\"");
  ASSERT_EQ(rects.size(), 3u);  // the missing value has no bar
  // The y domain is 0..10 with ticks every 2: plot y 48..272, so 10 is 224 px tall.
  EXPECT_DOUBLE_EQ(D(rects[1].at("height")), 224);  // PASS, text
  EXPECT_DOUBLE_EQ(D(rects[1].at("y")), 48);
  EXPECT_NEAR(D(rects[0].at("height")), 224 * 0.3, 0.01);  // PASS, image
  // PASS and FAIL of "image" are side by side, same width, FAIL to the right.
  EXPECT_EQ(rects[0].at("data-x"), "image");
  EXPECT_EQ(rects[2].at("data-x"), "image");
  EXPECT_EQ(rects[2].at("data-series"), "FAIL");
  EXPECT_GT(D(rects[2].at("x")), D(rects[0].at("x")));
  EXPECT_EQ(rects[0].at("width"), rects[2].at("width"));
  EXPECT_NE(svg.find("<title>FAIL: image, 1</title>"), std::string::npos) << svg;
}

TEST(BarChartTest, StackedSegmentsSitOnEachOtherAndKeepTheirOwnValue) {
  const std::string svg = RenderBars(Bars(true));
  const auto rects = Elements(svg, "rect class=\"mark\"");
  ASSERT_EQ(rects.size(), 3u);
  // image: PASS 3 at the bottom, FAIL 1 on top of it, same x.
  EXPECT_EQ(rects[0].at("x"), rects[2].at("x"));
  EXPECT_NEAR(D(rects[2].at("y")) + D(rects[2].at("height")), D(rects[0].at("y")), 0.02);
  EXPECT_EQ(rects[2].at("data-y"), "1");
  EXPECT_EQ(rects[0].at("data-y"), "3");
}

}  // namespace
}  // namespace sb::chart
