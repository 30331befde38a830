#include "sim/http.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "sim/engine.h"

namespace sb::sim {
namespace {

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// True if `list` (a comma-separated header value) contains `token`, case-insensitively.
bool HasToken(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) {
      item.remove_prefix(1);
    }
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) {
      item.remove_suffix(1);
    }
    if (IEquals(item, token)) {
      return true;
    }
    if (comma == std::string_view::npos) {
      break;
    }
    list.remove_prefix(comma + 1);
  }
  return false;
}

bool IsTokenChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

ParseResult Fail(int status, std::string message) {
  ParseResult r;
  r.kind = ParseResult::Kind::kError;
  r.error_status = status;
  r.error_message = std::move(message);
  return r;
}

// Validates "METHOD SP target SP HTTP/1.x"; fills method/path and the version's keep-alive
// default. Returns an error message, empty when valid.
std::string ParseRequestLine(std::string_view line, HttpRequest& req, bool& http10) {
  const std::size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || sp1 == 0) {
    return "malformed request line";
  }
  const std::size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || sp2 == sp1 + 1) {
    return "malformed request line";
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!std::all_of(method.begin(), method.end(), IsTokenChar)) {
    return "malformed method";
  }
  if (target.front() != '/' && target != "*") {
    return "malformed request target";
  }
  for (const char c : target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return "malformed request target";
    }
  }
  if (version == "HTTP/1.1") {
    http10 = false;
  } else if (version == "HTTP/1.0") {
    http10 = true;
  } else {
    return "unsupported HTTP version";
  }
  req.method = std::string(method);
  req.path = std::string(target.substr(0, target.find('?')));
  return {};
}

}  // namespace

void RequestParser::Reset() {
  scanned_ = 0;
  line_checked_ = false;
  head_done_ = false;
  head_len_ = 0;
  body_len_ = 0;
  continue_sent_ = false;
  pending_ = HttpRequest{};
  expect_continue_ = false;
}

// Before the head is complete: skip empty lines before the request line, and refuse garbage as
// soon as the first line is complete (or its method cannot be one). A result to return at once,
// or nullopt to go on.
std::optional<ParseResult> RequestParser::CheckFirstLine(std::string& buffer) {
  // RFC 9112 2.2: ignore empty lines before the request line.
  std::size_t skip = 0;
  while (skip + 1 < buffer.size() && buffer[skip] == '\r' && buffer[skip + 1] == '\n') {
    skip += 2;
  }
  if (skip > 0) {
    buffer.erase(0, skip);
    scanned_ = 0;
  }
  if (buffer.size() == 1 && buffer[0] == '\r') {
    return ParseResult{};  // maybe the start of an empty line
  }
  // Reject garbage as soon as the first line is complete, without waiting for a blank line.
  // Bytes before scanned_ hold no LF (else the line would have been checked).
  const std::size_t first_lf = buffer.find('\n', scanned_);
  if (first_lf != std::string::npos) {
    if (first_lf == 0 || buffer[first_lf - 1] != '\r') {
      return Fail(400, "request line must end with CRLF");
    }
    HttpRequest probe;
    bool http10 = false;
    std::string err =
        ParseRequestLine(std::string_view(buffer).substr(0, first_lf - 1), probe, http10);
    if (!err.empty()) {
      return Fail(400, err);
    }
    line_checked_ = true;
  } else {
    // No complete line yet: the method must already look like one (a TLS handshake or
    // binary junk is refused at once instead of waiting for a line end that never comes).
    constexpr std::size_t kMaxMethod = 32;
    const std::size_t n = std::min(buffer.size(), kMaxMethod + 1);
    std::size_t i = 0;
    while (i < n && buffer[i] != ' ') {
      if (!IsTokenChar(buffer[i]) && buffer[i] != '\r') {
        return Fail(400, "malformed request line");
      }
      ++i;
    }
    if (i > kMaxMethod) {
      return Fail(400, "malformed request line");
    }
    if (buffer.size() > kMaxHeaderBytes) {
      return Fail(431, "request header too large");
    }
  }
  return std::nullopt;
}

// The request line and headers of `head` (up to and with the last header's CRLF) into
// pending_: keep-alive, gzip, Expect; Content-Length into body_len_. A failure, or nullopt.
std::optional<ParseResult> RequestParser::ParseHead(std::string_view head) {
  // Request line.
  std::size_t pos = head.find("\r\n");
  bool http10 = false;
  std::string err = ParseRequestLine(head.substr(0, pos), pending_, http10);
  if (!err.empty()) {
    return Fail(400, err);
  }
  pending_.keep_alive = !http10;
  pending_.http10 = http10;
  pos += 2;
  bool have_length = false;
  std::uint64_t length = 0;
  while (pos < head.size()) {
    const std::size_t eol = head.find("\r\n", pos);
    const std::string_view line = head.substr(pos, eol - pos);
    pos = eol + 2;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return Fail(400, "malformed header line");
    }
    const std::string_view name = line.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), IsTokenChar)) {
      return Fail(400, "malformed header name");
    }
    const std::string_view value = Trim(line.substr(colon + 1));
    if (IEquals(name, "Content-Length")) {
      std::uint64_t v = 0;
      const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (value.empty() || ec != std::errc() || p != value.data() + value.size()) {
        return Fail(400, "invalid Content-Length");
      }
      if (have_length && v != length) {
        return Fail(400, "conflicting Content-Length headers");
      }
      have_length = true;
      length = v;
    } else if (IEquals(name, "Transfer-Encoding")) {
      return Fail(411, "chunked request bodies are not supported; send Content-Length");
    } else if (IEquals(name, "Connection")) {
      if (HasToken(value, "close")) {
        pending_.keep_alive = false;
      } else if (HasToken(value, "keep-alive")) {
        pending_.keep_alive = true;
      }
    } else if (IEquals(name, "Accept-Encoding")) {
      pending_.accepts_gzip = AcceptsGzip(value);
    } else if (IEquals(name, "Expect")) {
      if (!IEquals(value, "100-continue")) {
        return Fail(417, "unsupported Expect header");
      }
      expect_continue_ = !http10;
    }
  }
  if (length > kMaxBodyBytes) {
    return Fail(413, "request body larger than 64 MiB");
  }
  body_len_ = static_cast<std::size_t>(length);
  return std::nullopt;
}

