// Quality suites: the data model, the YAML loader and the built-in suites (docs/suites.md is the
// user's manual of the format). A suite is a list of tests; a test is a conversation (text plus
// media), generation settings, a checker tree, and the answers the self-test uses
// (reference_answer must PASS, every bad_answer must FAIL). A test may instead name a speed
// profile (the speed dimensions of the `full` suite), which expands into one test per row.
// Loading is strict: unknown keys, wrong types, unknown checkers or media, duplicate ids and
// unresolvable {{asset.key}} placeholders are errors that name the file, line and problem.
// Thread safety: loaded suites are immutable values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/chat.h"
#include "core/result.h"
#include "media/media.h"

namespace sb::suite {

struct MediaRef {
  media::Kind kind = media::Kind::kImage;
  std::string name;  // a catalogue name, or a file path (resolved against the suite's directory)
  bool is_file = false;
};

struct MessageSpec {
  std::string role;  // "system", "user" or "assistant"
  std::string text;
  std::vector<MediaRef> media;  // sent before the text, in this order
};

// One node of a checker tree. args_json holds the checker's arguments as a JSON object with
// every {{asset.key}} placeholder already replaced by the generator's ground truth.
struct Check {
  std::string type;  // exact contains regex number choice json tool_call code length format
                     // all_of any_of not
  std::string args_json = "{}";
  std::vector<Check> children;  // all_of / any_of (any number), not (exactly one)
  int line = 0;                 // 1-based line in the suite file, for messages
};

// An answer as a server could give it: text (reasoning separate) and tool calls.
struct AnswerSpec {
  std::string text;
  std::string reasoning;
  std::vector<client::ToolCall> tool_calls;  // arguments as JSON text
};

struct TestSpec {
  std::string id;        // unique in the suite: [a-z0-9_.-]+
  std::string name;      // display name ("" = the id)
  std::string category;  // "image", "video", "reasoning" ...
  std::string section;   // optional sub-group ("multi-image"), "" when none
  int line = 0;

  std::vector<MessageSpec> messages;
  int max_tokens = 4096;
  std::optional<double> temperature;
  std::optional<bool> thinking;  // chat_template_kwargs.enable_thinking; nullopt = not sent
  double timeout_s = 300;        // time limit of one attempt
  bool own_timeout = false;      // timeout_s was given on the test itself (not by defaults)
  std::string tools_json;        // OpenAI `tools` array, "" when none
  std::string tool_choice_json;  // `tool_choice`, "" when not sent
  std::optional<Check> check;    // absent only for speed-profile tests

  std::optional<AnswerSpec> reference_answer;
  std::vector<AnswerSpec> bad_answers;

  // Loop detection on the stream: a span of `loop_span` units seen `loop_repeats` times cancels
  // the request as LOOP (docs/suites.md); loop_repeats 0 turns it off for this test.
  int loop_span = 20;
  int loop_repeats = 10;

  // Speed dimension: "" for a quality test, else a perf profile name (decode, concurrency,
  // max-tokens, ttft, context) with its options as a JSON object (levels, lengths, sizes,
  // runs, tokens, depth, max_tokens).
  std::string profile;
  std::string profile_args_json = "{}";

  // Modalities the test sends ("image", "video", "audio"), without duplicates.
  std::vector<std::string> Modalities() const;

  const std::string& DisplayName() const { return name.empty() ? id : name; }
};

struct Suite {
  std::string name;
  std::string description;
  std::string source;  // "built-in" or the file's path
  std::vector<TestSpec> tests;
};

// Loads a suite from YAML text. `source` names it in error messages ("quick.yaml"); relative
// media paths are resolved against base_dir. Errors are kUsage with "SOURCE:LINE: problem".
Result<Suite> ParseSuite(std::string_view yaml, std::string_view source,
                         const std::filesystem::path& base_dir);

// Loads a suite file. kSetup error when it cannot be read.
Result<Suite> LoadSuiteFile(const std::filesystem::path& path);

struct BuiltinSuite {
  std::string_view name;
  std::string_view description;
  std::string_view yaml;
};

// The suites shipped inside the binary (quick, standard, full), in that order.
const std::vector<BuiltinSuite>& BuiltinSuites();

// A built-in suite by name, else a file path. kUsage error naming the built-in suites when it
// is neither.
Result<Suite> LoadSuite(std::string_view name_or_path);

// The text the simulator matches a request by: every text part of every message, joined by
// "\n" (media parts and roles left out).
std::string PromptKey(const TestSpec& test);

// Replaces {{asset.key.subkey}} placeholders in text with the ground truth of catalogue media.
// A string that is exactly one placeholder keeps the value's JSON type (see docs/suites.md).
// kUsage error naming the placeholder when the asset or key does not exist.
Result<std::string> ResolvePlaceholders(std::string_view text);

}  // namespace sb::suite
