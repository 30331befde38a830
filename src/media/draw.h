// Drawing helpers shared by the image and video generators: colours, filled shapes, text laid
// out with pango (DejaVu Sans / DejaVu Sans Mono at absolute pixel sizes, fixed antialiasing and
// no hinting, so the output does not depend on the screen settings), and PNG encoding.
// Coordinates are cairo user-space pixels, y down. Thread safety: no shared state; each call
// works on the cairo context it is given.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

using cairo_t = struct _cairo;  // the same type cairo.h declares, without including it here

namespace sb::media::draw {

struct Rgb {
  double r = 0;  // 0..1
  double g = 0;
  double b = 0;
};

// Rgb from 0..255 components.
constexpr Rgb Rgb8(int r, int g, int b) {
  return Rgb{r / 255.0, g / 255.0, b / 255.0};
}

// The named colours the catalogue uses (their names appear in the ground truth).
inline constexpr Rgb kWhite = Rgb8(255, 255, 255);
inline constexpr Rgb kBlack = Rgb8(0, 0, 0);
inline constexpr Rgb kRed = Rgb8(220, 30, 30);
inline constexpr Rgb kGreen = Rgb8(30, 160, 50);
inline constexpr Rgb kBlue = Rgb8(30, 80, 220);
inline constexpr Rgb kYellow = Rgb8(250, 215, 0);
inline constexpr Rgb kOrange = Rgb8(255, 140, 0);
inline constexpr Rgb kPurple = Rgb8(130, 40, 170);
inline constexpr Rgb kBrown = Rgb8(120, 70, 30);
inline constexpr Rgb kGrey = Rgb8(128, 128, 128);

// The colour the ground truth calls `name` ("red", "green", ...); black for an unknown name.
Rgb NamedColor(std::string_view name);

void SetColor(cairo_t* cr, Rgb c);
void FillBackground(cairo_t* cr, Rgb c);
void FillRect(cairo_t* cr, double x, double y, double w, double h, Rgb c);
void FillCircle(cairo_t* cr, double cx, double cy, double r, Rgb c);
// An upward-pointing equilateral-ish triangle centred on (cx, cy), `size` wide and tall.
void FillTriangle(cairo_t* cr, double cx, double cy, double size, Rgb c);
void FillRoundedRect(cairo_t* cr, double x, double y, double w, double h, double radius, Rgb c);
void StrokeLine(cairo_t* cr, double x0, double y0, double x1, double y1, double width, Rgb c);

enum class Family { kSans, kMono };
enum class Weight { kNormal, kBold };
enum class Align { kLeft, kCenter, kRight };

struct Font {
  Family family = Family::kSans;
  double px = 16;  // absolute size in pixels
  Weight weight = Weight::kNormal;
};

struct Extent {
  double width = 0;
  double height = 0;
};

// Draws UTF-8 text (one line, or several separated by '\n') with its top edge at y; x is the
// left edge, the centre or the right edge per align. Returns the laid-out size.
Extent DrawText(cairo_t* cr, std::string_view text, const Font& font, Rgb color, double x, double y,
                Align align = Align::kLeft);
// Same, but the text is pango markup (<span foreground="#rrggbb">...</span>).
Extent DrawMarkup(cairo_t* cr, std::string_view markup, const Font& font, double x, double y);
// The size DrawText would lay out.
Extent MeasureText(cairo_t* cr, std::string_view text, const Font& font);

// Pixels in cairo's RGB24 layout: one native-endian uint32 0x00RRGGBB per pixel, rows `stride`
// bytes apart.
struct Pixels {
  int width = 0;
  int height = 0;
  int stride = 0;
  std::vector<unsigned char> data;
};

using DrawFn = std::function<void(cairo_t*)>;

// Draws onto a fresh width x height surface. kInternal error when cairo fails.
Result<Pixels> Render(int width, int height, const DrawFn& draw);

// PNG file bytes (8-bit RGB, no alpha) of the pixels. kInternal error when cairo fails.
Result<std::string> EncodePng(const Pixels& pixels);

// Render + EncodePng.
Result<std::string> RenderPng(int width, int height, const DrawFn& draw);

// "cairo 1.16.0, pango 1.50.12".
std::string LibraryVersions();

}  // namespace sb::media::draw
