#include "suite/suite.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/profile_table.h"
#include "suite/checkers.h"
#include "suite/suite_values.h"
#include "yamlfile/strict_yaml.h"

namespace sb::suite {

namespace {

using namespace detail;  // NOLINT(build/namespaces): this module's private helpers
using nlohmann::json;

using yamlfile::CheckKeys;
using yamlfile::LineOf;
using yamlfile::String;
using yamlfile::Throw;

// ---- The suite file --------------------------------------------------------------------------

const std::vector<std::string> kTopKeys = {"suite", "description", "defaults", "tests"};
const std::vector<std::string> kDefaultKeys = {"max_tokens", "temperature", "thinking",
                                               "timeout_s",  "system",      "loop"};
const std::vector<std::string> kTestKeys = {"id",          "name",
                                            "category",    "section",
                                            "description", "prompt",
                                            "system",      "messages",
                                            "image",       "images",
                                            "video",       "videos",
                                            "audio",       "audios",
                                            "max_tokens",  "temperature",
                                            "thinking",    "timeout_s",
                                            "tools",       "tool_choice",
                                            "check",       "reference_answer",
                                            "bad_answers", "loop",
                                            "profile",     "levels",
                                            "lengths",     "sizes",
                                            "runs",        "tokens",
                                            "depth",       "context_max_tokens"};
const std::vector<std::string> kMessageKeys = {"role",  "text",   "image", "images",
                                               "video", "videos", "audio", "audios"};
const std::vector<std::string> kProfileArgKeys = {
    "levels", "lengths", "sizes", "runs", "tokens", "depth", "context_max_tokens"};

struct Defaults {
  int max_tokens = 4096;
  std::optional<double> temperature;
  std::optional<bool> thinking;
  double timeout_s = 300;
  std::string system;
  int loop_span = 20;
  int loop_repeats = 10;
};

class Loader {
 public:
  Loader(std::string_view source, std::filesystem::path base_dir)
      : source_(source), base_dir_(std::move(base_dir)) {}

  Suite Load(const YAML::Node& root) {
    if (!root.IsMap()) {
      Throw(root, "a suite file is a mapping with the keys suite, description, defaults, tests");
    }
    CheckKeys(root, kTopKeys, "suite");
    Suite suite;
    suite.source = std::string(source_);
    if (!root["suite"]) {
      Throw(root, "missing key 'suite' (the suite's name)");
    }
    suite.name = String(root["suite"], "suite");
    if (root["description"]) {
      suite.description = String(root["description"], "description");
    }
    if (root["defaults"]) {
      ReadDefaults(root["defaults"]);
    }
    const YAML::Node tests = root["tests"];
    if (!tests || !tests.IsSequence() || tests.size() == 0) {
      Throw(tests ? tests : root, "'tests' must be a non-empty list of tests");
    }
    std::set<std::string> ids;
    for (const auto& t : tests) {
      TestSpec spec = ReadTest(t);
      if (!ids.insert(spec.id).second) {
        Throw(t, fmt::format("test id '{}' appears twice", spec.id));
      }
      suite.tests.push_back(std::move(spec));
    }
    return suite;
  }

 private:
  void ReadDefaults(const YAML::Node& d) {
    if (!d.IsMap()) {
      Throw(d, "defaults must be a mapping");
    }
    CheckKeys(d, kDefaultKeys, "defaults");
    if (d["max_tokens"]) {
      defaults_.max_tokens = static_cast<int>(Integer(d["max_tokens"], "max_tokens", 1, 1 << 24));
    }
    if (d["temperature"]) {
      defaults_.temperature = Number(d["temperature"], "temperature", 0, 10);
    }
    if (d["thinking"]) {
      defaults_.thinking = OnOff(d["thinking"], "thinking");
    }
    if (d["timeout_s"]) {
      defaults_.timeout_s = Number(d["timeout_s"], "timeout_s", 0.001, 1e6);
    }
    if (d["system"]) {
      defaults_.system = String(d["system"], "system");
    }
    if (d["loop"]) {
      ReadLoop(d["loop"], defaults_.loop_span, defaults_.loop_repeats);
    }
  }

  static void ReadLoop(const YAML::Node& n, int& span, int& repeats) {
    if (n.IsScalar()) {
      if (!OnOff(n, "loop")) {
        repeats = 0;
      }
      return;
    }
    if (!n.IsMap()) {
      Throw(n, "loop must be off or a mapping {span, repeats}");
    }
    CheckKeys(n, {"span", "repeats"}, "loop");
    if (n["span"]) {
      span = static_cast<int>(Integer(n["span"], "loop.span", 4, 10000));
    }
    if (n["repeats"]) {
      repeats = static_cast<int>(Integer(n["repeats"], "loop.repeats", 0, 100000));
      if (repeats == 1) {
        Throw(n["repeats"], "loop.repeats must be 0 (off) or at least 2");
      }
    }
  }

