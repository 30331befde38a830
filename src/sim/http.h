// The simulator's own HTTP/1.1 wire code (deliberately independent of src/client): an
// incremental request parser that copes with pipelined requests and bytes split anywhere, and
// response serialisation (Content-Length or chunked). Pure; one parser per connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace sb::sim {

inline constexpr std::size_t kMaxHeaderBytes = 64 * 1024;
inline constexpr std::size_t kMaxBodyBytes = 64 * 1024 * 1024;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // the target without its query string
  bool keep_alive = true;
  bool http10 = false;        // an HTTP/1.0 client: no chunked responses
  bool accepts_gzip = false;  // Accept-Encoding lists gzip (or *) without q=0
  std::string body;
};

struct ParseResult {
  enum class Kind {
    kIncomplete,  // need more bytes
    kContinue,    // headers done, body pending, client expects "100 Continue": send it once
    kRequest,     // `request` is complete; its bytes were removed from the buffer
    kError,       // answer `error_status` and close the connection
  };
  Kind kind = Kind::kIncomplete;
  HttpRequest request;
  int error_status = 0;
  std::string error_message;
};

class RequestParser {
 public:
  // Parses the request at the front of `buffer` (the connection's unread bytes, appended to by
  // the caller). On kRequest the request's bytes are erased from the front, so a pipelined
  // next request is parsed by calling again. Scans only new bytes, so byte-by-byte input stays
  // linear.
  ParseResult Parse(std::string& buffer);

 private:
  std::optional<ParseResult> CheckFirstLine(std::string& buffer);
  std::optional<ParseResult> ParseHead(std::string_view head);
  void Reset();

  std::size_t scanned_ = 0;    // bytes of the head already searched for the blank line
  bool line_checked_ = false;  // the request line was complete and valid
  bool head_done_ = false;
  std::size_t head_len_ = 0;  // including the blank line
  std::size_t body_len_ = 0;
  bool continue_sent_ = false;
  HttpRequest pending_;  // request line and headers, waiting for the body
  bool expect_continue_ = false;
};

std::string_view StatusText(int status);

// Whether an Accept-Encoding value allows gzip: "gzip" or "*" listed with no q=0 (RFC 9110
// 12.5.3; "x-gzip" too). "deflate, gzip, br" -> true; "gzip;q=0" and "identity" -> false.
bool AcceptsGzip(std::string_view accept_encoding);

inline constexpr std::int64_t kChunkedBody = -1;     // Transfer-Encoding: chunked
inline constexpr std::int64_t kUntilCloseBody = -2;  // HTTP/1.0 streaming: body ends at close

// Response head. content_length >= 0, kChunkedBody or kUntilCloseBody. extra_headers is
// zero or more complete "Name: value\r\n" lines. Always carries "Server: servebench-sim/0.1.0"
// and "Date: <now>" (HttpDate; `perf --shard` estimates its clock offset to the server from it).
std::string ResponseHead(int status, std::string_view content_type, std::int64_t content_length,
                         bool keep_alive, std::string_view extra_headers = {});

// RFC 9110 IMF-fixdate of a unix time: "Sun, 06 Nov 1994 08:49:37 GMT".
std::string HttpDate(std::time_t t);

// A whole response with a Content-Length body.
std::string Response(int status, std::string_view content_type, std::string_view body,
                     bool keep_alive, std::string_view extra_headers = {});

// Appends one chunk of chunked transfer encoding ("<hex>\r\n<data>\r\n"); no-op for empty data
// (an empty chunk would end the body).
void AppendChunk(std::string& out, std::string_view data);

inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

}  // namespace sb::sim
