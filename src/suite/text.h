// Text utilities the checkers and the runner share: UTF-8 code points, word/line/item counts,
// number extraction, reasoning separation (<think> tags), fenced code blocks, scripts.
// Every function is pure, never throws, and treats invalid UTF-8 as one code point per bad byte.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sb::suite {

// The code points of s (invalid bytes decode to U+FFFD, one per byte).
std::vector<char32_t> CodePoints(std::string_view s);

// Number of Unicode code points ("≤ 50 characters" counts an emoji once, as promptfoo does).
std::size_t CountCodePoints(std::string_view s);

// Words: maximal runs of letters, digits, '_' and apostrophes inside a word (IFEval's \w+ plus
// "don't" as one word). CJK ideographs and kana count one word each, since those scripts do not
// separate words with spaces.
std::size_t CountWords(std::string_view s);

// Lowercase words as CountWords splits them (ASCII lowercasing; other letters kept as they are).
std::vector<std::string> Words(std::string_view s);

// Non-blank lines.
std::size_t CountLines(std::string_view s);

// Paragraphs: blocks of non-blank lines separated by at least one blank line.
std::size_t CountParagraphs(std::string_view s);

// List items: lines whose first non-blank characters are a bullet ("-", "*", "+", "•") or an
// ordinal ("1.", "2)", "a.") followed by a space.
std::size_t CountListItems(std::string_view s);

// Lines that are bullet items ("-", "*", "+", "•"), not numbered ones.
std::size_t CountBullets(std::string_view s);

// Leading/trailing ASCII whitespace removed.
std::string_view Trim(std::string_view s);

// ASCII lowercase copy.
std::string Lower(std::string_view s);

// Lowercase, every run of whitespace collapsed to one space, trimmed.
std::string NormalizeSpace(std::string_view s);

// Markdown emphasis and code marks (*, _, `) removed, so "**Canberra**" matches "Canberra".
std::string StripMarkdown(std::string_view s);

// A number found in text, with where it was.
struct FoundNumber {
  double value = 0;
  std::size_t offset = 0;  // byte offset of its first character
  std::string text;        // as written ("1,234.5", "-3", "2/3", "45%", "two")
  bool word = false;       // written as a word ("two"): weaker evidence than digits
  // The other reading of comma groups written without spaces: "120,135,150" is 120135150 with
  // thousands separators (value) or the list 120, 135, 150 (items). Empty when the text has no
  // comma group, or a group after the first starts with 0 ("1,050" is only 1050).
  std::vector<double> items;
};

// Every number in text in order: integers and decimals with optional sign, thousands
// separators ("47,716"; see FoundNumber::items for "120,135,150"), fractions ("2/3"),
// percentages ("45%" -> 45), and numbers inside LaTeX (\frac{2}{3} -> 0.666..), and the
// English words zero to twenty and thirty to ninety. Digits inside words ("Q3", "x2") are not
// numbers.
std::vector<FoundNumber> FindNumbers(std::string_view text);

// The number a reply gives as its answer: the one after the last "answer" marker ("answer:",
// "answer is", "= " at the end of the reply), in the last \boxed{}, or in the last bold span;
// else the last number written in digits, else the last number word. nullopt when there is none.
std::optional<FoundNumber> FinalNumber(std::string_view text);

// A reply split into the reasoning and the answer. Tags: <think>…</think> and
// <thinking>…</thinking>. A closing tag without an opening one (templates that prefill the
// opening tag) makes everything before the last closing tag reasoning; an unclosed opening tag
// makes everything after it reasoning (the budget ran out while thinking).
struct SplitReply {
  std::string reasoning;
  std::string answer;
  bool had_tags = false;
  bool unclosed = false;  // an opening tag was never closed
};

SplitReply SplitThinking(std::string_view text);

// A fenced code block (```lang ... ```).
struct CodeBlock {
  std::string language;  // lowercase info string ("python", "cpp"), "" when absent
  std::string code;
};

// Every fenced block in text, in order. An unterminated last fence runs to the end of the text.
std::vector<CodeBlock> CodeBlocks(std::string_view text);

// Which writing system most letters of s belong to: "latin", "japanese" (kana, or CJK with
// kana), "chinese" (CJK without kana), "korean", "cyrillic", "greek", "arabic", "hebrew",
// "devanagari", "thai", or "" when s has no letters. `share` receives the fraction of letters
// in that script.
std::string DominantScript(std::string_view s, double* share = nullptr);

// Fraction (0..1) of the letters of s that belong to `script` (the names above); 0 when s has no
// letters.
double ScriptShare(std::string_view s, std::string_view script);

// At most max_chars code points of s; cut text ends with "…".
std::string Excerpt(std::string_view s, std::size_t max_chars);

// One line: whitespace runs become one space, then Excerpt.
std::string OneLine(std::string_view s, std::size_t max_chars);

}  // namespace sb::suite
