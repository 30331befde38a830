// The image generators: each draws a PNG with cairo + pango and returns the ground truth from
// the same data it drew (docs/media.md §2).

#include <array>
#include <cctype>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <cairo.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/escape.h"
#include "media/draw.h"
#include "media/internal.h"

namespace sb::media::internal {

namespace {

using nlohmann::ordered_json;
using namespace draw;  // NOLINT(google-build-using-namespace): the drawing vocabulary

constexpr int kWidth = 512;
constexpr int kHeight = 384;

Result<Generated> Finish(Result<std::string> png, const ordered_json& truth,
                         std::string description) {
  if (!png) {
    return png.error();
  }
  return Generated{std::move(png).value(), truth.dump(), std::move(description)};
}

// ---- color_grid ----

Result<Generated> ColorGrid() {
  const std::vector<std::vector<std::string>> cells = {
      {"red", "blue", "green", "blue"},
      {"yellow", "blue", "orange", "green"},
      {"blue", "purple", "red", "yellow"},
  };
  constexpr double kCell = 100;
  constexpr double kGap = 16;
  constexpr double kLeft = (kWidth - 4 * kCell - 3 * kGap) / 2;
  constexpr double kTop = (kHeight - 3 * kCell - 2 * kGap) / 2;
  auto png = RenderPng(kWidth, kHeight, [&](cairo_t* cr) {
    FillBackground(cr, kWhite);
    for (size_t r = 0; r < cells.size(); ++r) {
      for (size_t c = 0; c < cells[r].size(); ++c) {
        FillRect(cr, kLeft + static_cast<double>(c) * (kCell + kGap),
                 kTop + static_cast<double>(r) * (kCell + kGap), kCell, kCell,
                 NamedColor(cells[r][c]));
      }
    }
  });
  // Counts in the palette's order, colours present only.
  ordered_json counts = ordered_json::object();
  std::string most_common;
  int best = 0;
  for (const char* colour : {"red", "green", "blue", "yellow", "orange", "purple"}) {
    int n = 0;
    for (const auto& row : cells) {
      for (const auto& cell : row) {
        n += cell == colour ? 1 : 0;
      }
    }
    if (n > 0) {
      counts[colour] = n;
    }
    if (n > best) {
      best = n;
      most_common = colour;
    }
  }
  ordered_json truth = {
      {"rows", 3},  {"cols", 4}, {"cells", cells}, {"counts", counts}, {"most_common", most_common},
      {"total", 12}};
  return Finish(std::move(png), truth, "3×4 grid of coloured squares");
}

// ---- ocr_text ----

Result<Generated> OcrText() {
  const std::vector<std::string> lines = {"Server: spark-07", "API key: SB-7Q4K-ZX92",
                                          "Date: 2026-03-14", "Temperature: 21.5 °C"};
  auto png = RenderPng(kWidth, kHeight, [&](cairo_t* cr) {
    FillBackground(cr, kWhite);
    FillRoundedRect(cr, 34, 70, 444, 244, 14, Rgb8(150, 160, 175));
    FillRoundedRect(cr, 37, 73, 438, 238, 12, Rgb8(240, 243, 247));
    const Font font{Family::kSans, 28, Weight::kNormal};
    for (size_t i = 0; i < lines.size(); ++i) {
      DrawText(cr, lines[i], font, kBlack, 64, 96 + 50 * static_cast<double>(i));
    }
  });
  ordered_json truth = {{"lines", lines},
                        {"server", "spark-07"},
                        {"api_key", "SB-7Q4K-ZX92"},
                        {"date", "2026-03-14"},
                        {"temperature_c", 21.5}};
  return Finish(std::move(png), truth,
                "a card with four lines of text (server, API key, date, "
                "temperature)");
}

// ---- receipt ----

void DashedLine(cairo_t* cr, double x0, double x1, double y) {
  const double dash[] = {6, 4};
  cairo_save(cr);
  cairo_set_dash(cr, dash, 2, 0);
  StrokeLine(cr, x0, y, x1, y, 2, Rgb8(150, 150, 150));
  cairo_restore(cr);
}

Result<Generated> Receipt() {
  struct Item {
    std::string name;
    int cents;
  };

  const std::vector<Item> items = {{"Coffee", 350}, {"Croissant", 225}, {"Orange juice", 410}};
  int total_cents = 0;
  for (const Item& item : items) {
    total_cents += item.cents;
  }
  auto money = [](int cents) { return fmt::format("{}.{:02}", cents / 100, cents % 100); };
  constexpr int kW = 384;
  constexpr int kH = 512;
  auto png = RenderPng(kW, kH, [&](cairo_t* cr) {
    FillBackground(cr, Rgb8(215, 215, 215));
    FillRect(cr, 32, 24, 320, 464, kWhite);
    const Font title{Family::kSans, 30, Weight::kBold};
    const Font body{Family::kSans, 21, Weight::kNormal};
    const Font bold{Family::kSans, 23, Weight::kBold};
    const Font small{Family::kSans, 16, Weight::kNormal};
    DrawText(cr, "Corner Café", title, kBlack, kW / 2.0, 44, Align::kCenter);
    DrawText(cr, "Receipt", small, Rgb8(80, 80, 80), kW / 2.0, 88, Align::kCenter);
    DashedLine(cr, 52, 332, 124);
    for (size_t i = 0; i < items.size(); ++i) {
      double y = 142 + 42 * static_cast<double>(i);
      DrawText(cr, items[i].name, body, kBlack, 56, y);
      DrawText(cr, money(items[i].cents), body, kBlack, 328, y, Align::kRight);
    }
    DashedLine(cr, 52, 332, 276);
    DrawText(cr, "Total", bold, kBlack, 56, 292);
    DrawText(cr, money(total_cents), bold, kBlack, 328, 292, Align::kRight);
    DrawText(cr, "Currency: EUR", body, kBlack, 56, 346);
    DrawText(cr, "Thank you!", small, Rgb8(80, 80, 80), kW / 2.0, 430, Align::kCenter);
  });
  ordered_json jitems = ordered_json::array();
  for (const Item& item : items) {
    jitems.push_back({{"name", item.name}, {"price", item.cents / 100.0}});
  }
  ordered_json truth = {{"shop", "Corner Café"},
                        {"items", jitems},
                        {"total", total_cents / 100.0},
                        {"currency", "EUR"}};
  return Finish(std::move(png), truth, "a shop receipt with three items and a total");
}

// ---- charts ----

struct Axes {
  double left = 72;
  double right = 492;
  double top = 70;
  double bottom = 330;
  double min_value = 0;
  double max_value = 80;

