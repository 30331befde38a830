// Deterministic checkers: a test's answer (reasoning already removed: no checker ever reads the
// reasoning text) against its checker tree. Every FAIL carries a specific reason ("expected 742,
// found 741 (the final number of the answer)"). The checkers and their arguments are documented
// in docs/suites.md; ValidateCheck enforces the same rules when a suite loads.
// Thread safety: pure functions, except `code`, which runs programs in the sandbox (safe to call
// from several threads).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "client/chat.h"
#include "core/result.h"
#include "sandbox/sandbox.h"
#include "suite/suite.h"

namespace sb::suite {

// Every checker type name, in documentation order.
const std::vector<std::string>& CheckerTypes();

// kUsage error ("unknown key 'anyy' for contains (known: any, all, none, case_sensitive,
// word)") when the arguments are not what the checker takes. No line: the loader adds it.
Result<void> ValidateCheck(const Check& check);

struct Reply {
  std::string answer;  // visible answer text, reasoning removed
  std::vector<client::ToolCall> tool_calls;
  std::string finish_reason;
};

struct CheckEnv {
  // Interpreter, compiler and limits for `code` checks; code.stop (the run's stop request)
  // kills a running program at once.
  sandbox::CodeOptions code;
};

struct CheckOutcome {
  bool pass = false;
  std::string reason;  // why it failed ("" when it passed)
  // For code checks: what the sandbox reported ("" otherwise), kept in results.json.
  std::string detail;
  // The run's stop request ended the check (a code check's program was killed): no verdict.
  bool stopped = false;
};

// Evaluates the tree. all_of stops at the first failure and reports it; any_of passes at the
// first pass and otherwise reports every child's reason; not inverts. A stopped child stops the
// whole tree (the outcome is `stopped`).
CheckOutcome RunCheck(const Check& check, const Reply& reply, const CheckEnv& env);

}  // namespace sb::suite
