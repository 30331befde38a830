// Large inputs from short seeds: an input that begins with kExpandMagic stands for the rest of
// it repeated until kExpandedBytes (1 MiB), so a corpus of a few bytes reaches the sizes a
// hostile server sends (docs/bounds.md: a line, an event and an answer may be 1 MiB) and the
// fuzzer mutates the short pattern. Header-only: each target includes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sb::fuzz {

inline constexpr std::string_view kExpandMagic = "#expand1M\n";
inline constexpr std::size_t kExpandedBytes = std::size_t{1} << 20;

// The input as the target should read it: data itself, or (after kExpandMagic) its pattern
// repeated to kExpandedBytes, held in storage. An empty pattern stays empty.
inline std::string_view Expand(const std::uint8_t* data, std::size_t size, std::string& storage) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input.substr(0, kExpandMagic.size()) != kExpandMagic) {
    return input;
  }
  const std::string_view pattern = input.substr(kExpandMagic.size());
  storage.clear();
  if (pattern.empty()) {
    return storage;
  }
  storage.reserve(kExpandedBytes);
  while (storage.size() < kExpandedBytes) {
    storage.append(pattern.substr(0, kExpandedBytes - storage.size()));
  }
  return storage;
}

}  // namespace sb::fuzz
