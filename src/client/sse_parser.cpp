#include "client/sse_parser.h"

#include <cstring>

namespace sb::client {

namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

}  // namespace

void SseParser::Feed(std::string_view bytes, std::vector<SseEvent>& out) {
  if (bytes.empty()) {
    return;
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
      return;
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
      line_.append(p, static_cast<size_t>(end - p));  // unfinished line: keep for the next chunk
      return;
    }
    if (line_.empty()) {
      ProcessLine(std::string_view(p, static_cast<size_t>(eol - p)), out);
    } else {
      line_.append(p, static_cast<size_t>(eol - p));
      ProcessLine(line_, out);
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
}

bool SseParser::Finish(std::vector<SseEvent>& out) {
  const bool partial_line = !line_.empty();
  if (partial_line) {
    std::string line = std::move(line_);
    line_.clear();
    ProcessLine(line, out);
  }
  const bool pending_event = has_data_ || !pending_.event.empty();
  if (has_data_) {
    Dispatch(out);
  }
  // Ready for another stream.
  pending_ = SseEvent{};
  has_data_ = false;
  skip_lf_ = false;
  bom_checked_ = false;
  return !partial_line && !pending_event;
}

void SseParser::ProcessLine(std::string_view line, std::vector<SseEvent>& out) {
  if (!bom_checked_) {
    // A BOM can only start the first line (its bytes contain no CR/LF), so checking the first
    // complete line is independent of how the bytes were split.
    bom_checked_ = true;
    if (line.substr(0, kBom.size()) == kBom) {
      line.remove_prefix(kBom.size());
    }
  }
  if (line.empty()) {
    Dispatch(out);
    return;
  }
  if (line.front() == ':') {
    return;  // comment / keep-alive ping
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
    if (has_data_) {
      pending_.data.push_back('\n');
    }
    pending_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    pending_.event.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) {
      pending_.id.assign(value);  // the last event ID persists across events (WHATWG)
    }
  }
  // "retry" and unknown fields are ignored.
}

void SseParser::Dispatch(std::vector<SseEvent>& out) {
  if (!has_data_) {
    pending_.event.clear();  // an event with no data lines is not dispatched
    return;
  }
  SseEvent& ev = out.emplace_back();
  ev.event = std::move(pending_.event);
  ev.data = std::move(pending_.data);
  ev.id = pending_.id;
  pending_.event.clear();
  pending_.data.clear();
  has_data_ = false;
}

}  // namespace sb::client
