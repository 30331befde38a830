#include "support/script_server.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace sb::testing {

namespace {

std::int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

const char* StatusText(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

bool SendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

Script& Script::Send(std::string bytes) {
  steps_.push_back({ScriptStep::Kind::kSend, std::move(bytes), 0, {}});
  return *this;
}

Script& Script::Pause(int ms) {
  steps_.push_back({ScriptStep::Kind::kPause, {}, ms, {}});
  return *this;
}

Script& Script::Call(std::function<void()> fn) {
  steps_.push_back({ScriptStep::Kind::kCall, {}, 0, std::move(fn)});
  return *this;
}

Script& Script::Close() {
  steps_.push_back({ScriptStep::Kind::kClose, {}, 0, {}});
  return *this;
}

Script& Script::Reset() {
  steps_.push_back({ScriptStep::Kind::kReset, {}, 0, {}});
  return *this;
}

std::string HttpHead(int status, std::string_view content_type, std::string_view extra) {
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + StatusText(status) + "\r\n";
  if (!content_type.empty()) {
    head += "Content-Type: " + std::string(content_type) + "\r\n";
  }
  head += extra;
  head += "\r\n";
  return head;
}

std::string SseHead() {
  return HttpHead(200, "text/event-stream", "Transfer-Encoding: chunked\r\n");
}

std::string Chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + std::string(data) + "\r\n";
}

std::string LastChunk() {
  return "0\r\n\r\n";
}

std::string FullResponse(int status, std::string_view content_type, std::string_view body,
                         std::string_view extra_headers) {
  return HttpHead(status, content_type,
                  std::string(extra_headers) + "Content-Length: " + std::to_string(body.size()) +
                      "\r\n") +
         std::string(body);
}

ScriptServer::ScriptServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, 1024) != 0) {
    std::perror("script server: bind/listen");
    std::abort();
  }
  socklen_t len = sizeof addr;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

ScriptServer::~ScriptServer() {
  stopping_ = true;
  shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  acceptor_.join();
  close(listen_fd_);
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_fds_) {
      shutdown(fd, SHUT_RDWR);  // wakes recv(); the owning thread closes it
    }
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (std::thread& t : threads) {
    t.join();
  }
}

std::string ScriptServer::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

std::vector<ScriptRequest> ScriptServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void ScriptServer::AcceptLoop() {
  while (!stopping_) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) {
        continue;
      }
      return;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const int connection = connections_.fetch_add(1);
    const int now_open = open_.fetch_add(1) + 1;
    int seen = max_concurrent_.load();
    while (now_open > seen && !max_concurrent_.compare_exchange_weak(seen, now_open)) {
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      close(fd);
      open_.fetch_sub(1);
      return;
    }
    open_fds_.push_back(fd);
    threads_.emplace_back([this, fd, connection] { Serve(fd, connection); });
  }
}

void ScriptServer::Serve(int fd, int connection) {
  std::string buf;
  char tmp[16384];
  bool alive = true;
  while (alive && !stopping_) {
    // Read one request: head up to the blank line, then Content-Length bytes of body.
    std::size_t head_end = std::string::npos;
    std::size_t need = 0;
    while (true) {
      if (head_end == std::string::npos) {
        head_end = buf.find("\r\n\r\n");
        if (head_end != std::string::npos) {
          const std::string lower = Lower(std::string_view(buf).substr(0, head_end));
          std::size_t length = 0;
          if (const std::size_t at = lower.find("\r\ncontent-length:"); at != std::string::npos) {
            length = std::strtoul(lower.c_str() + at + 17, nullptr, 10);
          }
          need = head_end + 4 + length;
        }
      }
      if (head_end != std::string::npos && buf.size() >= need) {
        break;
      }
      const ssize_t n = recv(fd, tmp, sizeof tmp, 0);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        alive = false;
        break;
      }
      buf.append(tmp, static_cast<std::size_t>(n));
    }
    if (!alive) {
      break;
    }
    ScriptRequest req;
    req.received_ns = NowNs();
    req.connection = connection;
    req.head = buf.substr(0, head_end);
    req.body = buf.substr(head_end + 4, need - head_end - 4);
    buf.erase(0, need);
    const std::size_t sp1 = req.head.find(' ');
    const std::size_t sp2 = req.head.find(' ', sp1 + 1);
    req.method = req.head.substr(0, sp1);
    req.path = req.head.substr(sp1 + 1, sp2 - sp1 - 1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(req);
    }
    const Script script = handler_(req);
    alive = Play(fd, script);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  }
  open_.fetch_sub(1);
  close(fd);
}

bool ScriptServer::Play(int fd, const Script& script) {
  for (const ScriptStep& step : script.steps()) {
    switch (step.kind) {
      case ScriptStep::Kind::kSend:
        if (!SendAll(fd, step.bytes)) {
          return false;
        }
        break;
      case ScriptStep::Kind::kPause:
        if (!WaitMs(step.ms)) {
          return false;
        }
        break;
      case ScriptStep::Kind::kCall:
        step.fn();
        break;
      case ScriptStep::Kind::kClose:
        shutdown(fd, SHUT_WR);
        return false;
      case ScriptStep::Kind::kReset: {
        const linger lg{1, 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        return false;  // close() in Serve sends the RST
      }
    }
  }
  return true;
}

bool ScriptServer::WaitMs(int ms) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_.load(); });
}

int ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);  // never listened: connecting is refused
  return ntohs(addr.sin_port);
}

}  // namespace sb::testing
