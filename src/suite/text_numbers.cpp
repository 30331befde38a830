// Numbers in a model's answer: every number written in digits, fractions (LaTeX too) or words,
// and the final one (text.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

#include "suite/text.h"
#include "suite/text_internal.h"

namespace sb::suite {

namespace {

using namespace detail;  // NOLINT(build/namespaces): this module's private helpers

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

}  // namespace sb::suite
