// Scalars and placeholders of suite files (suite_values.h).
#include "suite/suite_values.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "media/media.h"
#include "yamlfile/strict_yaml.h"

namespace sb::suite::detail {

using yamlfile::LineOf;
using yamlfile::String;
using yamlfile::Throw;

std::string Join(const std::vector<std::string>& items) {
  return fmt::format("{}", fmt::join(items, ", "));
}

bool IsPlain(const YAML::Node& n) {
  return n.Tag() != "!";  // quoted scalars carry the non-specific tag "!"
}

bool ParseInteger(const std::string& s, long long& out) {
  if (s.empty()) {
    return false;
  }
  std::size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i >= s.size()) {
    return false;
  }
  for (std::size_t k = i; k < s.size(); ++k) {
    if (s[k] < '0' || s[k] > '9') {
      return false;
    }
  }
  try {
    out = std::stoll(s);
  } catch (...) {
    return false;
  }
  return true;
}

bool ParseFloat(const std::string& s, double& out) {
  if (s.empty()) {
    return false;
  }
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(out) &&
         s.find_first_of("0123456789") != std::string::npos &&
         s.find_first_of("xX") == std::string::npos;
}

long long Integer(const YAML::Node& n, const std::string& what, long long min, long long max) {
  long long v = 0;
  if (!n.IsScalar() || !ParseInteger(n.Scalar(), v)) {
    Throw(n, what + " must be an integer");
  }
  if (v < min || v > max) {
    Throw(n, fmt::format("{} must be between {} and {} (got {})", what, min, max, v));
  }
  return v;
}

double Number(const YAML::Node& n, const std::string& what, double min, double max) {
  double v = 0;
  if (!n.IsScalar() || !ParseFloat(n.Scalar(), v)) {
    Throw(n, what + " must be a number");
  }
  if (v < min || v > max) {
    Throw(n, fmt::format("{} must be between {} and {} (got {})", what, min, max, n.Scalar()));
  }
  return v;
}

bool OnOff(const YAML::Node& n, const std::string& what) {
  const std::string s = n.IsScalar() ? n.Scalar() : "";
  if (s == "on" || s == "true" || s == "yes") {
    return true;
  }
  if (s == "off" || s == "false" || s == "no") {
    return false;
  }
  Throw(n, what + " must be on or off");
}

json ToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (!IsPlain(n)) {
        return s;
      }
      if (s == "true") {
        return true;
      }
      if (s == "false") {
        return false;
      }
      if (s == "null" || s == "~") {
        return nullptr;
      }
      long long i = 0;
      if (ParseInteger(s, i)) {
        return i;
      }
      double d = 0;
      if (ParseFloat(s, d)) {
        return d;
      }
      return s;
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& item : n) {
        a.push_back(ToJson(item));
      }
      return a;
    }
    case YAML::NodeType::Map: {
      json o = json::object();
      for (auto it = n.begin(); it != n.end(); ++it) {
        o[it->first.Scalar()] = ToJson(it->second);
      }
      return o;
    }
  }
  return nullptr;
}

std::string ValueText(const json& v) {
  if (v.is_string()) {
    return v.get<std::string>();
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d == std::floor(d) && std::fabs(d) < 1e15) {
      return std::to_string(static_cast<long long>(d));
    }
    return fmt::format("{}", d);
  }
  if (v.is_array()) {
    std::vector<std::string> parts;
    for (const json& item : v) {
      parts.push_back(ValueText(item));
    }
    return Join(parts);
  }
  return v.dump();
}

Result<std::string> Substitute(std::string_view text, Truths& truths) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = text.find("{{", pos);
    if (open == std::string_view::npos) {
      out.append(text.substr(pos));
      return out;
    }
    const std::size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) {
      out.append(text.substr(pos));
      return out;
    }
    out.append(text.substr(pos, open - pos));
    std::string ref(text.substr(open + 2, close - open - 2));
    ref.erase(0, ref.find_first_not_of(' '));
    ref.erase(ref.find_last_not_of(' ') + 1);
    auto value = truths.Lookup(ref);
    if (!value) {
      return value.error();
    }
    out.append(ValueText(*value));
    pos = close + 2;
  }
}

bool WholePlaceholder(const std::string& s, std::string& ref) {
  if (s.size() < 5 || s.rfind("{{", 0) != 0 || s.compare(s.size() - 2, 2, "}}") != 0 ||
      s.find("{{", 2) != std::string::npos) {
    return false;
  }
  ref = s.substr(2, s.size() - 4);
  ref.erase(0, ref.find_first_not_of(' '));
  ref.erase(ref.find_last_not_of(' ') + 1);
  return true;
}

Result<void> ResolveJson(json& j, Truths& truths) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    std::string ref;
    if (WholePlaceholder(s, ref)) {
      auto value = truths.Lookup(ref);
      if (!value) {
        return value.error();
      }
      j = *value;
      return {};
    }
    auto text = Substitute(s, truths);
    if (!text) {
      return text.error();
    }
    j = *text;
    return {};
  }
  if (j.is_array() || j.is_object()) {
    for (auto& child : j) {
      if (auto ok = ResolveJson(child, truths); !ok) {
        return ok;
      }
    }
  }
  return {};
}

Result<json> Truths::Lookup(const std::string& ref) {
  const std::size_t dot = ref.find('.');
  const std::string asset = ref.substr(0, dot);
  if (!media::IsCatalogueName(asset)) {
    return MakeError(
        ErrorCode::kUsage,
        fmt::format("placeholder {{{{{}}}}}: '{}' is not a catalogue asset", ref, asset));
  }
  auto it = cache_.find(asset);
  if (it == cache_.end()) {
    auto generated = media::Generate(asset);
    if (!generated) {
      return generated.error();
    }
    json truth = json::parse(generated->truth_json, nullptr, false);
    it = cache_.emplace(asset, truth.is_discarded() ? json::object() : truth).first;
  }
  const json* node = &it->second;
  std::string path = dot == std::string::npos ? "" : ref.substr(dot + 1);
  std::size_t start = 0;
  while (!path.empty() && start <= path.size()) {
    const std::size_t end = path.find('.', start);
    const std::string key = path.substr(start, end == std::string::npos ? end : end - start);
    const json* next = nullptr;
    long long index = 0;
    if (node->is_object() && node->contains(key)) {
      next = &(*node)[key];
    } else if (node->is_array() && ParseInteger(key, index) && index >= 0 &&
               static_cast<std::size_t>(index) < node->size()) {
      next = &(*node)[static_cast<std::size_t>(index)];
    }
    if (next == nullptr) {
      std::vector<std::string> keys;
      if (node->is_object()) {
        for (auto kv = node->begin(); kv != node->end(); ++kv) {
          keys.push_back(kv.key());
        }
      }
      return MakeError(ErrorCode::kUsage,
                       fmt::format("placeholder {{{{{}}}}}: no '{}' in the ground truth{}", ref,
                                   key, keys.empty() ? "" : " (keys: " + Join(keys) + ")"));
    }
    node = next;
    if (end == std::string::npos) {
      break;
    }
    start = end + 1;
  }
  return *node;
}

}  // namespace sb::suite::detail
