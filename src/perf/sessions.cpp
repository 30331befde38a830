// The sessions profile (sessions.h): the conversation logic, the scripts (a session file or
// synthetic sessions fitted to the server's tokenizer) and the runner: one thread and one client
// per session slot, the records built on the calling thread as requests finish.
#include "perf/sessions.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perf/profiles.h"
#include "perf/sessions_summary.h"

namespace sb::perf {

using nlohmann::json;

namespace {

constexpr int kDefaultSyntheticSessions = 16;
constexpr int kDefaultTurnTokens = 64;

std::string Message(const char* role, const std::string& content) {
  return json{{"role", role}, {"content", content}}.dump(-1, ' ', false,
                                                         json::error_handler_t::replace);
}

}  // namespace

Conversation::Conversation(const SessionScript& script, bool keep_reasoning, int max_tool_rounds,
                           std::string generated_tool_result)
    : script_(script),
      keep_reasoning_(keep_reasoning),
      max_tool_rounds_(max_tool_rounds),
      generated_(std::move(generated_tool_result)) {
  if (!script_.system.empty()) {
    messages_.push_back(Message("system", script_.system));
  }
}

void Conversation::BeginTurn(const std::string& parts_json) {
  tool_round_ = 0;
  const std::string& text = script_.turns[static_cast<std::size_t>(turn_)];
  if (parts_json.empty()) {
    messages_.push_back(Message("user", text));
  } else {
    messages_.push_back(R"({"role":"user","content":)" + parts_json + "}");
  }
}

std::string Conversation::MessagesJson() const {
  std::string out = "[";
  for (const std::string& m : messages_) {
    out += out.size() > 1 ? "," : "";
    out += m;
  }
  return out + "]";
}

std::string Conversation::ToolResult(const client::ToolCall& call) {
  if (const auto it = script_.tool_results_by.find(call.name);
      it != script_.tool_results_by.end()) {
    return it->second;
  }
  if (next_result_ < script_.tool_results.size()) {
    return script_.tool_results[next_result_++];
  }
  return generated_;
}

Conversation::Step Conversation::Answer(const client::ChatResponse& r) {
  if (r.outcome != client::Outcome::kOk) {
    return Step::kFailed;
  }
  json answer = {{"role", "assistant"}, {"content", r.answer}};
  if (keep_reasoning_ && !r.reasoning.empty()) {
    answer["reasoning_content"] = r.reasoning;
  }
  if (!r.tool_calls.empty()) {
    json calls = json::array();
    for (const client::ToolCall& c : r.tool_calls) {
      calls.push_back({{"id", c.id},
                       {"type", "function"},
                       {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    }
    answer["tool_calls"] = std::move(calls);
  }
  messages_.push_back(answer.dump(-1, ' ', false, json::error_handler_t::replace));
  if (!r.tool_calls.empty()) {
    // Every call is answered, even past the cap, so the history stays one a server accepts.
    for (const client::ToolCall& c : r.tool_calls) {
      json tool = {{"role", "tool"}, {"tool_call_id", c.id}, {"content", ToolResult(c)}};
      messages_.push_back(tool.dump(-1, ' ', false, json::error_handler_t::replace));
    }
    if (tool_round_ < max_tool_rounds_) {
      ++tool_round_;
      ++tool_rounds_;
      return Step::kToolRound;
    }
    ++capped_;
  }
  ++turn_;
  ++turns_done_;
  return turn_ >= static_cast<int>(script_.turns.size()) ? Step::kFinished : Step::kTurnDone;
}

Result<void> PrepareSessions(SessionsOptions& o) {
  auto usage = [](const std::string& text) { return Error{ErrorCode::kUsage, text}; };
  if (o.turns < 1 || o.turns > 10000) {
    return usage(fmt::format("--turns must be in [1, 10000], got {}", o.turns));
  }
  if (o.system_prompt_tokens < 0) {
    return usage(
        fmt::format("--system-prompt-tokens must be >= 0, got {}", o.system_prompt_tokens));
  }
  if (o.concurrency < 1 || o.concurrency > 4096) {
    return usage(fmt::format("--session-concurrency must be in [1, 4096], got {}", o.concurrency));
  }
  if (!(std::isfinite(o.rate) && o.rate >= 0)) {
    return usage(fmt::format("--session-rate must be >= 0, got {}", o.rate));
  }
  if (o.max_sessions < 0) {
    return usage(fmt::format("--max-sessions must be >= 0, got {}", o.max_sessions));
  }
  if (o.max_tool_rounds < 0) {
    return usage(fmt::format("--max-tool-rounds must be >= 0, got {}", o.max_tool_rounds));
  }
  if (o.tool_result_tokens < 1) {
    return usage(fmt::format("--tool-result-tokens must be >= 1, got {}", o.tool_result_tokens));
  }
  if (!o.file.empty()) {
    auto sessions = workload::ReadSessionFile(o.file);
    if (!sessions) {
      return sessions.error();
    }
    if (o.max_sessions > 0 && sessions->size() > static_cast<std::size_t>(o.max_sessions)) {
      sessions->resize(static_cast<std::size_t>(o.max_sessions));
    }
    o.loaded =
        std::make_shared<const std::vector<workload::ScriptedSession>>(std::move(sessions).value());
  }
  return {};
}

// A text of `tokens` tokens by the server's count (the chat template's share taken off), and
// that count (-1 when the server has no tokenizer: then about `tokens` words). The word count
// follows the tokens per word measured on the text itself (the head's count known), so a small
// vocabulary that spends four tokens on a word fits as well as one token a word; then " and"s
// and " a"s fill the rest exactly.
std::pair<std::string, int> Session::FitText(const std::string& head, int tokens,
                                             std::uint64_t seed, int overhead) {
  std::string pad;
  auto content = [&](int words) { return head + FillerText(words, seed) + pad; };
  if (overhead < 0) {
    return {content(std::max(1, tokens - 8)), -1};
  }
  int words = 0;
  auto count = [&] {
    const auto n = CountPromptTokens(content(words));
    return n ? *n - overhead : -1;
  };
  const int head_tokens = count();
  words = std::max(1, tokens - 8);
  int got = head_tokens < 0 ? -1 : count();
  for (int step = 0; step < 12 && got >= 0 && got != tokens; ++step) {
    // Secant through (0 words, the head) and (words, got): tokens per filler word here.
    const double per = std::max(0.2, static_cast<double>(got - head_tokens) / words);
    const int next =
        std::max(1, static_cast<int>(std::lround((tokens - head_tokens) / per)) - (got > tokens));
    if (next == words) {
      break;
    }
    words = next;
    got = count();
  }
  // Under rather than over: drop the words that overshoot, then pad up.
  for (int step = 0; step < 4 && got > tokens && words > 0; ++step) {
    --words;
    got = count();
  }
  for (int step = 0; step < 6 && got >= 0 && got < tokens; ++step) {
    const int before = got;
    pad += " and";
    got = count();
    const int per = std::max(1, got - before);  // what one " and" costs on this tokenizer
    for (int k = got + per; k <= tokens; k += per) {
      pad += " and";
    }
    got = count();
    if (got > tokens) {  // the last " and" was one too many
      pad.resize(pad.size() - 4);
      got = count();
      break;
    }
  }
  // What " and" cannot fill (it costs more than one token on a small vocabulary): " a", one
  // token on every tokenizer seen.
  for (int step = 0; step < 8 && got >= 0 && got < tokens; ++step) {
    pad += " a";
    got = count();
  }
  return {content(words), got};
}

std::vector<SessionScript> Session::SessionScripts(const ProfileOptions& options) {
  const SessionsOptions& so = options.sessions;
  std::vector<SessionScript> out;
  if (so.loaded) {
    for (const workload::ScriptedSession& s : *so.loaded) {
      SessionScript sc;
      sc.label = fmt::format("{}:{}", so.file, s.line);
      sc.system = s.system;
      sc.turns = s.turns;
      sc.user_tokens.assign(s.turns.size(), -1);
      sc.tools_json = s.tools_json;
      sc.tool_results = s.tool_results;
      sc.tool_results_by = s.tool_results_by;
      sc.think_ms = s.think_ms;
      sc.output_tokens = s.output_tokens;
      sc.images = s.images;
      out.push_back(std::move(sc));
    }
  } else {
    const int overhead = TemplateOverhead();
    const int n = so.max_sessions > 0 ? so.max_sessions : kDefaultSyntheticSessions;
    workload::LengthSpec turn_default;
    turn_default.a = kDefaultTurnTokens;
    turn_default.text = std::to_string(kDefaultTurnTokens);
    workload::LengthSampler inputs(so.turn_input.value_or(turn_default), options.rate.seed);
    std::optional<workload::LengthSampler> outputs;
    if (options.output_lengths) {
      outputs.emplace(*options.output_lengths, options.rate.seed + 1);
    }
    std::pair<std::string, int> system;
    if (so.system_prompt_tokens > 0) {
      system = FitText("You are a helpful assistant. ", so.system_prompt_tokens, 7, overhead);
    }
    for (int i = 0; i < n && !Halted(); ++i) {
      SessionScript sc;
      sc.label = fmt::format("session {}", i + 1);
      sc.system = system.first;
      sc.system_tokens = so.system_prompt_tokens > 0 ? system.second : -1;
      for (int t = 0; t < so.turns; ++t) {
        const std::string head =
            fmt::format("[session {:x}-{} turn {}] ", session_nonce_, i + 1, t + 1);
        auto [text, count] =
            FitText(head, inputs.Next(), Mix64(session_nonce_ + i * 977 + t), overhead);
        sc.turns.push_back(std::move(text));
        sc.user_tokens.push_back(count);
        sc.output_tokens.push_back(outputs ? outputs->Next() : options.tokens);
      }
      sc.force_length = outputs.has_value();
      out.push_back(std::move(sc));
    }
  }
  if (so.think_ms) {
    workload::LengthSampler think(*so.think_ms, options.rate.seed + 2);
    const bool zero =
        so.think_ms->kind == workload::LengthSpec::Kind::kFixed && so.think_ms->a <= 0;
    for (SessionScript& sc : out) {
      if (sc.think_ms.empty()) {
        for (std::size_t t = 0; t < sc.turns.size(); ++t) {
          sc.think_ms.push_back(zero ? 0.0 : think.Next());
        }
      }
    }
  }
  return out;
}

}  // namespace sb::perf
