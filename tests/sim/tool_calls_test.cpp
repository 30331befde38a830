// The simulator's generated tool calls (sim/tool_calls.h): only with tools, never at
// probability 0, always at 1, and the same draw for the same seed and messages.
#include "sim/tool_calls.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace sb::sim {
namespace {

using nlohmann::json;

const json kTools = json::parse(
    R"([{"type": "function", "function": {"name": "a"}},
        {"type": "function", "function": {"name": "b"}}])");

TEST(ToolCallsTest, OnlyARequestOfferingNamedToolsCallsOne) {
  EXPECT_FALSE(DrawToolCall(json(), 1.0, 1, 42));
  EXPECT_FALSE(DrawToolCall(json::array(), 1.0, 1, 42));
  EXPECT_FALSE(DrawToolCall(json::parse(R"([{"type": "function"}])"), 1.0, 1, 42));
  EXPECT_FALSE(DrawToolCall(kTools, 0.0, 1, 42));
  const auto call = DrawToolCall(kTools, 1.0, 1, 42);
  ASSERT_TRUE(call);
  EXPECT_TRUE(call->name == "a" || call->name == "b");
  EXPECT_TRUE(json::parse(call->arguments).contains("query"));
}

TEST(ToolCallsTest, TheDrawDependsOnlyOnSeedAndMessagesAndFollowsTheProbability) {
  int calls = 0, names_a = 0;
  for (std::uint64_t h = 0; h < 2000; ++h) {
    const auto first = DrawToolCall(kTools, 0.3, 7, h);
    const auto again = DrawToolCall(kTools, 0.3, 7, h);
    ASSERT_EQ(first.has_value(), again.has_value()) << h;
    if (first) {
      ++calls;
      EXPECT_EQ(first->name, again->name);
      EXPECT_EQ(first->arguments, again->arguments);
      names_a += first->name == "a" ? 1 : 0;
    }
  }
  EXPECT_GT(calls, 2000 * 0.25);
  EXPECT_LT(calls, 2000 * 0.35);
  EXPECT_GT(names_a, calls / 3);  // both tools get called
  EXPECT_LT(names_a, calls * 2 / 3);
}

}  // namespace
}  // namespace sb::sim
