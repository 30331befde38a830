// Text checkers: exact, contains, length, format (regex: check_regex.cpp).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "suite/check_common.h"
#include "suite/text.h"

namespace sb::suite::check {

namespace {

// ---- exact -----------------------------------------------------------------------------------

struct ExactArgs {
  std::vector<std::string> expect;
  bool case_sensitive = false;
};

Result<ExactArgs> ParseExact(const Check& c) {
  auto args = Args(c, {"expect", "case_sensitive"});
  if (!args) {
    return args.error();
  }
  ExactArgs a;
  auto expect = Strings(*args, "expect");
  if (!expect) {
    return expect.error();
  }
  if (expect->empty()) {
    return Bad("exact needs 'expect'");
  }
  a.expect = *expect;
  auto cs = Bool(*args, "case_sensitive", false);
  if (!cs) {
    return cs.error();
  }
  a.case_sensitive = *cs;
  return a;
}

// The answer as exact compares it: markdown marks, surrounding quotes and a final period gone.
std::string ExactForm(std::string_view s, bool case_sensitive) {
  std::string t = Normalize(StripMarkdown(s), case_sensitive);
  while (!t.empty() && (t.back() == '.' || t.back() == '!')) {
    t.pop_back();
  }
  if (t.size() >= 2 && (t.front() == '"' || t.front() == '\'') && t.back() == t.front()) {
    t = t.substr(1, t.size() - 2);
  }
  return t;
}

CheckOutcome RunExact(const ExactArgs& a, const Reply& r) {
  const std::string have = ExactForm(r.answer, a.case_sensitive);
  for (const std::string& e : a.expect) {
    if (have == ExactForm(e, a.case_sensitive)) {
      return Pass();
    }
  }
  if (a.expect.size() == 1) {
    return FailWith(fmt::format("expected {}, got {}", Quote(a.expect[0]), Quote(r.answer)));
  }
  return FailWith(fmt::format("expected one of {}, got {}", QuoteList(a.expect), Quote(r.answer)));
}

// ---- contains --------------------------------------------------------------------------------

struct ContainsArgs {
  std::vector<std::string> any, all, none;
  bool case_sensitive = false;
  bool word = false;
};

Result<ContainsArgs> ParseContains(const Check& c) {
  auto args = Args(c, {"any", "all", "none", "case_sensitive", "word"});
  if (!args) {
    return args.error();
  }
  ContainsArgs a;
  for (auto [key, dest] : {std::pair{"any", &a.any}, {"all", &a.all}, {"none", &a.none}}) {
    auto v = Strings(*args, key);
    if (!v) {
      return v.error();
    }
    *dest = *v;
  }
  if (a.any.empty() && a.all.empty() && a.none.empty()) {
    return Bad("contains needs any, all or none");
  }
  auto cs = Bool(*args, "case_sensitive", false);
  auto word = Bool(*args, "word", false);
  if (!cs) {
    return cs.error();
  }
  if (!word) {
    return word.error();
  }
  a.case_sensitive = *cs;
  a.word = *word;
  return a;
}

CheckOutcome RunContains(const ContainsArgs& a, const Reply& r) {
  const std::string hay = Normalize(StripMarkdown(r.answer), a.case_sensitive);
  auto has = [&](const std::string& needle) {
    return Contains(hay, Normalize(StripMarkdown(needle), a.case_sensitive), a.word);
  };
  std::vector<std::string> missing;
  for (const std::string& n : a.all) {
    if (!has(n)) {
      missing.push_back(n);
    }
  }
  if (!missing.empty()) {
    return FailWith(
        fmt::format("missing {} in the answer {}", QuoteList(missing), Quote(r.answer, 60)));
  }
  if (!a.any.empty() && std::none_of(a.any.begin(), a.any.end(), has)) {
    return FailWith(
        fmt::format("none of {} in the answer {}", QuoteList(a.any), Quote(r.answer, 60)));
  }
  std::vector<std::string> forbidden;
  for (const std::string& n : a.none) {
    if (has(n)) {
      forbidden.push_back(n);
    }
  }
  if (!forbidden.empty()) {
    return FailWith(fmt::format("the answer contains {}, which it must not", QuoteList(forbidden)));
  }
  return Pass();
}

// ---- length / format -------------------------------------------------------------------------

struct LengthArgs {
  std::string unit;
  Bounds bounds;
};

Result<LengthArgs> ParseLength(const Check& c) {
  auto args = Args(c, {"unit", "min", "max", "exact"});
  if (!args) {
    return args.error();
  }
  LengthArgs a;
  const json& unit = (*args)["unit"];
  if (!unit.is_string() || (unit != "chars" && unit != "words" && unit != "lines" &&
                            unit != "items" && unit != "paragraphs")) {
    return Bad("length needs 'unit': chars, words, lines, items or paragraphs");
  }
  a.unit = unit.get<std::string>();
  json b = *args;
  b.erase("unit");
  if (b.empty()) {
    return Bad("length needs min, max or exact");
  }
  auto bounds = ParseBounds(b, "length");
  if (!bounds) {
    return bounds.error();
  }
  a.bounds = *bounds;
  return a;
}

double Measure(std::string_view text, const std::string& unit) {
  if (unit == "chars") {
    return static_cast<double>(CountCodePoints(Trim(text)));
  }
  if (unit == "words") {
    return static_cast<double>(CountWords(text));
  }
  if (unit == "lines") {
    return static_cast<double>(CountLines(text));
  }
  if (unit == "items") {
    return static_cast<double>(CountListItems(text));
  }
  return static_cast<double>(CountParagraphs(text));
}

CheckOutcome RunLength(const LengthArgs& a, const Reply& r) {
  const double n = Measure(r.answer, a.unit);
  if (std::string p = BoundsProblem(n, a.bounds, a.unit == "chars" ? "characters" : a.unit);
      !p.empty()) {
    return FailWith(p);
  }
  return Pass();
}

struct FormatArgs {
  std::vector<std::pair<std::string, Bounds>> counts;  // bullets, items, paragraphs, lines
  std::string starts_with, ends_with;
  std::string script;
  double script_share = 0.6;
  std::string letter_case;
  std::vector<std::string> forbid;
};

Result<FormatArgs> ParseFormat(const Check& c) {
  auto args = Args(c, {"bullets", "items", "paragraphs", "lines", "starts_with", "ends_with",
                       "script", "script_share", "case", "forbid"});
  if (!args) {
    return args.error();
  }
  FormatArgs a;
  for (const char* key : {"bullets", "items", "paragraphs", "lines"}) {
    if (args->contains(key)) {
      auto b = ParseBounds((*args)[key], key);
      if (!b) {
        return b.error();
      }
      a.counts.emplace_back(key, *b);
    }
  }
  for (auto [key, dest] : {std::pair{"starts_with", &a.starts_with},
                           {"ends_with", &a.ends_with},
                           {"script", &a.script},
                           {"case", &a.letter_case}}) {
    if (args->contains(key)) {
      if (!(*args)[key].is_string()) {
        return Bad(fmt::format("{} must be a string", key));
      }
      *dest = (*args)[key].get<std::string>();
    }
  }
  static const std::vector<std::string> kScripts = {"latin",      "japanese", "chinese", "korean",
                                                    "cyrillic",   "greek",    "arabic",  "hebrew",
                                                    "devanagari", "thai"};
  if (!a.script.empty() &&
      std::find(kScripts.begin(), kScripts.end(), a.script) == kScripts.end()) {
    return Bad(fmt::format("unknown script '{}' (known: {})", a.script, fmt::join(kScripts, ", ")));
  }
  auto share = OptNumber(*args, "script_share");
  if (!share) {
    return share.error();
  }
  a.script_share = share->value_or(0.6);
  if (!a.letter_case.empty() && a.letter_case != "lower" && a.letter_case != "upper") {
    return Bad("case must be lower or upper");
  }
  auto forbid = Strings(*args, "forbid");
  if (!forbid) {
    return forbid.error();
  }
  a.forbid = *forbid;
  if (a.counts.empty() && a.starts_with.empty() && a.ends_with.empty() && a.script.empty() &&
      a.letter_case.empty() && a.forbid.empty()) {
    return Bad(
        "format needs at least one of bullets, items, paragraphs, lines, starts_with, "
        "ends_with, script, case, forbid");
  }
  return a;
}

CheckOutcome RunFormat(const FormatArgs& a, const Reply& r) {
  for (const auto& [key, bounds] : a.counts) {
    double n = 0;
    if (key == "bullets") {
      n = static_cast<double>(CountBullets(r.answer));
    } else {
      n = Measure(r.answer, key);
    }
    if (std::string p = BoundsProblem(n, bounds, key); !p.empty()) {
      return FailWith(p);
    }
  }
  const std::string plain = std::string(Trim(StripMarkdown(r.answer)));
  if (!a.starts_with.empty() &&
      Lower(plain).rfind(Lower(std::string(Trim(a.starts_with))), 0) != 0) {
    return FailWith(fmt::format("the answer does not start with {}: it starts {}",
                                Quote(a.starts_with), Quote(plain, 40)));
  }
  if (!a.ends_with.empty()) {
    std::string end = Lower(plain);
    const std::string want = Lower(std::string(Trim(a.ends_with)));
    while (!end.empty() && (end.back() == '.' || end.back() == '!') &&
           (want.empty() || want.back() != end.back())) {
      end.pop_back();
    }
    if (end.size() < want.size() || end.compare(end.size() - want.size(), want.size(), want) != 0) {
      const std::size_t cps = CountCodePoints(plain);
      return FailWith(fmt::format(
          "the answer does not end with {}: it ends {}", Quote(a.ends_with),
          Quote(cps > 40
                    ? "…" + plain.substr(plain.size() - std::min<std::size_t>(plain.size(), 40))
                    : plain,
                44)));
    }
  }
  if (!a.script.empty()) {
    const double share = ScriptShare(r.answer, a.script);
    if (share < a.script_share) {
      double dominant_share = 0;
      const std::string dominant = DominantScript(r.answer, &dominant_share);
      return FailWith(fmt::format("{:.0f}% of the letters are {} (need {:.0f}%); mostly {}",
                                  share * 100, a.script, a.script_share * 100,
                                  dominant.empty() ? "no letters" : dominant));
    }
  }
  if (a.letter_case == "lower" || a.letter_case == "upper") {
    for (char ch : r.answer) {
      if ((a.letter_case == "lower" && ch >= 'A' && ch <= 'Z') ||
          (a.letter_case == "upper" && ch >= 'a' && ch <= 'z')) {
        return FailWith(fmt::format("the answer is not all {}case", a.letter_case));
      }
    }
  }
  for (const std::string& f : a.forbid) {
    if (r.answer.find(f) != std::string::npos) {
      return FailWith(fmt::format("the answer contains {}, which it must not", Quote(f)));
    }
  }
  return Pass();
}

}  // namespace

Result<void> ValidateExact(const Check& c) {
  return Valid(ParseExact(c));
}

CheckOutcome EvaluateExact(const Check& c, const Reply& r) {
  return Evaluate(ParseExact(c), [&](const ExactArgs& a) { return RunExact(a, r); });
}

Result<void> ValidateContains(const Check& c) {
  return Valid(ParseContains(c));
}

CheckOutcome EvaluateContains(const Check& c, const Reply& r) {
  return Evaluate(ParseContains(c), [&](const ContainsArgs& a) { return RunContains(a, r); });
}

Result<void> ValidateLength(const Check& c) {
  return Valid(ParseLength(c));
}

CheckOutcome EvaluateLength(const Check& c, const Reply& r) {
  return Evaluate(ParseLength(c), [&](const LengthArgs& a) { return RunLength(a, r); });
}

Result<void> ValidateFormat(const Check& c) {
  return Valid(ParseFormat(c));
}

CheckOutcome EvaluateFormat(const Check& c, const Reply& r) {
  return Evaluate(ParseFormat(c), [&](const FormatArgs& a) { return RunFormat(a, r); });
}

}  // namespace sb::suite::check
