#include "suite/loop.h"

#include "suite/text.h"

namespace sb::suite {

namespace {

constexpr std::uint64_t kBase = 0x100000001b3ULL;

bool IsAlnum(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool IsSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::uint64_t HashBytes(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  // Final mix (splitmix64) so that the rolling combination stays well spread.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h;
}

// Length of the UTF-8 sequence led by byte c (1 for an invalid lead byte).
std::size_t SequenceLength(unsigned char c) {
  if (c >= 0xF0 && c <= 0xF4) {
    return 4;
  }
  if (c >= 0xE0) {
    return 3;
  }
  if (c >= 0xC2 && c <= 0xDF) {
    return 2;
  }
  return 1;
}

}  // namespace

LoopDetector::LoopDetector(int span, int repeats)
    : span_(span < 2 ? 2 : span), repeats_(repeats < 0 ? 0 : repeats) {
  for (int i = 1; i < span_; ++i) {
    power_ *= kBase;
  }
}

void LoopDetector::AddUnit(std::size_t start, std::size_t end) {
  const std::uint64_t h = HashBytes(std::string_view(text_).substr(start, end - start));
  starts_.push_back(static_cast<std::uint32_t>(start));
  ends_.push_back(static_cast<std::uint32_t>(end));
  hashes_.push_back(h);
  const std::size_t n = hashes_.size();
  if (n > static_cast<std::size_t>(span_)) {
    window_ -= hashes_[n - 1 - static_cast<std::size_t>(span_)] * power_;
  }
  window_ = window_ * kBase + h;
  if (n < static_cast<std::size_t>(span_) || found_) {
    return;
  }
  Seen& s = seen_[window_];
  const std::size_t begin = n - static_cast<std::size_t>(span_);
  if (s.count == 0 || begin >= s.last_end) {
    ++s.count;
    s.last_end = n;
    if (s.count >= repeats_) {
      found_ = true;
      found_at_ = n - 1;
    }
  }
}

bool LoopDetector::Feed(std::string_view more) {
  if (repeats_ == 0 || found_) {
    return found_;
  }
  text_.append(more);
  std::size_t i = scanned_;
  while (i < text_.size() && !found_) {
    const auto c = static_cast<unsigned char>(text_[i]);
    if (IsSpace(c)) {
      ++i;
      continue;
    }
    if (IsAlnum(c)) {
      std::size_t j = i;
      while (j < text_.size() && IsAlnum(static_cast<unsigned char>(text_[j]))) {
        ++j;
      }
      if (j == text_.size()) {
        break;  // the run may continue in the next piece
      }
      AddUnit(i, j);
      i = j;
      continue;
    }
    const std::size_t n = SequenceLength(c);
    if (i + n > text_.size()) {
      break;  // a character split between pieces
    }
    AddUnit(i, i + n);
    i += n;
  }
  scanned_ = i;
  return found_;
}

std::string LoopDetector::span_text() const {
  if (!found_) {
    return "";
  }
  const std::size_t first = found_at_ + 1 - static_cast<std::size_t>(span_);
  return OneLine(std::string_view(text_).substr(starts_[first], ends_[found_at_] - starts_[first]),
                 120);
}

}  // namespace sb::suite
