#include "client/sse_parser.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace sb::client {

namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// 1048576 -> "1 MiB", 4096 -> "4 KiB", 1000 -> "1000 bytes".
std::string SizeText(std::size_t n) {
  if (n >= (std::size_t{1} << 20) && n % (std::size_t{1} << 20) == 0) {
    return std::to_string(n >> 20) + " MiB";
  }
  if (n >= 1024 && n % 1024 == 0) {
    return std::to_string(n >> 10) + " KiB";
  }
  return std::to_string(n) + " bytes";
}

}  // namespace

bool SseParser::Overflow(std::string_view what) {
  error_ = "SSE " + std::string(what) + " over " + SizeText(max_line_) +
           " (cap: " + std::to_string(max_line_) + " bytes)";
  // Give the memory back at once: the stream is over.
  std::string().swap(line_);
  pending_ = SseEvent{};
  has_data_ = false;
  skip_lf_ = false;
  return false;
}

bool SseParser::AppendCapped(std::string& s, std::string_view piece, bool newline_first) {
  const std::size_t want = s.size() + (newline_first ? 1 : 0) + piece.size();
  if (want > max_line_) {
    return false;
  }
  if (want > s.capacity()) {
    // Grow geometrically but never past the cap. A fresh string gets exactly what it reserves
    // (reserve on a non-empty one may double past the cap).
    std::string grown;
    grown.reserve(std::min(max_line_, std::max(want, 2 * s.capacity())));
    grown.append(s);
    s.swap(grown);
  }
  if (newline_first) {
    s.push_back('\n');
  }
  s.append(piece);
  return true;
}

bool SseParser::Feed(std::string_view bytes, std::vector<SseEvent>& out) {
  auto append = [&out](const SseEvent& e) {
    out.push_back(e);
    return true;
  };
  return FeedTo(bytes, Sink(append));
}

bool SseParser::FeedTo(std::string_view bytes, Sink sink) {
  if (!error_.empty()) {
    return false;
  }
  if (bytes.empty()) {
    return true;
  }
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  if (skip_lf_) {
    // The previous chunk ended in '\r'; a '\n' right after it completes the same CRLF.
    if (*p == '\n') {
      ++p;
    }
    skip_lf_ = false;
    if (p == end) {
      return true;
    }
  }
  // The next '\r' at or after p (nullptr: none in the rest of this chunk). Cached so that an
  // LF-only stream scans each byte once, not once per line.
  const char* cr = static_cast<const char*>(std::memchr(p, '\r', static_cast<size_t>(end - p)));
  while (p != end) {
    if (cr != nullptr && cr < p) {
      cr = static_cast<const char*>(std::memchr(p, '\r', static_cast<size_t>(end - p)));
    }
    const char* lf = static_cast<const char*>(
        std::memchr(p, '\n', static_cast<size_t>((cr != nullptr ? cr : end) - p)));
    const char* eol = lf != nullptr ? lf : cr;
    if (eol == nullptr) {
      // Unfinished line: keep it for the next chunk, up to the cap.
      if (!AppendCapped(line_, std::string_view(p, static_cast<size_t>(end - p)))) {
        return Overflow("line");
      }
      return true;
    }
    if (line_.empty()) {
      if (static_cast<std::size_t>(eol - p) > max_line_) {
        return Overflow("line");
      }
      if (!ProcessLine(std::string_view(p, static_cast<size_t>(eol - p)), sink)) {
        return false;
      }
    } else {
      if (!AppendCapped(line_, std::string_view(p, static_cast<size_t>(eol - p)))) {
        return Overflow("line");
      }
      if (!ProcessLine(line_, sink)) {
        line_.clear();
        return false;
      }
      line_.clear();
    }
    p = eol + 1;
    if (*eol == '\r') {
      if (p == end) {
        skip_lf_ = true;  // a '\n' may still arrive in the next chunk
      } else if (*p == '\n') {
        ++p;
      }
    }
  }
  return true;
}

bool SseParser::Finish(std::vector<SseEvent>& out) {
  auto append = [&out](const SseEvent& e) {
    out.push_back(e);
    return true;
  };
  if (!error_.empty()) {
    error_.clear();
    bom_checked_ = false;
    pending_ = SseEvent{};
    return false;
  }
  const bool partial_line = !line_.empty();
  if (partial_line) {
    std::string line = std::move(line_);
    line_.clear();
    if (!ProcessLine(line, Sink(append))) {
      error_.clear();
      bom_checked_ = false;
      return false;
    }
  }
  const bool pending_event = has_data_ || !pending_.event.empty();
  if (has_data_) {
    Dispatch(Sink(append));
  }
  // Ready for another stream.
  pending_ = SseEvent{};
  has_data_ = false;
  skip_lf_ = false;
  bom_checked_ = false;
  return !partial_line && !pending_event;
}

bool SseParser::ProcessLine(std::string_view line, Sink sink) {
  if (!bom_checked_) {
    // A BOM can only start the first line (its bytes contain no CR/LF), so checking the first
    // complete line is independent of how the bytes were split.
    bom_checked_ = true;
    if (line.substr(0, kBom.size()) == kBom) {
      line.remove_prefix(kBom.size());
    }
  }
  if (line.empty()) {
    return Dispatch(sink);
  }
  if (line.front() == ':') {
    return true;  // comment / keep-alive ping
  }
  std::string_view field = line;
  std::string_view value;
  if (const size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') {
      value.remove_prefix(1);
    }
  }
  if (field == "data") {
    if (!AppendCapped(pending_.data, value, has_data_)) {
      return Overflow("event");
    }
    has_data_ = true;
  } else if (field == "event") {
    pending_.event.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) {
      pending_.id.assign(value);  // the last event ID persists across events (WHATWG)
    }
  }
  // "retry" and unknown fields are ignored.
  return true;
}

bool SseParser::Dispatch(Sink sink) {
  if (!has_data_) {
    pending_.event.clear();  // an event with no data lines is not dispatched
    return true;
  }
  const bool go_on = sink(pending_);
  // Cleared, not freed: the next event's data lands in the same buffer. The last event ID
  // persists across events (WHATWG).
  pending_.event.clear();
  pending_.data.clear();
  has_data_ = false;
  return go_on;
}

}  // namespace sb::client
