// The image generators' ground truth checked against the decoded pixels.

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "media/internal.h"
#include "media/media.h"
#include "media/readback.h"

namespace sb::media {
namespace {

using nlohmann::json;
using testing::Blob;
using testing::ColorBlobs;
using testing::ColorName;
using testing::Image;
using testing::Pixel;

struct Decoded {
  Asset asset;
  json truth;
  Image image;
};

Decoded Load(const std::string& name) {
  Decoded d;
  testing::GenerateAndDecode(name, testing::DecodePng, "a PNG", d.asset, d.truth, d.image);
  return d;
}

double Luma(const Pixel& p) {
  return 0.299 * p.r + 0.587 * p.g + 0.114 * p.b;
}

// Horizontal bands (runs of rows) containing at least one pixel for which `ink` holds, inside
// rows [y0, y1).
int TextBands(const Image& img, int y0, int y1, bool (*ink)(const Pixel&)) {
  int bands = 0;
  bool in_band = false;
  for (int y = y0; y < y1; ++y) {
    bool any = false;
    for (int x = 0; x < img.width && !any; ++x) {
      any = ink(img.at(x, y));
    }
    if (any && !in_band) {
      ++bands;
    }
    in_band = any;
  }
  return bands;
}

TEST(Images, SizesAndFormat) {
  const std::map<std::string, std::pair<int, int>> sizes = {
      {"color_grid", {512, 384}}, {"ocr_text", {512, 384}},   {"receipt", {384, 512}},
      {"bar_chart", {512, 384}},  {"line_chart", {512, 384}}, {"code_screenshot", {512, 384}},
      {"equation", {512, 384}},   {"scene", {512, 384}},      {"number_sequence", {512, 384}},
      {"shapes_a", {512, 384}},   {"shapes_b", {512, 384}},   {"probe_image", {32, 32}},
  };
  for (const auto& [name, size] : sizes) {
    Decoded d = Load(name);
    EXPECT_EQ(d.asset.kind, Kind::kImage) << name;
    EXPECT_EQ(d.asset.mime, "image/png") << name;
    EXPECT_EQ(d.image.width, size.first) << name;
    EXPECT_EQ(d.image.height, size.second) << name;
  }
}

TEST(Images, ColorGridCellsHaveTheColoursTheTruthNames) {
  Decoded d = Load("color_grid");
  ASSERT_EQ(d.truth["rows"], 3);
  ASSERT_EQ(d.truth["cols"], 4);
  EXPECT_EQ(d.truth["total"], 12);
  // The squares are the non-white blobs; find them from the pixels, then read each centre.
  auto squares = testing::Blobs(
      d.image, [](const Pixel& p) { return ColorName(p) != "white"; }, 500);
  ASSERT_EQ(squares.size(), 12u);
  std::sort(squares.begin(), squares.end(), [](const Blob& a, const Blob& b) {
    return a.min_y + 20 < b.min_y || (std::abs(a.min_y - b.min_y) <= 20 && a.min_x < b.min_x);
  });
  std::map<std::string, int> counts;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) {
      const Blob& sq = squares[static_cast<size_t>(r * 4 + c)];
      EXPECT_GT(sq.fill(), 0.97) << "cell " << r << "," << c << " is not a square";
      std::string seen = ColorName(d.image.at(static_cast<int>(sq.cx), static_cast<int>(sq.cy)));
      EXPECT_EQ(seen, d.truth["cells"][r][c].get<std::string>()) << "cell " << r << "," << c;
      ++counts[seen];
    }
  }
  // counts and most_common agree with what is drawn, and the most common colour is unique.
  json expected_counts = json::object();
  for (const auto& [colour, n] : counts) {
    expected_counts[colour] = n;
  }
  EXPECT_EQ(d.truth["counts"], expected_counts);
  auto best = std::max_element(counts.begin(), counts.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  EXPECT_EQ(d.truth["most_common"], best->first);
  EXPECT_EQ(std::count_if(counts.begin(), counts.end(),
                          [&](const auto& kv) { return kv.second == best->second; }),
            1);
}

TEST(Images, BarHeightsFollowTheValues) {
  Decoded d = Load("bar_chart");
  EXPECT_EQ(d.truth["title"], "Quarterly revenue (k$)");
  EXPECT_EQ(d.truth["labels"], json({"Q1", "Q2", "Q3", "Q4"}));
  EXPECT_EQ(d.truth["values"], json({42, 58, 73, 35}));
  EXPECT_EQ(d.truth["highest"], "Q3");
  EXPECT_EQ(d.truth["lowest"], "Q4");
  EXPECT_EQ(d.truth["sum"], 208);
  auto bars = ColorBlobs(d.image, "blue", 500);
  ASSERT_EQ(bars.size(), 4u);
  std::sort(bars.begin(), bars.end(), [](const Blob& a, const Blob& b) { return a.cx < b.cx; });
  std::vector<int> values = d.truth["values"].get<std::vector<int>>();
  // All bars stand on the same baseline, and height / value is the same for every bar.
  const double scale = static_cast<double>(bars[0].box_height()) / values[0];
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(bars[i].max_y, bars[0].max_y, 1) << i;
    EXPECT_NEAR(bars[i].box_height() / scale, values[i], 1.0) << "bar " << i;
    EXPECT_GT(bars[i].fill(), 0.97) << i;
  }
}

