#include "suite/checkers.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "suite/text.h"

namespace sb::suite {

namespace {

using nlohmann::json;

// The longest answer a regex runs over: libstdc++'s std::regex recurses per character and can
// exhaust the stack on very long inputs.
constexpr std::size_t kRegexInputCap = 32 * 1024;

Error Bad(std::string message) {
  return MakeError(ErrorCode::kUsage, std::move(message));
}

std::string Quote(std::string_view s, std::size_t max_chars = 80) {
  return "\"" + OneLine(s, max_chars) + "\"";
}

std::string QuoteList(const std::vector<std::string>& items) {
  std::vector<std::string> q;
  for (const auto& s : items) {
    q.push_back(Quote(s, 60));
  }
  return fmt::format("{}", fmt::join(q, ", "));
}

std::string FormatNumber(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e15) {
    return fmt::format("{}", static_cast<long long>(std::llround(v)));
  }
  return fmt::format("{:.6g}", v);
}

// ---- Argument parsing ------------------------------------------------------------------------

Result<json> Args(const Check& c, const std::vector<std::string>& allowed) {
  json args = json::parse(c.args_json, nullptr, false);
  if (args.is_discarded() || !args.is_object()) {
    return Bad(c.type + ": arguments must be a mapping");
  }
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) {
      return Bad(fmt::format("unknown key '{}' for {} (known: {})", it.key(), c.type,
                             fmt::join(allowed, ", ")));
    }
  }
  return args;
}

Result<bool> Bool(const json& args, const char* key, bool fallback) {
  if (!args.contains(key)) {
    return fallback;
  }
  if (!args[key].is_boolean()) {
    return Bad(fmt::format("{} must be true or false", key));
  }
  return args[key].get<bool>();
}

// A string or a list of strings (numbers are accepted and written as text).
Result<std::vector<std::string>> Strings(const json& args, const char* key) {
  std::vector<std::string> out;
  if (!args.contains(key)) {
    return out;
  }
  const json& v = args[key];
  auto one = [&](const json& item) -> bool {
    if (item.is_string()) {
      out.push_back(item.get<std::string>());
    } else if (item.is_number()) {
      out.push_back(FormatNumber(item.get<double>()));
    } else {
      return false;
    }
    return true;
  };
  if (v.is_array()) {
    for (const json& item : v) {
      if (!one(item)) {
        return Bad(fmt::format("{} must be a string or a list of strings", key));
      }
    }
  } else if (!one(v)) {
    return Bad(fmt::format("{} must be a string or a list of strings", key));
  }
  return out;
}

Result<std::vector<double>> Numbers(const json& args, const char* key) {
  std::vector<double> out;
  const json& v = args[key];
  auto one = [&](const json& item) -> bool {
    if (item.is_number()) {
      out.push_back(item.get<double>());
      return true;
    }
    if (item.is_string()) {
      auto found = FindNumbers(item.get<std::string>());
      if (found.size() == 1) {
        out.push_back(found[0].value);
        return true;
      }
    }
    return false;
  };
  if (v.is_array()) {
    for (const json& item : v) {
      if (!one(item)) {
        return Bad(fmt::format("{} must be a number or a list of numbers", key));
      }
    }
  } else if (!one(v)) {
    return Bad(fmt::format("{} must be a number or a list of numbers", key));
  }
  if (out.empty()) {
    return Bad(fmt::format("{} must not be empty", key));
  }
  return out;
}

Result<std::optional<double>> OptNumber(const json& args, const char* key) {
  if (!args.contains(key)) {
    return std::optional<double>{};
  }
  if (!args[key].is_number()) {
    return Bad(fmt::format("{} must be a number", key));
  }
  return std::optional<double>{args[key].get<double>()};
}

struct Bounds {
  std::optional<double> min, max;

  bool empty() const { return !min && !max; }
};

// N (exact) or {min, max} / {exact}.
Result<Bounds> ParseBounds(const json& v, const std::string& key) {
  Bounds b;
  if (v.is_number()) {
    b.min = b.max = v.get<double>();
    return b;
  }
  if (!v.is_object()) {
    return Bad(fmt::format("{} must be a number or {{min, max}}", key));
  }
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it.key() != "min" && it.key() != "max" && it.key() != "exact") {
      return Bad(fmt::format("unknown key '{}' in {} (known: min, max, exact)", it.key(), key));
    }
    if (!it->is_number()) {
      return Bad(fmt::format("{}.{} must be a number", key, it.key()));
    }
  }
  if (v.contains("exact")) {
    b.min = b.max = v["exact"].get<double>();
  }
  if (v.contains("min")) {
    b.min = v["min"].get<double>();
  }
  if (v.contains("max")) {
    b.max = v["max"].get<double>();
  }
  if (b.empty()) {
    return Bad(key + " needs min, max or exact");
  }
  if (b.min && b.max && *b.min > *b.max) {
    return Bad(key + ": min is above max");
  }
  return b;
}

