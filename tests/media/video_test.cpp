// The video generators: the MP4 is decoded here with libavformat/libavcodec, and the ground truth
// is checked against the decoded frames.

#include <cmath>
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
using testing::Video;

struct Decoded {
  Asset asset;
  json truth;
  Video video;
};

Decoded Load(const std::string& name) {
  Decoded d;
  testing::GenerateAndDecode(name, testing::DecodeMp4, "a decodable MP4", d.asset, d.truth,
                             d.video);
  return d;
}

TEST(Videos, StreamsAreH264WithTheStatedSizeRateAndFrameCount) {
  for (const char* name : {"bouncing_ball", "moving_shapes", "color_cycle", "counting_dots"}) {
    Decoded d = Load(name);
    EXPECT_EQ(d.asset.kind, Kind::kVideo) << name;
    EXPECT_EQ(d.asset.mime, "video/mp4") << name;
    EXPECT_EQ(d.video.codec, "h264") << name;
    EXPECT_EQ(d.video.pix_fmt, "yuv420p") << name;
    EXPECT_EQ(d.video.width, 320) << name;
    EXPECT_EQ(d.video.height, 240) << name;
    EXPECT_EQ(d.truth["width"], 320) << name;
    EXPECT_EQ(d.truth["height"], 240) << name;
    EXPECT_DOUBLE_EQ(d.video.fps, d.truth["fps"].get<double>()) << name;
    EXPECT_EQ(d.truth["fps"], 10) << name;
    EXPECT_EQ(static_cast<int>(d.video.frames.size()), d.truth["frames"].get<int>()) << name;
    EXPECT_NEAR(d.truth["frames"].get<int>(), d.truth["duration_s"].get<double>() * 10, 1e-9)
        << name;
  }
  Decoded probe = Load("probe_video");
  EXPECT_EQ(probe.truth, json::parse(R"({"probe":true})"));
  EXPECT_EQ(probe.video.codec, "h264");
  EXPECT_EQ(probe.video.width, 64);
  EXPECT_EQ(probe.video.height, 64);
  EXPECT_DOUBLE_EQ(probe.video.fps, 4);
  EXPECT_EQ(probe.video.frames.size(), 4u);
}

// The one blob of the colour in the frame (fails the test when there is not exactly one).
Blob Only(const Image& frame, const char* colour, size_t i) {
  auto blobs = ColorBlobs(frame, colour, 100);
  EXPECT_EQ(blobs.size(), 1u) << colour << " blobs in frame " << i;
  return blobs.empty() ? Blob{} : blobs[0];
}

TEST(Videos, BouncingBallBouncesTheStatedNumberOfTimes) {
  Decoded d = Load("bouncing_ball");
  EXPECT_EQ(d.truth["ball_color"], "red");
  EXPECT_EQ(d.truth["background"], "blue");
  EXPECT_EQ(d.truth["horizontal"], "left to right");
  EXPECT_EQ(d.truth["duration_s"], 4.0);
  ASSERT_EQ(d.video.frames.size(), 40u);
  std::vector<double> xs;
  std::vector<double> ys;
  for (size_t i = 0; i < d.video.frames.size(); ++i) {
    const Image& f = d.video.frames[i];
    EXPECT_EQ(ColorName(f.at(5, 5)), "blue") << "background, frame " << i;
    Blob ball = Only(f, "red", i);
    xs.push_back(ball.cx);
    ys.push_back(ball.cy);
  }
  for (size_t i = 1; i < xs.size(); ++i) {
    EXPECT_GT(xs[i], xs[i - 1]) << "x increases, frame " << i;
  }
  EXPECT_GT(xs.back() - xs.front(), 200);
  // Bounces: the ball stops falling (y, downwards, stops growing) and rises again, near the floor.
  double y_min = *std::min_element(ys.begin(), ys.end());
  double y_max = *std::max_element(ys.begin(), ys.end());
  ASSERT_GT(y_max - y_min, 100) << "the ball moves vertically";
  int bounces = 0;
  int last_direction = 0;  // +1 falling, -1 rising
  for (size_t i = 1; i < ys.size(); ++i) {
    double dy = ys[i] - ys[i - 1];
    if (std::abs(dy) < 1.5) {
      continue;
    }
    int direction = dy > 0 ? 1 : -1;
    if (last_direction == 1 && direction == -1) {
      EXPECT_GT(ys[i - 1], y_max - 0.25 * (y_max - y_min)) << "turned near the floor, frame " << i;
      ++bounces;
    }
    last_direction = direction;
  }
  EXPECT_EQ(bounces, d.truth["bounces"].get<int>());
}

