// The native transport of the client loop (http_impl.h): HTTP/1.1 over our own non-blocking
// sockets, driven by the same epoll loop, Transfer, callbacks and time limits as libcurl's
// transfers. This file: connections, sending, reading; the response's framing and decoding is
// http_native_frame.cpp. A request leaves with one sendmsg on a kept connection (no per-transfer
// set-up), and a token costs one epoll_wait and one recv (libcurl 7.88 adds a poll after every
// read). The response is framed here (status line, headers, Content-Length, chunked or until close)
// and its bytes go through CurlLoop::OnHeader and OnWrite exactly as libcurl hands them over,
// so SSE parsing, records and errors do not depend on the transport.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include <curl/curl.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "client/http_impl.h"

namespace sb::client {

using namespace detail;  // NOLINT(build/namespaces): this module's private helpers

namespace {

constexpr std::uint64_t kNativeTag = std::uint64_t{1} << 63;
constexpr std::size_t kReadBuffer = 64 * 1024;

bool EnvSet(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0';
}

std::uint64_t EventData(int fd, std::uint32_t serial) {
  return kNativeTag | (std::uint64_t{serial} << 32) | static_cast<std::uint32_t>(fd);
}

}  // namespace

namespace detail {

bool NativeTransportFor(const ClientOptions& options, std::string_view root) {
  ClientOptions::Transport t = options.transport;
  if (t == ClientOptions::Transport::kAuto) {
    const char* env = std::getenv("SERVEBENCH_HTTP_TRANSPORT");
    const std::string_view v = env != nullptr ? env : "";
    t = v == "curl" ? ClientOptions::Transport::kCurl : ClientOptions::Transport::kNative;
  }
  const bool https = StartsWithNoCase(root, "https://");
  if (t != ClientOptions::Transport::kNative || (!https && !StartsWithNoCase(root, "http://"))) {
    return false;
  }
  const std::size_t start = https ? 8 : 7;
  const std::string_view authority = root.substr(start, root.find('/', start) - start);
  if (authority.find('@') != std::string_view::npos) {
    return false;  // user:password: libcurl sends the Basic credentials
  }
  // The proxy variables libcurl honours for this scheme.
  const bool proxy = https ? EnvSet("https_proxy") || EnvSet("HTTPS_PROXY") : EnvSet("http_proxy");
  return !proxy && !EnvSet("all_proxy") && !EnvSet("ALL_PROXY");
}

}  // namespace detail

std::string CurlLoop::RequestHead(std::string_view method, std::string_view target,
                                  bool post) const {
  std::string head;
  head.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: ");
  head.append(host_header).append("\r\nUser-Agent: servebench/0.1\r\nAccept: */*\r\n");
  // Compression as libcurl asks for it; a compressed body is decoded as it arrives.
  head.append("Accept-Encoding: deflate, gzip\r\n");
  head.append(auth_line);
  if (post) {  // the value of Content-Length follows (Transfer::tail)
    head.append("Content-Type: application/json\r\nContent-Length: ");
  } else {
    head.append("\r\n");
  }
  return head;
}

void CurlLoop::SetUpNative() {
  CURLU* url = curl_url();
  if (url == nullptr || curl_url_set(url, CURLUPART_URL, root.c_str(), 0) != CURLUE_OK) {
    curl_url_cleanup(url);
    return;  // libcurl then reports the URL per request
  }
  char* host = nullptr;
  char* port_text = nullptr;
  char* path = nullptr;
  if (curl_url_get(url, CURLUPART_HOST, &host, 0) == CURLUE_OK && host != nullptr &&
      host[0] != '\0') {
    host_name = host;
    curl_url_get(url, CURLUPART_PORT, &port_text, CURLU_DEFAULT_PORT);
    curl_url_get(url, CURLUPART_PATH, &path, 0);
    port = port_text != nullptr ? std::atoi(port_text) : 80;
    path_prefix = path != nullptr ? path : "";
    while (!path_prefix.empty() && path_prefix.back() == '/') {
      path_prefix.pop_back();
    }
    // The Host header as the URL wrote it (an IPv6 literal keeps its brackets).
    const std::size_t start = root.find("://") + 3;
    host_header = root.substr(start, root.find('/', start) - start);
    native = port > 0 && port < 65536;
    tls = StartsWithNoCase(root, "https://");
  }
  curl_free(host);
  curl_free(port_text);
  curl_free(path);
  curl_url_cleanup(url);
  if (!options.api_key.empty()) {
    auth_line = "Authorization: Bearer " + options.api_key + "\r\n";
  }
  rx.resize(kReadBuffer);
}

void CurlLoop::CloseNative() {
  for (int fd : idle_fds) {
    CloseConn(fd);
  }
  idle_fds.clear();
  for (Transfer* t : active) {
    if (t->native && t->fd >= 0) {
      CloseConn(t->fd);
      t->fd = -1;
    }
  }
  std::fill(auth_line.begin(), auth_line.end(), '\0');
  std::fill(chat_head.begin(), chat_head.end(), '\0');
}

int CurlLoop::ResponseCode(const Transfer& t) const {
  if (t.native) {
    return t.status;
  }
  long status = 0;  // NOLINT(runtime/int)
  curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
  return static_cast<int>(status);
}

void CurlLoop::WatchNative(int fd, std::uint32_t events, bool add) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = EventData(fd, fd_serial[static_cast<std::size_t>(fd)]);
  epoll_ctl(epoll_fd, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev);
}