// "" when n satisfies b, else "142 words, expected at most 100".
std::string BoundsProblem(double n, const Bounds& b, std::string_view unit) {
  const std::string have = fmt::format("{} {}", FormatNumber(n), unit);
  if (b.min && b.max && *b.min == *b.max && n != *b.min) {
    return fmt::format("{}, expected exactly {}", have, FormatNumber(*b.min));
  }
  if (b.min && n < *b.min) {
    return b.max ? fmt::format("{}, expected {} to {}", have, FormatNumber(*b.min),
                               FormatNumber(*b.max))
                 : fmt::format("{}, expected at least {}", have, FormatNumber(*b.min));
  }
  if (b.max && n > *b.max) {
    return b.min ? fmt::format("{}, expected {} to {}", have, FormatNumber(*b.min),
                               FormatNumber(*b.max))
                 : fmt::format("{}, expected at most {}", have, FormatNumber(*b.max));
  }
  return "";
}

CheckOutcome Pass() {
  return CheckOutcome{true, "", ""};
}

CheckOutcome FailWith(std::string reason, std::string detail = "") {
  return CheckOutcome{false, std::move(reason), std::move(detail)};
}

// Whitespace collapsed and trimmed; lowercased unless case_sensitive.
std::string Normalize(std::string_view s, bool case_sensitive) {
  std::string out = NormalizeSpace(s);
  if (case_sensitive) {
    // NormalizeSpace lowercases; redo without it.
    out.clear();
    bool space = false;
    for (char c : Trim(s)) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        space = true;
        continue;
      }
      if (space && !out.empty()) {
        out.push_back(' ');
      }
      space = false;
      out.push_back(c);
    }
  }
  return out;
}

bool IsWordByte(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         (static_cast<unsigned char>(c) & 0x80) != 0;
}

bool Contains(const std::string& hay, const std::string& needle, bool word) {
  if (needle.empty()) {
    return true;
  }
  for (std::size_t pos = hay.find(needle); pos != std::string::npos;
       pos = hay.find(needle, pos + 1)) {
    if (!word) {
      return true;
    }
    const bool left = pos == 0 || !IsWordByte(hay[pos - 1]) || !IsWordByte(needle.front());
    const std::size_t end = pos + needle.size();
    const bool right = end >= hay.size() || !IsWordByte(hay[end]) || !IsWordByte(needle.back());
    if (left && right) {
      return true;
    }
  }
  return false;
}

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

// ---- regex -----------------------------------------------------------------------------------

struct RegexArgs {
  std::string pattern;
  bool ignore_case = false;
  bool full = false;
};

