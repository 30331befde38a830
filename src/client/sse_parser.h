// Incremental Server-Sent Events parser (WHATWG "text/event-stream" rules).
// Feed() accepts bytes split anywhere -- inside a line, inside "\r\n", inside a UTF-8 sequence --
// and yields the same events as if the whole body arrived at once. Handles comments (":" lines,
// keep-alive pings), "event:", "id:", multi-line "data:" (joined with '\n'), CR, LF and CRLF line
// ends, and a leading UTF-8 BOM. Not thread-safe: one parser per stream.
// Memory is bounded: a line, and an event's joined data, may hold at most max_line_bytes; a
// stream that exceeds it stops the parser (Feed returns false, error() says why) and what it
// had buffered is freed, so a hostile server cannot make it hold more than the cap.
#pragma once

#include <cstddef>
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
  static constexpr std::size_t kDefaultMaxLineBytes = std::size_t{1} << 20;  // 1 MiB

  // REQUIRES: max_line_bytes > 0.
  explicit SseParser(std::size_t max_line_bytes = kDefaultMaxLineBytes)
      : max_line_(max_line_bytes) {}

  // Appends complete events found in bytes to out. Returns false once a line or an event's data
  // went over max_line_bytes: events completed before the offending line are still in out, the
  // rest of the input (this call's and later calls') is ignored, and error() is set.
  bool Feed(std::string_view bytes, std::vector<SseEvent>& out);

  // The same parse without a vector: calls on_event(const SseEvent&) for each event as it
  // completes. The event is the parser's own, valid during the call only; its strings keep their
  // capacity for the next event, so a stream allocates nothing per event once its longest event
  // has been seen (the client's per-token path). Stops at the first event on_event returns false
  // for. Returns false after such a stop (error() stays "") or an overflow (error() says why);
  // either way the rest of the stream is not parsed until Finish.
  template <class OnEvent>
  bool FeedEach(std::string_view bytes, OnEvent&& on_event) {
    return FeedTo(bytes, Sink(on_event));
  }

  // End of stream. A final event not terminated by a blank line is dispatched into out (servers
  // that close without the last "\n\n" still delivered the data). Returns true iff the stream
  // ended cleanly (no partial line or partial event was pending).
  // After an overflow it dispatches nothing and returns false. Either way the parser is then
  // ready for a new stream (the overflow is forgotten).
  bool Finish(std::vector<SseEvent>& out);

  // "" while fine; after an overflow e.g. "SSE line over 1 MiB (cap: 1048576 bytes)".
  const std::string& error() const { return error_; }

  // Bytes of heap the parser holds for unfinished lines and events (capacity, not size): at
  // most about max_line_bytes, however the input is split.
  std::size_t buffered_bytes() const { return line_.capacity() + pending_.data.capacity(); }

  std::size_t max_line_bytes() const { return max_line_; }

 private:
  // Where complete events go: a callable by reference (no copy, no allocation), false = stop.
  class Sink {
   public:
    template <class F>
    explicit Sink(F& f)
        : obj_(&f),
          call_([](void* o, const SseEvent& e) -> bool { return (*static_cast<F*>(o))(e); }) {}

    bool operator()(const SseEvent& e) const { return call_(obj_, e); }

   private:
    void* obj_;
    bool (*call_)(void*, const SseEvent&);
  };

  bool FeedTo(std::string_view bytes, Sink sink);
  bool ProcessLine(std::string_view line, Sink sink);
  bool Dispatch(Sink sink);
  bool Overflow(std::string_view what);
  // Appends piece (after a '\n' if newline_first) to s unless s would go over the cap; grows
  // s's capacity no further than the cap.
  bool AppendCapped(std::string& s, std::string_view piece, bool newline_first = false);

  std::size_t max_line_;
  std::string error_;
  std::string line_;      // bytes of the current, unfinished line
  bool skip_lf_ = false;  // the previous chunk ended in '\r'; a leading '\n' belongs to it
  bool bom_checked_ = false;
  bool has_data_ = false;
  SseEvent pending_;
};

}  // namespace sb::client