bool CurlLoop::LaunchNative(Transfer& t) {
  if (addrs.empty()) {  // resolved at the first launch, again after a failure
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    const std::string service = std::to_string(port);
    if (getaddrinfo(host_name.c_str(), service.c_str(), &hints, &list) == 0) {
      for (addrinfo* a = list; a != nullptr; a = a->ai_next) {
        sockaddr_storage s{};
        std::memcpy(&s, a->ai_addr, a->ai_addrlen);
        addrs.emplace_back(s, a->ai_addrlen);
      }
      freeaddrinfo(list);
    }
  }
  if (addrs.empty()) {
    t.resp->outcome = Outcome::kTransport;
    t.resp->reason = "Could not resolve host: " + host_name;
    t.resp->done_ns = NowNs();
    return false;
  }
  t.frame = NativeFrame{};
  t.inflater.reset();
  t.status = 0;
  t.sent = 0;
  t.any_rx = false;
  t.fresh = false;
  t.connecting = false;
  t.handshaking = false;
  t.watching_out = false;
  t.connect_limit_ns = MsToNs(options.connect_timeout);
  // The head of a chat call is the loop's, built once; only its Content-Length value is the
  // call's own (tail): nothing is allocated or copied for a request's head.
  const bool post = std::strcmp(t.method, "POST") == 0;
  if (t.chat) {
    if (chat_head.empty()) {
      chat_head = RequestHead("POST", chat_target, true);
    }
    t.head = chat_head;
  } else {
    t.req_head = RequestHead(t.method, t.target, post);
    t.head = t.req_head;
  }
  t.tail_len = 0;
  if (post) {
    const auto [end, ec] = std::to_chars(t.tail, t.tail + sizeof t.tail - 4, t.req_body.size());
    std::memcpy(end, "\r\n\r\n", 4);
    t.tail_len = static_cast<std::size_t>(end + 4 - t.tail);
  }
  t.active_pos = active.size();
  active.push_back(&t);
  // A kept connection. One the server has closed is dropped by the loop when it sees the close
  // (kept connections stay watched); one closed since then fails the send or the first read
  // with nothing received, and NativeLost sends the request again on a new connection.
  if (!idle_fds.empty()) {
    const int fd = idle_fds.back();
    idle_fds.pop_back();
    t.fd = fd;
    by_fd[static_cast<std::size_t>(fd)] = &t;
    SendNative(t);
    return true;
  }
  t.addr_index = addr_pref;
  OpenNative(t);
  return true;
}

