// Incremental Server-Sent Events parser (WHATWG "text/event-stream" rules).
// Feed() accepts bytes split anywhere -- inside a line, inside "\r\n", inside a UTF-8 sequence --
// and yields the same events as if the whole body arrived at once. Handles comments (":" lines,
// keep-alive pings), "event:", "id:", multi-line "data:" (joined with '\n'), CR, LF and CRLF line
// ends, and a leading UTF-8 BOM. Not thread-safe: one parser per stream.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sb::client {

struct SseEvent {
  std::string event;  // "" when the stream gave no "event:" field ("message" by the spec)
  std::string data;   // the data lines joined with '\n'
  std::string id;

  friend bool operator==(const SseEvent&, const SseEvent&) = default;
};

class SseParser {
 public:
  // Appends complete events found in bytes to out.
  void Feed(std::string_view bytes, std::vector<SseEvent>& out);

  // End of stream. A final event not terminated by a blank line is dispatched into out (servers
  // that close without the last "\n\n" still delivered the data). Returns true iff the stream
  // ended cleanly (no partial line or partial event was pending).
  bool Finish(std::vector<SseEvent>& out);

 private:
  void ProcessLine(std::string_view line, std::vector<SseEvent>& out);
  void Dispatch(std::vector<SseEvent>& out);

  std::string line_;      // bytes of the current, unfinished line
  bool skip_lf_ = false;  // the previous chunk ended in '\r'; a leading '\n' belongs to it
  bool bom_checked_ = false;
  bool has_data_ = false;
  SseEvent pending_;
};

}  // namespace sb::client
