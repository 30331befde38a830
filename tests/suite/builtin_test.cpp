// The self-test of every built-in suite: each test's reference answer must PASS its checker and
// each bad answer must FAIL it, so no checker can be vacuous. Also the invariants the simulator
// and the reports rely on.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "suite/checkers.h"
#include "suite/suite.h"

namespace sb::suite {
namespace {

Reply AsReply(const AnswerSpec& a) {
  return Reply{a.text, a.tool_calls, a.tool_calls.empty() ? "stop" : "tool_calls"};
}

class BuiltinSuite : public ::testing::TestWithParam<std::string> {};

TEST_P(BuiltinSuite, ReferenceAnswersPassAndBadAnswersFail) {
  auto s = LoadSuite(GetParam());
  ASSERT_TRUE(s) << s.error().message;
  CheckEnv env;
  int checked = 0;
  for (const TestSpec& t : s->tests) {
    if (!t.profile.empty()) {
      continue;
    }
    ASSERT_TRUE(t.reference_answer) << t.id << " has no reference_answer";
    ASSERT_FALSE(t.bad_answers.empty()) << t.id << " has no bad_answers";
    CheckOutcome ok = RunCheck(*t.check, AsReply(*t.reference_answer), env);
    EXPECT_TRUE(ok.pass) << t.id << ": the reference answer fails: " << ok.reason;
    for (std::size_t i = 0; i < t.bad_answers.size(); ++i) {
      CheckOutcome bad = RunCheck(*t.check, AsReply(t.bad_answers[i]), env);
      EXPECT_FALSE(bad.pass) << t.id << ": bad answer " << i << " passes";
      EXPECT_FALSE(bad.reason.empty()) << t.id << ": bad answer " << i << " fails without reason";
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST_P(BuiltinSuite, PromptsAreUniqueSoTheSimulatorCanAnswerEach) {
  auto s = LoadSuite(GetParam());
  ASSERT_TRUE(s) << s.error().message;
  std::map<std::string, std::string> seen;
  for (const TestSpec& t : s->tests) {
    if (!t.profile.empty()) {
      continue;
    }
    auto [it, inserted] = seen.emplace(PromptKey(t), t.id);
    EXPECT_TRUE(inserted) << t.id << " has the same prompt text as " << it->second;
  }
}

TEST_P(BuiltinSuite, EveryTestHasANameAndACategory) {
  auto s = LoadSuite(GetParam());
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_FALSE(s->description.empty());
  for (const TestSpec& t : s->tests) {
    EXPECT_FALSE(t.name.empty()) << t.id;
    EXPECT_FALSE(t.category.empty()) << t.id;
  }
}

INSTANTIATE_TEST_SUITE_P(All, BuiltinSuite, ::testing::Values("quick", "standard", "full"));

// The sizes the issue fixes: seed 000's six categories, seed 003's eight dimensions.
std::map<std::string, int> CountBy(const Suite& s, bool by_section) {
  std::map<std::string, int> n;
  for (const TestSpec& t : s.tests) {
    const int rows = [&] {
      if (t.profile.empty()) {
        return 1;
      }
      // A speed-profile test counts one test per row it measures.
      if (t.profile == "concurrency") {
        return 4;
      }
      if (t.profile == "max-tokens") {
        return 5;
      }
      if (t.profile == "ttft") {
        return 3;
      }
      if (t.profile == "context") {
        return 6;
      }
      return 1;
    }();
    n[by_section ? t.category + "/" + t.section : t.category] += rows;
  }
  return n;
}

TEST(BuiltinSuites, StandardHasSeed000sCategories) {
  auto s = LoadSuite("standard");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->tests.size(), 33u);
  const auto n = CountBy(*s, false);
  EXPECT_EQ(n.at("image"), 10);
  EXPECT_EQ(n.at("video"), 4);
  EXPECT_EQ(n.at("audio"), 3);
  EXPECT_EQ(n.at("reasoning"), 6);
  EXPECT_EQ(n.at("coding"), 5);
  EXPECT_EQ(n.at("writing"), 5);
  int thinking = 0;
  for (const TestSpec& t : s->tests) {
    thinking += t.thinking.value_or(false) ? 1 : 0;
  }
  EXPECT_GE(thinking, 4);  // several tests run with thinking on, as in the seed
}

TEST(BuiltinSuites, FullHasSeed003sDimensions) {
  auto s = LoadSuite("full");
  ASSERT_TRUE(s) << s.error().message;
  const auto n = CountBy(*s, false);
  EXPECT_EQ(n.at("vision"), 20);
  EXPECT_EQ(n.at("video"), 17);
  EXPECT_EQ(n.at("latency_throughput"), 5);
  EXPECT_EQ(n.at("ttft"), 3);
  EXPECT_EQ(n.at("concurrency"), 4);
  EXPECT_EQ(n.at("context_scaling"), 6);
  EXPECT_EQ(n.at("reasoning"), 8);
  EXPECT_EQ(n.at("tool_calling"), 2);
  int total = 0;
  for (const auto& [k, v] : n) {
    total += v;
  }
  EXPECT_EQ(total, 65);
  const auto sections = CountBy(*s, true);
  EXPECT_EQ(sections.at("vision/single image"), 5);
  EXPECT_EQ(sections.at("vision/multi-image"), 2);
  EXPECT_EQ(sections.at("vision/OCR"), 3);
  EXPECT_EQ(sections.at("vision/chart"), 3);
  EXPECT_EQ(sections.at("vision/math"), 2);
  EXPECT_EQ(sections.at("vision/code"), 2);
  EXPECT_EQ(sections.at("vision/visual reasoning"), 3);
  EXPECT_EQ(sections.at("video/description"), 4);
  EXPECT_EQ(sections.at("video/motion"), 3);
  EXPECT_EQ(sections.at("video/counting"), 3);
  EXPECT_EQ(sections.at("video/multi-video"), 2);
  EXPECT_EQ(sections.at("video/reasoning"), 3);
  EXPECT_EQ(sections.at("video/video and text instructions"), 2);
}

TEST(BuiltinSuites, QuickIsSmall) {
  auto s = LoadSuite("quick");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_LE(s->tests.size(), 8u);
}

}  // namespace
}  // namespace sb::suite
