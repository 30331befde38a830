#include "core/printable.h"

namespace sb {

namespace {

// The length of the valid UTF-8 sequence at text[i] (1-4), or 0 when it is not valid.
std::size_t SequenceLength(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  std::size_t n = 0;
  unsigned min = 0;
  unsigned cp = 0;
  if (c < 0x80) {
    return 1;
  }
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    min = 0x80;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    min = 0x800;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    min = 0x10000;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) {
    return 0;
  }
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) {
      return 0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return n;
}

bool IsControlByte(unsigned char c) {
  return c < 0x20 || c == 0x7F;
}

}  // namespace

std::string PrintableLine(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(text.size() < max_bytes ? text.size() : max_bytes);
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t n = SequenceLength(text, i);
    const std::size_t take = n == 0 ? 1 : n;
    if (out.size() + take > max_bytes) {
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (n == 0) {
      out.push_back('?');
    } else if (n == 1 && IsControlByte(c)) {
      out.push_back(' ');
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      out.push_back(' ');  // C1 controls U+0080..U+009F (U+009B is a CSI on some terminals)
    } else {
      out.append(text.substr(i, n));
    }
    i += take;
  }
  return out;
}

bool HasControlChar(std::string_view text) {
  for (char ch : text) {
    if (IsControlByte(static_cast<unsigned char>(ch))) {
      return true;
    }
  }
  return false;
}

}  // namespace sb
