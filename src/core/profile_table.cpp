#include "core/profile_table.h"

#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sb {

namespace {

// The items of a comma-separated list ("1000,4000"; spaces around an item are dropped).
std::vector<std::string_view> Items(std::string_view text) {
  std::vector<std::string_view> out;
  while (true) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') {
      item.remove_prefix(1);
    }
    while (!item.empty() && item.back() == ' ') {
      item.remove_suffix(1);
    }
    out.push_back(item);
    if (comma == std::string_view::npos) {
      return out;
    }
    text.remove_prefix(comma + 1);
  }
}

std::optional<double> ParseNumber(std::string_view item) {
  double v = 0;
  const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
  if (ec != std::errc() || end != item.data() + item.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

}  // namespace

std::span<const ProfileSpec> Profiles() {
  return kProfiles;
}

const ProfileSpec* FindProfile(std::string_view name) {
  for (const ProfileSpec& p : kProfiles) {
    if (p.name == name || p.key == name) {
      return &p;
    }
  }
  return nullptr;
}

const ProfileSpec& Profile(ProfileId id) {
  for (const ProfileSpec& p : kProfiles) {
    if (p.id == id) {
      return p;
    }
  }
  return kProfiles[0];  // unreachable: every id has an entry (tests/core/profile_table_test)
}

std::string ProfileDisplayName(std::string_view name) {
  const ProfileSpec* p = FindProfile(name);
  return std::string(p != nullptr ? p->name : name);
}

std::string ProfileNameList(bool suites_only) {
  std::string out;
  for (const ProfileSpec& p : kProfiles) {
    if (suites_only && !p.in_suites) {
      continue;
    }
    out += out.empty() ? "" : ", ";
    out += p.name;
  }
  return out;
}

bool ProfileReads(const ProfileSpec& p, std::string_view flag) {
  for (const OptionSpec& o : p.options) {
    if (o.flag == flag) {
      return true;
    }
  }
  return false;
}

std::pair<const ProfileSpec*, const OptionSpec*> FindOption(std::string_view flag) {
  for (const ProfileSpec& p : kProfiles) {
    for (const OptionSpec& o : p.options) {
      if (o.flag == flag) {
        return {&p, &o};
      }
    }
  }
  return {nullptr, nullptr};
}

std::string CheckOption(const OptionSpec& o, std::string_view value) {
  switch (o.kind) {
    case OptionSpec::kFlag:
      return value == "1" || value == "true"
                 ? ""
                 : fmt::format("{} takes no value, got '{}'", o.flag, value);
    case OptionSpec::kText:
      return "";
    case OptionSpec::kChoice:
      for (std::string_view c : Items(o.choices)) {
        if (c == value) {
          return "";
        }
      }
      return fmt::format("{} must be one of {}, got '{}'", o.flag,
                         fmt::join(Items(o.choices), ", "), value);
    case OptionSpec::kNumber:
    case OptionSpec::kNumbers:
    case OptionSpec::kTexts:
      break;
  }
  const std::vector<std::string_view> items = Items(value);
  if (o.kind == OptionSpec::kNumber && items.size() != 1) {
    return fmt::format("{} takes one number, got '{}'", o.flag, value);
  }
  for (std::string_view item : items) {
    if (item.empty() && items.size() > 1) {
      return fmt::format("{} {}: an empty item in the list", o.flag, value);
    }
    if (o.kind == OptionSpec::kTexts) {
      continue;
    }
    const std::optional<double> v = ParseNumber(item);
    const bool whole = v && std::floor(*v) == *v;
    if (!v || *v < o.min || (o.min_open && *v == o.min) || *v > o.max || (o.integer && !whole)) {
      const bool one = o.kind == OptionSpec::kNumber;
      return fmt::format(
          "{} must be {} in {}{}, {}], got '{}'", o.flag,
          o.integer ? (one ? "a whole number" : "whole numbers") : (one ? "a number" : "numbers"),
          o.min_open ? '(' : '[', o.min, o.max, item);
    }
  }
  return "";
}

void ProfileArgs::Set(std::string_view flag, std::string value) {
  given_.insert_or_assign(std::string(flag), std::move(value));
}

std::string_view ProfileArgs::Value(std::string_view flag) const {
  if (const auto it = given_.find(flag); it != given_.end()) {
    return it->second;
  }
  const OptionSpec* o = FindOption(flag).second;
  return o != nullptr ? o->default_value : std::string_view();
}

void ProfileArgs::SetNumber(std::string_view flag, double value) {
  Set(flag, fmt::format("{}", value));
}

void ProfileArgs::SetInts(std::string_view flag, const std::vector<int>& values) {
  Set(flag, fmt::format("{}", fmt::join(values, ",")));
}

int ProfileArgs::Int(std::string_view flag) const {
  return static_cast<int>(Number(flag));
}

std::vector<int> ProfileArgs::Ints(std::string_view flag) const {
  std::vector<int> out;
  for (const double v : Numbers(flag)) {
    out.push_back(static_cast<int>(v));
  }
  return out;
}

double ProfileArgs::Number(std::string_view flag) const {
  const std::vector<double> v = Numbers(flag);
  return v.empty() ? 0 : v.front();
}

std::vector<double> ProfileArgs::Numbers(std::string_view flag) const {
  const std::string_view text = Value(flag);
  std::vector<double> out;
  if (text.empty()) {
    return out;
  }
  for (std::string_view item : Items(text)) {
    if (const auto v = ParseNumber(item)) {
      out.push_back(*v);
    }
  }
  return out;
}

std::vector<std::string> ProfileArgs::Texts(std::string_view flag) const {
  const std::string_view text = Value(flag);
  std::vector<std::string> out;
  if (text.empty()) {
    return out;
  }
  for (std::string_view item : Items(text)) {
    out.emplace_back(item);
  }
  return out;
}

}  // namespace sb
