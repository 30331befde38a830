// Load images (`--images-per-request N --image-size WxH`, docs/sessions.md "Images"): coloured
// rectangles and circles on a white ground, placed by a seed, so each of a pool of images is
// different (a server's multimodal cache cannot serve them all from one) and the same seed gives
// the same bytes.
#include <string>

#include "core/rng.h"
#include "media/draw.h"
#include "media/media.h"

namespace sb::media {

Result<Asset> LoadImage(int width, int height, std::uint64_t seed) {
  if (width < 1 || height < 1 || width > 8192 || height > 8192) {
    return Error{ErrorCode::kUsage, "--image-size must be WxH with each side in [1, 8192], got " +
                                        std::to_string(width) + "x" + std::to_string(height)};
  }
  static constexpr draw::Rgb kColors[] = {draw::kRed,    draw::kGreen,  draw::kBlue,
                                          draw::kYellow, draw::kOrange, draw::kPurple};
  auto png = draw::RenderPng(width, height, [&](cairo_t* cr) {
    draw::FillBackground(cr, draw::kWhite);
    Rng rng(Mix64(seed));
    for (int k = 0; k < 12; ++k) {
      const double x = rng.Uniform() * width, y = rng.Uniform() * height;
      const double size = (0.05 + 0.25 * rng.Uniform()) * std::min(width, height);
      const draw::Rgb c = kColors[rng.Below(6)];
      if (rng.Below(2) == 0) {
        draw::FillRect(cr, x, y, size, size * 0.7, c);
      } else {
        draw::FillCircle(cr, x, y, size / 2, c);
      }
    }
  });
  if (!png) {
    return png.error();
  }
  Asset a;
  a.name = "load-image-" + std::to_string(width) + "x" + std::to_string(height) + "#" +
           std::to_string(seed);
  a.kind = Kind::kImage;
  a.mime = "image/png";
  a.extension = "png";
  a.bytes = std::move(png).value();
  a.sha256 = Sha256Hex(a.bytes);
  a.truth_json = "{}";
  a.description = "a load image: coloured shapes on white";
  return a;
}

}  // namespace sb::media
