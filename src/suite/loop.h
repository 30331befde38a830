// Detects output that repeats itself while it streams, so a looping request can be cancelled
// early (the LOOP status) instead of burning its whole token budget. Text is cut into units
// (a run of ASCII letters/digits, or one other non-space character: close to how tokenizers
// split, and language-neutral: each CJK character is a unit). A loop is a span of `span`
// consecutive units seen `repeats` times without overlap. A text that merely reuses phrases
// never gets there; degenerate repetition gets there after about span × repeats units.
// Thread safety: one detector per stream, used from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sb::suite {

class LoopDetector {
 public:
  // repeats == 0 turns detection off (Feed always returns false).
  LoopDetector(int span, int repeats);

  // Adds the next piece of the stream; returns true once a loop has been found.
  bool Feed(std::string_view more);

  bool found() const { return found_; }

  std::size_t units() const { return starts_.size(); }

  // The repeated span as text (at most 120 characters), "" until found.
  std::string span_text() const;

  int span() const { return span_; }

  int repeats() const { return repeats_; }

 private:
  void AddUnit(std::size_t start, std::size_t end);

  int span_;
  int repeats_;
  bool found_ = false;
  std::string text_;                   // everything fed so far
  std::size_t scanned_ = 0;            // text_ before this offset is cut into units
  std::vector<std::uint32_t> starts_;  // byte offset of each unit in text_
  std::vector<std::uint32_t> ends_;
  std::vector<std::uint64_t> hashes_;  // per unit
  std::uint64_t window_ = 0;           // rolling hash of the last span_ units
  std::uint64_t power_ = 1;            // kBase^(span_-1)

  struct Seen {
    int count = 0;
    std::size_t last_end = 0;  // unit index just past the last counted occurrence
  };

  std::unordered_map<std::uint64_t, Seen> seen_;
  std::size_t found_at_ = 0;  // unit index of the span's last unit
};

}  // namespace sb::suite