  double Y(double v) const {
    return bottom - (v - min_value) / (max_value - min_value) * (bottom - top);
  }
};

void DrawAxes(cairo_t* cr, const Axes& a, std::string_view title, double tick_step) {
  FillBackground(cr, kWhite);
  DrawText(cr, title, Font{Family::kSans, 21, Weight::kBold}, kBlack, kWidth / 2.0, 16,
           Align::kCenter);
  const Font tick_font{Family::kSans, 14, Weight::kNormal};
  for (double v = a.min_value; v <= a.max_value + 1e-9; v += tick_step) {
    double y = a.Y(v);
    if (v > a.min_value) {
      StrokeLine(cr, a.left, y, a.right, y, 1, Rgb8(225, 225, 225));
    }
    StrokeLine(cr, a.left - 5, y, a.left, y, 1.5, kBlack);
    DrawText(cr, fmt::format("{}", v), tick_font, Rgb8(60, 60, 60), a.left - 8, y - 9,
             Align::kRight);
  }
  StrokeLine(cr, a.left, a.top - 10, a.left, a.bottom, 2, kBlack);
  StrokeLine(cr, a.left, a.bottom, a.right, a.bottom, 2, kBlack);
}

template <size_t N>
std::string ArgMax(const std::array<const char*, N>& labels, const std::array<int, N>& values,
                   bool max) {
  size_t best = 0;
  for (size_t i = 1; i < N; ++i) {
    if (max ? values[i] > values[best] : values[i] < values[best]) {
      best = i;
    }
  }
  return labels[best];
}

Result<Generated> BarChart() {
  const std::string title = "Quarterly revenue (k$)";
  const std::array<const char*, 4> labels = {"Q1", "Q2", "Q3", "Q4"};
  const std::array<int, 4> values = {42, 58, 73, 35};
  const Axes axes;
  auto png = RenderPng(kWidth, kHeight, [&](cairo_t* cr) {
    DrawAxes(cr, axes, title, 20);
    const double slot = (axes.right - axes.left) / labels.size();
    const Font label_font{Family::kSans, 17, Weight::kNormal};
    const Font value_font{Family::kSans, 17, Weight::kBold};
    for (size_t i = 0; i < labels.size(); ++i) {
      double cx = axes.left + (static_cast<double>(i) + 0.5) * slot;
      double top = axes.Y(values[i]);
      FillRect(cr, cx - 32, top, 64, axes.bottom - 1 - top, Rgb8(60, 110, 190));
      DrawText(cr, fmt::format("{}", values[i]), value_font, kBlack, cx, top - 24, Align::kCenter);
      DrawText(cr, labels[i], label_font, kBlack, cx, axes.bottom + 8, Align::kCenter);
    }
  });
  int sum = 0;
  for (int v : values) {
    sum += v;
  }
  ordered_json truth = {{"title", title},
                        {"labels", labels},
                        {"values", values},
                        {"highest", ArgMax(labels, values, true)},
                        {"lowest", ArgMax(labels, values, false)},
                        {"sum", sum}};
  return Finish(std::move(png), truth, "bar chart of quarterly revenue, Q1 to Q4");
}

Result<Generated> LineChart() {
  const std::string title = "Monthly active users (thousands)";
  const std::array<const char*, 6> labels = {"Jan", "Feb", "Mar", "Apr", "May", "Jun"};
  const std::array<int, 6> values = {120, 135, 150, 140, 170, 195};
  Axes axes;
  axes.min_value = 100;
  axes.max_value = 200;
  const Rgb line = Rgb8(200, 50, 50);
  auto png = RenderPng(kWidth, kHeight, [&](cairo_t* cr) {
    DrawAxes(cr, axes, title, 25);
    const double slot = (axes.right - axes.left) / labels.size();
    auto x_of = [&](size_t i) { return axes.left + (static_cast<double>(i) + 0.5) * slot; };
    SetColor(cr, line);
    cairo_set_line_width(cr, 3);
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i == 0) {
        cairo_move_to(cr, x_of(i), axes.Y(values[i]));
      } else {
        cairo_line_to(cr, x_of(i), axes.Y(values[i]));
      }
    }
    cairo_stroke(cr);
    const Font label_font{Family::kSans, 16, Weight::kNormal};
    const Font value_font{Family::kSans, 15, Weight::kBold};
    for (size_t i = 0; i < labels.size(); ++i) {
      double x = x_of(i);
      double y = axes.Y(values[i]);
      FillCircle(cr, x, y, 6, line);
      DrawText(cr, fmt::format("{}", values[i]), value_font, kBlack, x, y - 28, Align::kCenter);
      DrawText(cr, labels[i], label_font, kBlack, x, axes.bottom + 8, Align::kCenter);
    }
  });
  // The dip: the one month lower than the month before it.
  std::string dip;
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i] < values[i - 1]) {
      dip = labels[i];
    }
  }
  ordered_json truth = {{"title", title},
                        {"labels", labels},
                        {"values", values},
                        {"max_label", ArgMax(labels, values, true)},
                        {"min_label", ArgMax(labels, values, false)},
                        {"dip_label", dip},
                        {"trend", values.back() > values.front() ? "increasing" : "decreasing"}};
  return Finish(std::move(png), truth, "line chart of monthly active users, January to June");
}

