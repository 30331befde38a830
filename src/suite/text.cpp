#include "suite/text.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "suite/text_internal.h"

namespace sb::suite {

namespace detail {

// Decodes the code point at s[i]; returns its byte length (>= 1). Invalid bytes give U+FFFD.
std::size_t Decode(std::string_view s, std::size_t i, char32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  std::size_t n = 0;
  char32_t v = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
    v = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    v = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    v = b0 & 0x07;
  } else {
    cp = 0xFFFD;
    return 1;
  }
  if (i + n > s.size()) {
    cp = 0xFFFD;
    return 1;
  }
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      cp = 0xFFFD;
      return 1;
    }
    v = (v << 6) | (b & 0x3F);
  }
  if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10FFFF)) ||
      (v >= 0xD800 && v <= 0xDFFF)) {
    cp = 0xFFFD;
    return 1;
  }
  cp = v;
  return n;
}

// Scripts whose words are single characters (no spaces between words).
bool IsIdeographic(char32_t c) {
  return (c >= 0x3040 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) ||
         (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFF66 && c <= 0xFF9F) ||
         (c >= 0x20000 && c <= 0x2FFFF);
}

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

}  // namespace detail

namespace {

using namespace detail;  // NOLINT(build/namespaces): this module's private helpers

bool IsAsciiAlnum(char32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool IsAsciiSpace(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Letters and digits beyond ASCII: everything from U+00C0 up that is not punctuation, a symbol
// or an emoji (a coarse rule that is right for every script the checkers name).
bool IsOtherLetter(char32_t c) {
  if (c < 0xC0 || c == 0xD7 || c == 0xF7 || c == 0xFFFD) {
    return false;
  }
  if ((c >= 0x2000 && c <= 0x2BFF) || (c >= 0x3000 && c <= 0x303F) ||
      (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF0F) ||
      (c >= 0xFF1A && c <= 0xFF20) || (c >= 0xFF3B && c <= 0xFF40) ||
      (c >= 0xFF5B && c <= 0xFF65) || (c >= 0x1F000 && c <= 0x1FAFF) ||
      (c >= 0xE000 && c <= 0xF8FF)) {
    return false;
  }
  return true;
}

bool IsApostrophe(char32_t c) {
  return c == '\'' || c == 0x2019;
}

std::vector<std::string_view> SplitLines(std::string_view s) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find('\n', start);
    if (end == std::string_view::npos) {
      lines.push_back(s.substr(start));
      break;
    }
    std::string_view line = s.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

bool IsBlank(std::string_view line) {
  return Trim(line).empty();
}

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  return s;
}

bool IsBulletLine(std::string_view line) {
  std::string_view t = TrimLeft(line);
  for (std::string_view bullet : {"- ", "* ", "+ ", "\u2022 ", "\u2022"}) {
    if (t.substr(0, bullet.size()) == bullet && t.size() > bullet.size()) {
      return true;
    }
  }
  return false;
}

bool IsNumberedLine(std::string_view line) {
  std::string_view t = TrimLeft(line);
  std::size_t i = 0;
  while (i < t.size() && i < 3 && t[i] >= '0' && t[i] <= '9') {
    ++i;
  }
  if (i == 0 && t.size() >= 2 && t[0] >= 'a' && t[0] <= 'z' && t[1] == ')') {
    i = 1;
  }
  if (i == 0 || i + 1 >= t.size()) {
    return false;
  }
  return (t[i] == '.' || t[i] == ')') && t[i + 1] == ' ';
}

enum class Script {
  kNone,
  kLatin,
  kGreek,
  kCyrillic,
  kHebrew,
  kArabic,
  kDevanagari,
  kThai,
  kHangul,
  kKana,
  kHan
};

Script ScriptOf(char32_t c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
      (c >= 0xC0 && c <= 0x24F && c != 0xD7 && c != 0xF7) || (c >= 0x1E00 && c <= 0x1EFF)) {
    return Script::kLatin;
  }
  if (c >= 0x370 && c <= 0x3FF) {
    return Script::kGreek;
  }
  if (c >= 0x400 && c <= 0x52F) {
    return Script::kCyrillic;
  }
  if (c >= 0x590 && c <= 0x5FF) {
    return Script::kHebrew;
  }
  if (c >= 0x600 && c <= 0x6FF) {
    return Script::kArabic;
  }
  if (c >= 0x900 && c <= 0x97F) {
    return Script::kDevanagari;
  }
  if (c >= 0xE00 && c <= 0xE7F) {
    return Script::kThai;
  }
  if ((c >= 0xAC00 && c <= 0xD7AF) || (c >= 0x1100 && c <= 0x11FF) ||
      (c >= 0x3130 && c <= 0x318F)) {
    return Script::kHangul;
  }
  if ((c >= 0x3040 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) ||
      (c >= 0xFF66 && c <= 0xFF9F)) {
    return Script::kKana;
  }
  if ((c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
      (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x2FFFF)) {
    return Script::kHan;
  }
  return Script::kNone;
}

struct ScriptCounts {
  std::array<std::size_t, 11> n{};
  std::size_t letters = 0;
};

ScriptCounts CountScripts(std::string_view s) {
  ScriptCounts counts;
  for (char32_t c : CodePoints(s)) {
    Script sc = ScriptOf(c);
    if (sc != Script::kNone) {
      ++counts.n[static_cast<std::size_t>(sc)];
      ++counts.letters;
    }
  }
  return counts;
}

std::size_t N(const ScriptCounts& c, Script s) {
  return c.n[static_cast<std::size_t>(s)];
}

}  // namespace

bool detail::IsWordChar(char32_t c) {
  return IsAsciiAlnum(c) || c == '_' || IsOtherLetter(c);
}

std::vector<char32_t> CodePoints(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    i += Decode(s, i, cp);
    out.push_back(cp);
  }
  return out;
}

