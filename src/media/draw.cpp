#include "media/draw.h"

#include <cmath>
#include <memory>
#include <numbers>

#include <cairo.h>
#include <fmt/format.h>
#include <pango/pangocairo.h>

namespace sb::media::draw {

namespace {

struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};

struct ContextDeleter {
  void operator()(cairo_t* cr) const { cairo_destroy(cr); }
};

struct LayoutDeleter {
  void operator()(PangoLayout* l) const { g_object_unref(l); }
};

struct FontDescriptionDeleter {
  void operator()(PangoFontDescription* d) const { pango_font_description_free(d); }
};

struct FontOptionsDeleter {
  void operator()(cairo_font_options_t* o) const { cairo_font_options_destroy(o); }
};

using Surface = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;
using Context = std::unique_ptr<cairo_t, ContextDeleter>;
using Layout = std::unique_ptr<PangoLayout, LayoutDeleter>;

// A layout with the font and fixed rendering options: gray antialiasing, no hinting, no metric
// hinting, so glyph positions depend neither on the display settings nor on the position.
Layout MakeLayout(cairo_t* cr, const Font& font) {
  Layout layout(pango_cairo_create_layout(cr));
  std::unique_ptr<cairo_font_options_t, FontOptionsDeleter> options(cairo_font_options_create());
  cairo_font_options_set_antialias(options.get(), CAIRO_ANTIALIAS_GRAY);
  cairo_font_options_set_hint_style(options.get(), CAIRO_HINT_STYLE_NONE);
  cairo_font_options_set_hint_metrics(options.get(), CAIRO_HINT_METRICS_OFF);
  PangoContext* context = pango_layout_get_context(layout.get());
  pango_cairo_context_set_font_options(context, options.get());
  pango_cairo_context_set_resolution(context, 96);
  pango_layout_context_changed(layout.get());

  std::unique_ptr<PangoFontDescription, FontDescriptionDeleter> desc(pango_font_description_new());
  pango_font_description_set_family(
      desc.get(), font.family == Family::kMono ? "DejaVu Sans Mono" : "DejaVu Sans");
  pango_font_description_set_weight(
      desc.get(), font.weight == Weight::kBold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
  pango_font_description_set_absolute_size(desc.get(), font.px * PANGO_SCALE);
  pango_layout_set_font_description(layout.get(), desc.get());
  return layout;
}

Extent LayoutExtent(PangoLayout* layout) {
  int w = 0;
  int h = 0;
  pango_layout_get_size(layout, &w, &h);
  return Extent{static_cast<double>(w) / PANGO_SCALE, static_cast<double>(h) / PANGO_SCALE};
}

double AlignedX(double x, double width, Align align) {
  switch (align) {
    case Align::kLeft:
      return x;
    case Align::kCenter:
      return x - width / 2;
    case Align::kRight:
      return x - width;
  }
  return x;
}

cairo_status_t AppendToString(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

Rgb NamedColor(std::string_view name) {
  if (name == "white")
    return kWhite;
  if (name == "red")
    return kRed;
  if (name == "green")
    return kGreen;
  if (name == "blue")
    return kBlue;
  if (name == "yellow")
    return kYellow;
  if (name == "orange")
    return kOrange;
  if (name == "purple")
    return kPurple;
  if (name == "brown")
    return kBrown;
  if (name == "grey")
    return kGrey;
  return kBlack;
}

void SetColor(cairo_t* cr, Rgb c) {
  cairo_set_source_rgb(cr, c.r, c.g, c.b);
}

void FillBackground(cairo_t* cr, Rgb c) {
  SetColor(cr, c);
  cairo_paint(cr);
}

void FillRect(cairo_t* cr, double x, double y, double w, double h, Rgb c) {
  SetColor(cr, c);
  cairo_rectangle(cr, x, y, w, h);
  cairo_fill(cr);
}

void FillCircle(cairo_t* cr, double cx, double cy, double r, Rgb c) {
  SetColor(cr, c);
  cairo_new_sub_path(cr);
  cairo_arc(cr, cx, cy, r, 0, 2 * std::numbers::pi);
  cairo_fill(cr);
}

void FillTriangle(cairo_t* cr, double cx, double cy, double size, Rgb c) {
  SetColor(cr, c);
  cairo_move_to(cr, cx, cy - size / 2);
  cairo_line_to(cr, cx + size / 2, cy + size / 2);
  cairo_line_to(cr, cx - size / 2, cy + size / 2);
  cairo_close_path(cr);
  cairo_fill(cr);
}

void FillRoundedRect(cairo_t* cr, double x, double y, double w, double h, double radius, Rgb c) {
  constexpr double kPi = std::numbers::pi;
  SetColor(cr, c);
  cairo_new_sub_path(cr);
  cairo_arc(cr, x + w - radius, y + radius, radius, -kPi / 2, 0);
  cairo_arc(cr, x + w - radius, y + h - radius, radius, 0, kPi / 2);
  cairo_arc(cr, x + radius, y + h - radius, radius, kPi / 2, kPi);
  cairo_arc(cr, x + radius, y + radius, radius, kPi, 3 * kPi / 2);
  cairo_close_path(cr);
  cairo_fill(cr);
}

void StrokeLine(cairo_t* cr, double x0, double y0, double x1, double y1, double width, Rgb c) {
  SetColor(cr, c);
  cairo_set_line_width(cr, width);
  cairo_move_to(cr, x0, y0);
  cairo_line_to(cr, x1, y1);
  cairo_stroke(cr);
}

Extent DrawText(cairo_t* cr, std::string_view text, const Font& font, Rgb color, double x, double y,
                Align align) {
  Layout layout = MakeLayout(cr, font);
  pango_layout_set_text(layout.get(), text.data(), static_cast<int>(text.size()));
  Extent e = LayoutExtent(layout.get());
  SetColor(cr, color);
  cairo_move_to(cr, AlignedX(x, e.width, align), y);
  pango_cairo_show_layout(cr, layout.get());
  cairo_new_path(cr);
  return e;
}

Extent DrawMarkup(cairo_t* cr, std::string_view markup, const Font& font, double x, double y) {
  Layout layout = MakeLayout(cr, font);
  pango_layout_set_markup(layout.get(), markup.data(), static_cast<int>(markup.size()));
  Extent e = LayoutExtent(layout.get());
  cairo_move_to(cr, x, y);
  pango_cairo_show_layout(cr, layout.get());
  cairo_new_path(cr);
  return e;
}

Extent MeasureText(cairo_t* cr, std::string_view text, const Font& font) {
  Layout layout = MakeLayout(cr, font);
  pango_layout_set_text(layout.get(), text.data(), static_cast<int>(text.size()));
  return LayoutExtent(layout.get());
}

Result<Pixels> Render(int width, int height, const DrawFn& draw) {
  Surface surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height));
  if (cairo_surface_status(surface.get()) != CAIRO_STATUS_SUCCESS) {
    return MakeError(ErrorCode::kInternal,
                     fmt::format("cairo: cannot create a {}x{} surface: {}", width, height,
                                 cairo_status_to_string(cairo_surface_status(surface.get()))));
  }
  {
    Context cr(cairo_create(surface.get()));
    draw(cr.get());
    if (cairo_status(cr.get()) != CAIRO_STATUS_SUCCESS) {
      return MakeError(
          ErrorCode::kInternal,
          fmt::format("cairo: drawing failed: {}", cairo_status_to_string(cairo_status(cr.get()))));
    }
  }
  cairo_surface_flush(surface.get());
  Pixels p;
  p.width = width;
  p.height = height;
  p.stride = cairo_image_surface_get_stride(surface.get());
  const unsigned char* data = cairo_image_surface_get_data(surface.get());
  p.data.assign(data, data + static_cast<size_t>(p.stride) * height);
  // RGB24 leaves the top byte undefined; make it 0xff so the bytes are reproducible.
  for (int y = 0; y < height; ++y) {
    auto* row = reinterpret_cast<uint32_t*>(p.data.data() + static_cast<size_t>(y) * p.stride);
    for (int x = 0; x < width; ++x) {
      row[x] |= 0xff000000u;
    }
  }
  return p;
}

Result<std::string> EncodePng(const Pixels& pixels) {
  // cairo_image_surface_create_for_data does not copy; it only reads from data here.
  Surface surface(cairo_image_surface_create_for_data(
      const_cast<unsigned char*>(
          pixels.data.data()),  // NOLINT(cppcoreguidelines-pro-type-const-cast)
      CAIRO_FORMAT_RGB24, pixels.width, pixels.height, pixels.stride));
  if (cairo_surface_status(surface.get()) != CAIRO_STATUS_SUCCESS) {
    return MakeError(ErrorCode::kInternal,
                     fmt::format("cairo: cannot wrap the pixels: {}",
                                 cairo_status_to_string(cairo_surface_status(surface.get()))));
  }
  std::string png;
  cairo_status_t st = cairo_surface_write_to_png_stream(surface.get(), AppendToString, &png);
  if (st != CAIRO_STATUS_SUCCESS) {
    return MakeError(ErrorCode::kInternal,
                     fmt::format("cairo: PNG encoding failed: {}", cairo_status_to_string(st)));
  }
  return png;
}

Result<std::string> RenderPng(int width, int height, const DrawFn& draw) {
  auto pixels = Render(width, height, draw);
  if (!pixels) {
    return pixels.error();
  }
  return EncodePng(*pixels);
}

std::string LibraryVersions() {
  return fmt::format("cairo {}, pango {}", cairo_version_string(), pango_version_string());
}

}  // namespace sb::media::draw