TEST(Images, LineChartPointsFollowTheValues) {
  Decoded d = Load("line_chart");
  std::vector<int> values = d.truth["values"].get<std::vector<int>>();
  ASSERT_EQ(values, (std::vector<int>{120, 135, 150, 140, 170, 195}));
  EXPECT_EQ(d.truth["max_label"], "Jun");
  EXPECT_EQ(d.truth["min_label"], "Jan");
  EXPECT_EQ(d.truth["dip_label"], "Apr");
  EXPECT_EQ(d.truth["trend"], "increasing");
  // The line and its markers are one red blob; its x extent spans the six equally spaced points.
  auto line = ColorBlobs(d.image, "red", 500);
  ASSERT_EQ(line.size(), 1u);
  const Blob& l = line[0];
  std::vector<double> ys;
  for (int i = 0; i < 6; ++i) {
    int x = l.min_x + (l.max_x - l.min_x) * i / 5;
    double sum = 0;
    int n = 0;
    for (int dx = -1; dx <= 1; ++dx) {
      int cx = std::clamp(x + dx, l.min_x, l.max_x);
      for (int y = l.min_y; y <= l.max_y; ++y) {
        if (ColorName(d.image.at(cx, y)) == "red") {
          sum += y;
          ++n;
        }
      }
    }
    ASSERT_GT(n, 0) << "point " << i;
    ys.push_back(sum / n);
  }
  // Higher value = smaller y; the pixel offsets are proportional to the value differences.
  const double px_per_unit = (ys[0] - ys[5]) / (values[5] - values[0]);
  ASSERT_GT(px_per_unit, 0.5);
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR((ys[0] - ys[i]) / px_per_unit, values[i] - values[0], 4) << "point " << i;
  }
  EXPECT_GT(ys[3], ys[2]) << "the dip (Apr below Mar) is drawn";
}

