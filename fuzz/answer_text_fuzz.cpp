// libFuzzer target: the text functions that read model output (hostile input): numbers, final
// answers, reasoning tags, code fences, words, scripts and the loop detector. None may crash or
// hang, results must be consistent (offsets inside the text, the reasoning split losing no
// non-space text), and the loop detector must give the same answer however the text is split.
// Answers up to 1 MiB, from short seeds too (fuzz/expand.h).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "expand.h"
#include "suite/loop.h"
#include "suite/text.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "answer_text_fuzz: %s\n", what);
    std::abort();
  }
}

std::size_t NonSpace(std::string_view s) {
  std::size_t n = 0;
  for (char c : s) {
    n += (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v') ? 0 : 1;
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string expanded;
  const std::string_view text = sb::fuzz::Expand(data, size, expanded);
  for (const auto& n : sb::suite::FindNumbers(text)) {
    Check(n.offset < text.size(), "a number's offset lies outside the text");
  }
  if (auto f = sb::suite::FinalNumber(text)) {
    Check(f->offset < text.size(), "the final number's offset lies outside the text");
  }
  const sb::suite::SplitReply split = sb::suite::SplitThinking(text);
  if (!split.had_tags) {
    Check(split.answer == text, "text without tags changed");
  } else {
    Check(NonSpace(split.answer) + NonSpace(split.reasoning) <= NonSpace(text),
          "the reasoning split invented text");
  }
  for (const auto& b : sb::suite::CodeBlocks(text)) {
    Check(b.code.size() <= text.size() + 1, "a code block is longer than the text");
  }
  (void)sb::suite::CountWords(text);
  (void)sb::suite::CountListItems(text);
  (void)sb::suite::CountParagraphs(text);
  (void)sb::suite::DominantScript(text);
  (void)sb::suite::Excerpt(text, 40);
  sb::suite::LoopDetector whole(4, 3, 6), pieces(4, 3, 6);
  const bool a = whole.Feed(text);
  bool b = false;
  for (std::size_t i = 0; i < text.size() && !b; i += 3) {
    b = pieces.Feed(text.substr(i, 3));
  }
  Check(a == b || !a, "the loop detector depends on how the text is split");
  return 0;
}