// ---- code_screenshot ----

constexpr std::string_view kCode =
    "def total(items):\n"
    "    result = 0\n"
    "    for x in items:\n"
    "        if x % 2 == 0:\n"
    "            result += x * x\n"
    "    return result\n"
    "\n"
    "print(total([1, 2, 3, 4, 5, 6]))\n";

// One line of Python as pango markup with a dark-theme highlighting.
std::string Highlight(std::string_view line) {
  static const std::map<std::string, std::string, std::less<>> kWordColours = {
      {"def", "#c586c0"},    {"for", "#c586c0"},   {"in", "#c586c0"},    {"if", "#c586c0"},
      {"return", "#c586c0"}, {"print", "#dcdcaa"}, {"total", "#dcdcaa"},
  };
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    size_t j = i;
    if (is_word(line[i])) {
      while (j < line.size() && is_word(line[j])) {
        ++j;
      }
    } else {
      while (j < line.size() && !is_word(line[j])) {
        ++j;
      }
    }
    std::string_view token = line.substr(i, j - i);
    std::string colour = "#d4d4d4";
    if (auto it = kWordColours.find(token); it != kWordColours.end()) {
      colour = it->second;
    } else if (std::isdigit(static_cast<unsigned char>(token[0]))) {
      colour = "#b5cea8";
    } else if (is_word(token[0])) {
      colour = "#9cdcfe";
    }
    out += fmt::format("<span foreground=\"{}\">{}</span>", colour, XmlEscape(token));
    i = j;
  }
  return out;
}