TEST(Images, ShapesHaveTheStatedCountColourAndShape) {
  for (const char* name : {"shapes_a", "shapes_b"}) {
    Decoded d = Load(name);
    std::string colour = d.truth["color"];
    auto blobs = ColorBlobs(d.image, colour, 200);
    ASSERT_EQ(static_cast<int>(blobs.size()), d.truth["count"].get<int>()) << name;
    for (const Blob& b : blobs) {
      if (d.truth["shape"] == "circle") {
        EXPECT_NEAR(b.fill(), 0.785, 0.03) << name;
        EXPECT_NEAR(b.box_width(), b.box_height(), 2) << name;
      } else {
        ASSERT_EQ(d.truth["shape"], "triangle");
        EXPECT_NEAR(b.fill(), 0.5, 0.03) << name;
      }
    }
    // No blobs of another colour.
    for (const char* other : {"red", "green", "blue", "yellow", "orange", "purple"}) {
      if (colour != other) {
        EXPECT_TRUE(ColorBlobs(d.image, other, 50).empty()) << name << " has " << other;
      }
    }
  }
  EXPECT_EQ(Load("shapes_a").truth, json::parse(R"({"shape":"circle","color":"blue","count":2})"));
  EXPECT_EQ(Load("shapes_b").truth, json::parse(R"({"shape":"triangle","color":"red","count":3})"));
}

TEST(Images, SceneHasTheObjectsTheTruthNames) {
  Decoded d = Load("scene");
  EXPECT_EQ(d.truth["objects"], json({"house", "sun", "tree"}));
  const int w = d.image.width;
  const int h = d.image.height;
  auto sun = ColorBlobs(d.image, d.truth["sun_color"].get<std::string>(), 500);
  ASSERT_EQ(sun.size(), 1u);
  ASSERT_EQ(d.truth["sun_position"], "top right");
  EXPECT_GT(sun[0].cx, w * 0.6);
  EXPECT_LT(sun[0].cy, h * 0.4);
  auto house = ColorBlobs(d.image, d.truth["house_color"].get<std::string>(), 500);
  ASSERT_EQ(house.size(), 1u);
  auto windows = ColorBlobs(d.image, "blue", 100);
  ASSERT_EQ(static_cast<int>(windows.size()), d.truth["windows"].get<int>());
  auto brown = ColorBlobs(d.image, d.truth["door_color"].get<std::string>(), 100);
  int doors = 0;
  int trunks = 0;
  for (const Blob& b : brown) {
    bool inside_house = b.min_x > house[0].min_x && b.max_x < house[0].max_x;
    (inside_house ? doors : trunks) += 1;
  }
  EXPECT_EQ(doors, 1);
  // Trees: green blobs off the bottom edge (the grass strip is the one touching it), each on a
  // brown trunk.
  int trees = 0;
  int grass = 0;
  for (const Blob& b : ColorBlobs(d.image, "green", 500)) {
    (b.max_y == h - 1 ? grass : trees) += 1;
  }
  EXPECT_EQ(grass, 1);
  EXPECT_EQ(trees, d.truth["trees"].get<int>());
  EXPECT_EQ(trunks, d.truth["trees"].get<int>());
}

bool Dark(const Pixel& p) {
  return Luma(p) < 110;
}

bool Light(const Pixel& p) {
  return Luma(p) > 90;
}

