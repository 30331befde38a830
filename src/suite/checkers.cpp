// The checker registry: the type names, argument validation and dispatch, and the
// combinators all_of / any_of / not. The checkers themselves live in check_*.cpp by family.
#include "suite/checkers.h"

#include <fmt/format.h>

#include "suite/check_common.h"

namespace sb::suite {

const std::vector<std::string>& CheckerTypes() {
  static const std::vector<std::string> kTypes = {
      "exact", "contains", "regex",  "number", "choice", "json", "tool_call",
      "code",  "length",   "format", "all_of", "any_of", "not"};
  return kTypes;
}

Result<void> ValidateCheck(const Check& c) {
  if (c.type == "exact") {
    return check::ValidateExact(c);
  }
  if (c.type == "contains") {
    return check::ValidateContains(c);
  }
  if (c.type == "regex") {
    return check::ValidateRegex(c);
  }
  if (c.type == "number") {
    return check::ValidateNumber(c);
  }
  if (c.type == "choice") {
    return check::ValidateChoice(c);
  }
  if (c.type == "json") {
    return check::ValidateJson(c);
  }
  if (c.type == "tool_call") {
    return check::ValidateTool(c);
  }
  if (c.type == "code") {
    return check::ValidateCode(c);
  }
  if (c.type == "length") {
    return check::ValidateLength(c);
  }
  if (c.type == "format") {
    return check::ValidateFormat(c);
  }
  if (c.type == "all_of" || c.type == "any_of") {
    if (c.children.empty()) {
      return check::Bad(c.type + " needs at least one check");
    }
    for (const Check& child : c.children) {
      if (auto ok = ValidateCheck(child); !ok) {
        return ok;
      }
    }
    return {};
  }
  if (c.type == "not") {
    if (c.children.size() != 1) {
      return check::Bad("not takes exactly one check");
    }
    return ValidateCheck(c.children[0]);
  }
  return check::Bad(fmt::format("unknown checker '{}'", c.type));
}

CheckOutcome RunCheck(const Check& c, const Reply& reply, const CheckEnv& env) {
  if (c.type == "all_of") {
    for (const Check& child : c.children) {
      CheckOutcome o = RunCheck(child, reply, env);
      if (!o.pass) {
        return o;
      }
    }
    return check::Pass();
  }
  if (c.type == "any_of") {
    std::vector<std::string> reasons;
    for (const Check& child : c.children) {
      CheckOutcome o = RunCheck(child, reply, env);
      if (o.pass || o.stopped) {
        return o;
      }
      reasons.push_back(o.reason);
    }
    return check::FailWith(fmt::format("{}", fmt::join(reasons, "; or ")));
  }
  if (c.type == "not") {
    if (c.children.size() != 1) {
      return check::FailWith("invalid check: not takes exactly one check");
    }
    CheckOutcome o = RunCheck(c.children[0], reply, env);
    if (o.stopped) {
      return o;
    }
    if (o.pass) {
      return check::FailWith(
          fmt::format("the answer passes a {} check it must fail", c.children[0].type));
    }
    return check::Pass();
  }
  if (c.type == "exact") {
    return check::EvaluateExact(c, reply);
  }
  if (c.type == "contains") {
    return check::EvaluateContains(c, reply);
  }
  if (c.type == "regex") {
    return check::EvaluateRegex(c, reply);
  }
  if (c.type == "number") {
    return check::EvaluateNumber(c, reply);
  }
  if (c.type == "choice") {
    return check::EvaluateChoice(c, reply);
  }
  if (c.type == "json") {
    return check::EvaluateJson(c, reply);
  }
  if (c.type == "tool_call") {
    return check::EvaluateTool(c, reply);
  }
  if (c.type == "code") {
    return check::EvaluateCode(c, reply, env);
  }
  if (c.type == "length") {
    return check::EvaluateLength(c, reply);
  }
  if (c.type == "format") {
    return check::EvaluateFormat(c, reply);
  }
  return check::FailWith(fmt::format("unknown checker '{}'", c.type));
}

}  // namespace sb::suite