Result<Generated> CodeScreenshot() {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < kCode.size();) {
    size_t end = kCode.find('\n', start);
    lines.push_back(kCode.substr(start, end - start));
    start = end + 1;
  }
  auto png = RenderPng(kWidth, kHeight, [&](cairo_t* cr) {
    FillBackground(cr, Rgb8(30, 30, 30));
    FillRect(cr, 0, 0, kWidth, 34, Rgb8(50, 50, 52));
    FillCircle(cr, 18, 17, 6, Rgb8(255, 95, 86));
    FillCircle(cr, 38, 17, 6, Rgb8(255, 189, 46));
    FillCircle(cr, 58, 17, 6, Rgb8(39, 201, 63));
    DrawText(cr, "total.py", Font{Family::kSans, 15, Weight::kNormal}, Rgb8(200, 200, 200),
             kWidth / 2.0, 8, Align::kCenter);
    const Font mono{Family::kMono, 18, Weight::kNormal};
    for (size_t i = 0; i < lines.size(); ++i) {
      double y = 58 + 30 * static_cast<double>(i);
      DrawText(cr, fmt::format("{}", i + 1), mono, Rgb8(110, 118, 129), 40, y, Align::kRight);
      DrawMarkup(cr, Highlight(lines[i]), mono, 60, y);
    }
  });
  ordered_json truth = {{"language", "python"},
                        {"code", std::string(kCode)},
                        {"function", "total"},
                        {"output", "56"}};
  return Finish(std::move(png), truth,
                "screenshot of a dark-theme code editor showing a short Python function");
}

// ---- equation ----

Result<Generated> Equation() {
  const std::string text = "3x² − 12x + 9 = 0";
  auto png = RenderPng(kWidth, kHeight, [&](cairo_t* cr) {
    FillBackground(cr, kWhite);
    Font font{Family::kSans, 52, Weight::kNormal};
    Extent e = MeasureText(cr, text, font);
    if (e.width > kWidth - 48) {
      font.px *= (kWidth - 48) / e.width;
      e = MeasureText(cr, text, font);
    }
    DrawText(cr, text, font, kBlack, kWidth / 2.0, (kHeight - e.height) / 2, Align::kCenter);
  });
  ordered_json truth = {{"text", text},
                        {"equation", "3x^2 - 12x + 9 = 0"},
                        {"roots", {1, 3}},
                        {"sum_of_roots", 4},
                        {"product_of_roots", 3}};
  return Finish(std::move(png), truth, "the quadratic equation 3x² − 12x + 9 = 0");
}

// ---- scene ----

Result<Generated> Scene() {
  auto png = RenderPng(kWidth, kHeight, [&](cairo_t* cr) {
    FillBackground(cr, Rgb8(150, 200, 240));                         // sky
    FillCircle(cr, 440, 70, 36, kYellow);                            // sun, top right
    FillRect(cr, 0, 300, kWidth, kHeight - 300, Rgb8(70, 175, 60));  // grass
    // House: body, roof, door, two windows.
    FillRect(cr, 180, 180, 160, 122, kRed);
    SetColor(cr, Rgb8(90, 90, 90));
    cairo_move_to(cr, 164, 182);
    cairo_line_to(cr, 356, 182);
    cairo_line_to(cr, 260, 104);
    cairo_close_path(cr);
    cairo_fill(cr);
    FillRect(cr, 243, 236, 34, 66, kBrown);
    for (double x : {198.0, 288.0}) {
      FillRect(cr, x, 200, 36, 32, kWhite);
      FillRect(cr, x + 3, 203, 30, 26, kBlue);
    }
    // Two trees.
    for (auto [x, y, r] : {std::array<double, 3>{80, 222, 40}, {424, 228, 36}}) {
      FillRect(cr, x - 8, y + r - 10, 16, 302 - (y + r - 10), kBrown);
      FillCircle(cr, x, y, r, Rgb8(25, 115, 40));
    }
  });
  ordered_json truth = {{"objects", {"house", "sun", "tree"}},
                        {"house_color", "red"},
                        {"door_color", "brown"},
                        {"windows", 2},
                        {"sun_color", "yellow"},
                        {"sun_position", "top right"},
                        {"trees", 2}};
  return Finish(std::move(png), truth,
                "drawing of a red house with a brown door and two blue windows, a yellow sun and "
                "two trees");
}