Result<std::regex> Compile(const RegexArgs& a) {
  try {
    auto flags = std::regex::ECMAScript | std::regex::multiline;
    if (a.ignore_case) {
      flags |= std::regex::icase;
    }
    return std::regex(a.pattern, flags);
  } catch (const std::regex_error& e) {
    return Bad(fmt::format("regex pattern {} does not compile: {}", Quote(a.pattern), e.what()));
  }
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
  std::string input(Trim(r.answer));
  const bool capped = input.size() > kRegexInputCap;
  if (capped) {
    input.resize(kRegexInputCap);
  }
  bool ok = false;
  try {
    ok = a.full ? std::regex_match(input, *re) : std::regex_search(input, *re);
  } catch (const std::regex_error& e) {
    return FailWith(fmt::format("regex {} failed on the answer: {}", Quote(a.pattern), e.what()));
  }
  if (ok) {
    return Pass();
  }
  return FailWith(fmt::format("the answer {} does not {} /{}/{}", Quote(r.answer, 60),
                              a.full ? "fully match" : "match", a.pattern,
                              capped ? " (only its first 32 KiB were searched)" : ""));
}

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
      if (AnyExpected(n.value, a)) {
        return Pass();
      }
    }
    return FailWith(
        fmt::format("expected {}, none of the answer's numbers matches", ExpectText(a)));
  }
  if (a.pick == "only") {
    for (const FoundNumber& n : all) {
      if (!AnyExpected(n.value, a)) {
        return FailWith(
            fmt::format("expected only {}, the answer also says {}", ExpectText(a), n.text));
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
  if (AnyExpected(chosen.value, a)) {
    return Pass();
  }
  return FailWith(fmt::format("expected {}, found {} ({})", ExpectText(a), chosen.text, which));
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

// ---- json ------------------------------------------------------------------------------------

struct JsonArgs {
  std::vector<std::string> required;
  json values = json::object();
  std::string type = "object";
  Bounds items;
};

Result<JsonArgs> ParseJsonCheck(const Check& c) {
  auto args = Args(c, {"required", "values", "type", "items"});
  if (!args) {
    return args.error();
  }
  JsonArgs a;
  auto req = Strings(*args, "required");
  if (!req) {
    return req.error();
  }
  a.required = *req;
  if (args->contains("values")) {
    if (!(*args)["values"].is_object()) {
      return Bad("values must be a mapping of field -> expected value");
    }
    a.values = (*args)["values"];
  }
  if (args->contains("type")) {
    const json& t = (*args)["type"];
    if (!t.is_string() || (t != "object" && t != "array")) {
      return Bad("type must be object or array");
    }
    a.type = t.get<std::string>();
  }
  if (args->contains("items")) {
    auto b = ParseBounds((*args)["items"], "items");
    if (!b) {
      return b.error();
    }
    a.items = *b;
  }
  return a;
}

// The first balanced {...} or [...] starting at or after `from` that parses as JSON.
std::optional<json> FirstJson(std::string_view text, char open) {
  const char close = open == '{' ? '}' : ']';
  for (std::size_t start = text.find(open); start != std::string_view::npos;
       start = text.find(open, start + 1)) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = start; i < text.size(); ++i) {
      const char ch = text[i];
      if (in_string) {
        if (ch == '\\') {
          ++i;
        } else if (ch == '"') {
          in_string = false;
        }
        continue;
      }
      if (ch == '"') {
        in_string = true;
      } else if (ch == open) {
        ++depth;
      } else if (ch == close && --depth == 0) {
        json j = json::parse(text.substr(start, i - start + 1), nullptr, false);
        if (!j.is_discarded()) {
          return j;
        }
        break;
      }
    }
  }
  return std::nullopt;
}

std::optional<json> ExtractJson(std::string_view answer, const std::string& type) {
  const char open = type == "array" ? '[' : '{';
  for (const CodeBlock& b : CodeBlocks(answer)) {
    json j = json::parse(b.code, nullptr, false);
    if (!j.is_discarded()) {
      return j;
    }
    if (auto inner = FirstJson(b.code, open)) {
      return inner;
    }
  }
  json whole = json::parse(Trim(answer), nullptr, false);
  if (!whole.is_discarded()) {
    return whole;
  }
  return FirstJson(answer, open);
}

const json* JsonPath(const json& doc, const std::string& path) {
  const json* node = &doc;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = path.find('.', start);
    const std::string key = path.substr(start, end == std::string::npos ? end : end - start);
    if (node->is_object()) {
      auto it = node->find(key);
      if (it == node->end()) {
        return nullptr;
      }
      node = &*it;
    } else if (node->is_array() && !key.empty() &&
               std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      const std::size_t index = std::stoul(key);
      if (index >= node->size()) {
        return nullptr;
      }
      node = &(*node)[index];
    } else {
      return nullptr;
    }
    if (end == std::string::npos) {
      break;
    }
    start = end + 1;
  }
  return node;
}

// Loose equality for expected values: numbers numerically (numeric strings too), strings
// case-insensitively with whitespace collapsed, arrays element-wise, objects key-wise.
bool LooseEqual(const json& have, const json& want) {
  if (want.is_number()) {
    if (have.is_number()) {
      return std::fabs(have.get<double>() - want.get<double>()) <=
             1e-9 * std::max(1.0, std::fabs(want.get<double>()));
    }
    if (have.is_string()) {
      auto n = FindNumbers(have.get<std::string>());
      return n.size() == 1 && LooseEqual(json(n[0].value), want);
    }
    return false;
  }
  if (want.is_string()) {
    if (have.is_string()) {
      return NormalizeSpace(have.get<std::string>()) == NormalizeSpace(want.get<std::string>());
    }
    if (have.is_number()) {
      return LooseEqual(want, have);
    }
    return false;
  }
  if (want.is_array()) {
    if (!have.is_array() || have.size() != want.size()) {
      return false;
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (!LooseEqual(have[i], want[i])) {
        return false;
      }
    }
    return true;
  }
  if (want.is_object()) {
    if (!have.is_object()) {
      return false;
    }
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!have.contains(it.key()) || !LooseEqual(have[it.key()], *it)) {
        return false;
      }
    }
    return true;
  }
  return have == want;
}