  void ReadMedia(const YAML::Node& holder, const std::string& where, std::vector<MediaRef>& out) {
    struct Key {
      const char* single;
      const char* plural;
      media::Kind kind;
    };

    for (const Key& k :
         {Key{"image", "images", media::Kind::kImage}, Key{"video", "videos", media::Kind::kVideo},
          Key{"audio", "audios", media::Kind::kAudio}}) {
      std::vector<YAML::Node> items;
      if (holder[k.single]) {
        items.push_back(holder[k.single]);
      }
      if (holder[k.plural]) {
        const YAML::Node list = holder[k.plural];
        if (!list.IsSequence()) {
          Throw(list, fmt::format("{}: '{}' must be a list", where, k.plural));
        }
        for (const auto& item : list) {
          items.push_back(item);
        }
      }
      for (const YAML::Node& item : items) {
        const std::string name = String(item, where + ": a media name");
        MediaRef ref;
        ref.kind = k.kind;
        if (media::IsCatalogueName(name)) {
          ref.name = name;
        } else {
          std::filesystem::path p(name);
          if (p.is_relative()) {
            p = base_dir_ / p;
          }
          std::error_code ec;
          if (!std::filesystem::is_regular_file(p, ec)) {
            std::vector<std::string> names;
            for (const auto& n : media::CatalogueNames()) {
              if (n.rfind("probe_", 0) != 0) {
                names.push_back(n);
              }
            }
            Throw(item, fmt::format("{}: '{}' is neither a catalogue asset ({}) nor a file", where,
                                    name, Join(names)));
          }
          auto asset = media::LoadFile(p);
          if (!asset) {
            Throw(item, where + ": " + asset.error().message);
          }
          if (asset->kind != k.kind) {
            Throw(item, fmt::format("{}: '{}' is not {} file", where, name,
                                    k.kind == media::Kind::kAudio
                                        ? "an audio"
                                        : "a " + std::string(media::KindName(k.kind))));
          }
          ref.name = p.string();
          ref.is_file = true;
        }
        out.push_back(std::move(ref));
      }
    }
  }

  MessageSpec ReadMessage(const YAML::Node& m, const std::string& where) {
    if (!m.IsMap()) {
      Throw(m, where + ": a message is a mapping {role, text, image ...}");
    }
    CheckKeys(m, kMessageKeys, where);
    MessageSpec msg;
    if (!m["role"]) {
      Throw(m, where + ": missing key 'role'");
    }
    msg.role = String(m["role"], where + ": role");
    if (msg.role != "system" && msg.role != "user" && msg.role != "assistant") {
      Throw(m["role"], where + ": role must be system, user or assistant");
    }
    if (m["text"]) {
      msg.text = String(m["text"], where + ": text");
    }
    ReadMedia(m, where, msg.media);
    if (msg.text.empty() && msg.media.empty()) {
      Throw(m, where + ": a message needs text or media");
    }
    return msg;
  }

  AnswerSpec ReadAnswer(const YAML::Node& n, const std::string& where) {
    AnswerSpec a;
    if (n.IsScalar()) {
      a.text = n.Scalar();
    } else if (n.IsMap()) {
      CheckKeys(n, {"text", "reasoning", "tool_calls"}, where);
      if (n["text"]) {
        a.text = String(n["text"], where + ": text");
      }
      if (n["reasoning"]) {
        a.reasoning = String(n["reasoning"], where + ": reasoning");
      }
      if (n["tool_calls"]) {
        const YAML::Node calls = n["tool_calls"];
        if (!calls.IsSequence()) {
          Throw(calls, where + ": tool_calls must be a list");
        }
        int index = 0;
        for (const auto& c : calls) {
          const std::string cw = fmt::format("{}: tool_calls[{}]", where, index);
          if (!c.IsMap()) {
            Throw(c, cw + " must be a mapping {name, arguments}");
          }
          CheckKeys(c, {"name", "arguments"}, cw);
          client::ToolCall call;
          call.id = fmt::format("call_{}", index++);
          if (!c["name"]) {
            Throw(c, cw + ": missing key 'name'");
          }
          call.name = String(c["name"], cw + ": name");
          json args = json::object();
          if (c["arguments"]) {
            if (c["arguments"].IsScalar()) {
              args = json::parse(c["arguments"].Scalar(), nullptr, false);
              if (args.is_discarded()) {
                Throw(c["arguments"], cw + ": arguments is not valid JSON");
              }
            } else {
              args = ToJson(c["arguments"]);
            }
          }
          call.arguments = args.dump();
          a.tool_calls.push_back(std::move(call));
        }
      }
    } else {
      Throw(n, where + " must be text or a mapping {text, reasoning, tool_calls}");
    }
    auto text = Substitute(a.text, truths_);
    if (!text) {
      Throw(n, where + ": " + text.error().message);
    }
    a.text = *text;
    return a;
  }

