// libFuzzer target: the checkers on hostile answers (up to 1 MiB: -max_len=1048576). The input is
// the answer, and also a tool call's arguments; its first line is tried as a regex pattern too.
// Every checker type but `code` (which runs the sandbox) is run: text, regex (the patterns that
// overflowed or backtracked under std::regex among them), number, choice, json, tool_call,
// length, format and the combinators. None may crash or hang; a FAIL must say why.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/checkers.h"

namespace {

using nlohmann::json;
using sb::suite::Check;

Check Leaf(const std::string& type, const json& args) {
  Check c;
  c.type = type;
  c.args_json = args.dump(-1, ' ', false, json::error_handler_t::replace);
  return c;
}

Check Tree(const std::string& type, std::vector<Check> children) {
  Check c;
  c.type = type;
  c.children = std::move(children);
  return c;
}

const std::vector<Check>& Checks() {
  static const std::vector<Check> kChecks = [] {
    std::vector<Check> v = {
        Leaf("exact", {{"expect", {"Canberra", "42"}}}),
        Leaf("contains", {{"any", {"red", "漢字"}}, {"none", {"blue"}}, {"word", true}}),
        Leaf("regex", {{"pattern", "^(a|b)*$"}}),
        Leaf("regex", {{"pattern", "(.|\\n)*end"}}),
        Leaf("regex", {{"pattern", "^(\\w+\\s?)+$"}}),
        Leaf("regex", {{"pattern", "(a+)+$"}, {"full", true}}),
        Leaf("regex",
             {{"pattern", "first:\\s*red\\b[\\s\\S]*second:\\s*blue\\b"}, {"ignore_case", true}}),
        Leaf("regex", {{"pattern", "red[^\\n]*green"}}),
        Leaf("number", {{"expect", 842}}),
        Leaf("number", {{"expect", {1, 2}}, {"pick", "only"}}),
        Leaf("number", {{"expect", 1234567}, {"pick", "any"}}),
        Leaf("choice", {{"expect", "B"}}),
        Leaf("json", {{"required", {"a.b", "items"}}, {"values", {{"a.b", 3}}}}),
        Leaf("json", {{"type", "array"}, {"items", 3}}),
        Leaf("tool_call",
             {{"calls", {{{"name", "get_weather"}, {"arguments", {{"city", "Tokyo"}}}}}}}),
        Leaf("length", {{"unit", "words"}, {"max", 100}}),
        Leaf("length", {{"unit", "paragraphs"}, {"min", 2}}),
        Leaf("format", {{"bullets", {{"min", 2}}},
                        {"starts_with", "#"},
                        {"ends_with", "done"},
                        {"script", "japanese"},
                        {"case", "lower"}}),
    };
    v.push_back(Tree("any_of", {v[0], v[2], v[8]}));
    v.push_back(Tree("not", {v[1]}));
    return v;
  }();
  return kChecks;
}

void Expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "checkers_fuzz: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  sb::client::ToolCall call;
  call.name = "get_weather";
  call.arguments = text;
  const sb::suite::Reply reply{text, {call}, "stop"};
  const sb::suite::CheckEnv env;
  for (const Check& c : Checks()) {
    Expect(static_cast<bool>(sb::suite::ValidateCheck(c)), "a fixed check does not validate");
    const sb::suite::CheckOutcome o = sb::suite::RunCheck(c, reply, env);
    Expect(o.pass || !o.reason.empty(), "a FAIL without a reason");
    Expect(!o.stopped, "stopped without a stop request");
  }
  // The first line as a pattern: refused when it does not compile, else run without harm.
  const std::string pattern = text.substr(0, std::min<std::size_t>(text.find('\n'), 256));
  const Check user = Leaf("regex", {{"pattern", pattern}, {"ignore_case", size % 2 == 1}});
  if (sb::suite::ValidateCheck(user)) {
    const sb::suite::CheckOutcome o = sb::suite::RunCheck(user, reply, env);
    Expect(o.pass || !o.reason.empty(), "a regex FAIL without a reason");
  }
  return 0;
}
