#include "core/escape.h"

#include <algorithm>

namespace sb {

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default: {
        const auto u = static_cast<unsigned char>(c);
        out += (u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7F ? ' ' : c;
      }
    }
  }
  return out;
}

namespace {

// Bytes of the UTF-8 sequence that starts with lead byte c (1 for stray continuation bytes).
std::size_t Utf8Length(unsigned char c) {
  if (c >= 0xF0) {
    return 4;
  }
  if (c >= 0xE0) {
    return 3;
  }
  if (c >= 0xC0) {
    return 2;
  }
  return 1;
}

}  // namespace

std::string MarkdownCell(std::string_view text, std::size_t max_chars) {
  std::string out;
  out.reserve(text.size());
  std::size_t chars = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (chars == max_chars) {
      out += "…";
      break;
    }
    auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = std::min(Utf8Length(c), text.size() - i);
    if (c == '|' || c == '<') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n' || c == '\r' || c == '\t') {
      // Collapse runs of line breaks into one space.
      if (out.empty() || out.back() != ' ') {
        out.push_back(' ');
      }
    } else if (c < 0x20 || c == 0x7F ||
               (c == 0xC2 && len == 2 && static_cast<unsigned char>(text[i + 1]) < 0xA0)) {
      out.push_back(' ');  // ESC and the other control characters: never raw into a report
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
    ++chars;
  }
  return out;
}

std::string MarkdownInline(std::string_view text) {
  const std::string cell = MarkdownCell(text, std::string::npos);
  std::string out;
  out.reserve(cell.size());
  for (std::size_t i = 0; i < cell.size(); ++i) {
    const char c = cell[i];
    if (c == '\\' && i + 1 < cell.size() && (cell[i + 1] == '|' || cell[i + 1] == '<')) {
      out.append(cell, i, 2);  // MarkdownCell's own escape
      ++i;
      continue;
    }
    if (c == '\\' || c == '*' || c == '_' || c == '`' || c == '[' || c == ']') {
      out.push_back('\\');
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace sb