bool CurlLoop::OpenNative(Transfer& t) {
  const auto& [addr, len] = addrs[t.addr_index];
  const int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
  if (fd < 0) {
    NativeFail(t, CURLE_COULDNT_CONNECT,
               "Failed to connect to " + host_name + " port " + std::to_string(port) +
                   ": cannot create a socket: " + std::strerror(errno));
    return false;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const std::size_t slot = static_cast<std::size_t>(fd);
  if (slot >= by_fd.size()) {
    by_fd.resize(slot + 1024, nullptr);
    fd_serial.resize(slot + 1024, 0);
    ssl_by_fd.resize(slot + 1024, nullptr);
  }
  fd_serial[slot] = next_serial++;
  by_fd[slot] = &t;
  t.fd = fd;
  t.fresh = true;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), len) == 0) {
    WatchNative(fd, EPOLLIN, true);
    if (tls) {
      StartTls(t);
    } else {
      SendNative(t);
    }
    return true;
  }
  if (errno != EINPROGRESS) {
    const int err = errno;
    t.connecting = true;
    NativeConnected(t, err);
    return false;
  }
  t.connecting = true;
  t.watching_out = true;
  WatchNative(fd, EPOLLIN | EPOLLOUT, true);
  return true;
}

void CurlLoop::NativeConnected(Transfer& t, int err) {
  t.connecting = false;
  if (err == 0) {
    addr_pref = t.addr_index;
    if (tls) {
      StartTls(t);
    } else {
      SendNative(t);
    }
    return;
  }
  if (err == ECONNREFUSED && t.addr_index + 1 < addrs.size()) {
    const std::size_t slot = static_cast<std::size_t>(t.fd);
    by_fd[slot] = nullptr;
    CloseConn(t.fd);
    t.fd = -1;
    t.watching_out = false;
    ++t.addr_index;  // the next address of the name ("localhost": ::1, then 127.0.0.1)
    OpenNative(t);
    return;
  }
  NativeFail(t, CURLE_COULDNT_CONNECT,
             "Failed to connect to " + host_name + " port " + std::to_string(port) + ": " +
                 std::strerror(err));
}

void CurlLoop::SendNative(Transfer& t) {
  const std::size_t total = t.RequestBytes();
  if (t.sent == 0) {
    t.resp->written_ns = NowNs();
  }
  if (tls) {
    SendTls(t);
    return;
  }
  while (t.sent < total) {
    // The parts not yet written: head, tail, body.
    iovec iov[3];
    int n_iov = 0;
    std::size_t skip = t.sent;
    for (std::string_view part : t.RequestParts()) {
      if (skip >= part.size()) {
        skip -= part.size();
        continue;
      }
      iov[n_iov++] = {const_cast<char*>(part.data()) + skip, part.size() - skip};
      skip = 0;
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<std::size_t>(n_iov);
    const ssize_t n = sendmsg(t.fd, &msg, MSG_NOSIGNAL);
    if (n > 0) {
      t.sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && errno == EAGAIN) {
      if (!t.watching_out) {
        t.watching_out = true;
        WatchNative(t.fd, EPOLLIN | EPOLLOUT, false);
      }
      return;
    }
    NativeLost(t, CURLE_SEND_ERROR, std::string("Send failure: ") + std::strerror(errno));
    return;
  }
  if (t.watching_out) {  // it was watched for writing while it connected, or while it was full
    t.watching_out = false;
    WatchNative(t.fd, EPOLLIN, false);
  }
}

void CurlLoop::OnNativeEvent(std::uint64_t data, std::uint32_t events) {
  const int fd = static_cast<int>(data & 0xffffffffu);
  const auto serial = static_cast<std::uint32_t>((data >> 32) & 0x7fffffffu);
  const std::size_t slot = static_cast<std::size_t>(fd);
  if (slot >= fd_serial.size() || fd_serial[slot] != serial) {
    return;  // an event of a descriptor closed earlier in this batch
  }
  Transfer* t = by_fd[slot];
  if (t == nullptr) {  // a kept connection: the server closed it (or wrote unasked)
    if (const auto it = std::find(idle_fds.begin(), idle_fds.end(), fd); it != idle_fds.end()) {
      idle_fds.erase(it);
      CloseConn(fd);
    }
    return;
  }
  if (t->connecting) {
    if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) == 0) {
      return;
    }
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err == 0 && (events & (EPOLLERR | EPOLLHUP)) != 0) {
      err = ECONNREFUSED;
    }
    NativeConnected(*t, err);
    return;
  }
  if (t->handshaking) {
    ContinueTls(*t);
    return;
  }
  if ((events & EPOLLOUT) != 0 && t->sent < t->RequestBytes()) {
    SendNative(*t);
    if (by_fd[slot] != t) {
      return;
    }
  }
  // TLS may need to write while reading (a key update): then writability resumes the read.
  const bool tls_read_wants_out = tls && (events & EPOLLOUT) != 0 && t->sent >= t->RequestBytes();
  if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)) != 0 || tls_read_wants_out) {
    ReadNative(*t);
  }
}

