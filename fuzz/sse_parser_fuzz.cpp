// libFuzzer target: SseParser must give the same events however the bytes are split.
// Input: byte 0 (low 4 bits) = number of cuts n; then n little-endian uint16 cut offsets (spread
// over the whole stream when it is longer than 64 KiB); the rest is the stream. Each parse
// (whole, cut at the offsets, 1-byte pieces) must agree exactly, including Finish()'s clean
// flag; any difference aborts. Inputs up to 1 MiB, from short seeds too (fuzz/expand.h), and the
// parser's memory stays within its cap.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "client/sse_parser.h"
#include "expand.h"

namespace {

struct Parsed {
  std::vector<sb::client::SseEvent> events;
  bool clean = false;
  bool operator==(const Parsed&) const = default;
};

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "sse_parser_fuzz: %s \n", what);
    std::abort();
  }
}

Parsed Parse(std::string_view input, const std::vector<std::size_t>& cuts) {
  sb::client::SseParser parser;
  Parsed out;
  std::size_t at = 0;
  for (std::size_t cut : cuts) {
    parser.Feed(input.substr(at, cut - at), out.events);
    at = cut;
  }
  parser.Feed(input.substr(at), out.events);
  Check(parser.buffered_bytes() <= 2 * parser.max_line_bytes() + 64, "buffer over its cap");
  out.clean = parser.Finish(out.events);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* raw_data, std::size_t raw_size) {
  std::string expanded;
  const std::string_view bytes = sb::fuzz::Expand(raw_data, raw_size, expanded);
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const std::size_t size = bytes.size();
  if (size == 0) {
    return 0;
  }
  std::size_t n = data[0] & 0x0F;
  if (size < 1 + 2 * n) {
    n = 0;
  }
  const std::size_t header = 1 + 2 * n;
  const std::string_view input(reinterpret_cast<const char*>(data) + header, size - header);
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t raw = data[1 + 2 * i] | (static_cast<std::size_t>(data[2 + 2 * i]) << 8);
    const std::size_t cut =
        input.size() < 0x10000 ? raw % (input.size() + 1) : raw * ((input.size() + 1) >> 16);
    if (cut > 0 && cut < input.size()) {
      cuts.push_back(cut);
    }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());

  const Parsed whole = Parse(input, {});
  Check(Parse(input, cuts) == whole, "cut parse differs from the one-piece parse");
  if (input.size() <= 4096) {  // 1-byte pieces: quadratic in events, keep inputs small
    std::vector<std::size_t> every;
    for (std::size_t k = 1; k < input.size(); ++k) {
      every.push_back(k);
    }
    Check(Parse(input, every) == whole, "1-byte parse differs from the one-piece parse");
  }
  // A parser reused after Finish() behaves like a fresh one.
  sb::client::SseParser reused;
  std::vector<sb::client::SseEvent> scratch;
  reused.Feed("data: warm-up\n\ndata: partial", scratch);
  reused.Finish(scratch);
  Parsed again;
  reused.Feed(input, again.events);
  again.clean = reused.Finish(again.events);
  Check(again == whole, "reused parser differs from the one-piece parse");
  return 0;
}
