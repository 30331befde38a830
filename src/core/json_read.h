// Null-safe reads of a JSON document (results.json, plan.json, a roofline): every reader returns
// std::nullopt (or nullptr, or an empty list) for a missing, null or mistyped value, so a writer
// renders "—" for it and never a made-up 0. Nothing here throws. The one copy for every module
// that reads results.json (report, roofline, store). Thread safety: pure functions.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sb {

// The value at `path` (object keys, outermost first), or nullptr when any step is missing or
// not an object. A JSON null is returned as a pointer to it.
const nlohmann::json* Find(const nlohmann::json& j, std::initializer_list<std::string_view> path);

// The number at `path`; nullopt when missing, null, not a number or not finite.
std::optional<double> NumberAt(const nlohmann::json& j,
                               std::initializer_list<std::string_view> path);

// The string at `path`; nullopt when missing, null or not a string.
std::optional<std::string> StringAt(const nlohmann::json& j,
                                    std::initializer_list<std::string_view> path);

// The boolean at `path`; nullopt when missing or not a boolean.
std::optional<bool> BoolAt(const nlohmann::json& j, std::initializer_list<std::string_view> path);

// The elements of the array at `path`; empty when missing or not an array.
std::vector<const nlohmann::json*> ArrayAt(const nlohmann::json& j,
                                           std::initializer_list<std::string_view> path);

// The finite numbers in the array at `path`, in order; nulls and non-numbers are skipped.
std::vector<double> NumbersAt(const nlohmann::json& j,
                              std::initializer_list<std::string_view> path);

}  // namespace sb
