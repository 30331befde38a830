// Sessions (`servebench perf --profile sessions`, docs/sessions.md): multi-turn conversations and
// tool-calling agent loops as load. Each request of a session sends the whole history: the
// system prompt, every earlier user message, the server's actual earlier answers (their
// reasoning only with keep_reasoning, as a chat template that keeps it would) and tool messages.
// When an answer calls tools, their results (scripted, or generated text of tool_result_tokens)
// go back as tool messages and the turn continues, up to max_tool_rounds rounds; after a turn's
// answer the session waits its think time, then sends the next turn. Sessions run closed loop
// (session_concurrency at once) or start on an open-loop schedule (session_rate).
// The runner is Session::Sessions (sessions.cpp); the conversation logic is Conversation.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/chat.h"
#include "core/clock.h"
#include "core/result.h"
#include "perf/schedule.h"
#include "workload/length.h"
#include "workload/session_file.h"

namespace sb::perf {

struct SessionsOptions {
  std::string file;  // --sessions FILE (workload/session_file.h); "" = synthetic sessions
  // Synthetic sessions: --turns, --turn-input-tokens (each user message, exact to the server's
  // tokenizer), --system-prompt-tokens (one system prompt shared by every session; 0 = none).
  // Their answers' lengths come from ProfileOptions::output_lengths (--output-tokens), forced.
  int turns = 4;
  std::optional<workload::LengthSpec> turn_input;  // unset: 64 tokens
  int system_prompt_tokens = 0;
  // --think-ms: the pause after each turn's answer (a file's think_ms wins); unset: none.
  std::optional<workload::LengthSpec> think_ms;
  int concurrency = 4;  // --session-concurrency: sessions in flight (closed loop)
  // --session-rate: > 0 starts sessions at this rate (arrival process of ProfileOptions::rate:
  // --arrival, --seed) instead of as slots free up; concurrency then caps sessions in flight.
  double rate = 0;
  // --max-sessions: how many sessions (a file: its first N; 0 = all of it; synthetic: 0 = 16).
  int max_sessions = 0;
  double duration_s = 0;        // --duration-s: > 0: no session starts after this many seconds
  int max_tool_rounds = 4;      // --max-tool-rounds: tool rounds per turn at most
  int tool_result_tokens = 32;  // --tool-result-tokens: a generated tool result's words
  bool keep_reasoning = false;  // --keep-reasoning: send earlier reasoning back
  // The session file, read by PrepareSessions (the plan check) so a bad line stops the run
  // before it starts.
  std::shared_ptr<const std::vector<workload::ScriptedSession>> loaded;
  // Think time is waited on this clock (tests: a ManualClock); null = the steady clock.
  Clock* clock = nullptr;
};

// Checks the options and reads the session file into o.loaded; kUsage error naming the flag or
// FILE:LINE, kSetup when the file cannot be read.
Result<void> PrepareSessions(SessionsOptions& o);

// One session's script: what Conversation sends, turn by turn.
struct SessionScript {
  std::string label;   // "session 3" or "FILE:LINE"
  std::string system;  // "" = no system message
  std::vector<std::string> turns;
  std::vector<int> user_tokens;  // per turn, by the server's tokenizer; -1 = not counted
  int system_tokens = -1;
  std::string tools_json;
  std::vector<std::string> tool_results;
  std::map<std::string, std::string> tool_results_by;
  std::vector<double> think_ms;    // per turn (after its answer); empty = none
  std::vector<int> output_tokens;  // per turn max_tokens; empty = the default
  bool force_length = false;       // exactly output_tokens per answer (synthetic sessions)
  std::vector<std::vector<std::string>> images;  // per turn, data: URLs; empty = none
};

// The history of one conversation and where it stands. Pure: no I/O, no clock.
class Conversation {
 public:
  enum class Step { kToolRound, kTurnDone, kFinished, kFailed };

  Conversation(const SessionScript& script, bool keep_reasoning, int max_tool_rounds,
               std::string generated_tool_result);

  // Appends the current turn's user message; call before its first request. images_json: when
  // non-empty, the message's content parts instead of its text (images.h ImageContentJson).
  void BeginTurn(const std::string& parts_json = "");
  // The messages of the next request: a JSON array (client::ChatParams::messages_json).
  std::string MessagesJson() const;

  std::size_t message_count() const { return messages_.size(); }

  // Feeds the answer to the latest request and says what comes next: another request of this
  // turn (its tool calls were answered), the turn is done (think, BeginTurn, send), the session
  // is done, or it failed (the request failed: nothing more is sent).
  Step Answer(const client::ChatResponse& r);

  int turn() const { return turn_; }  // 0-based index of the current turn

  int tool_round() const { return tool_round_; }  // tool rounds so far in this turn

  int tool_rounds() const { return tool_rounds_; }  // in the whole session

  int turns_done() const { return turns_done_; }

  bool capped() const { return capped_ > 0; }  // a turn hit max_tool_rounds

  int capped_turns() const { return capped_; }

 private:
  std::string ToolResult(const client::ToolCall& call);

  const SessionScript& script_;
  bool keep_reasoning_;
  int max_tool_rounds_;
  std::string generated_;
  std::vector<std::string> messages_;  // each one message object as JSON text
  int turn_ = 0, tool_round_ = 0, tool_rounds_ = 0, turns_done_ = 0, capped_ = 0;
  std::size_t next_result_ = 0;
};

}  // namespace sb::perf
