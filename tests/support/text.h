// Test support: looking for text in rendered output (reports, exports, console lines).
#pragma once

#include <string_view>

namespace sb::testing {

// Whether `part` occurs in `text`.
inline bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// How many times `part` occurs in `text`, overlapping occurrences included ("aa" in "aaa": 2).
inline int Count(std::string_view text, std::string_view part) {
  int n = 0;
  for (auto p = text.find(part); p != std::string_view::npos; p = text.find(part, p + 1)) {
    ++n;
  }
  return n;
}

}  // namespace sb::testing
