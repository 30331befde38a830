#include "media/readback.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <memory>

#include <cairo.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

namespace sb::media::testing {

namespace {

struct Reader {
  std::string_view bytes;
  size_t pos = 0;
};

cairo_status_t ReadPng(void* closure, unsigned char* data, unsigned int length) {
  auto* r = static_cast<Reader*>(closure);
  if (r->bytes.size() - r->pos < length) {
    return CAIRO_STATUS_READ_ERROR;
  }
  std::memcpy(data, r->bytes.data() + r->pos, length);
  r->pos += length;
  return CAIRO_STATUS_SUCCESS;
}

int ReadPacket(void* opaque, uint8_t* buf, int size) {
  auto* r = static_cast<Reader*>(opaque);
  size_t n = std::min(static_cast<size_t>(size), r->bytes.size() - r->pos);
  if (n == 0) {
    return AVERROR_EOF;
  }
  std::memcpy(buf, r->bytes.data() + r->pos, n);
  r->pos += n;
  return static_cast<int>(n);
}

int64_t SeekPacket(void* opaque, int64_t offset, int whence) {
  auto* r = static_cast<Reader*>(opaque);
  auto size = static_cast<int64_t>(r->bytes.size());
  if ((whence & AVSEEK_SIZE) != 0) {
    return size;
  }
  int64_t target = (whence & ~AVSEEK_FORCE) == SEEK_SET   ? offset
                   : (whence & ~AVSEEK_FORCE) == SEEK_CUR ? static_cast<int64_t>(r->pos) + offset
                                                          : size + offset;
  if (target < 0 || target > size) {
    return AVERROR(EINVAL);
  }
  r->pos = static_cast<size_t>(target);
  return target;
}

uint32_t Le(std::string_view b, size_t at, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) {
    v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<size_t>(i)]);
  }
  return v;
}

}  // namespace

std::optional<Image> DecodePng(std::string_view bytes) {
  Reader reader{bytes};
  std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)> surface(
      cairo_image_surface_create_from_png_stream(ReadPng, &reader), cairo_surface_destroy);
  if (cairo_surface_status(surface.get()) != CAIRO_STATUS_SUCCESS) {
    return std::nullopt;
  }
  cairo_surface_flush(surface.get());
  Image img;
  img.width = cairo_image_surface_get_width(surface.get());
  img.height = cairo_image_surface_get_height(surface.get());
  int stride = cairo_image_surface_get_stride(surface.get());
  const unsigned char* data = cairo_image_surface_get_data(surface.get());
  for (int y = 0; y < img.height; ++y) {
    const auto* row = reinterpret_cast<const uint32_t*>(data + static_cast<size_t>(y) * stride);
    for (int x = 0; x < img.width; ++x) {
      uint32_t p = row[x];
      img.pixels.push_back(Pixel{static_cast<uint8_t>(p >> 16), static_cast<uint8_t>(p >> 8),
                                 static_cast<uint8_t>(p)});
    }
  }
  return img;
}

std::optional<Video> DecodeMp4(std::string_view bytes) {
  Reader reader{bytes};
  constexpr int kBuffer = 1 << 15;
  auto* buffer = static_cast<unsigned char*>(av_malloc(kBuffer));
  AVIOContext* pb =
      avio_alloc_context(buffer, kBuffer, 0, &reader, ReadPacket, nullptr, SeekPacket);
  AVFormatContext* fmt = avformat_alloc_context();
  fmt->pb = pb;
  auto cleanup = [&](AVCodecContext* dec) {
    avcodec_free_context(&dec);
    avformat_close_input(&fmt);
    av_freep(&pb->buffer);
    avio_context_free(&pb);
  };
  if (avformat_open_input(&fmt, nullptr, nullptr, nullptr) < 0 ||
      avformat_find_stream_info(fmt, nullptr) < 0) {
    std::cerr << "DecodeMp4: cannot open the stream\n";
    cleanup(nullptr);
    return std::nullopt;
  }
  int index = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (index < 0) {
    std::cerr << "DecodeMp4: no video stream\n";
    cleanup(nullptr);
    return std::nullopt;
  }
  AVStream* st = fmt->streams[index];
  const AVCodec* codec = avcodec_find_decoder(st->codecpar->codec_id);
  AVCodecContext* dec = avcodec_alloc_context3(codec);
  avcodec_parameters_to_context(dec, st->codecpar);
  dec->thread_count = 1;
  if (avcodec_open2(dec, codec, nullptr) < 0) {
    std::cerr << "DecodeMp4: cannot open the decoder\n";
    cleanup(dec);
    return std::nullopt;
  }
  Video v;
  v.codec = avcodec_get_name(st->codecpar->codec_id);
  const char* pix = av_get_pix_fmt_name(static_cast<AVPixelFormat>(st->codecpar->format));
  v.pix_fmt = pix != nullptr ? pix : "";
  v.width = st->codecpar->width;
  v.height = st->codecpar->height;
  v.fps = av_q2d(st->avg_frame_rate);

  SwsContext* sws = nullptr;
  AVPacket* pkt = av_packet_alloc();
  AVFrame* frame = av_frame_alloc();
  auto drain = [&]() {
    while (avcodec_receive_frame(dec, frame) == 0) {
      sws = sws_getCachedContext(
          sws, frame->width, frame->height, static_cast<AVPixelFormat>(frame->format), frame->width,
          frame->height, AV_PIX_FMT_RGB24, SWS_BILINEAR, nullptr, nullptr, nullptr);
      Image img;
      img.width = frame->width;
      img.height = frame->height;
      img.pixels.resize(static_cast<size_t>(img.width) * img.height);
      uint8_t* dst[1] = {reinterpret_cast<uint8_t*>(img.pixels.data())};
      int dst_stride[1] = {img.width * 3};
      sws_scale(sws, frame->data, frame->linesize, 0, frame->height, dst, dst_stride);
      v.frames.push_back(std::move(img));
    }
  };
  while (av_read_frame(fmt, pkt) >= 0) {
    if (pkt->stream_index == index && avcodec_send_packet(dec, pkt) == 0) {
      drain();
    }
    av_packet_unref(pkt);
  }
  avcodec_send_packet(dec, nullptr);
  drain();
  sws_freeContext(sws);
  av_frame_free(&frame);
  av_packet_free(&pkt);
  cleanup(dec);
  return v;
}