CheckOutcome RunJson(const JsonArgs& a, const Reply& r) {
  auto doc = ExtractJson(r.answer, a.type);
  if (!doc) {
    return FailWith(fmt::format("no JSON {} in the answer {}", a.type, Quote(r.answer, 60)));
  }
  if ((a.type == "object" && !doc->is_object()) || (a.type == "array" && !doc->is_array())) {
    return FailWith(
        fmt::format("the answer's JSON is not an {}: {}", a.type, Quote(doc->dump(), 60)));
  }
  if (!a.items.empty()) {
    const double n = static_cast<double>(doc->size());
    if (std::string p = BoundsProblem(n, a.items, "items"); !p.empty()) {
      return FailWith("JSON " + a.type + " has " + p);
    }
  }
  for (const std::string& path : a.required) {
    if (JsonPath(*doc, path) == nullptr) {
      return FailWith(fmt::format("the JSON lacks the field '{}'", path));
    }
  }
  for (auto it = a.values.begin(); it != a.values.end(); ++it) {
    const json* have = JsonPath(*doc, it.key());
    if (have == nullptr) {
      return FailWith(fmt::format("the JSON lacks the field '{}'", it.key()));
    }
    if (!LooseEqual(*have, *it)) {
      return FailWith(
          fmt::format("field '{}' is {}, expected {}", it.key(), have->dump(), it->dump()));
    }
  }
  return Pass();
}

// ---- tool_call -------------------------------------------------------------------------------

struct ExpectedCall {
  std::string name;
  json arguments = json::object();  // param -> list of acceptable values
  std::vector<std::string> optional;
  bool strict = true;  // no arguments beyond those listed
};

struct ToolArgs {
  bool none = false;
  std::vector<ExpectedCall> calls;
  bool ordered = false;
  bool allow_extra = false;
};

Result<ToolArgs> ParseTool(const Check& c) {
  auto args = Args(c, {"none", "calls", "ordered", "allow_extra"});
  if (!args) {
    return args.error();
  }
  ToolArgs a;
  auto none = Bool(*args, "none", false);
  auto ordered = Bool(*args, "ordered", false);
  auto extra = Bool(*args, "allow_extra", false);
  for (auto* b : {&none, &ordered, &extra}) {
    if (!*b) {
      return b->error();
    }
  }
  a.none = *none;
  a.ordered = *ordered;
  a.allow_extra = *extra;
  if (args->contains("calls")) {
    const json& calls = (*args)["calls"];
    if (!calls.is_array() || calls.empty()) {
      return Bad("calls must be a non-empty list of {name, arguments}");
    }
    for (const json& call : calls) {
      if (!call.is_object()) {
        return Bad("each call is a mapping {name, arguments, optional, strict}");
      }
      ExpectedCall e;
      for (auto it = call.begin(); it != call.end(); ++it) {
        if (it.key() != "name" && it.key() != "arguments" && it.key() != "optional" &&
            it.key() != "strict") {
          return Bad(
              fmt::format("unknown key '{}' in a call (known: name, arguments, optional, "
                          "strict)",
                          it.key()));
        }
      }
      if (!call.contains("name") || !call["name"].is_string()) {
        return Bad("each call needs 'name'");
      }
      e.name = call["name"].get<std::string>();
      if (call.contains("arguments")) {
        if (!call["arguments"].is_object()) {
          return Bad("arguments must be a mapping of parameter -> value or list of values");
        }
        for (auto it = call["arguments"].begin(); it != call["arguments"].end(); ++it) {
          e.arguments[it.key()] = it->is_array() ? *it : json::array({*it});
        }
      }
      auto opt = Strings(call, "optional");
      if (!opt) {
        return opt.error();
      }
      e.optional = *opt;
      auto strict = Bool(call, "strict", true);
      if (!strict) {
        return strict.error();
      }
      e.strict = *strict;
      a.calls.push_back(std::move(e));
    }
  }
  if (a.none == !a.calls.empty()) {
    return Bad("tool_call needs either 'calls' or 'none: true'");
  }
  return a;
}

// BFCL's string normal form: lowercase, without spaces and , . / - _ * ^ characters.
std::string ToolString(const std::string& s) {
  std::string out;
  for (char c : Lower(s)) {
    if (c == ' ' || c == ',' || c == '.' || c == '/' || c == '-' || c == '_' || c == '*' ||
        c == '^' || c == '\t' || c == '\n' || c == '\'' || c == '"') {
      continue;
    }
    out.push_back(c);
  }
  return out;
}

bool ToolValueEqual(const json& have, const json& want) {
  if (want.is_string() && have.is_string()) {
    return ToolString(have.get<std::string>()) == ToolString(want.get<std::string>());
  }
  if (want.is_array() && have.is_array()) {
    if (want.size() != have.size()) {
      return false;
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (!ToolValueEqual(have[i], want[i])) {
        return false;
      }
    }
    return true;
  }
  if (want.is_object() && have.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!have.contains(it.key()) || !ToolValueEqual(have[it.key()], *it)) {
        return false;
      }
    }
    return have.size() == want.size();
  }
  return LooseEqual(have, want);
}

