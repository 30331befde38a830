// Structured checkers: json (the answer's JSON) and tool_call (native tool calls).
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "suite/check_common.h"
#include "suite/text.h"

namespace sb::suite::check {

namespace {

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

// JSON nested deeper than this in a model's answer or arguments is not read: no real answer
// comes near it, and building (then freeing) a million nested arrays would cost seconds.
constexpr int kMaxJsonDepth = 512;

// json::parse, discarded (not JSON) when nested deeper than kMaxJsonDepth.
json ParseAnswerJson(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      if (ch == '\\') {
        ++i;
      } else if (ch == '"') {
        in_string = false;
      }
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > kMaxJsonDepth) {
        return json(json::value_t::discarded);
      }
    } else if (ch == ']' || ch == '}') {
      --depth;
    }
  }
  return json::parse(text, nullptr, false);
}

// The first balanced {...} or [...] that parses as JSON. Each candidate start scans forward
// (and parses what balances), so a hostile answer ("[[[[..." of 1 MiB) would cost the square of
// its length: the bytes scanned and parsed are capped at 16 times the text (at least 1 MiB),
// after which no JSON is found. Ordinary answers stay far below it.
std::optional<json> FirstJson(std::string_view text, char open) {
  const char close = open == '{' ? '}' : ']';
  std::size_t budget = std::max<std::size_t>(1 << 20, 16 * text.size());
  for (std::size_t start = text.find(open); start != std::string_view::npos;
       start = text.find(open, start + 1)) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = start; i < text.size(); ++i) {
      if (budget-- == 0) {
        return std::nullopt;
      }
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
        if (i - start + 1 > budget) {
          return std::nullopt;
        }
        budget -= i - start + 1;
        json j = ParseAnswerJson(text.substr(start, i - start + 1));
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
    json j = ParseAnswerJson(b.code);
    if (!j.is_discarded()) {
      return j;
    }
    if (auto inner = FirstJson(b.code, open)) {
      return inner;
    }
  }
  json whole = ParseAnswerJson(Trim(answer));
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
  return fmt::format("{}({})", OneLine(c.name, 80), OneLine(c.arguments, 80));
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
    return fmt::format("called {}, expected {}",
                       call.name.empty() ? "(no name)" : OneLine(call.name, 80), e.name);
  }
  json args = Trim(call.arguments).empty() ? json::object() : ParseAnswerJson(call.arguments);
  if (args.is_string()) {  // arguments double-encoded as a JSON string
    json inner = ParseAnswerJson(args.get<std::string>());
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
      return fmt::format("{}: argument '{}' is {}, expected {}", e.name, it.key(),
                         OneLine(have.dump(), 80), ValuesText(*it));
    }
  }
  if (e.strict) {
    for (auto it = args.begin(); it != args.end(); ++it) {
      if (!e.arguments.contains(it.key()) &&
          std::find(e.optional.begin(), e.optional.end(), it.key()) == e.optional.end()) {
        return fmt::format("{}: unexpected argument '{}'", e.name, OneLine(it.key(), 80));
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

}  // namespace

Result<void> ValidateJson(const Check& c) {
  return Valid(ParseJsonCheck(c));
}

CheckOutcome EvaluateJson(const Check& c, const Reply& r) {
  return Evaluate(ParseJsonCheck(c), [&](const JsonArgs& a) { return RunJson(a, r); });
}

Result<void> ValidateTool(const Check& c) {
  return Valid(ParseTool(c));
}

CheckOutcome EvaluateTool(const Check& c, const Reply& r) {
  return Evaluate(ParseTool(c), [&](const ToolArgs& a) { return RunTool(a, r); });
}

}  // namespace sb::suite::check
