// Shared pieces of the checkers (checkers.cpp and the check_*.cpp families): argument parsing
// with the loader's error messages, outcome helpers, text normalisation, and each checker's
// validate/evaluate entry points. Internal to sb_suite: include only from src/suite/check*.cpp.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "suite/checkers.h"
#include "suite/suite.h"

namespace sb::suite::check {

using nlohmann::json;

Error Bad(std::string message);

std::string Quote(std::string_view s, std::size_t max_chars = 80);

std::string QuoteList(const std::vector<std::string>& items);

std::string FormatNumber(double v);

// The check's arguments as a JSON object; unknown keys are an error naming the known ones.
Result<json> Args(const Check& c, const std::vector<std::string>& allowed);

Result<bool> Bool(const json& args, const char* key, bool fallback);

// A string or a list of strings (numbers are accepted and written as text).
Result<std::vector<std::string>> Strings(const json& args, const char* key);

// A number or a list of numbers (strings holding exactly one number are accepted).
Result<std::vector<double>> Numbers(const json& args, const char* key);

Result<std::optional<double>> OptNumber(const json& args, const char* key);

struct Bounds {
  std::optional<double> min, max;

  bool empty() const { return !min && !max; }
};

// N (exact) or {min, max} / {exact}.
Result<Bounds> ParseBounds(const json& v, const std::string& key);

// "" when n satisfies b, else "142 words, expected at most 100".
std::string BoundsProblem(double n, const Bounds& b, std::string_view unit);

CheckOutcome Pass();

CheckOutcome FailWith(std::string reason, std::string detail = "");

// Whitespace collapsed and trimmed; lowercased unless case_sensitive.
std::string Normalize(std::string_view s, bool case_sensitive);

bool IsWordByte(char c);

bool Contains(const std::string& hay, const std::string& needle, bool word);

// Parses the arguments, then runs the checker; invalid arguments are a FAIL that says so.
template <typename Args, typename Runner>
CheckOutcome Evaluate(const Result<Args>& args, Runner run) {
  if (!args) {
    return FailWith("invalid check: " + args.error().message);
  }
  return run(*args);
}

template <typename Args>
Result<void> Valid(const Result<Args>& args) {
  if (!args) {
    return args.error();
  }
  return {};
}

// One pair per checker type: Validate* checks the arguments (ValidateCheck), Evaluate* runs
// the check (RunCheck).
// check_text.cpp
Result<void> ValidateExact(const Check& c);
CheckOutcome EvaluateExact(const Check& c, const Reply& r);
Result<void> ValidateContains(const Check& c);
CheckOutcome EvaluateContains(const Check& c, const Reply& r);
Result<void> ValidateRegex(const Check& c);
CheckOutcome EvaluateRegex(const Check& c, const Reply& r);
Result<void> ValidateLength(const Check& c);
CheckOutcome EvaluateLength(const Check& c, const Reply& r);
Result<void> ValidateFormat(const Check& c);
CheckOutcome EvaluateFormat(const Check& c, const Reply& r);
// check_number.cpp
Result<void> ValidateNumber(const Check& c);
CheckOutcome EvaluateNumber(const Check& c, const Reply& r);
Result<void> ValidateChoice(const Check& c);
CheckOutcome EvaluateChoice(const Check& c, const Reply& r);
// check_structured.cpp
Result<void> ValidateJson(const Check& c);
CheckOutcome EvaluateJson(const Check& c, const Reply& r);
Result<void> ValidateTool(const Check& c);
CheckOutcome EvaluateTool(const Check& c, const Reply& r);
// check_code.cpp
Result<void> ValidateCode(const Check& c);
CheckOutcome EvaluateCode(const Check& c, const Reply& r, const CheckEnv& env);

}  // namespace sb::suite::check