TEST(Images, TextImagesHaveTheirLines) {
  Decoded ocr = Load("ocr_text");
  EXPECT_EQ(ocr.truth["lines"], json({"Server: spark-07", "API key: SB-7Q4K-ZX92",
                                      "Date: 2026-03-14", "Temperature: 21.5 °C"}));
  EXPECT_EQ(ocr.truth["server"], "spark-07");
  EXPECT_EQ(ocr.truth["api_key"], "SB-7Q4K-ZX92");
  EXPECT_EQ(ocr.truth["date"], "2026-03-14");
  EXPECT_EQ(ocr.truth["temperature_c"], 21.5);
  EXPECT_EQ(TextBands(ocr.image, 80, 300, Dark), 4);

  Decoded code = Load("code_screenshot");
  EXPECT_EQ(code.truth["language"], "python");
  EXPECT_EQ(code.truth["function"], "total");
  const std::string text = code.truth["code"];
  EXPECT_EQ(text,
            "def total(items):\n    result = 0\n    for x in items:\n        if x % 2 == 0:\n"
            "            result += x * x\n    return result\n\nprint(total([1, 2, 3, 4, 5, 6]))\n");
  int expected = 0;
  for (int x : {1, 2, 3, 4, 5, 6}) {
    expected += x % 2 == 0 ? x * x : 0;
  }
  EXPECT_EQ(code.truth["output"], std::to_string(expected));
  double mean = 0;
  for (const Pixel& p : code.image.pixels) {
    mean += Luma(p);
  }
  EXPECT_LT(mean / static_cast<double>(code.image.pixels.size()), 60) << "dark theme";
  EXPECT_EQ(TextBands(code.image, 40, code.image.height, Light), 8) << "8 numbered lines";

  Decoded receipt = Load("receipt");
  EXPECT_EQ(receipt.truth["shop"], "Corner Café");
  EXPECT_EQ(receipt.truth["currency"], "EUR");
  double sum = 0;
  for (const auto& item : receipt.truth["items"]) {
    sum += item["price"].get<double>();
  }
  EXPECT_EQ(receipt.truth["items"].size(), 3u);
  EXPECT_EQ(receipt.truth["items"][2]["name"], "Orange juice");
  EXPECT_NEAR(sum, 9.85, 1e-9);
  EXPECT_EQ(receipt.truth["total"], 9.85);
  // Title, "Receipt", 3 items, total, currency, thank-you line (the grey rules are lighter).
  EXPECT_EQ(TextBands(receipt.image, 30, 480, Dark), 8);

  Decoded eq = Load("equation");
  EXPECT_EQ(eq.truth["text"], "3x² − 12x + 9 = 0");
  for (int root : eq.truth["roots"].get<std::vector<int>>()) {
    EXPECT_EQ(3 * root * root - 12 * root + 9, 0) << root;
  }
  EXPECT_EQ(eq.truth["sum_of_roots"], 4);
  EXPECT_EQ(eq.truth["product_of_roots"], 3);
  EXPECT_EQ(TextBands(eq.image, 0, eq.image.height, Dark), 1);
}

TEST(Images, NumberSequenceBoxes) {
  Decoded d = Load("number_sequence");
  std::vector<int> seq = d.truth["sequence"].get<std::vector<int>>();
  ASSERT_EQ(seq, (std::vector<int>{2, 6, 12, 20, 30}));
  for (int n = 1; n <= 5; ++n) {
    EXPECT_EQ(seq[static_cast<size_t>(n - 1)], n * (n + 1));
  }
  EXPECT_EQ(d.truth["next"], 42);
  EXPECT_EQ(d.truth["rule"], "n(n+1)");
  // Five numbers and the "?" each sit in a box with a blue border.
  EXPECT_EQ(ColorBlobs(d.image, "blue", 200).size(), 6u);
}

TEST(Images, ProbeIsAGreySquare) {
  Decoded d = Load("probe_image");
  EXPECT_EQ(d.truth, json::parse(R"({"probe":true})"));
  for (const Pixel& p : d.image.pixels) {
    ASSERT_EQ(p.r, p.g);
    ASSERT_EQ(p.g, p.b);
    ASSERT_NEAR(p.r, 128, 2);
  }
}

TEST(Images, GenerationIsDeterministic) {
  int images = 0;
  for (const std::string& name : CatalogueNames()) {
    if (!IsCatalogueName(name) || Generate(name)->kind != Kind::kImage) {
      continue;
    }
    auto a = internal::GenerateUncached(name);
    auto b = internal::GenerateUncached(name);
    ASSERT_TRUE(a && b) << name;
    EXPECT_TRUE(a->bytes == b->bytes) << name;
    EXPECT_EQ(a->truth_json, b->truth_json) << name;
    EXPECT_TRUE(a->bytes == Generate(name)->bytes) << name;
    ++images;
  }
  EXPECT_GE(images, 5);  // every generated image of the catalogue was compared
}

}  // namespace
}  // namespace sb::media
