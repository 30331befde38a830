// The native transport's response framing (http_impl.h, http_native.cpp): the head line by
// line (status, the headers that frame the body), the body by Content-Length, chunked transfer
// coding or the connection's close, and a gzip/deflate body decoded as it arrives. Every byte
// of the head goes through CurlLoop::OnHeader and every body byte through OnWrite, as libcurl
// hands them over.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <string>

#include <curl/curl.h>
#include <zlib.h>

#include "client/http_impl.h"

namespace sb::client {

using namespace detail;  // NOLINT(build/namespaces): this module's private helpers

namespace {

constexpr std::size_t kChunkLineCap = 1024;  // a chunk-size line (with extensions)

// "HTTP/1.1 200 OK": the status, or 0 when the line is not a status line.
int ParseStatusLine(std::string_view line, bool& http10) {
  if (!StartsWithNoCase(line, "http/1.") || line.size() < 12 || line[8] != ' ') {
    return 0;
  }
  http10 = line[7] == '0';
  int status = 0;
  const auto [end, ec] = std::from_chars(line.data() + 9, line.data() + 12, status);
  if (ec != std::errc() || end != line.data() + 12 || status < 100 || status > 999) {
    return 0;
  }
  if (line.size() > 12 && line[12] != ' ' && line[12] != '\r' && line[12] != '\n') {
    return 0;
  }
  return status;
}

bool HeaderIs(std::string_view line, std::string_view name, std::string_view& value) {
  if (line.size() <= name.size() || line[name.size()] != ':' || !StartsWithNoCase(line, name)) {
    return false;
  }
  value = TrimView(line.substr(name.size() + 1));
  return true;
}

bool ContainsToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    const std::string_view item = TrimView(value.substr(0, comma));
    if (item.size() == token.size() && StartsWithNoCase(item, token)) {
      return true;
    }
    if (comma == std::string_view::npos) {
      break;
    }
    value.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

struct Inflater {
  z_stream z{};
  bool raw_tried = false;  // "deflate" sent without its zlib wrapper: tried as raw deflate
  bool ended = false;      // the compressed stream is complete: what follows is ignored
};

void InflaterFree::operator()(Inflater* i) const {
  inflateEnd(&i->z);
  delete i;
}

bool CurlLoop::NativeHeadLine(Transfer& t, std::string_view line) {
  NativeFrame& f = t.frame;
  if (!f.status_seen) {
    bool http10 = false;
    f.status = ParseStatusLine(line, http10);
    if (f.status == 0) {
      NativeFail(t, CURLE_WEIRD_SERVER_REPLY, "malformed HTTP status line");
      return false;
    }
    f.status_seen = true;
    f.keep_alive = !http10;
    f.content_length = -1;
    f.chunked = false;
  } else if (line != "\r\n" && line != "\n") {
    std::string_view value;
    if (HeaderIs(line, "content-length", value)) {
      std::uint64_t len = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), len);
      if (ec != std::errc() || end != value.data() + value.size() ||
          len > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        NativeFail(t, CURLE_WEIRD_SERVER_REPLY, "malformed Content-Length");
        return false;
      }
      f.content_length = static_cast<std::int64_t>(len);
    } else if (HeaderIs(line, "content-encoding", value)) {
      // What the request asked for (Accept-Encoding: deflate, gzip) is decoded as it arrives,
      // as libcurl does; anything else is handed over as sent.
      t.inflater.reset();
      if (ContainsToken(value, "gzip") || ContainsToken(value, "x-gzip") ||
          ContainsToken(value, "deflate")) {
        auto* inf = new Inflater;
        if (inflateInit2(&inf->z, 15 + 32) != Z_OK) {  // zlib or gzip wrapper, detected
          delete inf;
          NativeFail(t, CURLE_OUT_OF_MEMORY, "cannot set up a gzip decoder");
          return false;
        }
        t.inflater.reset(inf);
      }
    } else if (HeaderIs(line, "transfer-encoding", value)) {
      f.chunked = ContainsToken(value, "chunked");
    } else if (HeaderIs(line, "connection", value)) {
      if (ContainsToken(value, "close")) {
        f.keep_alive = false;
      } else if (ContainsToken(value, "keep-alive")) {
        f.keep_alive = true;
      }
    }
  }
  // The line through libcurl's header callback: first byte, head cap, the headers kept.
  if (OnHeader(const_cast<char*>(line.data()), 1, line.size(), &t) != line.size()) {
    native_done.emplace_back(&t, CURLE_WRITE_ERROR);
    by_fd[static_cast<std::size_t>(t.fd)] = nullptr;
    return false;
  }
  if (line != "\r\n" && line != "\n") {
    return true;
  }
  using S = NativeFrame::State;
  if (f.status < 200) {  // an interim response (100 Continue ...): the real one follows
    f.status_seen = false;
    t.inflater.reset();
    return true;
  }
  t.status = f.status;
  if (f.status == 204 || f.status == 304) {
    f.state = S::kDone;
  } else if (f.chunked) {
    f.state = S::kChunkSize;
  } else if (f.content_length >= 0) {
    f.remaining = static_cast<std::uint64_t>(f.content_length);
    f.state = f.remaining == 0 ? S::kDone : S::kLength;
  } else {
    f.state = S::kUntilClose;
    f.keep_alive = false;
  }
  return true;
}

