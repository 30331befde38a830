#include "media/mp4.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>

#include <fmt/format.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

namespace sb::media::internal {

namespace {

// The encoder settings; part of the bytes, so changing one needs a new kGeneratorVersion.
constexpr const char* kPreset = "medium";
constexpr const char* kCrf = "18";

struct CodecContextDeleter {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};

struct FrameDeleter {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};

struct PacketDeleter {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};

struct SwsDeleter {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};

// The growing file; the mp4 muxer seeks back to patch box sizes.
struct MemoryFile {
  std::string data;
  int64_t pos = 0;
};

int WritePacket(void* opaque, uint8_t* buf, int size) {
  auto* f = static_cast<MemoryFile*>(opaque);
  auto end = static_cast<size_t>(f->pos) + static_cast<size_t>(size);
  if (f->data.size() < end) {
    f->data.resize(end);
  }
  std::memcpy(f->data.data() + f->pos, buf, static_cast<size_t>(size));
  f->pos = static_cast<int64_t>(end);
  return size;
}

int64_t Seek(void* opaque, int64_t offset, int whence) {
  auto* f = static_cast<MemoryFile*>(opaque);
  auto size = static_cast<int64_t>(f->data.size());
  if ((whence & AVSEEK_SIZE) != 0) {
    return size;
  }
  int64_t target = 0;
  switch (whence & ~AVSEEK_FORCE) {
    case SEEK_SET:
      target = offset;
      break;
    case SEEK_CUR:
      target = f->pos + offset;
      break;
    case SEEK_END:
      target = size + offset;
      break;
    default:
      return AVERROR(EINVAL);
  }
  if (target < 0) {
    return AVERROR(EINVAL);
  }
  f->pos = target;
  return target;
}

// The output context with its custom I/O, freed together.
class Muxer {
 public:
  ~Muxer() {
    if (ctx_ != nullptr) {
      if (ctx_->pb != nullptr) {
        av_freep(&ctx_->pb->buffer);
        avio_context_free(&ctx_->pb);
      }
      avformat_free_context(ctx_);
    }
  }

  AVFormatContext* ctx_ = nullptr;
};

Error AvError(std::string_view call, int code) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, buf, sizeof(buf));
  return MakeError(ErrorCode::kInternal, fmt::format("video encoding: {} failed: {}", call, buf));
}

Error Failed(std::string_view what) {
  return MakeError(ErrorCode::kInternal, fmt::format("video encoding: {}", what));
}

// Sends frame (nullptr: flush) and writes every packet the encoder has ready.
Result<void> EncodeAndWrite(AVCodecContext* codec, AVFrame* frame, AVFormatContext* muxer,
                            AVStream* stream, AVPacket* packet) {
  int rc = avcodec_send_frame(codec, frame);
  if (rc < 0) {
    return AvError("avcodec_send_frame", rc);
  }
  while (true) {
    rc = avcodec_receive_packet(codec, packet);
    if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) {
      return {};
    }
    if (rc < 0) {
      return AvError("avcodec_receive_packet", rc);
    }
    av_packet_rescale_ts(packet, codec->time_base, stream->time_base);
    packet->stream_index = stream->index;
    rc = av_interleaved_write_frame(muxer, packet);
    if (rc < 0) {
      return AvError("av_interleaved_write_frame", rc);
    }
  }
}

// The H.264 encoder for `format`, opened with the fixed preset and quality (bit-exact output).
Result<std::unique_ptr<AVCodecContext, CodecContextDeleter>> OpenEncoder(
    const AVCodec* codec, const VideoFormat& format, const AVFormatContext* oc) {
  std::unique_ptr<AVCodecContext, CodecContextDeleter> enc(avcodec_alloc_context3(codec));
  if (!enc) {
    return Failed("avcodec_alloc_context3 failed");
  }
  enc->width = format.width;
  enc->height = format.height;
  enc->pix_fmt = AV_PIX_FMT_YUV420P;
  enc->time_base = AVRational{1, format.fps};
  enc->framerate = AVRational{format.fps, 1};
  enc->gop_size = format.fps;
  enc->max_b_frames = 0;
  enc->thread_count = 1;
  enc->flags |= AV_CODEC_FLAG_BITEXACT;
  enc->color_range = AVCOL_RANGE_MPEG;
  enc->colorspace = AVCOL_SPC_SMPTE170M;
  enc->color_primaries = AVCOL_PRI_SMPTE170M;
  enc->color_trc = AVCOL_TRC_SMPTE170M;
  if ((oc->oformat->flags & AVFMT_GLOBALHEADER) != 0) {
    enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  }
  AVDictionary* options = nullptr;
  av_dict_set(&options, "preset", kPreset, 0);
  av_dict_set(&options, "crf", kCrf, 0);
  const int rc = avcodec_open2(enc.get(), codec, &options);
  av_dict_free(&options);
  if (rc < 0) {
    return AvError("avcodec_open2(libx264)", rc);
  }
  return enc;
}