std::size_t CountCodePoints(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    i += Decode(s, i, cp);
    ++n;
  }
  return n;
}

std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> words;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) {
      words.push_back(LowerAscii(current));
      current.clear();
    }
  };
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    const std::size_t n = Decode(s, i, cp);
    if (IsIdeographic(cp)) {
      flush();
      words.emplace_back(s.substr(i, n));
    } else if (IsWordChar(cp)) {
      current.append(s.substr(i, n));
    } else if (IsApostrophe(cp) && !current.empty() && i + n < s.size()) {
      char32_t next = 0;
      Decode(s, i + n, next);
      if (IsWordChar(next) && !IsIdeographic(next)) {
        current.append(s.substr(i, n));
      } else {
        flush();
      }
    } else {
      flush();
    }
    i += n;
  }
  flush();
  return words;
}

std::size_t CountWords(std::string_view s) {
  return Words(s).size();
}

std::size_t CountLines(std::string_view s) {
  std::size_t n = 0;
  for (std::string_view line : SplitLines(s)) {
    if (!IsBlank(line)) {
      ++n;
    }
  }
  return n;
}

std::size_t CountParagraphs(std::string_view s) {
  std::size_t n = 0;
  bool in_paragraph = false;
  for (std::string_view line : SplitLines(s)) {
    if (IsBlank(line)) {
      in_paragraph = false;
    } else if (!in_paragraph) {
      in_paragraph = true;
      ++n;
    }
  }
  return n;
}

std::size_t CountListItems(std::string_view s) {
  std::size_t n = 0;
  for (std::string_view line : SplitLines(s)) {
    if (IsBulletLine(line) || IsNumberedLine(line)) {
      ++n;
    }
  }
  return n;
}

std::size_t CountBullets(std::string_view s) {
  std::size_t n = 0;
  for (std::string_view line : SplitLines(s)) {
    if (IsBulletLine(line)) {
      ++n;
    }
  }
  return n;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsAsciiSpace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && IsAsciiSpace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

std::string Lower(std::string_view s) {
  return LowerAscii(s);
}

std::string NormalizeSpace(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : Trim(s)) {
    if (IsAsciiSpace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && !out.empty()) {
      out.push_back(' ');
    }
    space = false;
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return out;
}

std::string StripMarkdown(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '*' || c == '`') {
      continue;
    }
    // '_' marks emphasis only at a word boundary ("__x__", "_x_"), not inside snake_case.
    if (c == '_') {
      const bool prev_word = i > 0 && IsAsciiAlnum(static_cast<unsigned char>(s[i - 1]));
      const bool next_word = i + 1 < s.size() && IsAsciiAlnum(static_cast<unsigned char>(s[i + 1]));
      if (!(prev_word && next_word)) {
        continue;
      }
    }
    out.push_back(c);
  }
  return out;
}

SplitReply SplitThinking(std::string_view text) {
  SplitReply out;
  static constexpr std::array<std::string_view, 2> kOpen = {"<think>", "<thinking>"};
  static constexpr std::array<std::string_view, 2> kClose = {"</think>", "</thinking>"};
  std::size_t pos = 0;
  bool inside = false;
  // Each tag's next position, searched again only once passed: one pass over the text (searching
  // every tag from each position afresh was quadratic: 10 s of CPU for a 1 MiB answer of tags).
  std::array<std::size_t, 2> next_open = {0, 0};
  std::array<std::size_t, 2> next_close = {0, 0};
  std::array<bool, 2> open_known = {false, false};
  std::array<bool, 2> close_known = {false, false};
  auto next = [&](std::string_view tag, std::size_t& at, bool& known) {
    if (!known || (at != std::string_view::npos && at < pos)) {
      at = text.find(tag, pos);
      known = true;
    }
    return at;
  };
  while (true) {
    std::size_t best = std::string_view::npos;
    std::size_t len = 0;
    bool open = false;
    for (std::size_t k = 0; k < kOpen.size(); ++k) {
      const std::size_t o = next(kOpen[k], next_open[k], open_known[k]);
      if (o < best) {
        best = o;
        len = kOpen[k].size();
        open = true;
      }
      const std::size_t c = next(kClose[k], next_close[k], close_known[k]);
      if (c < best) {
        best = c;
        len = kClose[k].size();
        open = false;
      }
    }
    if (best == std::string_view::npos) {
      (inside ? out.reasoning : out.answer).append(text.substr(pos));
      out.unclosed = inside;
      break;
    }
    out.had_tags = true;
    const std::string_view segment = text.substr(pos, best - pos);
    if (open) {
      (inside ? out.reasoning : out.answer).append(segment);
      inside = true;
    } else if (inside) {
      out.reasoning.append(segment);
      inside = false;
    } else {
      // A closing tag with no opening one: the template prefilled "<think>".
      out.reasoning.append(out.answer);
      out.reasoning.append(segment);
      out.answer.clear();
    }
    pos = best + len;
  }
  if (out.had_tags) {
    out.answer = std::string(Trim(out.answer));
    out.reasoning = std::string(Trim(out.reasoning));
  }
  return out;
}

