// The regex checker, on RE2: matching takes time linear in the answer's length and uses no
// recursion, so no answer (a megabyte of "ab", a pattern with nested repeats) can hang the run
// or overflow the stack. RE2 has no lookaround and no backreferences; a pattern that needs them
// is refused when the suite loads (ValidateRegex), never at check time.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <re2/re2.h>

#include "suite/check_common.h"
#include "suite/text.h"

namespace sb::suite::check {

namespace {

// Memory RE2 may use for one compiled pattern and its DFA cache: enough for the DFA to stay
// in use over a 1 MiB answer for the patterns suites use; a pattern needing more (a{1000}{1000})
// does not compile.
constexpr std::int64_t kRegexMaxMem = 32 << 20;

struct RegexArgs {
  std::string pattern;
  bool ignore_case = false;
  bool full = false;
};

// What to say about RE2's refusal: lookaround and backreferences get the way around them.
std::string Hint(const re2::RE2& re) {
  const std::string& arg = re.error_arg();
  if (re.error_code() == re2::RE2::ErrorBadPerlOp || arg.starts_with("(?=") ||
      arg.starts_with("(?!") || arg.starts_with("(?<")) {
    return "; lookahead and lookbehind ((?=, (?!, (?<=, (?<!) are not supported";
  }
  if (re.error_code() == re2::RE2::ErrorBadEscape && arg.size() == 2 && arg[1] >= '1' &&
      arg[1] <= '9') {
    return "; backreferences (\\1) are not supported";
  }
  return "";
}

// RE2 reads UTF-8, and an invalid byte matches nothing (not even `.`): each becomes U+FFFD, as
// the client does with the server's text. (Answers from the client are valid already.)
std::string ValidUtf8(std::string_view s) {
  if (std::all_of(s.begin(), s.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    return std::string(s);
  }
  std::string out;
  out.reserve(s.size());
  for (char32_t cp : CodePoints(s)) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  return out;
}

Result<std::unique_ptr<re2::RE2>> Compile(const RegexArgs& a) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_case_sensitive(!a.ignore_case);
  options.set_max_mem(kRegexMaxMem);
  // (?m): ^ and $ match at each line's start and end, as they always have in suites.
  auto re = std::make_unique<re2::RE2>("(?m)" + a.pattern, options);
  if (!re->ok()) {
    return Bad(fmt::format(
        "regex pattern {} does not compile: {}{} (patterns are RE2 syntax: docs/suites.md)",
        Quote(a.pattern), re->error(), Hint(*re)));
  }
  return re;
}

Result<RegexArgs> ParseRegex(const Check& c) {
  auto args = Args(c, {"pattern", "ignore_case", "full"});
  if (!args) {
    return args.error();
  }
  RegexArgs a;
  if (!args->contains("pattern") || !(*args)["pattern"].is_string()) {
    return Bad("regex needs 'pattern' (a string)");
  }
  a.pattern = (*args)["pattern"].get<std::string>();
  auto ic = Bool(*args, "ignore_case", false);
  auto full = Bool(*args, "full", false);
  if (!ic) {
    return ic.error();
  }
  if (!full) {
    return full.error();
  }
  a.ignore_case = *ic;
  a.full = *full;
  if (auto re = Compile(a); !re) {
    return re.error();
  }
  return a;
}

CheckOutcome RunRegex(const RegexArgs& a, const Reply& r) {
  auto re = Compile(a);
  if (!re) {
    return FailWith(re.error().message);
  }
  const std::string repaired = ValidUtf8(Trim(r.answer));
  const re2::StringPiece input(repaired);
  const bool ok = a.full ? re2::RE2::FullMatch(input, **re) : re2::RE2::PartialMatch(input, **re);
  if (ok) {
    return Pass();
  }
  return FailWith(fmt::format("the answer {} does not {} /{}/", Quote(r.answer, 60),
                              a.full ? "fully match" : "match", a.pattern));
}

}  // namespace

Result<void> ValidateRegex(const Check& c) {
  return Valid(ParseRegex(c));
}

CheckOutcome EvaluateRegex(const Check& c, const Reply& r) {
  return Evaluate(ParseRegex(c), [&](const RegexArgs& a) { return RunRegex(a, r); });
}

}  // namespace sb::suite::check