  Check ReadCheck(const YAML::Node& n, const std::string& where) {
    // A list is all_of.
    if (n.IsSequence()) {
      Check all;
      all.type = "all_of";
      all.line = LineOf(n);
      for (const auto& item : n) {
        all.children.push_back(ReadCheck(item, where));
      }
      if (all.children.empty()) {
        Throw(n, where + ": an empty list of checks");
      }
      return all;
    }
    if (!n.IsMap() || n.size() != 1) {
      Throw(n, where + fmt::format(": a check is a mapping with one checker name ({}), or a list "
                                   "of them",
                                   Join(CheckerTypes())));
    }
    const auto it = n.begin();
    Check c;
    c.type = it->first.Scalar();
    c.line = LineOf(it->first);
    const auto& types = CheckerTypes();
    if (std::find(types.begin(), types.end(), c.type) == types.end()) {
      Throw(it->first,
            fmt::format("{}: unknown checker '{}' (known: {})", where, c.type, Join(types)));
    }
    const YAML::Node arg = it->second;
    if (c.type == "all_of" || c.type == "any_of") {
      if (!arg.IsSequence() || arg.size() == 0) {
        Throw(arg, fmt::format("{}: {} takes a non-empty list of checks", where, c.type));
      }
      for (const auto& item : arg) {
        c.children.push_back(ReadCheck(item, where));
      }
      return c;
    }
    if (c.type == "not") {
      c.children.push_back(ReadCheck(arg, where));
      return c;
    }
    json args = ToJson(arg);
    if (!args.is_object()) {
      args = Shorthand(c.type, args, arg, where);
    }
    if (auto ok = ResolveJson(args, truths_); !ok) {
      Throw(arg, where + ": " + ok.error().message);
    }
    c.args_json = args.dump();
    if (auto ok = ValidateCheck(c); !ok) {
      Throw(arg, fmt::format("{}: {}", where, ok.error().message));
    }
    return c;
  }

  // "contains: Canberra", "number: 56", "exact: '42'", "regex: ^\d+$", "choice: B",
  // "tool_call: none".
  static json Shorthand(const std::string& type, const json& value, const YAML::Node& at,
                        const std::string& where) {
    if (type == "contains") {
      return json{{"any", value.is_array() ? value : json::array({value})}};
    }
    if (type == "exact" || type == "number" || type == "choice") {
      return json{{"expect", value}};
    }
    if (type == "regex") {
      return json{{"pattern", value}};
    }
    if (type == "tool_call" && value == "none") {
      return json{{"none", true}};
    }
    Throw(at, fmt::format("{}: {} takes a mapping of arguments", where, type));
  }

