#include "sim/raw_http.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace sb::sim::testing {

std::int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool ResponseParser::Parse(std::string& buf, std::int64_t now_ns) {
  if (r_.first_byte_ns == 0 && !buf.empty()) {
    r_.first_byte_ns = now_ns;
  }
  while (!head_done_) {
    const std::size_t end = buf.find("\r\n\r\n");
    if (end == std::string::npos) {
      return false;
    }
    const std::string head = buf.substr(0, end + 2);
    buf.erase(0, end + 4);
    if (head.rfind("HTTP/1.1 ", 0) != 0 || head.size() < 12) {
      r_.error = "bad status line: " + head.substr(0, 40);
      return true;
    }
    r_.status = std::stoi(head.substr(9, 3));
    r_.headers.clear();
    std::size_t pos = head.find("\r\n") + 2;
    while (pos < head.size()) {
      const std::size_t eol = head.find("\r\n", pos);
      const std::string line = head.substr(pos, eol - pos);
      pos = eol + 2;
      const std::size_t colon = line.find(':');
      if (colon == std::string::npos) {
        r_.error = "bad header line: " + line;
        return true;
      }
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      if (r_.headers.count(name) != 0) {
        r_.error = "duplicate header: " + name;
        return true;
      }
      r_.headers[name] = value;
    }
    if (r_.status >= 100 && r_.status < 200) {
      continue;  // interim response (100 Continue): the real one follows
    }
    head_done_ = true;
    const std::string te = r_.Header("transfer-encoding");
    const std::string cl = r_.Header("content-length");
    if (!te.empty()) {
      if (te != "chunked" || !cl.empty()) {
        r_.error = "unexpected framing: te=" + te + " cl=" + cl;
        return true;
      }
      r_.chunked = true;
    } else if (!cl.empty()) {
      content_length_ = std::stoll(cl);
    } else {
      until_close_ = true;
    }
  }
  if (content_length_ >= 0) {
    const std::size_t need = static_cast<std::size_t>(content_length_) - r_.body.size();
    const std::size_t take = std::min(need, buf.size());
    r_.body.append(buf, 0, take);
    buf.erase(0, take);
    if (r_.body.size() == static_cast<std::size_t>(content_length_)) {
      r_.complete = true;
      SplitEvents(now_ns);
      return true;
    }
    return false;
  }
  if (until_close_) {
    r_.body += buf;
    buf.clear();
    SplitEvents(now_ns);
    return false;
  }
  // Chunked: "<hex>\r\n<data>\r\n" ... "0\r\n\r\n" (no extensions or trailers expected).
  for (;;) {
    const std::size_t eol = buf.find("\r\n");
    if (eol == std::string::npos) {
      if (buf.size() > 20) {
        r_.error = "chunk size line too long";
        return true;
      }
      return false;
    }
    if (eol == 0 || eol > 16 ||
        !std::all_of(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(eol),
                     [](unsigned char c) { return std::isxdigit(c) != 0; })) {
      r_.error = "bad chunk size line: " + buf.substr(0, std::min<std::size_t>(eol, 40));
      return true;
    }
    const std::size_t size = std::stoull(buf.substr(0, eol), nullptr, 16);
    if (size == 0) {
      if (buf.size() < eol + 4) {
        return false;
      }
      if (buf.compare(eol, 4, "\r\n\r\n") != 0) {
        r_.error = "bad last chunk";
        return true;
      }
      buf.erase(0, eol + 4);
      r_.complete = true;
      SplitEvents(now_ns);
      return true;
    }
    if (buf.size() < eol + 2 + size + 2) {
      return false;
    }
    if (buf.compare(eol + 2 + size, 2, "\r\n") != 0) {
      r_.error = "chunk data not followed by CRLF";
      return true;
    }
    r_.body.append(buf, eol + 2, size);
    buf.erase(0, eol + 2 + size + 2);
    SplitEvents(now_ns);
  }
}

void ResponseParser::OnEof() {
  if (until_close_ && head_done_) {
    r_.complete = true;
    return;
  }
  if (r_.error.empty()) {
    r_.error = "connection closed before the response ended";
  }
}

void ResponseParser::SplitEvents(std::int64_t now_ns) {
  for (;;) {
    const std::size_t end = r_.body.find("\n\n", sse_pos_);
    if (end == std::string::npos) {
      return;
    }
    const std::string block = r_.body.substr(sse_pos_, end - sse_pos_);
    sse_pos_ = end + 2;
    if (block.rfind("data: ", 0) == 0) {
      r_.events.push_back(SseEvent{block.substr(6), now_ns});
    }
  }
}

Connection::Connection(int port, int rcvbuf) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    return;
  }
  if (rcvbuf > 0) {
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    Close();
  }
}

Connection::~Connection() {
  Close();
}

void Connection::Close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

bool Connection::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

HttpResponse Connection::Read(int timeout_ms) {
  ResponseParser parser;
  const std::int64_t deadline = NowNs() + std::int64_t{timeout_ms} * 1'000'000;
  if (!buf_.empty() && parser.Parse(buf_, NowNs())) {
    return parser.response();
  }
  char chunk[65536];
  for (;;) {
    if (eof_) {
      parser.OnEof();
      return parser.response();
    }
    const std::int64_t left_ms = (deadline - NowNs()) / 1'000'000;
    if (left_ms <= 0) {
      parser.response().error = "timeout";
      return parser.response();
    }
    pollfd p{fd_, POLLIN, 0};
    const int pr = ::poll(&p, 1, static_cast<int>(left_ms));
    if (pr <= 0) {
      continue;
    }
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    const std::int64_t now = NowNs();
    if (n > 0) {
      buf_.append(chunk, static_cast<std::size_t>(n));
      if (parser.Parse(buf_, now)) {
        return parser.response();
      }
    } else if (n == 0) {
      eof_ = true;
    } else if (errno != EINTR) {
      parser.response().error = std::string("recv: ") + std::strerror(errno);
      return parser.response();
    }
  }
}

std::string PostRequest(std::string_view path, std::string_view body,
                        std::string_view extra_headers) {
  std::string r = "POST ";
  r += path;
  r += " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ";
  r += std::to_string(body.size());
  r += "\r\n";
  r += extra_headers;
  r += "\r\n";
  r += body;
  return r;
}

std::string GetRequest(std::string_view path, std::string_view extra_headers) {
  std::string r = "GET ";
  r += path;
  r += " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  r += extra_headers;
  r += "\r\n";
  return r;
}

HttpResponse Roundtrip(int port, const std::string& request, int timeout_ms) {
  Connection c(port);
  if (!c.ok() || !c.Send(request)) {
    HttpResponse r;
    r.error = "connect/send failed";
    return r;
  }
  return c.Read(timeout_ms);
}

}  // namespace sb::sim::testing
