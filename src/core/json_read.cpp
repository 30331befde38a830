#include "core/json_read.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace sb {

using nlohmann::json;

const json* Find(const json& j, std::initializer_list<std::string_view> path) {
  const json* cur = &j;
  for (std::string_view key : path) {
    if (!cur->is_object()) {
      return nullptr;
    }
    auto it = cur->find(std::string(key));
    if (it == cur->end()) {
      return nullptr;
    }
    cur = &*it;
  }
  return cur;
}

std::optional<double> NumberAt(const json& j, std::initializer_list<std::string_view> path) {
  const json* v = Find(j, path);
  if (v == nullptr || !v->is_number()) {
    return std::nullopt;
  }
  double d = v->get<double>();
  if (!std::isfinite(d)) {
    return std::nullopt;
  }
  return d;
}

std::optional<std::string> StringAt(const json& j, std::initializer_list<std::string_view> path) {
  const json* v = Find(j, path);
  if (v == nullptr || !v->is_string()) {
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<bool> BoolAt(const json& j, std::initializer_list<std::string_view> path) {
  const json* v = Find(j, path);
  if (v == nullptr || !v->is_boolean()) {
    return std::nullopt;
  }
  return v->get<bool>();
}

std::vector<const json*> ArrayAt(const json& j, std::initializer_list<std::string_view> path) {
  std::vector<const json*> out;
  const json* v = Find(j, path);
  if (v == nullptr || !v->is_array()) {
    return out;
  }
  out.reserve(v->size());
  for (const json& e : *v) {
    out.push_back(&e);
  }
  return out;
}

std::vector<double> NumbersAt(const json& j, std::initializer_list<std::string_view> path) {
  std::vector<double> out;
  for (const json* e : ArrayAt(j, path)) {
    if (e->is_number()) {
      double d = e->get<double>();
      if (std::isfinite(d)) {
        out.push_back(d);
      }
    }
  }
  return out;
}

}  // namespace sb
