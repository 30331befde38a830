// A tiny scripted TCP server for client tests (test-only, std + POSIX sockets). It listens on
// 127.0.0.1:0; for every HTTP request it reads (request line, headers, Content-Length body) it
// asks a handler for a Script and plays it: send these bytes, pause N ms, call a function, close
// or reset (SO_LINGER 0). A script that ends without Close/Reset keeps the connection open for
// the next request (keep-alive). One thread per connection.
// Thread safety: the handler runs on connection threads; accessors are safe from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sb::testing {

struct ScriptStep {
  enum class Kind { kSend, kPause, kCall, kClose, kReset };
  Kind kind = Kind::kSend;
  std::string bytes;
  int ms = 0;
  std::function<void()> fn;
};

class Script {
 public:
  Script& Send(std::string bytes);
  Script& Pause(int ms);
  Script& Call(std::function<void()> fn);
  Script& Close();  // orderly close (FIN)
  Script& Reset();  // abortive close (RST)

  const std::vector<ScriptStep>& steps() const { return steps_; }

 private:
  std::vector<ScriptStep> steps_;
};

struct ScriptRequest {
  std::string method;
  std::string path;
  std::string head;  // request line and headers, as received
  std::string body;
  int connection = 0;            // 0-based connection number
  std::int64_t received_ns = 0;  // steady time the whole request had arrived
};

// Response builders.
std::string HttpHead(int status, std::string_view content_type, std::string_view extra = "");
std::string SseHead();                     // 200, text/event-stream, chunked
std::string Chunk(std::string_view data);  // one HTTP/1.1 chunk
std::string LastChunk();                   // "0\r\n\r\n"
std::string FullResponse(int status, std::string_view content_type, std::string_view body,
                         std::string_view extra_headers = "");

class ScriptServer {
 public:
  using Handler = std::function<Script(const ScriptRequest&)>;
  explicit ScriptServer(Handler handler);
  ~ScriptServer();
  ScriptServer(const ScriptServer&) = delete;
  ScriptServer& operator=(const ScriptServer&) = delete;

  int port() const { return port_; }

  std::string url() const;  // "http://127.0.0.1:PORT"

  int connections() const { return connections_.load(); }

  int max_concurrent() const { return max_concurrent_.load(); }

  std::vector<ScriptRequest> requests() const;

 private:
  void AcceptLoop();
  void Serve(int fd, int connection);
  bool Play(int fd, const Script& script);  // false: the connection is finished
  bool WaitMs(int ms);                      // false: the server is stopping

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> open_{0};
  std::atomic<int> max_concurrent_{0};
  mutable std::mutex mu_;
  std::condition_variable cv_;           // wakes pauses on shutdown
  std::vector<int> open_fds_;            // guarded by mu_
  std::vector<ScriptRequest> requests_;  // guarded by mu_
  std::vector<std::thread> threads_;     // guarded by mu_
  std::thread acceptor_;
};

// A loopback port that refuses connections (bound, then closed).
int ClosedPort();

}  // namespace sb::testing