std::string CallText(const client::ToolCall& c) {
  return fmt::format("{}({})", c.name, OneLine(c.arguments, 80));
}

std::string ValuesText(const json& values) {
  std::vector<std::string> parts;
  for (const json& v : values) {
    parts.push_back(v.dump());
  }
  return parts.size() == 1 ? parts[0] : "one of " + fmt::format("{}", fmt::join(parts, ", "));
}

// "" when call matches e, else why not.
std::string CallProblem(const client::ToolCall& call, const ExpectedCall& e) {
  if (call.name != e.name) {
    return fmt::format("called {}, expected {}", call.name.empty() ? "(no name)" : call.name,
                       e.name);
  }
  json args =
      Trim(call.arguments).empty() ? json::object() : json::parse(call.arguments, nullptr, false);
  if (args.is_string()) {  // arguments double-encoded as a JSON string
    json inner = json::parse(args.get<std::string>(), nullptr, false);
    if (!inner.is_discarded()) {
      args = inner;
    }
  }
  if (args.is_discarded() || !args.is_object()) {
    return fmt::format("{}: the arguments are not a JSON object: {}", e.name,
                       Quote(call.arguments, 60));
  }
  for (auto it = e.arguments.begin(); it != e.arguments.end(); ++it) {
    const bool optional =
        std::find(e.optional.begin(), e.optional.end(), it.key()) != e.optional.end();
    if (!args.contains(it.key())) {
      if (optional) {
        continue;
      }
      return fmt::format("{}: missing argument '{}'", e.name, it.key());
    }
    const json& have = args[it.key()];
    const bool ok = std::any_of(it->begin(), it->end(),
                                [&](const json& want) { return ToolValueEqual(have, want); });
    if (!ok) {
      return fmt::format("{}: argument '{}' is {}, expected {}", e.name, it.key(), have.dump(),
                         ValuesText(*it));
    }
  }
  if (e.strict) {
    for (auto it = args.begin(); it != args.end(); ++it) {
      if (!e.arguments.contains(it.key()) &&
          std::find(e.optional.begin(), e.optional.end(), it.key()) == e.optional.end()) {
        return fmt::format("{}: unexpected argument '{}'", e.name, it.key());
      }
    }
  }
  return "";
}

// Assigns calls to expectations (any order unless ordered); returns the first problem or "".
std::string MatchCalls(const std::vector<client::ToolCall>& calls, const ToolArgs& a) {
  const std::size_t n = a.calls.size();
  if (calls.size() < n) {
    std::vector<std::string> names;
    for (const ExpectedCall& e : a.calls) {
      names.push_back(e.name);
    }
    return fmt::format("expected {} tool call{} ({}), got {}", n, n == 1 ? "" : "s",
                       fmt::join(names, ", "), calls.size());
  }
  if (calls.size() > n && !a.allow_extra) {
    return fmt::format("expected {} tool call{}, got {}: {}", n, n == 1 ? "" : "s", calls.size(),
                       CallText(calls[n]));
  }
  if (a.ordered) {
    for (std::size_t i = 0; i < n; ++i) {
      if (std::string p = CallProblem(calls[i], a.calls[i]); !p.empty()) {
        return p;
      }
    }
    return "";
  }
  // Backtracking over assignments (n is small).
  std::vector<bool> used(calls.size(), false);
  std::string first_problem;
  std::function<bool(std::size_t)> assign = [&](std::size_t i) -> bool {
    if (i == n) {
      return true;
    }
    for (std::size_t k = 0; k < calls.size(); ++k) {
      if (used[k]) {
        continue;
      }
      std::string p = CallProblem(calls[k], a.calls[i]);
      if (!p.empty()) {
        // Prefer the problem of a call with the right name: it says what is wrong with it.
        if (first_problem.empty() || calls[k].name == a.calls[i].name) {
          first_problem = p;
        }
        continue;
      }
      used[k] = true;
      if (assign(i + 1)) {
        return true;
      }
      used[k] = false;
    }
    return false;
  };
  return assign(0) ? "" : first_problem;
}

CheckOutcome RunTool(const ToolArgs& a, const Reply& r) {
  if (a.none) {
    if (r.tool_calls.empty()) {
      return Pass();
    }
    return FailWith(fmt::format("expected no tool call, got {}", CallText(r.tool_calls[0])));
  }
  if (r.tool_calls.empty()) {
    std::string hint;
    for (const ExpectedCall& e : a.calls) {
      if (r.answer.find(e.name) != std::string::npos) {
        hint = " (the answer text mentions it: the server may have no tool-call parser)";
        break;
      }
    }
    return FailWith(fmt::format("expected a call to {}, got no tool call{}; the answer was {}",
                                a.calls[0].name, hint, Quote(r.answer, 60)));
  }
  if (std::string p = MatchCalls(r.tool_calls, a); !p.empty()) {
    return FailWith(p);
  }
  return Pass();
}

