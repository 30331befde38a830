#include "suite/text.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace sb::suite {

namespace {

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

bool IsAsciiAlnum(char32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool IsAsciiSpace(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Scripts whose words are single characters (no spaces between words).
bool IsIdeographic(char32_t c) {
  return (c >= 0x3040 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) ||
         (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFF66 && c <= 0xFF9F) ||
         (c >= 0x20000 && c <= 0x2FFFF);
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

bool IsWordChar(char32_t c) {
  return IsAsciiAlnum(c) || c == '_' || IsOtherLetter(c);
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

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

// The code point that ends just before byte offset i (0 when i == 0).
char32_t PreviousCodePoint(std::string_view s, std::size_t i) {
  if (i == 0) {
    return 0;
  }
  std::size_t j = i - 1;
  while (j > 0 && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80 && i - j < 4) {
    --j;
  }
  char32_t cp = 0;
  Decode(s, j, cp);
  return cp;
}

// Parses digits (with thousands groups and a decimal part) at s[i]; returns the end offset and
// the value, or i when there is no number there. When `items` is given and the digits have
// comma groups that also read as a list ("120,135,150": no group after the first starts with
// 0), it receives that reading (120, 135, 150; a decimal part stays on the last item).
std::size_t ParseUnsigned(std::string_view s, std::size_t i, double& value,
                          std::vector<double>* items = nullptr) {
  std::size_t j = i;
  std::string digits;
  while (j < s.size() && IsDigit(s[j])) {
    digits.push_back(s[j++]);
  }
  if (digits.empty()) {
    // ".5"
    if (j + 1 < s.size() && s[j] == '.' && IsDigit(s[j + 1])) {
      digits.push_back('0');
    } else {
      return i;
    }
  }
  // Thousands groups: ",ddd" (exactly three digits, not followed by another digit).
  std::vector<std::string> groups = {digits};
  if (digits.size() <= 3) {
    while (j + 3 < s.size() && s[j] == ',' && IsDigit(s[j + 1]) && IsDigit(s[j + 2]) &&
           IsDigit(s[j + 3]) && !(j + 4 < s.size() && IsDigit(s[j + 4]))) {
      digits.append(s.substr(j + 1, 3));
      groups.emplace_back(s.substr(j + 1, 3));
      j += 4;
    }
  }
  std::string text = digits;
  std::string decimals;
  if (j + 1 < s.size() && s[j] == '.' && IsDigit(s[j + 1])) {
    decimals.push_back('.');
    ++j;
    while (j < s.size() && IsDigit(s[j])) {
      decimals.push_back(s[j++]);
    }
  }
  text += decimals;
  value = std::strtod(text.c_str(), nullptr);
  if (items != nullptr && groups.size() > 1 &&
      std::none_of(groups.begin() + 1, groups.end(),
                   [](const std::string& g) { return g[0] == '0'; })) {
    groups.back() += decimals;
    for (const std::string& g : groups) {
      items->push_back(std::strtod(g.c_str(), nullptr));
    }
  }
  return j;
}

// "\frac{a}{b}" (also \dfrac, \tfrac) at s[i]; returns the end offset or i.
std::size_t ParseLatexFraction(std::string_view s, std::size_t i, double& value) {
  for (std::string_view cmd : {"\\frac{", "\\dfrac{", "\\tfrac{"}) {
    if (s.substr(i, cmd.size()) != cmd) {
      continue;
    }
    std::size_t j = i + cmd.size();
    double a = 0, b = 0;
    std::size_t k = ParseUnsigned(s, j, a);
    if (k == j || s.substr(k, 2) != "}{") {
      return i;
    }
    j = k + 2;
    k = ParseUnsigned(s, j, b);
    if (k == j || k >= s.size() || s[k] != '}' || b == 0) {
      return i;
    }
    value = a / b;
    return k + 1;
  }
  return i;
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

// The first number starting at or right after `i` (spaces, '*', '$', '`', quotes and '(' may
// come first), or nullopt.
std::optional<FoundNumber> NumberRightAt(std::string_view text, std::size_t i) {
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '*' || text[i] == '$' || text[i] == '`' || text[i] == '"' ||
          text[i] == '(' || text[i] == '\t' || text[i] == '\n')) {
    ++i;
  }
  for (const FoundNumber& n : FindNumbers(text.substr(i, 64))) {
    if (n.offset <= 3) {  // a sign or "\frac" may precede the digits
      FoundNumber found = n;
      found.offset += i;
      return found;
    }
    break;
  }
  return std::nullopt;
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

// English number words ("two", "twelve", "forty"): models often write small counts in words.
std::optional<double> NumberWord(std::string_view word) {
  static constexpr std::array<std::string_view, 21> kUnits = {
      "zero",     "one",     "two",     "three",     "four",     "five",     "six",
      "seven",    "eight",   "nine",    "ten",       "eleven",   "twelve",   "thirteen",
      "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"};
  static constexpr std::array<std::string_view, 7> kTens = {"thirty",  "forty",  "fifty", "sixty",
                                                            "seventy", "eighty", "ninety"};
  const std::string w = LowerAscii(word);
  for (std::size_t i = 0; i < kUnits.size(); ++i) {
    if (w == kUnits[i]) {
      return static_cast<double>(i);
    }
  }
  for (std::size_t i = 0; i < kTens.size(); ++i) {
    if (w == kTens[i]) {
      return static_cast<double>(30 + 10 * i);
    }
  }
  return std::nullopt;
}

bool IsAsciiLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

}  // namespace

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

std::vector<FoundNumber> FindNumbers(std::string_view text) {
  std::vector<FoundNumber> out;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    double value = 0;
    if (c == '\\') {
      const std::size_t end = ParseLatexFraction(text, i, value);
      if (end != i) {
        out.push_back({value, i, std::string(text.substr(i, end - i)), false, {}});
        i = end;
        continue;
      }
      ++i;
      continue;
    }
    if (IsAsciiLetter(c) && !IsWordChar(PreviousCodePoint(text, i))) {
      std::size_t end = i;
      while (end < text.size() && IsAsciiLetter(text[end])) {
        ++end;
      }
      const bool word_ends =
          end >= text.size() || !IsWordChar(static_cast<unsigned char>(text[end]));
      if (word_ends) {
        if (auto v = NumberWord(text.substr(i, end - i))) {
          out.push_back({*v, i, std::string(text.substr(i, end - i)), true, {}});
        }
      }
      i = end;
      continue;
    }
    const bool starts_digit =
        IsDigit(c) || (c == '.' && i + 1 < text.size() && IsDigit(text[i + 1]));
    if (!starts_digit) {
      // A sign: '-', '+' or U+2212 directly before digits, not after a letter or digit.
      std::size_t sign_len = 0;
      if (c == '-' || c == '+') {
        sign_len = 1;
      } else if (text.substr(i, 3) == "\u2212") {
        sign_len = 3;
      }
      if (sign_len > 0 && i + sign_len < text.size() && IsDigit(text[i + sign_len])) {
        const char32_t prev = PreviousCodePoint(text, i);
        if ((!IsWordChar(prev) || IsIdeographic(prev)) && prev != ')' && prev != '.') {
          std::vector<double> items;
          const std::size_t end = ParseUnsigned(text, i + sign_len, value, &items);
          if (end != i + sign_len) {
            if (c != '+' && !items.empty()) {
              items.front() = -items.front();
            }
            out.push_back({c == '+' ? value : -value, i, std::string(text.substr(i, end - i)),
                           false, std::move(items)});
            i = end;
            continue;
          }
        }
      }
      std::size_t step = 1;
      while (i + step < text.size() &&
             (static_cast<unsigned char>(text[i + step]) & 0xC0) == 0x80) {
        ++step;
      }
      i += step;
      continue;
    }
    // Digits glued to a letter before them ("Q3", "x2", "mp4") are not numbers.
    const char32_t prev = PreviousCodePoint(text, i);
    if (IsWordChar(prev) && !IsIdeographic(prev)) {
      while (i < text.size() && (IsDigit(text[i]) || text[i] == '.')) {
        ++i;
      }
      continue;
    }
    std::vector<double> items;
    std::size_t end = ParseUnsigned(text, i, value, &items);
    std::string written(text.substr(i, end - i));
    // A fraction "2/3".
    if (end + 1 < text.size() && text[end] == '/' && IsDigit(text[end + 1]) &&
        written.find('.') == std::string::npos) {
      double denominator = 0;
      const std::size_t dend = ParseUnsigned(text, end + 1, denominator);
      if (dend != end + 1 && denominator != 0) {
        value /= denominator;
        items.clear();
        written = std::string(text.substr(i, dend - i));
        end = dend;
      }
    }
    if (end < text.size() && text[end] == '%') {
      written.push_back('%');
      ++end;
    }
    out.push_back({value, i, written, false, std::move(items)});
    i = end;
  }
  return out;
}

std::optional<FoundNumber> FinalNumber(std::string_view text) {
  // 1. The last \boxed{...} with a number in it.
  for (std::size_t pos = text.rfind("\\boxed{"); pos != std::string_view::npos;
       pos = pos == 0 ? std::string_view::npos : text.rfind("\\boxed{", pos - 1)) {
    std::size_t end = text.find('}', pos + 7);
    // \boxed{\frac{2}{3}} has an inner brace pair.
    if (text.substr(pos + 7, 5) == "\\frac" || text.substr(pos + 7, 6) == "\\dfrac") {
      end = text.find("}}", pos + 7);
      if (end != std::string_view::npos) {
        ++end;
      }
    }
    if (end == std::string_view::npos) {
      end = text.size();
    }
    auto inside = FindNumbers(text.substr(pos + 7, end - (pos + 7)));
    if (!inside.empty()) {
      FoundNumber n = inside.front();
      n.offset += pos + 7;
      return n;
    }
    if (pos == 0) {
      break;
    }
  }
  // 2. The last "answer" marker directly followed by a number.
  const std::string lower = LowerAscii(text);
  for (std::size_t pos = lower.rfind("answer"); pos != std::string::npos;
       pos = pos == 0 ? std::string::npos : lower.rfind("answer", pos - 1)) {
    std::size_t i = pos + 6;
    // "answer:", "answer is", "answer would be", "answer =", "answer is: **42**"
    auto skip = [&](std::string_view word) {
      std::size_t j = i;
      while (j < lower.size() && (lower[j] == ' ' || lower[j] == '*')) {
        ++j;
      }
      if (lower.compare(j, word.size(), word) == 0) {
        i = j + word.size();
        return true;
      }
      return false;
    };
    if (!skip("is")) {
      if (!skip("would be")) {
        skip("will be");
      }
    }
    while (i < lower.size() && (lower[i] == ' ' || lower[i] == ':' || lower[i] == '=' ||
                                lower[i] == '*' || lower[i] == '\t')) {
      ++i;
    }
    if (auto n = NumberRightAt(text, i)) {
      return n;
    }
    if (pos == 0) {
      break;
    }
  }
  // 3. The last bold span holding a number.
  for (std::size_t end = text.rfind("**"); end != std::string_view::npos && end >= 2;) {
    const std::size_t start = text.rfind("**", end - 1);
    if (start == std::string_view::npos) {
      break;
    }
    auto inside = FindNumbers(text.substr(start + 2, end - start - 2));
    if (!inside.empty()) {
      FoundNumber n = inside.back();
      n.offset += start + 2;
      return n;
    }
    if (start < 2) {
      break;
    }
    end = text.rfind("**", start - 1);
  }
  // 4. The last number in digits, else the last number word.
  auto all = FindNumbers(text);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (!it->word) {
      return *it;
    }
  }
  if (all.empty()) {
    return std::nullopt;
  }
  return all.back();
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
