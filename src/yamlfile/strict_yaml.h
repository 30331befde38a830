// Strict YAML reading for servebench's input files (suite files, server recipes): every error
// names the line, and unknown or repeated keys are errors rather than silently ignored. The
// loaders throw LoadError from deep inside their parse; LoadStrict turns it (and yaml-cpp's own
// errors) into one kUsage Error, "SOURCE:LINE: problem". yaml-cpp stays out of this header.
// Thread safety: pure functions.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace sb::yamlfile {

// Thrown by a loader's parse function; caught by LoadStrict only.
struct LoadError {
  int line = 0;  // 1-based; 0 = the file as a whole
  std::string message;
};

// 1-based line of a node (0 when yaml-cpp has no mark for it).
int LineOf(const YAML::Node& node);

[[noreturn]] void Throw(const YAML::Node& at, std::string message);
[[noreturn]] void ThrowAt(int line, std::string message);

// Every key of `map` must be in `allowed`, once: "WHERE: unknown key 'x' (known: a, b)",
// "WHERE: key 'x' appears twice", "WHERE: keys must be plain names".
void CheckKeys(const YAML::Node& map, const std::vector<std::string>& allowed,
               const std::string& where);

// The scalar's text; "WHAT must be a string" otherwise.
std::string String(const YAML::Node& node, const std::string& what);

// Parses `text` and calls parse(root). A LoadError or a yaml-cpp error (a syntax error) becomes
// kUsage "SOURCE:LINE: message" ("SOURCE: message" without a line).
Result<void> LoadStrict(std::string_view text, std::string_view source,
                        const std::function<void(const YAML::Node& root)>& parse);

}  // namespace sb::yamlfile
