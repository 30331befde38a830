// Detects output that repeats itself while it streams, so a looping request can be cancelled
// early (the LOOP status) instead of burning its whole token budget. Text is cut into units
// (a run of ASCII letters/digits, or one other non-space character: close to how tokenizers
// split, and language-neutral: each CJK character is a unit). A loop is a span of `span`
// consecutive units seen `repeats` times without overlap. A text that merely reuses phrases
// never gets there; degenerate repetition gets there after about span × repeats units.
// A second, optional detector finds near loops: the same text whose numbers change each cycle
// ("Step 41: add 3 to get 124. Step 42: add 3 to get 127. ..."). It reads every unit made only
// of digits as one placeholder and needs `near_repeats` (more than `repeats`) non-overlapping
// occurrences of a span that holds at least one number and at least span/4 word units, so a
// table of numbers (no words), a numbered list of distinct items or code whose identifiers
// differ never gets there.
// Thread safety: one detector per stream, used from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sb::suite {

// The suites' near-loop threshold: this many times the exact one (50 for the default 10).
inline constexpr int kNearRepeatFactor = 5;

class LoopDetector {
 public:
  // repeats == 0 turns detection off (Feed always returns false); near_repeats == 0 turns the
  // near-loop detector off (values below `repeats` are raised to it).
  LoopDetector(int span, int repeats, int near_repeats = 0);

  // Adds the next piece of the stream; returns true once a loop has been found.
  bool Feed(std::string_view more);

  bool found() const { return found_; }

  std::size_t units() const { return starts_.size(); }

  // The repeated span as text (at most 120 characters), "" until found.
  std::string span_text() const;

  int span() const { return span_; }

  // The repeat count of the loop found: repeats(), or near_repeats() for a near loop.
  int repeats() const { return near_found_ ? near_repeats_ : repeats_; }

  int near_repeats() const { return near_repeats_; }

  // Whether the loop found is a near loop (its numbers changed from one cycle to the next).
  bool near() const { return near_found_; }

 private:
  void AddUnit(std::size_t start, std::size_t end);

  struct Seen {
    int count = 0;
    std::size_t last_end = 0;  // unit index just past the last counted occurrence
  };

  // Counts the window ending at unit n-1 in `seen`; true when it reached `needed`.
  bool Count(std::unordered_map<std::uint64_t, Seen>& seen, std::uint64_t window, std::size_t n,
             int needed);

  int span_;
  int repeats_;
  int near_repeats_;
  bool found_ = false;
  bool near_found_ = false;
  std::string text_;                   // everything fed so far
  std::size_t scanned_ = 0;            // text_ before this offset is cut into units
  std::vector<std::uint32_t> starts_;  // byte offset of each unit in text_
  std::vector<std::uint32_t> ends_;
  std::vector<std::uint64_t> hashes_;  // per unit
  std::uint64_t window_ = 0;           // rolling hash of the last span_ units
  std::uint64_t power_ = 1;            // kBase^(span_-1)
  // Near-loop state: per-unit hashes with digit runs as one placeholder, and unit kinds.
  std::vector<std::uint64_t> near_hashes_;
  std::vector<std::uint8_t> kinds_;  // kNumber / kWord bits per unit
  std::uint64_t near_window_ = 0;
  int window_numbers_ = 0;  // number units in the last span_ units
  int window_words_ = 0;    // word units in the last span_ units

  std::unordered_map<std::uint64_t, Seen> seen_;
  std::unordered_map<std::uint64_t, Seen> near_seen_;
  std::size_t found_at_ = 0;  // unit index of the span's last unit
};

}  // namespace sb::suite
