#include "suite/loop.h"

#include <algorithm>

#include "suite/text.h"

namespace sb::suite {

namespace {

constexpr std::uint64_t kBase = 0x100000001b3ULL;
constexpr std::uint64_t kNumberHash = 0x9e3779b97f4a7c15ULL;  // every digit-only unit
constexpr std::uint8_t kNumber = 1, kWord = 2;

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

LoopDetector::LoopDetector(int span, int repeats, int near_repeats)
    : span_(span < 2 ? 2 : span),
      repeats_(repeats < 0 ? 0 : repeats),
      near_repeats_(near_repeats <= 0 || repeats_ == 0 ? 0 : std::max(near_repeats, repeats_)) {
  for (int i = 1; i < span_; ++i) {
    power_ *= kBase;
  }
}

bool LoopDetector::Count(std::unordered_map<std::uint64_t, Seen>& seen, std::uint64_t window,
                         std::size_t n, int needed) {
  Seen& s = seen[window];
  const std::size_t begin = n - static_cast<std::size_t>(span_);
  if (s.count == 0 || begin >= s.last_end) {
    ++s.count;
    s.last_end = n;
    if (s.count >= needed) {
      found_ = true;
      found_at_ = n - 1;
      return true;
    }
  }
  return false;
}

void LoopDetector::AddUnit(std::size_t start, std::size_t end) {
  const std::string_view unit = std::string_view(text_).substr(start, end - start);
  const std::uint64_t h = HashBytes(unit);
  starts_.push_back(static_cast<std::uint32_t>(start));
  ends_.push_back(static_cast<std::uint32_t>(end));
  hashes_.push_back(h);
  const std::size_t n = hashes_.size();
  const auto span = static_cast<std::size_t>(span_);
  if (n > span) {
    window_ -= hashes_[n - 1 - span] * power_;
  }
  window_ = window_ * kBase + h;
  if (near_repeats_ > 0) {
    std::uint8_t kind = 0;
    if (std::all_of(unit.begin(), unit.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      kind = kNumber;
    } else if (unit.size() > 1 || IsAlnum(static_cast<unsigned char>(unit[0]))) {
      kind = kWord;  // a word (letters, maybe digits) or a non-ASCII character (CJK)
    }
    const std::uint64_t nh = kind == kNumber ? kNumberHash : h;
    near_hashes_.push_back(nh);
    kinds_.push_back(kind);
    if (n > span) {
      near_window_ -= near_hashes_[n - 1 - span] * power_;
      window_numbers_ -= (kinds_[n - 1 - span] & kNumber) ? 1 : 0;
      window_words_ -= (kinds_[n - 1 - span] & kWord) ? 1 : 0;
    }
    near_window_ = near_window_ * kBase + nh;
    window_numbers_ += (kind & kNumber) ? 1 : 0;
    window_words_ += (kind & kWord) ? 1 : 0;
  }
  if (n < span || found_) {
    return;
  }
  if (Count(seen_, window_, n, repeats_)) {
    return;
  }
  // A near loop: the span has a number to vary and enough words to be a sentence, not a row of
  // figures.
  if (near_repeats_ > 0 && window_numbers_ > 0 && window_words_ * 4 >= span_ &&
      Count(near_seen_, near_window_, n, near_repeats_)) {
    near_found_ = true;
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