void CurlLoop::ReadNative(Transfer& t) {
  if (tls) {
    ReadTls(t);
    return;
  }
  while (true) {
    const ssize_t n = recv(t.fd, rx.data(), rx.size(), 0);
    if (n > 0) {
      t.any_rx = true;
      if (!FeedNative(t, rx.data(), static_cast<std::size_t>(n))) {
        return;
      }
      if (static_cast<std::size_t>(n) < rx.size()) {
        return;  // level-triggered: the next bytes wake the loop again
      }
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && errno == EAGAIN) {
      return;
    }
    if (n < 0) {
      NativeLost(t, CURLE_RECV_ERROR, std::string("Recv failure: ") + std::strerror(errno));
      return;
    }
    NativeEof(t);
    return;
  }
}

void CurlLoop::NativeEof(Transfer& t) {
  using S = NativeFrame::State;
  switch (t.frame.state) {
    case S::kUntilClose:
      t.frame.state = S::kDone;
      t.frame.keep_alive = false;
      native_done.emplace_back(&t, CURLE_OK);
      by_fd[static_cast<std::size_t>(t.fd)] = nullptr;
      return;
    case S::kHead:
      if (t.header_bytes == 0 && t.frame.line.empty()) {
        NativeLost(t, CURLE_GOT_NOTHING, "Empty reply from server");
      } else {
        NativeFail(t, CURLE_RECV_ERROR, "connection closed in the middle of the response header");
      }
      return;
    default:
      NativeFail(t, CURLE_PARTIAL_FILE,
                 t.frame.chunked ? "transfer closed with outstanding read data remaining"
                                 : "transfer closed with " + std::to_string(t.frame.remaining) +
                                       " bytes remaining to read");
      return;
  }
}

void CurlLoop::NativeLost(Transfer& t, CURLcode rc, const std::string& msg) {
  if (!t.fresh && !t.any_rx && !t.resent) {
    // A kept connection the server had closed: the request never reached it.
    t.resent = true;
    const std::size_t slot = static_cast<std::size_t>(t.fd);
    by_fd[slot] = nullptr;
    CloseConn(t.fd);
    t.fd = -1;
    t.handshaking = false;
    t.watching_out = false;
    t.sent = 0;
    t.frame = NativeFrame{};
    t.inflater.reset();
    t.header_bytes = 0;
    t.addr_index = addr_pref;
    OpenNative(t);
    return;
  }
  NativeFail(t, rc, msg);
}

void CurlLoop::NativeFail(Transfer& t, CURLcode rc, const std::string& msg) {
  const std::size_t n = std::min(msg.size(), sizeof t.errbuf - 1);
  std::memcpy(t.errbuf, msg.data(), n);
  t.errbuf[n] = '\0';
  t.frame.keep_alive = false;
  if (t.fd >= 0) {
    by_fd[static_cast<std::size_t>(t.fd)] = nullptr;
  }
  native_done.emplace_back(&t, rc);
}

void CurlLoop::DetachNative(Transfer& t) {
  if (t.fd < 0) {
    return;
  }
  const std::size_t slot = static_cast<std::size_t>(t.fd);
  by_fd[slot] = nullptr;
  const bool keep = t.frame.state == NativeFrame::State::kDone && t.frame.keep_alive &&
                    !t.aborted && t.sent == t.RequestBytes() && !t.watching_out &&
                    idle_fds.size() < max_connects;
  if (keep) {
    idle_fds.push_back(t.fd);  // still watched for reading: the server's close removes it
  } else {
    CloseConn(t.fd);
  }
  t.fd = -1;
  // A transfer ended before its queued completion was reaped (a time limit) is not reaped.
  native_done.erase(std::remove_if(native_done.begin(), native_done.end(),
                                   [&](const auto& d) { return d.first == &t; }),
                    native_done.end());
}

}  // namespace sb::client