// ---- number_sequence ----

Result<Generated> NumberSequence() {
  std::vector<int> sequence;
  for (int n = 1; n <= 5; ++n) {
    sequence.push_back(n * (n + 1));
  }
  constexpr double kBox = 64;
  constexpr double kGap = 12;
  constexpr double kLeft = (kWidth - 6 * kBox - 5 * kGap) / 2;
  constexpr double kTop = (kHeight - kBox) / 2;
  auto png = RenderPng(kWidth, kHeight, [&](cairo_t* cr) {
    FillBackground(cr, kWhite);
    const Font font{Family::kSans, 28, Weight::kBold};
    for (int i = 0; i < 6; ++i) {
      double x = kLeft + i * (kBox + kGap);
      FillRoundedRect(cr, x, kTop, kBox, kBox, 8, Rgb8(40, 60, 120));
      FillRoundedRect(cr, x + 3, kTop + 3, kBox - 6, kBox - 6, 6, Rgb8(235, 241, 255));
      std::string label = i < 5 ? fmt::format("{}", sequence[i]) : "?";
      Extent e = MeasureText(cr, label, font);
      DrawText(cr, label, font, kBlack, x + kBox / 2, kTop + (kBox - e.height) / 2, Align::kCenter);
    }
  });
  ordered_json truth = {{"sequence", sequence}, {"next", 6 * 7}, {"rule", "n(n+1)"}};
  return Finish(std::move(png), truth, "the number sequence 2, 6, 12, 20, 30, ? in boxes");
}

// ---- shapes_a / shapes_b / probe_image ----

Result<Generated> ShapesA() {
  auto png = RenderPng(kWidth, kHeight, [&](cairo_t* cr) {
    FillBackground(cr, kWhite);
    FillCircle(cr, 150, 192, 64, kBlue);
    FillCircle(cr, 362, 192, 64, kBlue);
  });
  ordered_json truth = {{"shape", "circle"}, {"color", "blue"}, {"count", 2}};
  return Finish(std::move(png), truth, "two blue circles");
}

Result<Generated> ShapesB() {
  auto png = RenderPng(kWidth, kHeight, [&](cairo_t* cr) {
    FillBackground(cr, kWhite);
    for (double x : {100.0, 256.0, 412.0}) {
      FillTriangle(cr, x, 196, 112, kRed);
    }
  });
  ordered_json truth = {{"shape", "triangle"}, {"color", "red"}, {"count", 3}};
  return Finish(std::move(png), truth, "three red triangles");
}

Result<Generated> ProbeImage() {
  auto png = RenderPng(32, 32, [&](cairo_t* cr) { FillBackground(cr, kGrey); });
  return Finish(std::move(png), ordered_json{{"probe", true}}, "32×32 grey square (probe)");
}

}  // namespace

Result<Generated> GenerateImage(std::string_view name) {
  using Fn = Result<Generated> (*)();
  static const std::map<std::string, Fn, std::less<>> kGenerators = {
      {"color_grid", ColorGrid}, {"ocr_text", OcrText},     {"receipt", Receipt},
      {"bar_chart", BarChart},   {"line_chart", LineChart}, {"code_screenshot", CodeScreenshot},
      {"equation", Equation},    {"scene", Scene},          {"number_sequence", NumberSequence},
      {"shapes_a", ShapesA},     {"shapes_b", ShapesB},     {"probe_image", ProbeImage},
  };
  auto it = kGenerators.find(name);
  if (it == kGenerators.end()) {
    return MakeError(ErrorCode::kInternal, fmt::format("no image generator '{}'", name));
  }
  return it->second();
}

std::string ImageLibraryVersions() {
  return LibraryVersions();
}

}  // namespace sb::media::internal
