// The video generators: each scene is a drawing function of time, encoded as H.264 MP4 (frame i
// drawn at t = (i + 0.5) / fps, the middle of its display interval) or rendered as PNG frames at
// any times, so VideoFrames(name, frames) shows exactly the encoded pictures.

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include <cairo.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "media/draw.h"
#include "media/internal.h"
#include "media/mp4.h"

namespace sb::media::internal {

namespace {

using nlohmann::ordered_json;
using namespace draw;  // NOLINT(google-build-using-namespace): the drawing vocabulary

struct Scene {
  std::string_view name;
  int width;
  int height;
  int fps;
  double duration_s;
  void (*draw)(cairo_t*, double t_s);
  ordered_json (*truth)();
  std::string_view description;

  int frames() const { return static_cast<int>(std::lround(duration_s * fps)); }
};

// ---- bouncing_ball ----
// Apexes at t = 0, 2h, 4h, 6h and floor contacts at h, 3h, 5h with h = 4.0 s / 6: three bounces,
// free-fall parabolas between them; x moves linearly from left to right.

constexpr double kBallDurationS = 4.0;
constexpr int kBounces = 3;
constexpr double kBallRadius = 16;
constexpr double kFloorY = 220;

void BouncingBall(cairo_t* cr, double t) {
  FillBackground(cr, kBlue);
  FillRect(cr, 0, kFloorY, 320, 240 - kFloorY, Rgb8(20, 40, 120));
  const double half = kBallDurationS / (2 * kBounces);       // apex to floor
  const double u = t / half - 2 * std::round(t / half / 2);  // -1..1 from the nearest apex
  const double lowest = kFloorY - kBallRadius;
  const double highest = 50;
  const double y = lowest - (lowest - highest) * (1 - u * u);
  const double x = 24 + (320 - 48) * std::clamp(t / kBallDurationS, 0.0, 1.0);
  FillCircle(cr, x, y, kBallRadius, kRed);
}

ordered_json BouncingBallTruth() {
  return {{"ball_color", "red"},
          {"background", "blue"},
          {"bounces", kBounces},
          {"horizontal", "left to right"}};
}

// ---- moving_shapes ----

void MovingShapes(cairo_t* cr, double t) {
  const double f = std::clamp(t / 3.0, 0.0, 1.0);
  FillBackground(cr, kWhite);
  FillRect(cr, 10 + 250 * f, 14, 40, 40, kGreen);  // along the top, left to right
  FillCircle(cr, 140, 90 + 115 * f, 20, kBlue);    // down the middle, top to bottom
  FillTriangle(cr, 285, 205, 50, kOrange);         // bottom-right corner, still
}

ordered_json MovingShapesTruth() {
  return {{"shapes",
           {{{"shape", "square"}, {"color", "green"}, {"motion", "left to right"}},
            {{"shape", "circle"}, {"color", "blue"}, {"motion", "top to bottom"}},
            {{"shape", "triangle"}, {"color", "orange"}, {"motion", "stationary"}}}}};
}

// ---- color_cycle ----

constexpr const char* kCycle[] = {"red", "green", "blue", "yellow"};

void ColorCycle(cairo_t* cr, double t) {
  int i = std::clamp(static_cast<int>(std::floor(t / 1.0)), 0, 3);
  FillBackground(cr, NamedColor(kCycle[i]));
}

ordered_json ColorCycleTruth() {
  return {{"sequence", {kCycle[0], kCycle[1], kCycle[2], kCycle[3]}}, {"seconds_each", 1.0}};
}

// ---- counting_dots ----
// Dot k (0-based) appears at t = 0.5 k and stays: 1 dot at the start, all 5 from 2.0 s to 3.0 s.

constexpr int kDots = 5;
constexpr double kDotIntervalS = 0.5;

void CountingDots(cairo_t* cr, double t) {
  FillBackground(cr, kWhite);
  for (int k = 0; k < kDots; ++k) {
    if (t >= kDotIntervalS * k) {
      FillCircle(cr, 40 + 60 * k, 120, 16, kBlack);
    }
  }
}

ordered_json CountingDotsTruth() {
  return {{"count", kDots}, {"color", "black"}, {"interval_s", kDotIntervalS}};
}

// ---- probe_video ----

void ProbeVideo(cairo_t* cr, double t) {
  FillBackground(cr, kGrey);
  FillRect(cr, 8 + 32 * t, 24, 16, 16, kWhite);
}

ordered_json ProbeTruth() {
  return {{"probe", true}};
}

const std::vector<Scene>& Scenes() {
  static const std::vector<Scene> kScenes = {
      {"bouncing_ball", 320, 240, 10, kBallDurationS, BouncingBall, BouncingBallTruth,
       "a red ball bouncing three times on the floor while moving left to right, blue "
       "background"},
      {"moving_shapes", 320, 240, 10, 3.0, MovingShapes, MovingShapesTruth,
       "a green square moving right, a blue circle moving down, a still orange triangle"},
      {"color_cycle", 320, 240, 10, 4.0, ColorCycle, ColorCycleTruth,
       "the whole frame red, then green, blue and yellow, one second each"},
      {"counting_dots", 320, 240, 10, 3.0, CountingDots, CountingDotsTruth,
       "black dots appearing one at a time on white until there are five"},
      {"probe_video", 64, 64, 4, 1.0, ProbeVideo, ProbeTruth,
       "64×64 grey video with a small moving white square, four frames (probe)"},
  };
  return kScenes;
}

const Scene* FindScene(std::string_view name) {
  for (const Scene& s : Scenes()) {
    if (s.name == name) {
      return &s;
    }
  }
  return nullptr;
}

Result<Pixels> RenderAt(const Scene& scene, double t) {
  return Render(scene.width, scene.height, [&](cairo_t* cr) { scene.draw(cr, t); });
}

}  // namespace

bool IsVideoName(std::string_view name) {
  return FindScene(name) != nullptr;
}

Result<Generated> GenerateVideo(std::string_view name) {
  const Scene* scene = FindScene(name);
  if (scene == nullptr) {
    return MakeError(ErrorCode::kInternal, fmt::format("no video generator '{}'", name));
  }
  VideoFormat format{scene->width, scene->height, scene->fps, scene->frames()};
  auto mp4 = EncodeMp4(format, [&](int i) { return RenderAt(*scene, (i + 0.5) / scene->fps); });
  if (!mp4) {
    return mp4.error().WithContext(std::string(name));
  }
  ordered_json truth = scene->truth();
  if (!truth.contains("probe")) {
    truth["duration_s"] = scene->duration_s;
    truth["fps"] = scene->fps;
    truth["frames"] = format.frames;
    truth["width"] = scene->width;
    truth["height"] = scene->height;
  }
  return Generated{std::move(mp4).value(), truth.dump(), std::string(scene->description)};
}

Result<std::vector<Generated>> RenderVideoFrames(std::string_view name, int n) {
  const Scene* scene = FindScene(name);
  if (scene == nullptr || n < 1) {
    return MakeError(ErrorCode::kInternal, fmt::format("no video generator '{}'", name));
  }
  std::vector<Generated> frames;
  for (int i = 0; i < n; ++i) {
    double t = (i + 0.5) * scene->duration_s / n;
    auto pixels = RenderAt(*scene, t);
    if (!pixels) {
      return pixels.error();
    }
    auto png = EncodePng(*pixels);
    if (!png) {
      return png.error();
    }
    ordered_json truth = {{"index", i}, {"t_s", t}, {"of", name}};
    frames.push_back(
        Generated{std::move(png).value(), truth.dump(),
                  fmt::format("frame {} of {} of {} at t = {:.3f} s", i + 1, n, name, t)});
  }
  return frames;
}

std::string VideoLibraryVersions() {
  return Mp4LibraryVersions();
}

}  // namespace sb::media::internal