TEST(Videos, ColorCycleShowsTheSequence) {
  Decoded d = Load("color_cycle");
  std::vector<std::string> seen;
  std::vector<int> run_lengths;
  for (const Image& f : d.video.frames) {
    std::string c = ColorName(f.at(f.width / 2, f.height / 2));
    EXPECT_EQ(ColorName(f.at(2, 2)), c) << "the whole frame is one colour";
    if (seen.empty() || seen.back() != c) {
      seen.push_back(c);
      run_lengths.push_back(0);
    }
    ++run_lengths.back();
  }
  EXPECT_EQ(json(seen), d.truth["sequence"]);
  const int per_colour = static_cast<int>(std::lround(d.truth["seconds_each"].get<double>() * 10));
  for (int n : run_lengths) {
    EXPECT_EQ(n, per_colour);
  }
}

TEST(Videos, CountingDotsAppearOneAtATime) {
  Decoded d = Load("counting_dots");
  ASSERT_EQ(d.video.frames.size(), 30u);
  const int count = d.truth["count"];
  const double interval = d.truth["interval_s"];
  EXPECT_EQ(count, 5);
  EXPECT_EQ(d.truth["color"], "black");
  for (size_t i = 0; i < d.video.frames.size(); ++i) {
    double t = (static_cast<double>(i) + 0.5) / 10;
    int expected = std::min(count, static_cast<int>(std::floor(t / interval)) + 1);
    EXPECT_EQ(static_cast<int>(ColorBlobs(d.video.frames[i], "black", 100).size()), expected)
        << "frame " << i;
  }
  EXPECT_EQ(ColorBlobs(d.video.frames.back(), "black", 100).size(), 5u);
}

TEST(Videos, MovingShapesMoveAsStated) {
  Decoded d = Load("moving_shapes");
  ASSERT_EQ(d.truth["shapes"].size(), 3u);
  EXPECT_EQ(d.truth["shapes"][0],
            json::parse(R"({"shape":"square","color":"green","motion":"left to right"})"));
  EXPECT_EQ(d.truth["shapes"][1],
            json::parse(R"({"shape":"circle","color":"blue","motion":"top to bottom"})"));
  EXPECT_EQ(d.truth["shapes"][2],
            json::parse(R"({"shape":"triangle","color":"orange","motion":"stationary"})"));
  const auto& frames = d.video.frames;
  ASSERT_EQ(frames.size(), 30u);
  Blob square0 = Only(frames.front(), "green", 0);
  Blob square1 = Only(frames.back(), "green", 29);
  Blob circle0 = Only(frames.front(), "blue", 0);
  Blob circle1 = Only(frames.back(), "blue", 29);
  Blob tri0 = Only(frames.front(), "orange", 0);
  Blob tri1 = Only(frames.back(), "orange", 29);
  EXPECT_GT(square1.cx - square0.cx, 150);  // left to right, along the top
  EXPECT_NEAR(square1.cy, square0.cy, 1);
  EXPECT_LT(square0.cy, 240 * 0.3);
  EXPECT_GT(square0.fill(), 0.9);
  EXPECT_GT(circle1.cy - circle0.cy, 80);  // top to bottom
  EXPECT_NEAR(circle1.cx, circle0.cx, 1);
  EXPECT_NEAR(circle0.fill(), 0.785, 0.06);
  EXPECT_NEAR(tri1.cx, tri0.cx, 0.5);  // still, bottom right
  EXPECT_NEAR(tri1.cy, tri0.cy, 0.5);
  EXPECT_GT(tri0.cx, 320 * 0.7);
  EXPECT_GT(tri0.cy, 240 * 0.7);
  EXPECT_NEAR(tri0.fill(), 0.5, 0.08);
}

