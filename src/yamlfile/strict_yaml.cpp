#include "yamlfile/strict_yaml.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace sb::yamlfile {

// yaml-cpp 0.7's parser refuses documents nested deeper than this (its DepthGuard).
constexpr int kYamlDepthLimit = 500;

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

namespace {

// yaml-cpp's parser messages, with what is wrong said plainly where it says too little.
std::string Explain(const std::string& msg) {
  // yaml-cpp stops at its nesting limit with the message it uses for unreadable files.
  if (msg == YAML::ErrorMsg::BAD_FILE) {
    return fmt::format(
        "lists and mappings nested too deeply (the YAML reader stops at about {} levels)",
        kYamlDepthLimit);
  }
  if (msg == YAML::ErrorMsg::END_OF_MAP || msg == YAML::ErrorMsg::END_OF_SEQ) {
    return msg + " (this line's indentation does not fit the block above it)";
  }
  if (msg == YAML::ErrorMsg::END_OF_MAP_FLOW || msg == YAML::ErrorMsg::END_OF_SEQ_FLOW) {
    return msg + fmt::format(" (a '{}' opened above is not closed)",
                             msg == YAML::ErrorMsg::END_OF_MAP_FLOW ? '{' : '[');
  }
  return msg;
}

}  // namespace

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
    return MakeError(ErrorCode::kUsage, fmt::format("{}:{}: not valid YAML: {}", source,
                                                    e.mark.line + 1, Explain(e.msg)));
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kUsage, fmt::format("{}:{}: {}", source, e.mark.line + 1, e.msg));
  }
}

}  // namespace sb::yamlfile