std::vector<CodeBlock> CodeBlocks(std::string_view text) {
  std::vector<CodeBlock> blocks;
  const std::vector<std::string_view> lines = SplitLines(text);
  std::optional<CodeBlock> current;
  std::string fence;
  for (std::string_view line : lines) {
    std::string_view t = TrimLeft(line);
    if (!current) {
      if (t.substr(0, 3) == "```" || t.substr(0, 3) == "~~~") {
        std::size_t n = 0;
        while (n < t.size() && t[n] == t[0]) {
          ++n;
        }
        fence = std::string(t.substr(0, n));
        std::string_view info = Trim(t.substr(n));
        const std::size_t space = info.find_first_of(" \t{");
        current = CodeBlock{LowerAscii(info.substr(0, space)), ""};
      }
      continue;
    }
    if (t.substr(0, fence.size()) == fence && Trim(t.substr(fence.size())).empty()) {
      blocks.push_back(std::move(*current));
      current.reset();
      continue;
    }
    current->code.append(line);
    current->code.push_back('\n');
  }
  if (current) {
    blocks.push_back(std::move(*current));
  }
  return blocks;
}

std::string DominantScript(std::string_view s, double* share) {
  const ScriptCounts c = CountScripts(s);
  if (share != nullptr) {
    *share = 0;
  }
  if (c.letters == 0) {
    return "";
  }
  const std::size_t kana = N(c, Script::kKana);
  const std::size_t han = N(c, Script::kHan);
  std::vector<std::pair<std::string, std::size_t>> groups = {
      {"latin", N(c, Script::kLatin)},
      {"greek", N(c, Script::kGreek)},
      {"cyrillic", N(c, Script::kCyrillic)},
      {"hebrew", N(c, Script::kHebrew)},
      {"arabic", N(c, Script::kArabic)},
      {"devanagari", N(c, Script::kDevanagari)},
      {"thai", N(c, Script::kThai)},
      {"korean", N(c, Script::kHangul)},
      {kana > 0 ? "japanese" : "chinese", kana + han}};
  auto best = std::max_element(groups.begin(), groups.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  if (share != nullptr) {
    *share = static_cast<double>(best->second) / static_cast<double>(c.letters);
  }
  return best->first;
}

double ScriptShare(std::string_view s, std::string_view script) {
  const ScriptCounts c = CountScripts(s);
  if (c.letters == 0) {
    return 0;
  }
  std::size_t n = 0;
  if (script == "latin") {
    n = N(c, Script::kLatin);
  } else if (script == "greek") {
    n = N(c, Script::kGreek);
  } else if (script == "cyrillic") {
    n = N(c, Script::kCyrillic);
  } else if (script == "hebrew") {
    n = N(c, Script::kHebrew);
  } else if (script == "arabic") {
    n = N(c, Script::kArabic);
  } else if (script == "devanagari") {
    n = N(c, Script::kDevanagari);
  } else if (script == "thai") {
    n = N(c, Script::kThai);
  } else if (script == "korean") {
    n = N(c, Script::kHangul);
  } else if (script == "japanese") {
    n = N(c, Script::kKana) + N(c, Script::kHan);
  } else if (script == "chinese") {
    n = N(c, Script::kHan);
  }
  return static_cast<double>(n) / static_cast<double>(c.letters);
}

std::string Excerpt(std::string_view s, std::size_t max_chars) {
  std::size_t i = 0;
  std::size_t chars = 0;
  while (i < s.size() && chars < max_chars) {
    char32_t cp = 0;
    i += Decode(s, i, cp);
    ++chars;
  }
  if (i >= s.size()) {
    return std::string(s);
  }
  return std::string(s.substr(0, i)) + "\u2026";
}

std::string OneLine(std::string_view s, std::size_t max_chars) {
  std::string flat;
  bool space = false;
  for (char c : Trim(s)) {
    if (IsAsciiSpace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space) {
      flat.push_back(' ');
      space = false;
    }
    flat.push_back(c);
  }
  return Excerpt(flat, max_chars);
}

}  // namespace sb::suite