// The YUV frame each picture is converted into.
Result<std::unique_ptr<AVFrame, FrameDeleter>> MakeYuvFrame(const VideoFormat& format) {
  std::unique_ptr<AVFrame, FrameDeleter> yuv(av_frame_alloc());
  if (!yuv) {
    return Failed("out of memory");
  }
  yuv->format = AV_PIX_FMT_YUV420P;
  yuv->width = format.width;
  yuv->height = format.height;
  yuv->color_range = AVCOL_RANGE_MPEG;
  yuv->colorspace = AVCOL_SPC_SMPTE170M;
  const int rc = av_frame_get_buffer(yuv.get(), 0);
  if (rc < 0) {
    return AvError("av_frame_get_buffer", rc);
  }
  return yuv;
}

}  // namespace

Result<std::string> EncodeMp4(const VideoFormat& format,
                              const std::function<Result<draw::Pixels>(int)>& frame_at) {
  static std::once_flag quiet;
  std::call_once(quiet, [] { av_log_set_level(AV_LOG_ERROR); });

  const AVCodec* codec = avcodec_find_encoder_by_name("libx264");
  if (codec == nullptr) {
    return MakeError(ErrorCode::kInternal,
                     "video encoding: the libx264 encoder is not available in this libavcodec "
                     "build (Debian's libavcodec59 includes it)");
  }

  Muxer muxer;
  int rc = avformat_alloc_output_context2(&muxer.ctx_, nullptr, "mp4", nullptr);
  if (rc < 0 || muxer.ctx_ == nullptr) {
    return AvError("avformat_alloc_output_context2", rc);
  }
  AVFormatContext* oc = muxer.ctx_;
  oc->flags |= AVFMT_FLAG_BITEXACT | AVFMT_FLAG_CUSTOM_IO;
  MemoryFile file;
  constexpr int kIoBuffer = 1 << 16;
  auto* io_buffer = static_cast<unsigned char*>(av_malloc(kIoBuffer));
  if (io_buffer == nullptr) {
    return Failed("out of memory");
  }
  oc->pb = avio_alloc_context(io_buffer, kIoBuffer, 1, &file, nullptr, WritePacket, Seek);
  if (oc->pb == nullptr) {
    av_free(io_buffer);
    return Failed("avio_alloc_context failed");
  }

  auto opened = OpenEncoder(codec, format, oc);
  if (!opened) {
    return opened.error();
  }
  std::unique_ptr<AVCodecContext, CodecContextDeleter> enc = std::move(*opened);

  AVStream* stream = avformat_new_stream(oc, nullptr);
  if (stream == nullptr) {
    return Failed("avformat_new_stream failed");
  }
  rc = avcodec_parameters_from_context(stream->codecpar, enc.get());
  if (rc < 0) {
    return AvError("avcodec_parameters_from_context", rc);
  }
  stream->time_base = enc->time_base;
  stream->avg_frame_rate = enc->framerate;
  stream->r_frame_rate = enc->framerate;
  rc = avformat_write_header(oc, nullptr);
  if (rc < 0) {
    return AvError("avformat_write_header", rc);
  }

  auto made = MakeYuvFrame(format);
  if (!made) {
    return made.error();
  }
  std::unique_ptr<AVFrame, FrameDeleter> yuv = std::move(*made);
  std::unique_ptr<AVPacket, PacketDeleter> packet(av_packet_alloc());
  if (!packet) {
    return Failed("out of memory");
  }
  // cairo's RGB24 is a native-endian 0xXXRRGGBB word per pixel: AV_PIX_FMT_RGB32's layout.
  std::unique_ptr<SwsContext, SwsDeleter> sws(
      sws_getContext(format.width, format.height, AV_PIX_FMT_RGB32, format.width, format.height,
                     AV_PIX_FMT_YUV420P, SWS_BICUBIC | SWS_ACCURATE_RND | SWS_BITEXACT, nullptr,
                     nullptr, nullptr));
  if (!sws) {
    return Failed("sws_getContext failed");
  }

  for (int i = 0; i < format.frames; ++i) {
    auto pixels = frame_at(i);
    if (!pixels) {
      return pixels.error();
    }
    if (pixels->width != format.width || pixels->height != format.height) {
      return Failed("a frame has the wrong size");
    }
    rc = av_frame_make_writable(yuv.get());
    if (rc < 0) {
      return AvError("av_frame_make_writable", rc);
    }
    const uint8_t* src[1] = {pixels->data.data()};
    const int src_stride[1] = {pixels->stride};
    sws_scale(sws.get(), src, src_stride, 0, format.height, yuv->data, yuv->linesize);
    yuv->pts = i;
    auto written = EncodeAndWrite(enc.get(), yuv.get(), oc, stream, packet.get());
    if (!written) {
      return written.error();
    }
  }
  auto flushed = EncodeAndWrite(enc.get(), nullptr, oc, stream, packet.get());
  if (!flushed) {
    return flushed.error();
  }
  rc = av_write_trailer(oc);
  if (rc < 0) {
    return AvError("av_write_trailer", rc);
  }
  avio_flush(oc->pb);
  return std::move(file.data);
}

std::string Mp4LibraryVersions() {
  auto v = [](unsigned n) {
    return fmt::format("{}.{}.{}", AV_VERSION_MAJOR(n), AV_VERSION_MINOR(n), AV_VERSION_MICRO(n));
  };
  return fmt::format("libavcodec {}, libavformat {}, libswscale {}, x264 {} crf {}",
                     v(avcodec_version()), v(avformat_version()), v(swscale_version()), kPreset,
                     kCrf);
}

}  // namespace sb::media::internal
