// Session files (`servebench perf --profile sessions --sessions FILE`, docs/sessions.md): JSONL,
// one conversation per line. A line is an object with
//   turns          the user messages, in order (a non-empty array of strings; required)
//   system         a system prompt sent first in every request of the session (string)
//   tools          the OpenAI `tools` array offered with every request (kept as JSON text)
//   tool_results   what the tools answer: an array of strings used in call order (a call past
//                  its end gets a generated result), or an object from function name to string
//   think_ms       the pause after each turn's answer: a number for every turn, or an array with
//                  one per turn
//   output_tokens  the answer budget of each turn (max_tokens): a number or an array per turn
//   images         images sent with the user message: an array of file paths (relative to the
//                  file's folder) or data: URLs for the first turn, or one such array per turn
// Blank lines and lines starting with '#' are skipped. Unknown keys are an error (a typo is not
// silently ignored). Every error is "FILE:LINE: what".
// Thread safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace sb::workload {

struct ScriptedSession {
  int line = 0;  // in the file, from 1
  std::string system;
  std::vector<std::string> turns;
  std::string tools_json;                              // "" = no tools
  std::vector<std::string> tool_results;               // in call order
  std::map<std::string, std::string> tool_results_by;  // by function name
  std::vector<double> think_ms;                        // empty, or one per turn
  std::vector<int> output_tokens;                      // empty, or one per turn
  std::vector<std::vector<std::string>> images;        // empty, or data: URLs per turn
};

// Parses the text of a session file; `name` is used in error messages, `dir` is the folder image
// paths are relative to.
Result<std::vector<ScriptedSession>> ParseSessionFile(std::string_view text,
                                                      const std::string& name,
                                                      const std::string& dir = ".");

// Reads and parses FILE (kSetup error when it cannot be read).
Result<std::vector<ScriptedSession>> ReadSessionFile(const std::string& path);

}  // namespace sb::workload
