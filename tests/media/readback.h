// Test helpers that read the generated media back independently of the generators: PNG through
// cairo, MP4 through libavformat/libavcodec/libswscale, WAV by hand; plus colour naming by hue
// and connected components, so the tests check the ground truth against pixels and samples.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "media/media.h"

namespace sb::media::testing {

struct Pixel {
  uint8_t r = 0;
  uint8_t g = 0;
  uint8_t b = 0;
};

struct Image {
  int width = 0;
  int height = 0;
  std::vector<Pixel> pixels;  // row-major

  const Pixel& at(int x, int y) const { return pixels[static_cast<size_t>(y) * width + x]; }
};

// nullopt when the bytes are not a PNG cairo can read.
std::optional<Image> DecodePng(std::string_view bytes);

struct Video {
  std::string codec;    // "h264"
  std::string pix_fmt;  // "yuv420p"
  int width = 0;
  int height = 0;
  double fps = 0;             // the stream's average frame rate
  std::vector<Image> frames;  // every decoded frame, in presentation order
};

// nullopt (and a message on stderr) when the bytes cannot be demuxed or decoded.
std::optional<Video> DecodeMp4(std::string_view bytes);

struct Wav {
  int sample_rate = 0;
  int channels = 0;
  int bits = 0;
  int format = 0;  // 1 = PCM
  std::vector<int16_t> samples;
};

// nullopt unless RIFF/WAVE with a fmt and a data chunk.
std::optional<Wav> ParseWav(std::string_view bytes);

// A colour name by hue for saturated pixels ("red", "orange", "yellow", "green", "blue",
// "purple", "brown"), "white" / "black" for light / dark unsaturated ones, "" otherwise
// (greys, pale colours, antialiased edges).
std::string ColorName(const Pixel& p);

struct Blob {
  int pixels = 0;
  int min_x = 0;
  int max_x = 0;
  int min_y = 0;
  int max_y = 0;
  double cx = 0;  // centroid
  double cy = 0;

  int box_width() const { return max_x - min_x + 1; }

  int box_height() const { return max_y - min_y + 1; }

  // Pixels over the bounding box area: about 0.785 for a disc, 0.5 for a triangle, 1 for a square.
  double fill() const { return static_cast<double>(pixels) / (box_width() * box_height()); }
};

// 4-connected components of the pixels for which `in` holds, with at least min_pixels pixels,
// in raster order of their first pixel.
std::vector<Blob> Blobs(const Image& image, const std::function<bool(const Pixel&)>& in,
                        int min_pixels);

// Blobs of the named colour (ColorName).
std::vector<Blob> ColorBlobs(const Image& image, std::string_view color, int min_pixels);

// Generates the catalogue asset `name` and reads it back with `decode` (DecodePng, DecodeMp4,
// ParseWav); a failure of either step is a test failure naming the asset. `what` names the
// format for the message ("a PNG").
template <typename T, typename Decode>
void GenerateAndDecode(const std::string& name, Decode decode, const char* what, Asset& asset,
                       nlohmann::json& truth, T& decoded) {
  auto a = Generate(name);
  EXPECT_TRUE(a.has_value()) << name << ": " << (a ? "" : a.error().message);
  if (!a) {
    return;
  }
  asset = *a;
  truth = nlohmann::json::parse(a->truth_json);
  auto d = decode(a->bytes);
  EXPECT_TRUE(d.has_value()) << name << " is not " << what;
  if (d) {
    decoded = std::move(*d);
  }
}

}  // namespace sb::media::testing
