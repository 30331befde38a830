#include "workload/session_file.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "workload/image_url.h"

namespace sb::workload {
namespace {

using nlohmann::json;

// A per-turn list: one number for every turn, or an array with one per turn. `check` says
// whether a value is allowed (the message says what is).
template <typename T>
std::optional<std::string> PerTurn(const json& j, std::size_t turns, const char* key,
                                   const char* allowed, bool (*check)(double),
                                   std::vector<T>& out) {
  auto ok = [&](const json& v) { return v.is_number() && check(v.get<double>()); };
  if (ok(j)) {
    out.assign(turns, static_cast<T>(j.get<double>()));
    return std::nullopt;
  }
  if (!j.is_array()) {
    return std::string(key) + " must be " + allowed + " or an array of them, one per turn";
  }
  if (j.size() != turns) {
    return std::string(key) + " has " + std::to_string(j.size()) + " values but the session has " +
           std::to_string(turns) + " turns";
  }
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!ok(j[i])) {
      return std::string(key) + "[" + std::to_string(i) + "] must be " + allowed;
    }
    out.push_back(static_cast<T>(j[i].get<double>()));
  }
  return std::nullopt;
}

bool NonNegative(double v) {
  return std::isfinite(v) && v >= 0 && v <= 86'400'000;
}

bool PositiveInt(double v) {
  return std::isfinite(v) && v >= 1 && v <= 1 << 24 && v == std::floor(v);
}

std::optional<std::string> ToolResults(const json& j, ScriptedSession& s) {
  if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (!j[i].is_string()) {
        return "tool_results[" + std::to_string(i) + "] must be a string";
      }
      s.tool_results.push_back(j[i].get<std::string>());
    }
    return std::nullopt;
  }
  if (j.is_object()) {
    for (const auto& [name, v] : j.items()) {
      if (!v.is_string()) {
        return "tool_results." + name + " must be a string";
      }
      s.tool_results_by[name] = v.get<std::string>();
    }
    return std::nullopt;
  }
  return "tool_results must be an array of strings or an object of strings by tool name";
}

// One line's object -> the session, or what is wrong with it.
// "images": a list of images (file paths or data: URLs) that go with the first turn, or one list
// per turn.
std::optional<std::string> Images(const json& v, const std::string& dir, ScriptedSession& s) {
  constexpr const char* kShape =
      "images must be an array of file paths or data: URLs (sent with the first turn), or one "
      "such array per turn";
  if (!v.is_array()) {
    return kShape;
  }
  const std::size_t n = s.turns.size();
  const bool per_turn = !v.empty() && v[0].is_array();
  if (per_turn && v.size() != n) {
    return "images has " + std::to_string(v.size()) + " lists for " + std::to_string(n) +
           " turns (give one per turn, or one list for the first turn)";
  }
  s.images.assign(n, {});
  for (std::size_t t = 0; t < (per_turn ? n : 1); ++t) {
    const json& list = per_turn ? v[t] : v;
    if (!list.is_array()) {
      return kShape;
    }
    for (const json& item : list) {
      if (!item.is_string()) {
        return kShape;
      }
      auto url = ImageDataUrl(item.get<std::string>(), dir);
      if (!url) {
        return url.error().message;
      }
      s.images[t].push_back(std::move(url).value());
    }
  }
  return std::nullopt;
}

std::optional<std::string> ParseLine(const json& j, const std::string& dir, ScriptedSession& s) {
  if (!j.is_object()) {
    return "a session must be a JSON object with \"turns\"";
  }
  for (const auto& [key, v] : j.items()) {
    if (key != "turns" && key != "system" && key != "tools" && key != "tool_results" &&
        key != "think_ms" && key != "output_tokens" && key != "images") {
      return "unknown key \"" + key +
             "\" (expected turns, system, tools, tool_results, think_ms, output_tokens, images)";
    }
  }
  const auto turns = j.find("turns");
  if (turns == j.end() || !turns->is_array() || turns->empty()) {
    return "\"turns\" must be a non-empty array of user messages";
  }
  for (std::size_t i = 0; i < turns->size(); ++i) {
    if (!(*turns)[i].is_string() || (*turns)[i].get_ref<const std::string&>().empty()) {
      return "turns[" + std::to_string(i) + "] must be a non-empty string";
    }
    s.turns.push_back((*turns)[i].get<std::string>());
  }
  if (const auto it = j.find("system"); it != j.end()) {
    if (!it->is_string()) {
      return "system must be a string";
    }
    s.system = it->get<std::string>();
  }
  if (const auto it = j.find("tools"); it != j.end()) {
    if (!it->is_array() || it->empty()) {
      return "tools must be a non-empty array of OpenAI tool definitions";
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& t = (*it)[i];
      if (!t.is_object() || !t.contains("function") || !t["function"].is_object() ||
          !t["function"].contains("name") || !t["function"]["name"].is_string()) {
        return "tools[" + std::to_string(i) +
               "] must be {\"type\": \"function\", \"function\": {\"name\": ...}}";
      }
    }
    s.tools_json = it->dump();
  }
  if (const auto it = j.find("tool_results"); it != j.end()) {
    if (auto err = ToolResults(*it, s)) {
      return err;
    }
  }
  const std::size_t n = s.turns.size();
  if (const auto it = j.find("think_ms"); it != j.end()) {
    if (auto err =
            PerTurn(*it, n, "think_ms", "a number of milliseconds >= 0", NonNegative, s.think_ms)) {
      return err;
    }
  }
  if (const auto it = j.find("output_tokens"); it != j.end()) {
    if (auto err =
            PerTurn(*it, n, "output_tokens", "a whole number >= 1", PositiveInt, s.output_tokens)) {
      return err;
    }
  }
  if (const auto it = j.find("images"); it != j.end()) {
    if (auto err = Images(*it, dir, s)) {
      return err;
    }
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<ScriptedSession>> ParseSessionFile(std::string_view text,
                                                      const std::string& name,
                                                      const std::string& dir) {
  std::vector<ScriptedSession> out;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') {
      continue;
    }
    auto fail = [&](const std::string& what) {
      return Error{ErrorCode::kUsage, name + ":" + std::to_string(line_no) + ": " + what};
    };
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      return fail("not valid JSON");
    }
    ScriptedSession s;
    s.line = line_no;
    if (auto err = ParseLine(j, dir, s)) {
      return fail(*err);
    }
    out.push_back(std::move(s));
  }
  if (out.empty()) {
    return Error{ErrorCode::kUsage, name + ": the session file holds no sessions"};
  }
  return out;
}

Result<std::vector<ScriptedSession>> ReadSessionFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{ErrorCode::kSetup, path + ": cannot read the session file"};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return ParseSessionFile(ss.str(), path, dir.empty() ? "." : dir);
}

}  // namespace sb::workload