  TestSpec ReadTest(const YAML::Node& t) {
    if (!t.IsMap()) {
      Throw(t, "each test is a mapping (id, category, prompt, check ...)");
    }
    std::string where = "test";
    if (t["id"] && t["id"].IsScalar()) {
      where = fmt::format("test '{}'", t["id"].Scalar());
    }
    CheckKeys(t, kTestKeys, where);
    TestSpec spec;
    spec.line = LineOf(t);
    if (!t["id"]) {
      Throw(t, "test: missing key 'id'");
    }
    spec.id = String(t["id"], "id");
    if (spec.id.empty() || !std::all_of(spec.id.begin(), spec.id.end(), [](char ch) {
          return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
                 ch == '-';
        })) {
      Throw(t["id"], fmt::format("{}: an id uses only a-z, 0-9, '_', '.' and '-'", where));
    }
    if (t["name"]) {
      spec.name = String(t["name"], where + ": name");
    }
    if (!t["category"]) {
      Throw(t, where + ": missing key 'category'");
    }
    spec.category = String(t["category"], where + ": category");
    if (t["section"]) {
      spec.section = String(t["section"], where + ": section");
    }
    spec.max_tokens = defaults_.max_tokens;
    spec.temperature = defaults_.temperature;
    spec.thinking = defaults_.thinking;
    spec.timeout_s = defaults_.timeout_s;
    spec.loop_span = defaults_.loop_span;
    spec.loop_repeats = defaults_.loop_repeats;

    if (t["profile"]) {
      ReadProfileTest(t, where, spec);
      return spec;
    }
    for (const std::string& key : kProfileArgKeys) {
      if (t[key]) {
        Throw(t[key], fmt::format("{}: '{}' belongs to speed-profile tests only", where, key));
      }
    }

    const bool has_prompt = static_cast<bool>(t["prompt"]);
    const bool has_messages = static_cast<bool>(t["messages"]);
    if (has_prompt == has_messages) {
      Throw(t, where + ": give either 'prompt' (with optional system and media) or 'messages'");
    }
    if (has_prompt) {
      const std::string system =
          t["system"] ? String(t["system"], where + ": system") : defaults_.system;
      if (!system.empty()) {
        spec.messages.push_back({"system", system, {}});
      }
      MessageSpec user;
      user.role = "user";
      user.text = String(t["prompt"], where + ": prompt");
      ReadMedia(t, where, user.media);
      spec.messages.push_back(std::move(user));
    } else {
      for (const char* key : {"image", "images", "video", "videos", "audio", "audios", "system"}) {
        if (t[key]) {
          Throw(t[key],
                fmt::format("{}: '{}' goes inside a message when 'messages' is used", where, key));
        }
      }
      const YAML::Node msgs = t["messages"];
      if (!msgs.IsSequence() || msgs.size() == 0) {
        Throw(msgs, where + ": messages must be a non-empty list");
      }
      int i = 0;
      for (const auto& m : msgs) {
        spec.messages.push_back(ReadMessage(m, fmt::format("{}: messages[{}]", where, i++)));
      }
    }
    if (t["max_tokens"]) {
      spec.max_tokens =
          static_cast<int>(Integer(t["max_tokens"], where + ": max_tokens", 1, 1 << 24));
    }
    if (t["temperature"]) {
      spec.temperature = Number(t["temperature"], where + ": temperature", 0, 10);
    }
    if (t["thinking"]) {
      spec.thinking = OnOff(t["thinking"], where + ": thinking");
    }
    if (t["timeout_s"]) {
      spec.timeout_s = Number(t["timeout_s"], where + ": timeout_s", 0.001, 1e6);
      spec.own_timeout = true;
    }
    if (t["loop"]) {
      ReadLoop(t["loop"], spec.loop_span, spec.loop_repeats);
    }
    if (t["tools"]) {
      spec.tools_json = ReadTools(t["tools"], where);
    }
    if (t["tool_choice"]) {
      const YAML::Node tc = t["tool_choice"];
      spec.tool_choice_json = tc.IsScalar() ? json(tc.Scalar()).dump() : ToJson(tc).dump();
    }
    if (!t["check"]) {
      Throw(t, where + ": missing key 'check'");
    }
    spec.check = ReadCheck(t["check"], where);
    if (t["reference_answer"]) {
      spec.reference_answer = ReadAnswer(t["reference_answer"], where + ": reference_answer");
    }
    if (t["bad_answers"]) {
      const YAML::Node bad = t["bad_answers"];
      if (!bad.IsSequence()) {
        Throw(bad, where + ": bad_answers must be a list");
      }
      int i = 0;
      for (const auto& b : bad) {
        spec.bad_answers.push_back(ReadAnswer(b, fmt::format("{}: bad_answers[{}]", where, i++)));
      }
    }
    return spec;
  }

  static std::string ReadTools(const YAML::Node& tools, const std::string& where) {
    if (!tools.IsSequence() || tools.size() == 0) {
      Throw(tools, where + ": tools must be a non-empty list of tool definitions");
    }
    json out = json::array();
    for (const auto& tool : tools) {
      if (!tool.IsMap()) {
        Throw(tool, where + ": a tool is a mapping");
      }
      json t = ToJson(tool);
      // Shorthand: {name, description, parameters} -> {type: function, function: {...}}.
      if (!t.contains("type")) {
        if (!t.contains("name")) {
          Throw(tool, where + ": a tool needs 'name' (or the OpenAI form {type, function})");
        }
        t = json{{"type", "function"}, {"function", t}};
      }
      if (t["type"] != "function" || !t.contains("function") || !t["function"].is_object() ||
          !t["function"].contains("name")) {
        Throw(tool, where + ": a tool must be {type: function, function: {name, ...}}");
      }
      out.push_back(std::move(t));
    }
    return out.dump();
  }

