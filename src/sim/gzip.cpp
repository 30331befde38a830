#include "sim/gzip.h"

#include <stdexcept>

#include <zlib.h>

namespace sb::sim {

struct GzipStream::State {
  z_stream z{};
  bool finished = false;
};

namespace {

constexpr int kGzipWindowBits = 12 + 16;  // 4 KiB window; +16 = gzip header and trailer
constexpr int kMemLevel = 4;

void Deflate(z_stream& z, std::string_view in, int flush, std::string& out) {
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  unsigned char buf[16384];
  for (;;) {
    z.next_out = buf;
    z.avail_out = sizeof buf;
    const int rc = deflate(&z, flush);
    if (rc == Z_STREAM_ERROR) {
      throw std::runtime_error("deflate failed");
    }
    out.append(reinterpret_cast<const char*>(buf), sizeof buf - z.avail_out);
    // Done when zlib had room left (all input consumed and flushed), or at the stream's end.
    if (rc == Z_STREAM_END || (z.avail_out != 0 && z.avail_in == 0)) {
      return;
    }
  }
}

}  // namespace

GzipStream::GzipStream() : state_(std::make_unique<State>()) {
  if (deflateInit2(&state_->z, Z_BEST_SPEED, Z_DEFLATED, kGzipWindowBits, kMemLevel,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
}

GzipStream::~GzipStream() {
  deflateEnd(&state_->z);
}

void GzipStream::Write(std::string_view in, bool finish, std::string& out) {
  if (state_->finished) {
    return;
  }
  Deflate(state_->z, in, finish ? Z_FINISH : Z_SYNC_FLUSH, out);
  state_->finished = finish;
}

std::string Gzip(std::string_view in) {
  GzipStream g;
  std::string out;
  g.Write(in, true, out);
  return out;
}

}  // namespace sb::sim
