// gzip for the simulator's responses (SimOptions::gzip), over zlib. GzipStream compresses a
// stream piece by piece and flushes after each piece (Z_SYNC_FLUSH), so the client can decode
// every SSE event as soon as its bytes arrive; Gzip compresses a whole body.
// Not thread-safe: one GzipStream per response.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace sb::sim {

class GzipStream {
 public:
  // A small window (4 KiB) and memLevel 4: about 24 KiB of zlib state per stream, so thousands
  // of concurrent streams stay cheap; SSE chunks repeat within a few hundred bytes anyway.
  GzipStream();
  ~GzipStream();
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  // Appends the compressed form of `in` to out, flushed so that everything written so far can
  // be decoded; finish = true ends the gzip member (trailer), after which Write must not be
  // called again. Always appends at least a few bytes.
  void Write(std::string_view in, bool finish, std::string& out);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A complete gzip member holding `in`.
std::string Gzip(std::string_view in);

}  // namespace sb::sim
