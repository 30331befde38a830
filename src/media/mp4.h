// H.264 MP4 encoding with libavcodec/libavformat/libswscale and the libx264 encoder, set up to be
// reproducible: one thread, fixed preset, CRF and GOP, no B-frames, bit-exact muxer and codec
// flags, timestamps from the frame index only. The file is built in memory (moov at the end).
// Thread safety: no shared state (libav's log level is set once, to errors only).
#pragma once

#include <functional>
#include <string>

#include "core/result.h"
#include "media/draw.h"

namespace sb::media::internal {

struct VideoFormat {
  int width = 0;   // even
  int height = 0;  // even
  int fps = 0;
  int frames = 0;
};

// The MP4 file of format.frames frames, frame(i) giving frame i's pixels (format's size).
// kInternal error when libx264 is missing or a libav call fails (the message names the call).
Result<std::string> EncodeMp4(const VideoFormat& format,
                              const std::function<Result<draw::Pixels>(int)>& frame);

// "libavcodec 59.37.100, libavformat 59.27.100, libswscale 6.7.100".
std::string Mp4LibraryVersions();

}  // namespace sb::media::internal
