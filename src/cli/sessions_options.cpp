#include "cli/sessions_options.h"

#include <string>

#include "workload/length.h"

namespace sb::cli {

namespace {

// A length distribution flag (N, uniform:A-B, normal:MEAN,SD, lognormal:MEDIAN,SIGMA, file:PATH).
void AddSpec(CLI::App* cmd, const char* flag, std::optional<workload::LengthSpec>& into,
             const char* help) {
  cmd->add_option_function<std::string>(
      flag,
      [&into](const std::string& text) {
        auto spec = workload::ParseLengthSpec(text);
        if (!spec) {
          throw CLI::ValidationError(spec.error().message);
        }
        into = std::move(spec).value();
      },
      help);
}

}  // namespace

void AddSessionsOptions(CLI::App* cmd, perf::SessionsOptions& s, perf::ImageLoad& images) {
  cmd->add_option("--sessions", s.file,
                  "sessions: a session file (JSONL, one conversation per line: turns, tools, "
                  "tool_results, think_ms, output_tokens; docs/sessions.md); without it, "
                  "synthetic sessions");
  cmd->add_option("--turns", s.turns, "sessions: user turns per synthetic session")
      ->capture_default_str();
  AddSpec(cmd, "--turn-input-tokens", s.turn_input,
          "sessions: tokens of each synthetic user message (a distribution as --input-tokens; "
          "default 64)");
  cmd->add_option("--system-prompt-tokens", s.system_prompt_tokens,
                  "sessions: one system prompt of N tokens shared by every synthetic session "
                  "(0 = none)")
      ->capture_default_str();
  AddSpec(cmd, "--think-ms", s.think_ms,
          "sessions: pause after each answer before the next turn, in ms (a distribution as "
          "--input-tokens; a session file's think_ms wins; default none)");
  cmd->add_option("--session-concurrency", s.concurrency,
                  "sessions: conversations in flight at once (closed loop)")
      ->capture_default_str();
  cmd->add_option("--session-rate", s.rate,
                  "sessions: start new sessions at this rate per second (open loop, --arrival "
                  "poisson or constant), at most --session-concurrency in flight; 0 = closed loop")
      ->capture_default_str();
  cmd->add_option("--max-sessions", s.max_sessions,
                  "sessions: how many sessions (a file: its first N, 0 = all; synthetic: 0 = 16)")
      ->capture_default_str();
  cmd->add_option("--max-tool-rounds", s.max_tool_rounds,
                  "sessions: tool-call rounds per turn at most; then the turn ends")
      ->capture_default_str();
  cmd->add_option("--tool-result-tokens", s.tool_result_tokens,
                  "sessions: words of a generated tool result (a call the file scripts no "
                  "result for)")
      ->capture_default_str();
  cmd->add_option("--images-per-request", images.per_request,
                  "decode, concurrency, rate, sessions: N generated PNG images in each prompt "
                  "(each sessions turn); a server without vision refuses them (UNSUPPORTED)")
      ->capture_default_str();
  cmd->add_option("--image-size", images.size, "--images-per-request: each image's WxH in pixels")
      ->capture_default_str();
  cmd->add_flag("--keep-reasoning", s.keep_reasoning,
                "sessions: send earlier answers' reasoning back (reasoning_content), as a chat "
                "template that keeps it would; default: dropped");
}

}  // namespace sb::cli