// ---- code ------------------------------------------------------------------------------------

struct CodeCase {
  std::string stdin_data;
  std::string stdout_data;
};

struct CodeArgs {
  sandbox::Language language = sandbox::Language::kPython;
  bool sql = false;  // language sql: the answer's query, run by Python `tests` (as `query`)
  std::string tests;
  std::vector<CodeCase> cases;
  std::string entry;
  double timeout_s = 10;
  double memory_mb = 1024;
};

Result<CodeArgs> ParseCode(const Check& c) {
  auto args = Args(c, {"language", "tests", "cases", "entry", "timeout_s", "memory_mb"});
  if (!args) {
    return args.error();
  }
  CodeArgs a;
  const json& lang = (*args)["language"];
  if (!lang.is_string() || (lang != "python" && lang != "cpp" && lang != "sql")) {
    return Bad("code needs 'language': python, cpp or sql");
  }
  a.language = lang == "cpp" ? sandbox::Language::kCpp : sandbox::Language::kPython;
  a.sql = lang == "sql";
  if (args->contains("tests")) {
    if (!(*args)["tests"].is_string()) {
      return Bad("tests must be source code (a string)");
    }
    a.tests = (*args)["tests"].get<std::string>();
  }
  if (args->contains("cases")) {
    const json& cases = (*args)["cases"];
    if (!cases.is_array()) {
      return Bad("cases must be a list of {stdin, stdout}");
    }
    for (const json& cs : cases) {
      if (!cs.is_object() || !cs.contains("stdout")) {
        return Bad("each case is a mapping {stdin, stdout}");
      }
      for (auto it = cs.begin(); it != cs.end(); ++it) {
        if (it.key() != "stdin" && it.key() != "stdout") {
          return Bad(fmt::format("unknown key '{}' in a case (known: stdin, stdout)", it.key()));
        }
        if (!it->is_string() && !it->is_number()) {
          return Bad("stdin and stdout of a case are text");
        }
      }
      auto text = [](const json& v) {
        return v.is_string() ? v.get<std::string>() : FormatNumber(v.get<double>());
      };
      a.cases.push_back({cs.contains("stdin") ? text(cs["stdin"]) : "", text(cs["stdout"])});
    }
  }
  if (a.tests.empty() && a.cases.empty()) {
    return Bad("code needs 'tests' (code run after the answer's) or 'cases' (stdin/stdout)");
  }
  if (a.sql && a.tests.empty()) {
    return Bad("code with language sql needs 'tests': Python that runs the variable `query`");
  }
  if (args->contains("entry")) {
    if (!(*args)["entry"].is_string()) {
      return Bad("entry must be a name");
    }
    a.entry = (*args)["entry"].get<std::string>();
  }
  auto timeout = OptNumber(*args, "timeout_s");
  auto memory = OptNumber(*args, "memory_mb");
  if (!timeout) {
    return timeout.error();
  }
  if (!memory) {
    return memory.error();
  }
  a.timeout_s = timeout->value_or(10);
  a.memory_mb = memory->value_or(1024);
  if (a.timeout_s <= 0 || a.memory_mb < 16) {
    return Bad("timeout_s must be positive and memory_mb at least 16");
  }
  return a;
}

bool LanguageMatches(const std::string& info, sandbox::Language lang, bool sql) {
  if (sql) {
    return info == "sql" || info == "sqlite" || info == "postgresql" || info == "postgres" ||
           info == "psql" || info == "mysql";
  }
  if (lang == sandbox::Language::kPython) {
    return info == "python" || info == "py" || info == "python3";
  }
  return info == "cpp" || info == "c++" || info == "cc" || info == "cxx" || info == "c";
}

// The answer's code: fenced blocks in the language (or untagged), preferring one that defines
// the entry point, else the longest; an answer without fences that looks like code as a whole.
std::optional<std::string> PickCode(std::string_view answer, const CodeArgs& a) {
  std::vector<CodeBlock> blocks = CodeBlocks(answer);
  std::vector<const CodeBlock*> candidates;
  for (const CodeBlock& b : blocks) {
    if (LanguageMatches(b.language, a.language, a.sql)) {
      candidates.push_back(&b);
    }
  }
  if (candidates.empty()) {
    for (const CodeBlock& b : blocks) {
      if (b.language.empty()) {
        candidates.push_back(&b);
      }
    }
  }
  if (candidates.empty()) {
    const bool looks_like_code = a.sql ? Lower(answer).find("select") != std::string::npos
                                 : a.language == sandbox::Language::kPython
                                     ? (answer.find("def ") != std::string_view::npos ||
                                        answer.find("class ") != std::string_view::npos ||
                                        answer.find("import ") != std::string_view::npos)
                                     : answer.find("#include") != std::string_view::npos;
    if (blocks.empty() && looks_like_code) {
      return std::string(answer);
    }
    return std::nullopt;
  }
  const CodeBlock* best = nullptr;
  for (const CodeBlock* b : candidates) {
    const bool defines = !a.entry.empty() && b->code.find(a.entry) != std::string::npos;
    const bool best_defines =
        best != nullptr && !a.entry.empty() && best->code.find(a.entry) != std::string::npos;
    if (best == nullptr || (defines && !best_defines) ||
        (defines == best_defines && b->code.size() > best->code.size())) {
      best = b;
    }
  }
  return best->code;
}

