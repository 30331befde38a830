#include "client/stream_guard.h"

#include <algorithm>
#include <limits>

namespace sb::client::detail {

namespace {

std::string_view TrimBlank(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && blank(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && blank(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

// Cuts s to at most `keep` bytes without splitting a UTF-8 sequence; returns the bytes cut.
std::size_t CutUtf8(std::string& s, std::size_t keep) {
  if (s.size() <= keep) {
    return 0;
  }
  std::size_t at = keep;
  while (at > 0 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) {
    --at;  // s[at] continues a sequence: cut before the sequence's lead byte
  }
  const std::size_t cut = s.size() - at;
  s.resize(at);
  return cut;
}

}  // namespace

bool IsChunkPayload(std::string_view data) {
  const std::string_view payload = TrimBlank(data);
  return !payload.empty() && payload != "[DONE]";
}

std::optional<std::string> ImplausibleUsage(const ChatResponse& r, std::size_t text_bytes) {
  const std::int64_t claimed = r.usage.completion_tokens;
  const auto observed =
      static_cast<std::int64_t>(r.events.size()) + static_cast<std::int64_t>(text_bytes);
  if (claimed <= kUsageFloor ||
      claimed <= kUsagePerObserved * std::max<std::int64_t>(1, observed)) {
    return std::nullopt;
  }
  // Values over int's range arrive clamped to it (chat.cpp): say so rather than print the clamp.
  const bool clamped = claimed == std::numeric_limits<int>::max();
  return "implausible usage: usage.completion_tokens " + std::to_string(claimed) +
         (clamped ? " or more" : "") + " disagrees with the " + std::to_string(r.events.size()) +
         " token events (" + std::to_string(text_bytes) +
         " bytes of text) that arrived; usage refused";
}

std::size_t StreamGuard::TextBytes(const ChatResponse& r) const {
  std::size_t bytes = r.answer.size() + r.reasoning.size() + dropped_;
  for (const ToolCall& call : r.tool_calls) {
    bytes += call.name.size() + call.arguments.size();
  }
  return bytes;
}

bool StreamGuard::CheckUsage(ChatResponse& r) {
  if (auto why = ImplausibleUsage(r, TextBytes(r))) {
    r.outcome = Outcome::kProtocol;
    r.reason = std::move(*why);
    return false;
  }
  return true;
}

void StreamGuard::TrimText(ChatResponse& r) {
  if (keep_text_ == 0) {
    return;
  }
  const std::size_t cut = CutUtf8(r.answer, keep_text_) + CutUtf8(r.reasoning, keep_text_);
  if (cut == 0) {
    return;
  }
  dropped_ += cut;
  if (!r.events.empty()) {  // what a hook saw after this event: the kept text
    TokenEvent& ev = r.events.back();
    ev.answer_end = std::min(ev.answer_end, static_cast<std::uint32_t>(r.answer.size()));
    ev.reasoning_end = std::min(ev.reasoning_end, static_cast<std::uint32_t>(r.reasoning.size()));
  }
}

bool StreamGuard::AfterEvent(ChatResponse& r, std::string_view data, std::size_t events_before) {
  if (IsChunkPayload(data)) {
    ++chunks_;
  }
  TrimText(r);
  if (!CheckUsage(r)) {
    return false;
  }
  for (std::size_t i = events_before; i < r.events.size(); ++i) {
    const std::int32_t n = r.events[i].tokens;
    tokens_ += n > 0 ? n : 1;
  }
  if (max_tokens_ > 0 && tokens_ > max_tokens_) {
    r.outcome = Outcome::kProtocol;
    r.reason = "stream over " + std::to_string(max_tokens_) +
               " tokens, more than max_tokens allows: the server ignores max_tokens; stopped";
    return false;
  }
  return true;
}

bool StreamGuard::AtStreamEnd(ChatResponse& r) {
  if (chunks_ == 0) {
    r.outcome = Outcome::kProtocol;
    r.reason =
        r.stream_done ? "empty stream: only data: [DONE], no chunk" : "empty stream: no chunk";
    return false;
  }
  return CheckUsage(r);
}

bool StreamGuard::AfterBody(ChatResponse& r) {
  return CheckUsage(r);
}

}  // namespace sb::client::detail
