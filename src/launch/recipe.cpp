// Recipes: validation, "{port}"/"{host}" substitution and the YAML recipe-file loader.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "launch/launch.h"
#include "yamlfile/strict_yaml.h"

namespace sb::launch {

namespace {

constexpr std::string_view kPortToken = "{port}";

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 100 || name == "." || name == "..") {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

bool ValidEnvName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool MentionsPort(const Recipe& r) {
  if (r.command.find(kPortToken) != std::string::npos) {
    return true;
  }
  for (const auto& a : r.argv) {
    if (a.find(kPortToken) != std::string::npos) {
      return true;
    }
  }
  for (const auto& [k, v] : r.env) {
    if (v.find(kPortToken) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// Splits a command line into words the way a shell would for the simple cases (blanks, single
// and double quotes, backslash). Only used to find `--port N`.
std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < s.size()) {
        cur += s[++i];
      } else {
        cur += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < s.size()) {
      cur += s[++i];
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c)) || c == ';' || c == '&' || c == '|') {
      if (in_word) {
        words.push_back(std::move(cur));
        cur.clear();
        in_word = false;
      }
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) {
    words.push_back(std::move(cur));
  }
  return words;
}

// The N of the first `--port N` / `--port=N`, or 0.
int PortFromWords(const std::vector<std::string>& words) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string value;
    if (words[i] == "--port" && i + 1 < words.size()) {
      value = words[i + 1];
    } else if (words[i].starts_with("--port=")) {
      value = words[i].substr(7);
    } else {
      continue;
    }
    if (value.empty() || value.size() > 5 ||
        !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return 0;
    }
    const int port = std::stoi(value);
    return port >= 1 && port <= 65535 ? port : 0;
  }
  return 0;
}

// Port 0 and no "{port}" anywhere: take the port from `--port N` if the command says it.
void InferPort(Recipe& r) {
  if (r.port != 0 || MentionsPort(r)) {
    return;
  }
  r.port = PortFromWords(r.command.empty() ? r.argv : Words(r.command));
}

// ---- YAML ------------------------------------------------------------------------------------

using yamlfile::CheckKeys;
using yamlfile::LineOf;
using yamlfile::String;
using yamlfile::Throw;
using yamlfile::ThrowAt;

const std::vector<std::string> kRecipeKeys = {"name",
                                              "command",
                                              "argv",
                                              "env",
                                              "host",
                                              "port",
                                              "endpoint",
                                              "ready_path",
                                              "cwd",
                                              "ready_timeout_s",
                                              "poll_interval_s",
                                              "stop_timeout_s"};

// The keys a defaults block may set (everything but what names and runs one recipe).
const std::vector<std::string> kDefaultKeys = {"env",
                                               "host",
                                               "port",
                                               "endpoint",
                                               "ready_path",
                                               "cwd",
                                               "ready_timeout_s",
                                               "poll_interval_s",
                                               "stop_timeout_s"};

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int Port(const YAML::Node& n, const std::string& what) {
  if (!n.IsScalar() || !AllDigits(n.Scalar()) || n.Scalar().size() > 5) {
    Throw(n, what + " must be an integer between 0 and 65535");
  }
  const int port = std::stoi(n.Scalar());
  if (port > 65535) {
    Throw(n, fmt::format("{} must be between 0 and 65535 (got {})", what, port));
  }
  return port;
}

double Seconds(const YAML::Node& n, const std::string& what, double min, double max) {
  double v = 0;
  bool ok = false;
  if (n.IsScalar() && !n.Scalar().empty()) {
    const std::string& s = n.Scalar();
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    ok = end == s.c_str() + s.size() && std::isfinite(v) &&
         s.find_first_of("0123456789") != std::string::npos &&
         s.find_first_of("xX") == std::string::npos;
  }
  if (!ok) {
    Throw(n, what + " must be a number of seconds");
  }
  if (v < min || v > max) {
    Throw(n, fmt::format("{} must be between {:g} and {:g} (got {})", what, min, max, n.Scalar()));
  }
  return v;
}

