// Hostile model answers of a given size for the checkers (tests/suite/hostile_checkers_test.cpp,
// bench/suite_cost.cpp): the shapes that break naive checkers (deep nesting, one endless line,
// a million lines, backtracking bait for regexes, unterminated fences and tags, numbers
// everywhere, non-Latin script) and tool calls with such arguments. Header-only.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "client/chat.h"

namespace sb::testing {

struct HostileAnswer {
  std::string name;
  std::string text;
};

inline std::string RepeatTo(std::string_view head, std::string_view piece, std::size_t bytes,
                            std::string_view tail = "") {
  std::string s(head);
  s.reserve(bytes + piece.size() + tail.size());
  while (s.size() + tail.size() < bytes) {
    s += piece;
  }
  s += tail;
  return s;
}

// Answers of about `bytes` bytes each.
inline std::vector<HostileAnswer> HostileAnswers(std::size_t bytes) {
  return {
      {"ab", RepeatTo("", "ab", bytes)},
      {"a_then_bang", RepeatTo("", "a", bytes, "!")},
      {"words_then_bang", RepeatTo("", "word ", bytes, "!")},
      {"short_lines", RepeatTo("", "x\n", bytes, "end")},
      {"bullets", RepeatTo("# Title\n", "- item one\n", bytes)},
      {"json_open_arrays", RepeatTo("", "[", bytes)},
      {"json_deep_arrays", RepeatTo("", "[", bytes / 2) + RepeatTo("", "]", bytes / 2)},
      {"json_open_objects", RepeatTo("", "{\"a\":", bytes)},
      {"json_big_array", RepeatTo("```json\n[", "1,", bytes, "1]\n```")},
      {"python_fence", RepeatTo("```python\n", "x = 1\n", bytes)},
      {"fences", RepeatTo("", "```\n", bytes)},
      {"numbers", RepeatTo("", "1,234,567 ", bytes, "The answer is 842.")},
      {"comma_digits", RepeatTo("", "1,", bytes)},
      {"answer_markers", RepeatTo("", "The answer is ", bytes)},
      {"think_tags", RepeatTo("", "<think>", bytes)},
      {"bold", RepeatTo("", "**", bytes)},
      {"latex", RepeatTo("", "\\frac{\\boxed{", bytes)},
      {"assignments", RepeatTo("", "x = ", bytes, "5")},
      {"colours", RepeatTo("first: ", "red blue green ", bytes, "second: blue")},
      {"table", RepeatTo("", "| a | b |\n", bytes)},
      {"spaces", RepeatTo("", " \t", bytes)},
      {"cjk", RepeatTo("", "漢字かな", bytes)},
      {"choices", RepeatTo("", "A B C D ", bytes)},
  };
}

// Tool calls carrying hostile arguments (the answer text is empty beside them).
inline std::vector<std::pair<std::string, std::vector<client::ToolCall>>> HostileToolCalls(
    std::size_t bytes) {
  auto call = [](std::string name, std::string args) {
    client::ToolCall c;
    c.name = std::move(name);
    c.arguments = std::move(args);
    return c;
  };
  return {
      {"deep_arguments", {call("get_weather", RepeatTo("", "[", bytes))}},
      {"big_string_argument",
       {call("get_weather", RepeatTo("{\"city\": \"", "Tokyo ", bytes, "\"}"))}},
      {"many_keys", {call("get_weather", RepeatTo("{", "\"k\": 1, ", bytes, "\"city\": 1}"))}},
      {"long_name", {call(RepeatTo("", "f", bytes), "{}")}},
  };
}

}  // namespace sb::testing
