// Every checker of every built-in suite against 1 MiB hostile answers (256 KiB under the
// sanitizers) (tests/support/hostile_answers.h): none crashes, each ends with a bounded reason. How
// long they take is measured by bench/suite_cost (docs/performance.md); the limit here only guards
// against a hang.
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "suite/checkers.h"
#include "suite/suite.h"
#include "support/hostile_answers.h"

namespace sb::suite {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// Under the sanitizers the same paths with 256 KiB answers: ASan's allocator made the 1 MiB run
// take 220 s of CI's time (the plain build runs it at 1 MiB in 30 s).
constexpr std::size_t kAnswerBytes = 1 << 18;
#else
constexpr std::size_t kAnswerBytes = 1 << 20;
#endif
constexpr double kHangGuardS = 20;         // a hang, not a speed figure
constexpr std::size_t kReasonCap = 16384;  // a FAIL reason is a line, not the answer

// The leaf checkers of a tree (the combinators' own logic runs with the whole tree).
void Leaves(const Check& c, std::vector<const Check*>& out) {
  if (c.children.empty()) {
    out.push_back(&c);
  }
  for (const Check& child : c.children) {
    Leaves(child, out);
  }
}

struct Checked {
  std::string where;
  const Check* check;
};

// Every distinct leaf checker of the built-in suites (the suites share many tests), and the
// trees whose root is any_of or not (their own logic; all_of lists run their leaves anyway).
const std::vector<Checked>& EveryBuiltinCheck() {
  static const std::vector<Suite> suites = [] {
    std::vector<Suite> out;
    for (const BuiltinSuite& b : BuiltinSuites()) {
      auto suite = LoadSuite(b.name);
      EXPECT_TRUE(suite) << b.name;
      if (suite) {
        out.push_back(std::move(*suite));
      }
    }
    return out;
  }();
  static const std::vector<Checked> checks = [] {
    std::vector<Checked> out;
    std::set<std::string> seen;
    for (const Suite& s : suites) {
      for (const TestSpec& t : s.tests) {
        if (!t.check) {
          continue;
        }
        if (t.check->type == "any_of" || t.check->type == "not") {
          out.push_back({s.name + "/" + t.id, &*t.check});
        }
        std::vector<const Check*> leaves;
        Leaves(*t.check, leaves);
        for (const Check* c : leaves) {
          if (seen.insert(c->type + c->args_json).second) {
            out.push_back({s.name + "/" + t.id + "/" + c->type, c});
          }
        }
      }
    }
    return out;
  }();
  return checks;
}

void ExpectBounded(const Checked& c, const std::string& answer_name, const Reply& reply) {
  const auto t0 = std::chrono::steady_clock::now();
  const CheckOutcome o = RunCheck(*c.check, reply, CheckEnv{});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, kHangGuardS) << c.where << " on " << answer_name;
  EXPECT_LE(o.reason.size(), kReasonCap) << c.where << " on " << answer_name;
  EXPECT_LE(o.detail.size(), kReasonCap) << c.where << " on " << answer_name;
  EXPECT_FALSE(o.stopped) << c.where << " on " << answer_name;
  if (!o.pass) {
    EXPECT_FALSE(o.reason.empty()) << c.where << " on " << answer_name;
  }
}

TEST(HostileAnswers, EveryBuiltinCheckerEndsWithABoundedResult) {
  const std::vector<Checked> checks = EveryBuiltinCheck();
  ASSERT_GT(checks.size(), 50u);
  for (const testing::HostileAnswer& a : testing::HostileAnswers(kAnswerBytes)) {
    const Reply reply{a.text, {}, "stop"};
    for (const Checked& c : checks) {
      ExpectBounded(c, a.name, reply);
    }
  }
}

TEST(HostileAnswers, ToolCallCheckersEndWithABoundedResult) {
  std::vector<Checked> checks;
  for (const Checked& c : EveryBuiltinCheck()) {
    if (c.check->type == "tool_call") {
      checks.push_back(c);
    }
  }
  ASSERT_FALSE(checks.empty());
  for (const auto& [name, calls] : testing::HostileToolCalls(kAnswerBytes)) {
    const Reply reply{"", calls, "tool_calls"};
    for (const Checked& c : checks) {
      ExpectBounded(c, name, reply);
    }
  }
}

}  // namespace
}  // namespace sb::suite