TEST(Videos, FramesAreTheEncodedPictures) {
  Decoded d = Load("bouncing_ball");
  const int n = d.truth["frames"];
  auto frames = VideoFrames("bouncing_ball", n);
  ASSERT_TRUE(frames.has_value()) << frames.error().message;
  ASSERT_EQ(static_cast<int>(frames->size()), n);
  for (int i = 0; i < n; ++i) {
    const Asset& f = (*frames)[static_cast<size_t>(i)];
    EXPECT_EQ(f.name, "bouncing_ball#frame" + std::to_string(i));
    EXPECT_EQ(f.kind, Kind::kImage);
    EXPECT_EQ(f.mime, "image/png");
    EXPECT_EQ(f.sha256, Sha256Hex(f.bytes));
    json truth = json::parse(f.truth_json);
    EXPECT_EQ(truth["index"], i);
    EXPECT_EQ(truth["of"], "bouncing_ball");
    EXPECT_NEAR(truth["t_s"].get<double>(), (i + 0.5) * 4.0 / n, 1e-9);
    auto png = testing::DecodePng(f.bytes);
    ASSERT_TRUE(png.has_value());
    const Image& video_frame = d.video.frames[static_cast<size_t>(i)];
    ASSERT_EQ(png->width, video_frame.width);
    ASSERT_EQ(png->height, video_frame.height);
    // The same picture up to compression: the ball is in the same place.
    Blob a = Only(*png, "red", static_cast<size_t>(i));
    Blob b = Only(video_frame, "red", static_cast<size_t>(i));
    EXPECT_NEAR(a.cx, b.cx, 1.0) << i;
    EXPECT_NEAR(a.cy, b.cy, 1.0) << i;
  }
  // Sparse sampling: 4 frames at t = 0.5, 1.5, 2.5, 3.5 s.
  auto four = VideoFrames("color_cycle", 4);
  ASSERT_TRUE(four.has_value());
  std::vector<std::string> colours;
  for (const Asset& f : *four) {
    auto png = testing::DecodePng(f.bytes);
    ASSERT_TRUE(png.has_value());
    colours.push_back(ColorName(png->at(10, 10)));
    EXPECT_EQ(png->width, 320);
  }
  EXPECT_EQ(colours, (std::vector<std::string>{"red", "green", "blue", "yellow"}));
  EXPECT_NEAR(json::parse((*four)[1].truth_json)["t_s"].get<double>(), 1.5, 1e-9);
}

TEST(Videos, FramesRejectNonVideosAndBadCounts) {
  for (const char* name : {"bar_chart", "speech", "nope"}) {
    auto r = VideoFrames(name, 4);
    ASSERT_FALSE(r) << name;
    EXPECT_EQ(r.error().code, ErrorCode::kUsage);
    EXPECT_NE(r.error().message.find(name), std::string::npos);
    EXPECT_NE(r.error().message.find("bouncing_ball"), std::string::npos) << "lists the videos";
  }
  auto zero = VideoFrames("bouncing_ball", 0);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code, ErrorCode::kUsage);
  auto one = VideoFrames("counting_dots", 1);
  ASSERT_TRUE(one.has_value());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_NEAR(json::parse(one->front().truth_json)["t_s"].get<double>(), 1.5, 1e-9);
}

TEST(Videos, EncodingIsDeterministic) {
  for (const char* name : {"bouncing_ball", "probe_video"}) {
    auto a = internal::GenerateUncached(name);
    auto b = internal::GenerateUncached(name);
    ASSERT_TRUE(a && b) << name;
    EXPECT_TRUE(a->bytes == b->bytes) << name;
    EXPECT_EQ(a->sha256, b->sha256) << name;
  }
}

}  // namespace
}  // namespace sb::media