// Reads the keys present in `map` into r (defaults or one recipe). env entries are merged: a
// name given again replaces the earlier value.
void ReadFields(const YAML::Node& map, const std::string& where, Recipe& r) {
  if (const YAML::Node n = map["name"]) {
    r.name = String(n, where + ": name");
    if (!ValidName(r.name)) {
      Throw(n,
            fmt::format("{}: name '{}' must be letters, digits, '.', '_' or '-'", where, r.name));
    }
  }
  if (const YAML::Node n = map["command"]) {
    r.command = String(n, where + ": command");
    if (r.command.find_first_not_of(" \t\n") == std::string::npos) {
      Throw(n, where + ": command is empty");
    }
  }
  if (const YAML::Node n = map["argv"]) {
    if (!n.IsSequence() || n.size() == 0) {
      Throw(n, where + ": argv must be a non-empty list of strings");
    }
    for (const auto& item : n) {
      r.argv.push_back(String(item, where + ": each argv item"));
    }
    if (r.argv[0].empty()) {
      Throw(n, where + ": argv[0] is empty");
    }
  }
  if (const YAML::Node n = map["env"]) {
    if (!n.IsMap()) {
      Throw(n, where + ": env must be a mapping NAME: value");
    }
    for (auto it = n.begin(); it != n.end(); ++it) {
      if (!it->first.IsScalar() || !ValidEnvName(it->first.Scalar())) {
        Throw(it->first, where + ": env names must be letters, digits and '_'");
      }
      const std::string key = it->first.Scalar();
      if (!it->second.IsScalar()) {
        Throw(it->first, fmt::format("{}: env {} must have a string value (write \"\" for an "
                                     "empty one)",
                                     where, key));
      }
      const std::string value = it->second.Scalar();
      auto same =
          std::find_if(r.env.begin(), r.env.end(), [&](const auto& kv) { return kv.first == key; });
      if (same != r.env.end()) {
        same->second = value;
      } else {
        r.env.emplace_back(key, value);
      }
    }
  }
  if (const YAML::Node n = map["host"]) {
    r.host = String(n, where + ": host");
    if (r.host.empty()) {
      Throw(n, where + ": host is empty");
    }
  }
  if (const YAML::Node n = map["port"]) {
    r.port = Port(n, where + ": port");
  }
  if (const YAML::Node n = map["endpoint"]) {
    r.endpoint = String(n, where + ": endpoint");
    if (!r.endpoint.starts_with("http://") && !r.endpoint.starts_with("https://")) {
      Throw(n, where + ": endpoint must start with http:// or https://");
    }
  }
  if (const YAML::Node n = map["ready_path"]) {
    r.ready_path = String(n, where + ": ready_path");
    if (!r.ready_path.starts_with("/")) {
      Throw(n, where + ": ready_path must start with '/'");
    }
  }
  if (const YAML::Node n = map["cwd"]) {
    r.cwd = String(n, where + ": cwd");
  }
  if (const YAML::Node n = map["ready_timeout_s"]) {
    r.ready_timeout_s = Seconds(n, where + ": ready_timeout_s", 0.1, 86400);
  }
  if (const YAML::Node n = map["poll_interval_s"]) {
    r.poll_interval_s = Seconds(n, where + ": poll_interval_s", 0.01, 60);
  }
  if (const YAML::Node n = map["stop_timeout_s"]) {
    r.stop_timeout_s = Seconds(n, where + ": stop_timeout_s", 0, 3600);
  }
}

// Completes and checks one recipe read at `at`.
Recipe Finish(Recipe r, const YAML::Node& at, const std::string& where) {
  if (r.command.empty() && r.argv.empty()) {
    Throw(at, where + ": needs a command (or an argv)");
  }
  if (!r.command.empty() && !r.argv.empty()) {
    Throw(at, where + ": give command or argv, not both");
  }
  InferPort(r);
  if (auto ok = ValidateRecipe(r); !ok) {
    Throw(at, where + ": " + ok.error().message);
  }
  return r;
}

std::vector<Recipe> Load(const YAML::Node& root, const std::string& default_name) {
  if (!root.IsDefined() || root.IsNull()) {
    ThrowAt(1, "the file is empty (expected a recipe or {defaults, recipes})");
  }
  if (!root.IsMap()) {
    Throw(root, "expected a recipe mapping (command: ...) or {defaults: ..., recipes: [...]}");
  }
  if (!root["recipes"] && !root["defaults"]) {
    CheckKeys(root, kRecipeKeys, "recipe");
    Recipe r;
    r.name = default_name;
    ReadFields(root, "recipe", r);
    const std::string where = fmt::format("recipe '{}'", r.name);
    return {Finish(std::move(r), root, where)};
  }
  CheckKeys(root, {"defaults", "recipes"}, "matrix");
  Recipe defaults;
  if (const YAML::Node d = root["defaults"]) {
    if (!d.IsMap()) {
      Throw(d, "defaults must be a mapping");
    }
    CheckKeys(d, kDefaultKeys, "defaults");
    ReadFields(d, "defaults", defaults);
  }
  const YAML::Node list = root["recipes"];
  if (!list) {
    Throw(root, "matrix: 'recipes' (a list of recipes) is missing");
  }
  if (!list.IsSequence() || list.size() == 0) {
    Throw(list, "recipes must be a non-empty list of recipes");
  }
  std::vector<Recipe> out;
  std::map<std::string, int> lines;  // name -> line it was first given
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string where = fmt::format("recipe {}", i + 1);
    if (!item.IsMap()) {
      Throw(item, where + " must be a mapping");
    }
    CheckKeys(item, kRecipeKeys, where);
    if (!item["name"]) {
      Throw(item, where + " has no name");
    }
    Recipe r = defaults;
    ReadFields(item, where, r);
    const int line = LineOf(item["name"]);
    if (auto [it, fresh] = lines.emplace(r.name, line); !fresh) {
      ThrowAt(line,
              fmt::format("recipe name '{}' appears twice (first at line {})", r.name, it->second));
    }
    const std::string named = fmt::format("recipe '{}'", r.name);
    out.push_back(Finish(std::move(r), item, named));
  }
  return out;
}

