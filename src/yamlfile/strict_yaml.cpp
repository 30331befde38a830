#include "yamlfile/strict_yaml.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace sb::yamlfile {

int LineOf(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  return m.line >= 0 ? m.line + 1 : 0;
}

void Throw(const YAML::Node& at, std::string message) {
  throw LoadError{LineOf(at), std::move(message)};
}

void ThrowAt(int line, std::string message) {
  throw LoadError{line, std::move(message)};
}

void CheckKeys(const YAML::Node& map, const std::vector<std::string>& allowed,
               const std::string& where) {
  std::set<std::string> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar()) {
      Throw(it->first, where + ": keys must be plain names");
    }
    const std::string key = it->first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      Throw(it->first,
            fmt::format("{}: unknown key '{}' (known: {})", where, key, fmt::join(allowed, ", ")));
    }
    if (!seen.insert(key).second) {
      Throw(it->first, fmt::format("{}: key '{}' appears twice", where, key));
    }
  }
}

std::string String(const YAML::Node& node, const std::string& what) {
  if (!node.IsScalar()) {
    Throw(node, what + " must be a string");
  }
  return node.Scalar();
}

Result<void> LoadStrict(std::string_view text, std::string_view source,
                        const std::function<void(const YAML::Node& root)>& parse) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    parse(root);
    return {};
  } catch (const LoadError& e) {
    return MakeError(ErrorCode::kUsage, e.line > 0
                                            ? fmt::format("{}:{}: {}", source, e.line, e.message)
                                            : fmt::format("{}: {}", source, e.message));
  } catch (const YAML::ParserException& e) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("{}:{}: not valid YAML: {}", source, e.mark.line + 1, e.msg));
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kUsage, fmt::format("{}:{}: {}", source, e.mark.line + 1, e.msg));
  }
}

}  // namespace sb::yamlfile
