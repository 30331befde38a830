// Number and multiple-choice checkers: number, choice.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "suite/check_common.h"
#include "suite/text.h"

namespace sb::suite::check {

namespace {

// ---- number ----------------------------------------------------------------------------------

struct NumberArgs {
  std::vector<double> expect;
  double tolerance = 0;
  bool relative = false;
  std::string pick = "final";
};

Result<NumberArgs> ParseNumber(const Check& c) {
  auto args = Args(c, {"expect", "tolerance", "relative", "pick"});
  if (!args) {
    return args.error();
  }
  NumberArgs a;
  if (!args->contains("expect")) {
    return Bad("number needs 'expect'");
  }
  auto expect = Numbers(*args, "expect");
  if (!expect) {
    return expect.error();
  }
  a.expect = *expect;
  auto tol = OptNumber(*args, "tolerance");
  if (!tol) {
    return tol.error();
  }
  a.tolerance = tol->value_or(0);
  if (a.tolerance < 0) {
    return Bad("tolerance must be >= 0");
  }
  auto rel = Bool(*args, "relative", false);
  if (!rel) {
    return rel.error();
  }
  a.relative = *rel;
  if (args->contains("pick")) {
    if (!(*args)["pick"].is_string()) {
      return Bad("pick must be one of final, last, first, any, only");
    }
    a.pick = (*args)["pick"].get<std::string>();
    if (a.pick != "final" && a.pick != "last" && a.pick != "first" && a.pick != "any" &&
        a.pick != "only") {
      return Bad("pick must be one of final, last, first, any, only");
    }
  }
  return a;
}

bool Near(double have, double want, const NumberArgs& a) {
  const double scale = a.relative ? std::fabs(want) : 1.0;
  const double tol = std::max(a.tolerance * scale, 1e-9 * std::max(1.0, std::fabs(want)));
  return std::fabs(have - want) <= tol;
}

bool AnyExpected(double have, const NumberArgs& a) {
  return std::any_of(a.expect.begin(), a.expect.end(),
                     [&](double want) { return Near(have, want, a); });
}

// Comma groups without spaces have two readings ("120,135,150": 120135150, or 120, 135, 150);
// a number matches when either does. As one number: its value. As a list, for `pick` first
// the first item, for final/last the last item, for any some item, for only every item.
bool Matches(const FoundNumber& n, const NumberArgs& a) {
  if (AnyExpected(n.value, a)) {
    return true;
  }
  if (n.items.empty()) {
    return false;
  }
  if (a.pick == "first") {
    return AnyExpected(n.items.front(), a);
  }
  if (a.pick == "any") {
    return std::any_of(n.items.begin(), n.items.end(), [&](double v) { return AnyExpected(v, a); });
  }
  if (a.pick == "only") {
    return std::all_of(n.items.begin(), n.items.end(), [&](double v) { return AnyExpected(v, a); });
  }
  return AnyExpected(n.items.back(), a);
}

// "120,135,150" plus " (read as 120135150 or as 120, 135, 150)" when it has both readings. A
// number written over 40 characters (a hostile answer's megabyte of digits) is cut with "…",
// and so is a list of over 10 items.
std::string Written(const FoundNumber& n) {
  constexpr std::size_t kMaxChars = 40, kMaxItems = 10;
  std::string text = n.text;
  if (text.size() > kMaxChars) {
    std::size_t cut = kMaxChars;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
      --cut;  // not inside a UTF-8 sequence ("−")
    }
    text = text.substr(0, cut) + "…";
  }
  if (n.items.empty()) {
    return text;
  }
  std::vector<std::string> items;
  for (double v : n.items) {
    if (items.size() == kMaxItems) {
      items.push_back("…");
      break;
    }
    items.push_back(FormatNumber(v));
  }
  return fmt::format("{} (read as {} or as {})", text, FormatNumber(n.value),
                     fmt::join(items, ", "));
}

std::string ExpectText(const NumberArgs& a) {
  std::vector<std::string> parts;
  for (double e : a.expect) {
    parts.push_back(FormatNumber(e));
  }
  std::string s =
      parts.size() == 1 ? parts[0] : "one of " + fmt::format("{}", fmt::join(parts, ", "));
  if (a.tolerance > 0) {
    s += a.relative ? fmt::format(" (±{}%)", FormatNumber(a.tolerance * 100))
                    : fmt::format(" (±{})", FormatNumber(a.tolerance));
  }
  return s;
}

CheckOutcome RunNumber(const NumberArgs& a, const Reply& r) {
  std::vector<FoundNumber> all = FindNumbers(r.answer);
  // Digits are the evidence; number words ("one of them") count only when there are no digits.
  if (std::any_of(all.begin(), all.end(), [](const FoundNumber& n) { return !n.word; }) &&
      a.pick != "any") {
    all.erase(std::remove_if(all.begin(), all.end(), [](const FoundNumber& n) { return n.word; }),
              all.end());
  }
  if (all.empty()) {
    return FailWith(fmt::format("expected {}, found no number in the answer {}", ExpectText(a),
                                Quote(r.answer, 60)));
  }
  if (a.pick == "any") {
    for (const FoundNumber& n : all) {
      if (Matches(n, a)) {
        return Pass();
      }
    }
    return FailWith(
        fmt::format("expected {}, none of the answer's numbers matches", ExpectText(a)));
  }
  if (a.pick == "only") {
    for (const FoundNumber& n : all) {
      if (!Matches(n, a)) {
        return FailWith(
            fmt::format("expected only {}, the answer also says {}", ExpectText(a), Written(n)));
      }
    }
    return Pass();
  }
  FoundNumber chosen;
  std::string which;
  if (a.pick == "first") {
    chosen = all.front();
    which = "the first number of the answer";
  } else if (a.pick == "last") {
    chosen = all.back();
    which = "the last number of the answer";
  } else {
    chosen = FinalNumber(r.answer).value_or(all.back());
    which = "the answer's final number";
  }
  if (Matches(chosen, a)) {
    return Pass();
  }
  return FailWith(fmt::format("expected {}, found {} ({})", ExpectText(a), Written(chosen), which));
}

// ---- choice ----------------------------------------------------------------------------------

struct ChoiceArgs {
  std::string expect;
  std::vector<std::string> options;
};

bool IsLetterOption(const std::string& o) {
  return o.size() == 1 && o[0] >= 'A' && o[0] <= 'Z';
}

Result<ChoiceArgs> ParseChoice(const Check& c) {
  auto args = Args(c, {"expect", "options"});
  if (!args) {
    return args.error();
  }
  ChoiceArgs a;
  auto expect = Strings(*args, "expect");
  if (!expect) {
    return expect.error();
  }
  if (expect->size() != 1) {
    return Bad("choice needs one 'expect'");
  }
  a.expect = (*expect)[0];
  auto options = Strings(*args, "options");
  if (!options) {
    return options.error();
  }
  a.options = *options;
  if (a.options.empty()) {
    if (!IsLetterOption(a.expect)) {
      return Bad("choice needs 'options' unless expect is a letter A-Z");
    }
    for (char l = 'A'; l <= std::max('D', a.expect[0]); ++l) {
      a.options.emplace_back(1, l);
    }
  }
  if (std::find(a.options.begin(), a.options.end(), a.expect) == a.options.end()) {
    return Bad(fmt::format("choice: expect {} is not among the options", Quote(a.expect)));
  }
  return a;
}

// Offsets where option o appears as a standalone token of text.
std::vector<std::size_t> OptionHits(const std::string& text, const std::string& lower,
                                    const std::string& o) {
  std::vector<std::size_t> hits;
  const bool letter = IsLetterOption(o);
  const std::string& hay = letter ? text : lower;
  const std::string needle = letter ? o : Lower(o);
  for (std::size_t pos = hay.find(needle); pos != std::string::npos;
       pos = hay.find(needle, pos + 1)) {
    const std::size_t end = pos + needle.size();
    const bool left = pos == 0 || !IsWordByte(hay[pos - 1]);
    const bool right = end >= hay.size() || !IsWordByte(hay[end]);
    if (!left || !right) {
      continue;
    }
    // "A" as the English article ("a car", "A dog") is not an option: require that a letter
    // option is not followed by a space and a lowercase word, unless it ends a sentence.
    if (letter && end + 1 < hay.size() && hay[end] == ' ' && hay[end + 1] >= 'a' &&
        hay[end + 1] <= 'z') {
      std::size_t w = end + 1;
      while (w < hay.size() && hay[w] >= 'a' && hay[w] <= 'z') {
        ++w;
      }
      static const std::vector<std::string> kNotNouns = {
          "or",      "and",   "is", "was",  "seems",   "looks", "would",   "will",
          "because", "since", "as", "fits", "matches", "best",  "correct", "then"};
      const std::string next = hay.substr(end + 1, w - end - 1);
      if (std::find(kNotNouns.begin(), kNotNouns.end(), next) == kNotNouns.end()) {
        continue;  // "A dog": the article
      }
    }
    hits.push_back(pos);
  }
  return hits;
}

CheckOutcome RunChoice(const ChoiceArgs& a, const Reply& r) {
  const std::string text = StripMarkdown(r.answer);
  const std::string lower = Lower(text);
  // After an "answer" marker, the first option named wins.
  const std::size_t marker = lower.rfind("answer");
  std::optional<std::string> picked;
  if (marker != std::string::npos) {
    std::size_t best = std::string::npos;
    for (const std::string& o : a.options) {
      for (std::size_t hit : OptionHits(text, lower, o)) {
        if (hit > marker && hit < best) {
          best = hit;
          picked = o;
        }
      }
    }
  }
  std::vector<std::string> named;
  for (const std::string& o : a.options) {
    if (!OptionHits(text, lower, o).empty()) {
      named.push_back(o);
    }
  }
  if (!picked) {
    if (named.size() == 1) {
      picked = named[0];
    } else if (!named.empty()) {
      // The option the answer opens with ("B. Because ...").
      std::size_t first = std::string::npos;
      for (const std::string& o : named) {
        auto hits = OptionHits(text, lower, o);
        const std::size_t lead = Trim(text).empty() ? 0 : text.find(Trim(text).front());
        if (!hits.empty() && hits.front() == lead && hits.front() < first) {
          first = hits.front();
          picked = o;
        }
      }
    }
  }
  if (!picked) {
    if (named.empty()) {
      return FailWith(fmt::format("expected {}, the answer names none of the options ({})",
                                  Quote(a.expect), QuoteList(a.options)));
    }
    return FailWith(fmt::format("expected {}, the answer is ambiguous: it names {}",
                                Quote(a.expect), QuoteList(named)));
  }
  if (*picked == a.expect || (!IsLetterOption(a.expect) && Lower(*picked) == Lower(a.expect))) {
    return Pass();
  }
  return FailWith(fmt::format("expected {}, the answer chose {}", Quote(a.expect), Quote(*picked)));
}

}  // namespace

Result<void> ValidateNumber(const Check& c) {
  return Valid(ParseNumber(c));
}

CheckOutcome EvaluateNumber(const Check& c, const Reply& r) {
  return Evaluate(ParseNumber(c), [&](const NumberArgs& a) { return RunNumber(a, r); });
}

Result<void> ValidateChoice(const Check& c) {
  return Valid(ParseChoice(c));
}

CheckOutcome EvaluateChoice(const Check& c, const Reply& r) {
  return Evaluate(ParseChoice(c), [&](const ChoiceArgs& a) { return RunChoice(a, r); });
}

}  // namespace sb::suite::check
