// A tiny blocking HTTP/1.1 client for the simulator's tests, written independently of both
// src/client and src/sim/http.cpp: raw sockets, a strict response parser (Content-Length,
// chunked with exact CRLF checks, close-delimited) and an SSE splitter that stamps each event
// with the steady-clock time its bytes arrived.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sb::sim::testing {

std::int64_t NowNs();

struct SseEvent {
  std::string data;             // the data field ("[DONE]" or JSON)
  std::int64_t arrival_ns = 0;  // when the bytes completing the event were read
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  bool chunked = false;
  std::string body;  // de-chunked
  std::vector<SseEvent> events;
  std::int64_t first_byte_ns = 0;
  bool complete = false;  // the framing said the body ended (not just a closed socket)
  std::string error;      // framing violation, reset, timeout ...

  std::string Header(const std::string& lower_name) const {
    const auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// Incremental parser for one response; bytes after it stay in the buffer (pipelining).
class ResponseParser {
 public:
  // Consumes bytes from the front of buf. Returns true when the response is complete
  // (or the framing is broken: see response().error).
  bool Parse(std::string& buf, std::int64_t now_ns);
  // The peer closed: completes a close-delimited body; otherwise records the truncation.
  void OnEof();

  HttpResponse& response() { return r_; }

 private:
  void SplitEvents(std::int64_t now_ns);

  HttpResponse r_;
  bool head_done_ = false;
  bool until_close_ = false;
  std::int64_t content_length_ = -1;
  std::size_t sse_pos_ = 0;
};

class Connection {
 public:
  // Connects to 127.0.0.1:port. rcvbuf > 0 shrinks the receive buffer (back-pressure tests).
  explicit Connection(int port, int rcvbuf = 0);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool ok() const { return fd_ >= 0; }

  int fd() const { return fd_; }

  bool Send(std::string_view bytes);
  // Reads one response (skipping 1xx). Times out after timeout_ms.
  HttpResponse Read(int timeout_ms = 15000);
  void Close();

 private:
  int fd_ = -1;
  std::string buf_;
  bool eof_ = false;
};

std::string PostRequest(std::string_view path, std::string_view body,
                        std::string_view extra_headers = {});
std::string GetRequest(std::string_view path, std::string_view extra_headers = {});

// One request on a fresh connection.
HttpResponse Roundtrip(int port, const std::string& request, int timeout_ms = 15000);

}  // namespace sb::sim::testing
