// Private to the suite module: the scalars of a suite file (strict integers, numbers and on/off
// values with the line they came from) and its placeholders ({{asset.key}} truths of generated
// media, substituted into prompts and checks).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/result.h"

namespace sb::suite::detail {

using nlohmann::json;

// "a, b, c".
std::string Join(const std::vector<std::string>& items);

// ---- Scalars ---------------------------------------------------------------------------------

bool IsPlain(const YAML::Node& n);

bool ParseInteger(const std::string& s, long long& out);

bool ParseFloat(const std::string& s, double& out);

long long Integer(const YAML::Node& n, const std::string& what, long long min, long long max);

double Number(const YAML::Node& n, const std::string& what, double min, double max);

bool OnOff(const YAML::Node& n, const std::string& what);

// YAML -> JSON. Plain scalars become numbers, booleans (true/false) or null (null, ~) when they
// read as such; quoted scalars stay strings.
json ToJson(const YAML::Node& n);

// ---- Placeholders ----------------------------------------------------------------------------

class Truths {
 public:
  // The value at "asset.key.sub" or an error message.
  Result<json> Lookup(const std::string& ref);

 private:
  std::map<std::string, json> cache_;
};

std::string ValueText(const json& v);

// Inline substitution of every {{...}} in text.
Result<std::string> Substitute(std::string_view text, Truths& truths);

// Whether s is exactly "{{ref}}"; sets ref.
bool WholePlaceholder(const std::string& s, std::string& ref);

Result<void> ResolveJson(json& j, Truths& truths);

}  // namespace sb::suite::detail