  void ReadProfileTest(const YAML::Node& t, const std::string& where, TestSpec& spec) {
    spec.profile = String(t["profile"], where + ": profile");
    const ProfileSpec* known = FindProfile(spec.profile);
    if (known == nullptr || !known->in_suites || known->name != spec.profile) {
      Throw(t["profile"], fmt::format("{}: unknown profile '{}' (known: {})", where, spec.profile,
                                      ProfileNameList(/*suites_only=*/true)));
    }
    for (const char* key : {"prompt", "messages", "check", "reference_answer", "bad_answers",
                            "tools", "tool_choice", "image", "images", "video", "videos", "audio",
                            "audios", "system", "loop", "max_tokens", "timeout_s"}) {
      if (t[key]) {
        Throw(t[key], fmt::format("{}: '{}' does not apply to a speed-profile test", where, key));
      }
    }
    json args = json::object();
    auto int_list = [&](const char* key) {
      const YAML::Node n = t[key];
      if (!n) {
        return;
      }
      if (!n.IsSequence() || n.size() == 0) {
        Throw(n, fmt::format("{}: {} must be a non-empty list of positive integers", where, key));
      }
      json list = json::array();
      for (const auto& item : n) {
        list.push_back(Integer(item, fmt::format("{}: {}", where, key), 1, 1 << 24));
      }
      args[key] = list;
    };
    int_list("levels");
    int_list("lengths");
    int_list("sizes");
    if (t["runs"]) {
      args["runs"] = Integer(t["runs"], where + ": runs", 1, 1000);
    }
    if (t["tokens"]) {
      args["tokens"] = Integer(t["tokens"], where + ": tokens", 2, 1 << 20);
    }
    if (t["depth"]) {
      args["depth"] = Number(t["depth"], where + ": depth", 0, 1);
    }
    if (t["context_max_tokens"]) {
      args["context_max_tokens"] =
          Integer(t["context_max_tokens"], where + ": context_max_tokens", 1, 1 << 16);
    }
    if (t["thinking"]) {
      spec.thinking = OnOff(t["thinking"], where + ": thinking");
    }
    if (t["temperature"]) {
      spec.temperature = Number(t["temperature"], where + ": temperature", 0, 10);
    }
    spec.profile_args_json = args.dump();
  }

  std::string_view source_;
  std::filesystem::path base_dir_;
  Defaults defaults_;
  Truths truths_;
};

}  // namespace

std::vector<std::string> TestSpec::Modalities() const {
  std::vector<std::string> out;
  for (const MessageSpec& m : messages) {
    for (const MediaRef& r : m.media) {
      std::string k(media::KindName(r.kind));
      if (std::find(out.begin(), out.end(), k) == out.end()) {
        out.push_back(k);
      }
    }
  }
  return out;
}

Result<Suite> ParseSuite(std::string_view yaml, std::string_view source,
                         const std::filesystem::path& base_dir) {
  Suite suite;
  auto ok = yamlfile::LoadStrict(yaml, source, [&](const YAML::Node& root) {
    Loader loader(source, base_dir);
    suite = loader.Load(root);
  });
  if (!ok) {
    return ok.error();
  }
  return suite;
}

Result<Suite> LoadSuiteFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return MakeError(ErrorCode::kSetup, fmt::format("cannot read suite file '{}'", path.string()));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseSuite(ss.str(), path.string(), path.parent_path());
}

Result<Suite> LoadSuite(std::string_view name_or_path) {
  for (const BuiltinSuite& b : BuiltinSuites()) {
    if (b.name == name_or_path) {
      auto suite = ParseSuite(b.yaml, fmt::format("{}.yaml (built-in)", b.name), ".");
      if (suite) {
        suite->source = "built-in";
      }
      return suite;
    }
  }
  std::error_code ec;
  if (std::filesystem::is_regular_file(std::filesystem::path(name_or_path), ec)) {
    return LoadSuiteFile(std::filesystem::path(name_or_path));
  }
  std::vector<std::string> names;
  for (const BuiltinSuite& b : BuiltinSuites()) {
    names.emplace_back(b.name);
  }
  return MakeError(ErrorCode::kUsage,
                   fmt::format("no suite named '{}': not a built-in suite ({}) and no such file",
                               name_or_path, Join(names)));
}

std::string PromptKey(const TestSpec& test) {
  std::string key;
  bool first = true;
  for (const MessageSpec& m : test.messages) {
    if (m.text.empty()) {
      continue;
    }
    if (!first) {
      key.push_back('\n');
    }
    key += m.text;
    first = false;
  }
  return key;
}

Result<std::string> ResolvePlaceholders(std::string_view text) {
  Truths truths;
  return Substitute(text, truths);
}

}  // namespace sb::suite
