#include "sim/tokenizer.h"

#include <algorithm>

namespace sb::sim {
namespace {

bool IsSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool IsAlnum(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Length in bytes of the UTF-8 code point starting at text[i]; 1 for an invalid byte.
std::size_t CodePointLength(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  std::size_t n = 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
  } else {
    return 1;  // ASCII, a continuation byte without a lead, or an invalid lead byte
  }
  if (i + n > text.size()) {
    return 1;
  }
  for (std::size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) {
      return 1;
    }
  }
  return n;
}

// Calls fn(token) for each token of text.
template <typename Fn>
void ForEachToken(std::string_view text, int chars_per_token, Fn&& fn) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (IsSpace(c)) {
      ++i;
    } else if (IsAlnum(c)) {
      std::size_t j = i + 1;
      while (j < n && IsAlnum(static_cast<unsigned char>(text[j]))) {
        ++j;
      }
      if (chars_per_token > 0) {  // a small vocabulary: a word in pieces
        for (std::size_t k = i; k < j; k += static_cast<std::size_t>(chars_per_token)) {
          fn(text.substr(k, std::min(j - k, static_cast<std::size_t>(chars_per_token))));
        }
      } else {
        fn(text.substr(i, j - i));
      }
      i = j;
    } else {
      const std::size_t len = CodePointLength(text, i);
      fn(text.substr(i, len));
      i += len;
    }
  }
}

}  // namespace

int CountTokens(std::string_view text, int chars_per_token) {
  int count = 0;
  ForEachToken(text, chars_per_token, [&count](std::string_view) { ++count; });
  return count;
}

std::vector<std::string_view> SplitTokens(std::string_view text, int chars_per_token) {
  std::vector<std::string_view> tokens;
  ForEachToken(text, chars_per_token, [&tokens](std::string_view t) { tokens.push_back(t); });
  return tokens;
}

std::vector<std::string> AnswerPieces(std::string_view text) {
  std::vector<std::string> pieces;
  std::size_t consumed = 0;
  ForEachToken(text, 0, [&](std::string_view t) {
    const std::size_t end = static_cast<std::size_t>(t.data() - text.data()) + t.size();
    pieces.emplace_back(text.substr(consumed, end - consumed));
    consumed = end;
  });
  if (consumed < text.size()) {
    if (pieces.empty()) {
      pieces.emplace_back(text.substr(consumed));
    } else {
      pieces.back().append(text.substr(consumed));
    }
  }
  return pieces;
}

std::uint64_t Fnv1a64(std::string_view bytes, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::int64_t TokenId(std::string_view token) {
  const std::uint64_t h = Fnv1a64(token);
  return kFirstTextId + static_cast<std::int64_t>((h ^ (h >> 31)) & 0x3fffffffULL);
}

}  // namespace sb::sim