std::optional<Wav> ParseWav(std::string_view b) {
  if (b.size() < 12 || b.substr(0, 4) != "RIFF" || b.substr(8, 4) != "WAVE") {
    return std::nullopt;
  }
  if (Le(b, 4, 4) + 8 != b.size()) {
    return std::nullopt;  // the RIFF size must cover the file exactly
  }
  Wav w;
  bool have_fmt = false;
  size_t pos = 12;
  while (pos + 8 <= b.size()) {
    std::string_view id = b.substr(pos, 4);
    size_t size = Le(b, pos + 4, 4);
    size_t body = pos + 8;
    if (body + size > b.size()) {
      return std::nullopt;
    }
    if (id == "fmt " && size >= 16) {
      w.format = static_cast<int>(Le(b, body, 2));
      w.channels = static_cast<int>(Le(b, body + 2, 2));
      w.sample_rate = static_cast<int>(Le(b, body + 4, 4));
      w.bits = static_cast<int>(Le(b, body + 14, 2));
      have_fmt = true;
    } else if (id == "data") {
      if (!have_fmt || w.bits != 16) {
        return std::nullopt;
      }
      for (size_t i = 0; i + 1 < size; i += 2) {
        w.samples.push_back(static_cast<int16_t>(Le(b, body + i, 2)));
      }
      return w;
    }
    pos = body + size + (size & 1);
  }
  return std::nullopt;
}

std::string ColorName(const Pixel& p) {
  double r = p.r / 255.0;
  double g = p.g / 255.0;
  double b = p.b / 255.0;
  double mx = std::max({r, g, b});
  double mn = std::min({r, g, b});
  double s = mx > 0 ? (mx - mn) / mx : 0;
  if (s < 0.5) {
    if (mx > 0.85 && s < 0.1)
      return "white";
    if (mx < 0.25)
      return "black";
    return "";
  }
  double d = mx - mn;
  double h = 0;
  if (mx == r) {
    h = 60 * std::fmod((g - b) / d + 6, 6);
  } else if (mx == g) {
    h = 60 * ((b - r) / d + 2);
  } else {
    h = 60 * ((r - g) / d + 4);
  }
  if (h < 15 || h >= 335)
    return "red";
  if (h < 45)
    return mx < 0.6 ? "brown" : "orange";
  if (h < 70)
    return "yellow";
  if (h < 170)
    return "green";
  if (h < 190)
    return "";
  if (h < 260)
    return "blue";
  return "purple";
}

std::vector<Blob> Blobs(const Image& image, const std::function<bool(const Pixel&)>& in,
                        int min_pixels) {
  std::vector<char> seen(image.pixels.size(), 0);
  std::vector<Blob> blobs;
  std::vector<std::pair<int, int>> stack;
  for (int y0 = 0; y0 < image.height; ++y0) {
    for (int x0 = 0; x0 < image.width; ++x0) {
      size_t i0 = static_cast<size_t>(y0) * image.width + x0;
      if (seen[i0] != 0 || !in(image.pixels[i0])) {
        continue;
      }
      Blob blob{0, x0, x0, y0, y0, 0, 0};
      double sx = 0;
      double sy = 0;
      seen[i0] = 1;
      stack.assign(1, {x0, y0});
      while (!stack.empty()) {
        auto [x, y] = stack.back();
        stack.pop_back();
        ++blob.pixels;
        sx += x;
        sy += y;
        blob.min_x = std::min(blob.min_x, x);
        blob.max_x = std::max(blob.max_x, x);
        blob.min_y = std::min(blob.min_y, y);
        blob.max_y = std::max(blob.max_y, y);
        const std::pair<int, int> next[] = {{x + 1, y}, {x - 1, y}, {x, y + 1}, {x, y - 1}};
        for (auto [nx, ny] : next) {
          if (nx < 0 || ny < 0 || nx >= image.width || ny >= image.height) {
            continue;
          }
          size_t ni = static_cast<size_t>(ny) * image.width + nx;
          if (seen[ni] == 0 && in(image.pixels[ni])) {
            seen[ni] = 1;
            stack.emplace_back(nx, ny);
          }
        }
      }
      if (blob.pixels >= min_pixels) {
        blob.cx = sx / blob.pixels;
        blob.cy = sy / blob.pixels;
        blobs.push_back(blob);
      }
    }
  }
  return blobs;
}

std::vector<Blob> ColorBlobs(const Image& image, std::string_view color, int min_pixels) {
  return Blobs(
      image, [&](const Pixel& p) { return ColorName(p) == color; }, min_pixels);
}

}  // namespace sb::media::testing