ParseResult RequestParser::Parse(std::string& buffer) {
  if (!head_done_) {
    if (!line_checked_) {
      if (auto r = CheckFirstLine(buffer)) {
        return std::move(*r);
      }
    }
    const std::size_t from = scanned_ >= 3 ? scanned_ - 3 : 0;
    const std::size_t end = buffer.find("\r\n\r\n", from);
    if (end == std::string::npos) {
      scanned_ = buffer.size();
      if (buffer.size() > kMaxHeaderBytes) {
        return Fail(431, "request header too large");
      }
      return {};
    }
    head_len_ = end + 4;
    if (head_len_ > kMaxHeaderBytes) {
      return Fail(431, "request header too large");
    }
    // The head, with its last header's CRLF.
    if (auto r = ParseHead(std::string_view(buffer.data(), end + 2))) {
      return std::move(*r);
    }
    head_done_ = true;
  }
  if (buffer.size() < head_len_ + body_len_) {
    if (expect_continue_ && !continue_sent_ && buffer.size() == head_len_) {
      continue_sent_ = true;
      ParseResult r;
      r.kind = ParseResult::Kind::kContinue;
      return r;
    }
    return {};
  }
  ParseResult r;
  r.kind = ParseResult::Kind::kRequest;
  r.request = std::move(pending_);
  r.request.body.assign(buffer, head_len_, body_len_);
  buffer.erase(0, head_len_ + body_len_);
  Reset();
  return r;
}

bool AcceptsGzip(std::string_view list) {
  bool gzip = false;
  bool star = false;
  bool gzip_named = false;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    const std::size_t semi = item.find(';');
    const std::string_view coding = Trim(item.substr(0, semi));
    bool zero = false;
    if (semi != std::string_view::npos) {
      std::string_view params = item.substr(semi + 1);
      while (!params.empty()) {
        const std::size_t next = params.find(';');
        const std::string_view p = Trim(params.substr(0, next));
        params = next == std::string_view::npos ? std::string_view() : params.substr(next + 1);
        if (p.size() >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
          const std::string_view q = p.substr(2);
          zero = !q.empty() && q.find_first_not_of("0.") == std::string_view::npos;
        }
      }
    }
    if (IEquals(coding, "gzip") || IEquals(coding, "x-gzip")) {
      gzip_named = true;
      gzip = !zero;
    } else if (coding == "*") {
      star = !zero;
    }
  }
  return gzip_named ? gzip : star;
}

std::string_view StatusText(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 417:
      return "Expectation Failed";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Unknown";
  }
}

std::string HttpDate(std::time_t t) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday % 7],
                tm.tm_mday, kMonths[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return buf;
}

std::string ResponseHead(int status, std::string_view content_type, std::int64_t content_length,
                         bool keep_alive, std::string_view extra_headers) {
  std::string h;
  h.reserve(256);
  h += "HTTP/1.1 ";
  h += std::to_string(status);
  h += ' ';
  h += StatusText(status);
  h += "\r\nServer: ";
  h += kServerName;
  h += "\r\nDate: ";
  // The precise clock: time() reads the coarse one, which lags by up to a scheduler tick.
  h += HttpDate(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()));
  h += "\r\n";
  if (!content_type.empty()) {
    h += "Content-Type: ";
    h += content_type;
    h += "\r\n";
  }
  if (content_length >= 0) {
    h += "Content-Length: ";
    h += std::to_string(content_length);
    h += "\r\n";
  } else if (content_length == kChunkedBody) {
    h += "Transfer-Encoding: chunked\r\n";
  }
  h += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  h += extra_headers;
  h += "\r\n";
  return h;
}

std::string Response(int status, std::string_view content_type, std::string_view body,
                     bool keep_alive, std::string_view extra_headers) {
  std::string r = ResponseHead(status, content_type, static_cast<std::int64_t>(body.size()),
                               keep_alive, extra_headers);
  r += body;
  return r;
}

void AppendChunk(std::string& out, std::string_view data) {
  if (data.empty()) {
    return;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  char digits[16];
  int n = 0;
  std::size_t size = data.size();
  do {
    digits[n++] = kHex[size & 0xF];
    size >>= 4;
  } while (size != 0);
  while (n > 0) {
    out.push_back(digits[--n]);
  }
  out += "\r\n";
  out += data;
  out += "\r\n";
}

}  // namespace sb::sim