Result<std::vector<Recipe>> Parse(std::string_view yaml, std::string_view source,
                                  const std::string& default_name) {
  std::vector<Recipe> recipes;
  auto ok = yamlfile::LoadStrict(
      yaml, source, [&](const YAML::Node& root) { recipes = Load(root, default_name); });
  if (!ok) {
    return ok.error();
  }
  return recipes;
}

}  // namespace

std::string Substitute(std::string_view text, std::string_view host, int port) {
  const std::string port_text = std::to_string(port);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (text.substr(i).starts_with(kPortToken)) {
      out += port_text;
      i += kPortToken.size();
    } else if (text.substr(i).starts_with("{host}")) {
      out += host;
      i += 6;
    } else {
      out += text[i++];
    }
  }
  return out;
}

Result<void> ValidateRecipe(const Recipe& r) {
  auto fail = [](std::string message) { return MakeError(ErrorCode::kUsage, std::move(message)); };
  if (!ValidName(r.name)) {
    return fail(fmt::format("name '{}' must be letters, digits, '.', '_' or '-'", r.name));
  }
  if (r.command.empty() == r.argv.empty()) {
    return fail(r.command.empty() ? "needs a command (or an argv)"
                                  : "give command or argv, not both");
  }
  if (!r.argv.empty() && r.argv[0].empty()) {
    return fail("argv[0] is empty");
  }
  for (const auto& [k, v] : r.env) {
    if (!ValidEnvName(k)) {
      return fail(fmt::format("env name '{}' must be letters, digits and '_'", k));
    }
  }
  if (r.host.empty()) {
    return fail("host is empty");
  }
  if (r.port < 0 || r.port > 65535) {
    return fail(fmt::format("port {} is out of range", r.port));
  }
  if (!r.endpoint.empty() && !r.endpoint.starts_with("http://") &&
      !r.endpoint.starts_with("https://")) {
    return fail("endpoint must start with http:// or https://");
  }
  if (!r.ready_path.empty() && !r.ready_path.starts_with("/")) {
    return fail("ready_path must start with '/'");
  }
  if (!(r.ready_timeout_s > 0) || !(r.poll_interval_s > 0) || !(r.stop_timeout_s >= 0) ||
      !std::isfinite(r.ready_timeout_s) || !std::isfinite(r.poll_interval_s) ||
      !std::isfinite(r.stop_timeout_s)) {
    return fail("ready_timeout_s and poll_interval_s must be > 0, stop_timeout_s >= 0 (finite)");
  }
  // Port 0 means "choose one": the server has to be told which, unless it is polled at an
  // endpoint that does not depend on the port.
  const bool endpoint_fixed =
      !r.endpoint.empty() && r.endpoint.find(kPortToken) == std::string::npos;
  if (r.port == 0 && !MentionsPort(r) && !endpoint_fixed) {
    return fail(
        "port is 0 (choose a free one) but nothing tells the server: write {port} where the "
        "server takes its port (e.g. --port {port}), or set port");
  }
  return {};
}

double NextPollPause(double previous_s, double max_s) {
  const double next = previous_s > 0 ? previous_s * 2 : kFirstPollS;
  return std::max(0.001, std::min(next, max_s));
}

Recipe RecipeFromCommand(std::string command) {
  Recipe r;
  r.name = "serve";
  r.command = std::move(command);
  InferPort(r);
  return r;
}

Result<std::vector<Recipe>> ParseRecipes(std::string_view yaml, std::string_view source) {
  return Parse(yaml, source, "serve");
}

Result<std::vector<Recipe>> LoadRecipes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return MakeError(ErrorCode::kSetup, fmt::format("cannot read recipe file {}", file.string()));
  }
  std::ostringstream text;
  text << in.rdbuf();
  const std::string stem = file.stem().string();
  auto recipes = Parse(text.str(), file.string(), ValidName(stem) ? stem : "serve");
  if (!recipes) {
    return recipes;
  }
  for (Recipe& r : recipes.value()) {
    if (!r.cwd.empty() && std::filesystem::path(r.cwd).is_relative()) {
      r.cwd = (file.parent_path() / r.cwd).lexically_normal().string();
    }
  }
  return recipes;
}

}  // namespace sb::launch
