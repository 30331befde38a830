#include "suite/check_common.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "suite/text.h"

namespace sb::suite::check {

Error Bad(std::string message) {
  return MakeError(ErrorCode::kUsage, std::move(message));
}

std::string Quote(std::string_view s, std::size_t max_chars) {
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

CheckOutcome FailWith(std::string reason, std::string detail) {
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

}  // namespace sb::suite::check
