// Private to the suite module: the UTF-8 helpers text.cpp and text_numbers.cpp share.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sb::suite::detail {

// Decodes the code point at s[i]; returns its byte length (>= 1). Invalid bytes give U+FFFD.
std::size_t Decode(std::string_view s, std::size_t i, char32_t& cp);

// Scripts whose words are single characters (no spaces between words).
bool IsIdeographic(char32_t c);

bool IsWordChar(char32_t c);

std::string LowerAscii(std::string_view s);

}  // namespace sb::suite::detail