std::string LastLine(std::string_view s) {
  std::string_view t = Trim(s);
  const std::size_t nl = t.rfind('\n');
  return std::string(nl == std::string_view::npos ? t : t.substr(nl + 1));
}

// Lines compared with trailing whitespace removed and leading/trailing blank lines ignored.
std::string CanonicalOutput(std::string_view s) {
  std::string out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find('\n', start);
    std::string_view line = s.substr(start, end == std::string_view::npos ? end : end - start);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.remove_suffix(1);
    }
    out.append(line);
    out.push_back('\n');
    if (end == std::string_view::npos) {
      break;
    }
    start = end + 1;
  }
  return std::string(Trim(out));
}

std::string SandboxDetail(const sandbox::RunResult& run) {
  std::string tail = std::string(Trim(run.stderr_data));
  if (tail.size() > 2000) {
    tail = "…" + tail.substr(tail.size() - 2000);
  }
  return fmt::format("verdict {}, exit code {}, {:.2f} s CPU, {:.2f} s wall{}{}",
                     sandbox::VerdictName(run.verdict), run.exit_code, run.cpu_s, run.wall_s,
                     tail.empty() ? "" : "; stderr: ", tail);
}

CheckOutcome RunCode(const CodeArgs& a, const Reply& r, const CheckEnv& env) {
  auto code = PickCode(r.answer, a);
  if (!code) {
    return FailWith(fmt::format("no {} code block in the answer",
                                a.sql                                      ? "SQL"
                                : a.language == sandbox::Language::kPython ? "Python"
                                                                           : "C++"));
  }
  if (!a.entry.empty() && code->find(a.entry) == std::string::npos) {
    return FailWith(fmt::format("the code does not define '{}'", a.entry));
  }
  sandbox::CodeOptions options = env.code;
  options.run.cpu_s = a.timeout_s;
  options.run.wall_s = a.timeout_s * 2 + 1;
  options.run.memory_bytes = static_cast<std::uint64_t>(a.memory_mb * 1024 * 1024);
  std::string program = *code;
  if (a.sql) {
    // The query as a Python string literal (JSON string syntax is valid Python).
    program = "query = " + json(*code).dump(-1, ' ', true, json::error_handler_t::replace) +
              "\n\n" + a.tests;
  } else if (!a.tests.empty()) {
    if (a.language == sandbox::Language::kCpp && a.tests.find("main(") != std::string::npos) {
      // The tests bring main(); the answer's own main (an example run) is renamed away.
      program = "#define main servebench_answer_main\n" + *code + "\n#undef main\n" + a.tests;
    } else {
      program = *code + "\n\n" + a.tests;
    }
  }
  std::vector<CodeCase> cases = a.cases;
  if (cases.empty()) {
    cases.push_back({"", ""});
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto run = sandbox::RunCode(a.language, program, cases[i].stdin_data, options);
    if (!run) {
      return FailWith("could not run the code: " + run.error().message);
    }
    const sandbox::RunResult& res = *run;
    const std::string detail = SandboxDetail(res);
    const std::string which = a.cases.empty() ? "" : fmt::format("case {}: ", i + 1);
    if (res.verdict == sandbox::Verdict::kCompileError) {
      return FailWith(res.reason, detail);
    }
    if (res.verdict != sandbox::Verdict::kExited) {
      return FailWith(which + res.reason, detail);
    }
    if (res.exit_code != 0) {
      std::string last = LastLine(res.stderr_data);
      if (last.empty()) {
        last = LastLine(res.stdout_data);
      }
      return FailWith(fmt::format("{}exit code {}{}{}", which, res.exit_code,
                                  last.empty() ? "" : ": ", OneLine(last, 160)),
                      detail);
    }
    if (!a.cases.empty() &&
        CanonicalOutput(res.stdout_data) != CanonicalOutput(cases[i].stdout_data)) {
      return FailWith(fmt::format("{}expected output {}, got {}", which,
                                  Quote(cases[i].stdout_data, 60), Quote(res.stdout_data, 60)),
                      detail);
    }
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

// ---- dispatch --------------------------------------------------------------------------------

template <typename Args, typename Runner>
CheckOutcome Evaluate(const Result<Args>& args, Runner run) {
  if (!args) {
    return FailWith("invalid check: " + args.error().message);
  }
  return run(*args);
}

}  // namespace

const std::vector<std::string>& CheckerTypes() {
  static const std::vector<std::string> kTypes = {
      "exact", "contains", "regex",  "number", "choice", "json", "tool_call",
      "code",  "length",   "format", "all_of", "any_of", "not"};
  return kTypes;
}

Result<void> ValidateCheck(const Check& c) {
  auto check = [](const auto& r) -> Result<void> {
    if (!r) {
      return r.error();
    }
    return {};
  };
  if (c.type == "exact") {
    return check(ParseExact(c));
  }
  if (c.type == "contains") {
    return check(ParseContains(c));
  }
  if (c.type == "regex") {
    return check(ParseRegex(c));
  }
  if (c.type == "number") {
    return check(ParseNumber(c));
  }
  if (c.type == "choice") {
    return check(ParseChoice(c));
  }
  if (c.type == "json") {
    return check(ParseJsonCheck(c));
  }
  if (c.type == "tool_call") {
    return check(ParseTool(c));
  }
  if (c.type == "code") {
    return check(ParseCode(c));
  }
  if (c.type == "length") {
    return check(ParseLength(c));
  }
  if (c.type == "format") {
    return check(ParseFormat(c));
  }
  if (c.type == "all_of" || c.type == "any_of") {
    if (c.children.empty()) {
      return Bad(c.type + " needs at least one check");
    }
    for (const Check& child : c.children) {
      if (auto ok = ValidateCheck(child); !ok) {
        return ok;
      }
    }
    return {};
  }
  if (c.type == "not") {
    if (c.children.size() != 1) {
      return Bad("not takes exactly one check");
    }
    return ValidateCheck(c.children[0]);
  }
  return Bad(fmt::format("unknown checker '{}'", c.type));
}

CheckOutcome RunCheck(const Check& c, const Reply& reply, const CheckEnv& env) {
  if (c.type == "all_of") {
    for (const Check& child : c.children) {
      CheckOutcome o = RunCheck(child, reply, env);
      if (!o.pass) {
        return o;
      }
    }
    return Pass();
  }
  if (c.type == "any_of") {
    std::vector<std::string> reasons;
    for (const Check& child : c.children) {
      CheckOutcome o = RunCheck(child, reply, env);
      if (o.pass) {
        return o;
      }
      reasons.push_back(o.reason);
    }
    return FailWith(fmt::format("{}", fmt::join(reasons, "; or ")));
  }
  if (c.type == "not") {
    if (c.children.size() != 1) {
      return FailWith("invalid check: not takes exactly one check");
    }
    CheckOutcome o = RunCheck(c.children[0], reply, env);
    if (o.pass) {
      return FailWith(fmt::format("the answer passes a {} check it must fail", c.children[0].type));
    }
    return Pass();
  }
  if (c.type == "exact") {
    return Evaluate(ParseExact(c), [&](const ExactArgs& a) { return RunExact(a, reply); });
  }
  if (c.type == "contains") {
    return Evaluate(ParseContains(c), [&](const ContainsArgs& a) { return RunContains(a, reply); });
  }
  if (c.type == "regex") {
    return Evaluate(ParseRegex(c), [&](const RegexArgs& a) { return RunRegex(a, reply); });
  }
  if (c.type == "number") {
    return Evaluate(ParseNumber(c), [&](const NumberArgs& a) { return RunNumber(a, reply); });
  }
  if (c.type == "choice") {
    return Evaluate(ParseChoice(c), [&](const ChoiceArgs& a) { return RunChoice(a, reply); });
  }
  if (c.type == "json") {
    return Evaluate(ParseJsonCheck(c), [&](const JsonArgs& a) { return RunJson(a, reply); });
  }
  if (c.type == "tool_call") {
    return Evaluate(ParseTool(c), [&](const ToolArgs& a) { return RunTool(a, reply); });
  }
  if (c.type == "code") {
    return Evaluate(ParseCode(c), [&](const CodeArgs& a) { return RunCode(a, reply, env); });
  }
  if (c.type == "length") {
    return Evaluate(ParseLength(c), [&](const LengthArgs& a) { return RunLength(a, reply); });
  }
  if (c.type == "format") {
    return Evaluate(ParseFormat(c), [&](const FormatArgs& a) { return RunFormat(a, reply); });
  }
  return FailWith(fmt::format("unknown checker '{}'", c.type));
}

}  // namespace sb::suite