bool CurlLoop::FeedNative(Transfer& t, const char* p, std::size_t n) {
  using S = NativeFrame::State;
  NativeFrame& f = t.frame;
  while (n > 0 || f.state == S::kDone) {
    if (f.state == S::kDone) {
      if (n > 0) {
        f.keep_alive = false;  // bytes after the response: the connection is not reused
      }
      native_done.emplace_back(&t, CURLE_OK);
      by_fd[static_cast<std::size_t>(t.fd)] = nullptr;
      return false;
    }
    if (f.state == S::kUntilClose) {
      return NativeBody(t, p, n);
    }
    if (f.state == S::kLength || f.state == S::kChunkData) {  // counted body bytes
      const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(f.remaining, n));
      if (!NativeBody(t, p, k)) {
        return false;
      }
      p += k;
      n -= k;
      f.remaining -= k;
      if (f.remaining == 0) {
        f.state = f.state == S::kLength ? S::kDone : S::kChunkEnd;
      }
      continue;
    }
    // A line: of the head, a chunk's size or end, or the trailer.
    const std::size_t cap = f.state == S::kHead ? kHeaderCap - std::min(kHeaderCap, t.header_bytes)
                            : f.state == S::kTrailer ? kHeaderCap
                                                     : kChunkLineCap;
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', n));
    const std::size_t k = nl != nullptr ? static_cast<std::size_t>(nl - p) + 1 : n;
    if (f.line.size() + k > cap) {
      return NativeLineOverCap(t, n);
    }
    f.line.append(p, k);
    p += k;
    n -= k;
    if (nl == nullptr) {
      return true;  // the rest of the line comes with the next bytes
    }
    const bool ok = f.state == S::kHead ? NativeHeadLine(t, f.line) : NativeChunkLine(t, f.line);
    f.line.clear();
    if (!ok) {
      return false;
    }
  }
  return true;
}

bool CurlLoop::NativeLineOverCap(Transfer& t, std::size_t pending) {
  using S = NativeFrame::State;
  if (t.frame.state == S::kHead) {
    t.aborted = true;
    t.resp->outcome = Outcome::kProtocol;
    t.resp->reason = HeaderOverLimit(t.header_bytes + t.frame.line.size() + pending);
    NativeFail(t, CURLE_WRITE_ERROR, t.resp->reason);
  } else if (t.frame.state == S::kTrailer) {
    NativeFail(t, CURLE_RECV_ERROR, "chunked response trailer over the limit");
  } else {
    NativeFail(t, CURLE_RECV_ERROR, "malformed chunk in a chunked response body");
  }
  return false;
}

bool CurlLoop::NativeChunkLine(Transfer& t, std::string_view line) {
  using S = NativeFrame::State;
  NativeFrame& f = t.frame;
  if (f.state == S::kTrailer) {
    if (TrimView(line).empty()) {
      f.state = S::kDone;
    }
    return true;
  }
  if (f.state == S::kChunkEnd) {  // the CRLF after a chunk's data
    if (!TrimView(line).empty()) {
      NativeFail(t, CURLE_RECV_ERROR, "malformed chunk in a chunked response body");
      return false;
    }
    f.state = S::kChunkSize;
    return true;
  }
  std::uint64_t size = 0;  // kChunkSize: hex digits, then maybe ";extension"
  const std::string_view digits = TrimView(line.substr(0, line.find(';')));
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), size, 16);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    NativeFail(t, CURLE_RECV_ERROR, "malformed chunk in a chunked response body");
    return false;
  }
  f.remaining = size;
  f.state = size == 0 ? S::kTrailer : S::kChunkData;
  return true;
}

bool CurlLoop::NativeBody(Transfer& t, const char* p, std::size_t n) {
  const auto write = [&](char* d, std::size_t k) {
    if (k == 0 || OnWrite(d, 1, k, &t) == k) {
      return true;
    }
    native_done.emplace_back(&t, CURLE_WRITE_ERROR);
    by_fd[static_cast<std::size_t>(t.fd)] = nullptr;
    return false;
  };
  if (!t.inflater) {
    return write(const_cast<char*>(p), n);
  }
  Inflater& inf = *t.inflater;
  if (inf.ended) {
    return true;
  }
  char out[16 * 1024];
  z_stream& z = inf.z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p));
  z.avail_in = static_cast<uInt>(n);
  while (z.avail_in > 0) {
    z.next_out = reinterpret_cast<Bytef*>(out);
    z.avail_out = sizeof out;
    const uLong before = z.total_in;
    int rc = inflate(&z, Z_SYNC_FLUSH);
    if (rc == Z_DATA_ERROR && !inf.raw_tried && before == 0) {
      // "deflate" as raw deflate data (some servers send it so): start over without a wrapper.
      inf.raw_tried = true;
      inflateEnd(&z);
      z = z_stream{};
      if (inflateInit2(&z, -15) != Z_OK) {
        NativeFail(t, CURLE_BAD_CONTENT_ENCODING, "cannot set up a deflate decoder");
        return false;
      }
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p));
      z.avail_in = static_cast<uInt>(n);
      continue;
    }
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      NativeFail(t, CURLE_BAD_CONTENT_ENCODING,
                 std::string("Error while processing content unencoding: ") +
                     (z.msg != nullptr ? z.msg : "invalid compressed data"));
      return false;
    }
    if (!write(out, sizeof out - z.avail_out)) {
      return false;
    }
    if (rc == Z_STREAM_END) {
      inf.ended = true;
      return true;
    }
    if (rc == Z_BUF_ERROR && z.avail_out > 0) {
      break;  // no progress possible: more input needed
    }
  }
  return true;
}

}  // namespace sb::client
