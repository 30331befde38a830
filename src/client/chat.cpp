#include "client/chat.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "client/chunk_scan.h"

namespace sb::client {

namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

constexpr std::size_t kErrorBodyCap = 64 * 1024;

std::string_view Trim(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is not valid.
std::size_t Utf8SequenceLength(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  if (b0 < 0x80) {
    return 1;
  } else if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
  } else {
    return 0;
  }
  if (i + n > s.size()) {
    return 0;
  }
  for (std::size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) {
      return 0;
    }
  }
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  if ((b0 == 0xE0 && b1 < 0xA0) || (b0 == 0xED && b1 > 0x9F) || (b0 == 0xF0 && b1 < 0x90) ||
      (b0 == 0xF4 && b1 > 0x8F)) {
    return 0;  // overlong, surrogate or beyond U+10FFFF
  }
  return n;
}

// s with each byte that does not start a valid UTF-8 sequence replaced by U+FFFD; nullopt when s
// is valid already (the common case, no copy). nlohmann::json refuses invalid UTF-8 in strings,
// and would throw when dumping it: repaired text parses and serialises.
std::optional<std::string> RepairUtf8(std::string_view s) {
  std::size_t i = 0;
  // ASCII eight bytes at a time (every chunk is mostly ASCII), then byte by byte.
  for (std::uint64_t word = 0; i + 8 <= s.size(); i += 8) {
    std::memcpy(&word, s.data() + i, 8);
    if ((word & 0x8080808080808080ULL) != 0) {
      break;
    }
  }
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      break;
    }
    i += n;
  }
  if (i == s.size()) {
    return std::nullopt;
  }
  std::string out(s.substr(0, i));
  out.reserve(s.size() + 16);
  while (i < s.size()) {
    const std::size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

// At most max_bytes of s as one line of valid UTF-8: never cuts a character in half, replaces
// invalid bytes with '?' and control characters (newlines included) with spaces.
std::string Snippet(std::string_view s, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(s.size(), max_bytes));
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t n = Utf8SequenceLength(s, i);
    const std::size_t take = n == 0 ? 1 : n;
    if (out.size() + take > max_bytes) {
      break;
    }
    if (n == 0) {
      out.push_back('?');
    } else if (n == 1 && (static_cast<unsigned char>(s[i]) < 0x20 || s[i] == 0x7F)) {
      out.push_back(' ');
    } else {
      out.append(s.substr(i, n));
    }
    i += take;
  }
  return out;
}

const std::string* StringField(const json& obj, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) {
    return nullptr;
  }
  return it->get_ptr<const std::string*>();
}

// A number field as int, clamped to int's range (servers are not trusted to send sane values).
int IntField(const json& obj, const char* key, int fallback) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) {
    return fallback;
  }
  constexpr double kMax = std::numeric_limits<int>::max();
  constexpr double kMin = std::numeric_limits<int>::min();
  double v = 0;
  if (it->is_number_float()) {
    v = it->get<double>();
    if (std::isnan(v)) {
      return fallback;
    }
  } else if (it->is_number_unsigned()) {
    v = static_cast<double>(it->get<std::uint64_t>());
  } else {
    v = static_cast<double>(it->get<std::int64_t>());
  }
  return static_cast<int>(std::clamp(v, kMin, kMax));
}

void ApplyUsage(const json& u, Usage& usage) {
  usage.prompt_tokens = IntField(u, "prompt_tokens", usage.prompt_tokens);
  usage.completion_tokens = IntField(u, "completion_tokens", usage.completion_tokens);
  if (const auto it = u.find("completion_tokens_details"); it != u.end() && it->is_object()) {
    usage.reasoning_tokens = IntField(*it, "reasoning_tokens", usage.reasoning_tokens);
  } else {
    usage.reasoning_tokens = IntField(u, "reasoning_tokens", usage.reasoning_tokens);  // SGLang
  }
  if (const auto it = u.find("prompt_tokens_details"); it != u.end() && it->is_object()) {
    usage.cached_tokens = IntField(*it, "cached_tokens", usage.cached_tokens);
  }
}

// The error message of an error document, or nullopt when doc is not an error. Shapes:
// OpenAI/vLLM/llama.cpp {"error":{"message":..}}, {"error":"text"}, SGLang and older vLLM
// {"object":"error","message":..}.
std::optional<std::string> ErrorOf(const json& doc) {
  if (const auto it = doc.find("error"); it != doc.end()) {
    if (it->is_string()) {
      return it->get<std::string>();
    }
    if (it->is_object()) {
      if (const std::string* m = StringField(*it, "message")) {
        return *m;
      }
      return it->dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }
  if (const std::string* obj = StringField(doc, "object"); obj != nullptr && *obj == "error") {
    if (const std::string* m = StringField(doc, "message")) {
      return *m;
    }
    return std::string("error");
  }
  return std::nullopt;
}

void SetMalformed(ChatResponse& r, std::string_view what, std::string_view data) {
  r.outcome = Outcome::kProtocol;
  r.reason = std::string(what) + ": " + Snippet(data, 80);
}

// Merges one tool-call delta into calls[index] (streaming: the delta's "index" field).
void AppendToolDelta(const json& tc, int index, std::vector<ToolCall>& calls) {
  if (index < 0 || index > 1024) {
    return;  // nonsense index: ignore rather than allocate
  }
  if (calls.size() <= static_cast<std::size_t>(index)) {
    calls.resize(static_cast<std::size_t>(index) + 1);
  }
  ToolCall& call = calls[static_cast<std::size_t>(index)];
  if (const std::string* id = StringField(tc, "id"); id != nullptr && !id->empty()) {
    call.id = *id;
  }
  const auto fn = tc.find("function");
  if (fn == tc.end() || !fn->is_object()) {
    return;
  }
  if (const std::string* name = StringField(*fn, "name"); name != nullptr && !name->empty()) {
    // Servers send the name once; some repeat it in every delta; a few stream it in pieces.
    if (call.name.empty()) {
      call.name = *name;
    } else if (*name != call.name) {
      call.name += *name;
    }
  }
  if (const auto args = fn->find("arguments"); args != fn->end()) {
    if (args->is_string()) {
      call.arguments += args->get_ref<const std::string&>();
    } else if (args->is_object()) {  // SGLang may send a dict
      call.arguments += args->dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }
}

// Reads answer text, reasoning text and tool calls from a delta (streaming) or a message
// (non-streaming) object. Returns the TokenEvent kinds it carried.
std::uint8_t ApplyMessage(const json& msg, bool streaming, ChatResponse& r) {
  std::uint8_t kinds = 0;
  if (const std::string* content = StringField(msg, "content");
      content != nullptr && !content->empty()) {
    r.answer += *content;
    kinds |= TokenEvent::kAnswer;
  }
  // Never both: servers that send both names send the same text twice.
  const std::string* reasoning = StringField(msg, "reasoning_content");
  if (reasoning == nullptr || reasoning->empty()) {
    reasoning = StringField(msg, "reasoning");
  }
  if (reasoning != nullptr && !reasoning->empty()) {
    r.reasoning += *reasoning;
    kinds |= TokenEvent::kReasoning;
  }
  if (const auto tcs = msg.find("tool_calls");
      tcs != msg.end() && tcs->is_array() && !tcs->empty()) {
    if (!streaming) {
      r.tool_calls.clear();
    }
    int position = 0;
    for (const json& tc : *tcs) {
      if (tc.is_object()) {
        AppendToolDelta(tc, streaming ? IntField(tc, "index", position) : position, r.tool_calls);
      }
      ++position;
    }
    kinds |= TokenEvent::kTool;
  }
  return kinds;
}

const json* FirstChoice(const json& doc) {
  const auto choices = doc.find("choices");
  if (choices == doc.end() || !choices->is_array()) {
    return nullptr;
  }
  for (const json& choice : *choices) {
    if (choice.is_object() && IntField(choice, "index", 0) == 0) {
      return &choice;
    }
  }
  return nullptr;
}

// Fields common to chunks and complete bodies.
void ApplyCommon(const json& doc, ChatResponse& r) {
  if (r.server_model.empty()) {
    if (const std::string* model = StringField(doc, "model")) {
      r.server_model = *model;
    }
  }
  if (const auto it = doc.find("timings"); it != doc.end() && it->is_object()) {
    r.timings_json = it->dump(-1, ' ', false, json::error_handler_t::replace);
  }
  if (const auto it = doc.find("sim"); it != doc.end() && it->is_object()) {
    r.sim_json = it->dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

}  // namespace

std::string_view ServerKindName(ServerKind kind) {
  switch (kind) {
    case ServerKind::kVllm:
      return "vllm";
    case ServerKind::kSglang:
      return "sglang";
    case ServerKind::kLlamaCpp:
      return "llama.cpp";
    case ServerKind::kOllama:
      return "ollama";
    case ServerKind::kSim:
      return "sim";
    case ServerKind::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kHttpError:
      return "http_error";
    case Outcome::kTransport:
      return "transport";
    case Outcome::kTimeout:
      return "timeout";
    case Outcome::kProtocol:
      return "malformed";
    case Outcome::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

bool CanForceLength(ServerKind kind) {
  switch (kind) {
    case ServerKind::kVllm:
    case ServerKind::kSglang:
    case ServerKind::kLlamaCpp:
    case ServerKind::kSim:
      return true;
    case ServerKind::kOllama:
    case ServerKind::kUnknown:
      break;
  }
  return false;
}

Result<void> ValidateExtraBody(std::string_view text) {
  if (Trim(text).empty()) {
    return {};
  }
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    return MakeError(ErrorCode::kUsage, "extra body is not valid JSON: " + Snippet(text, 80));
  }
  if (!doc.is_object()) {
    return MakeError(ErrorCode::kUsage, "extra body must be a JSON object: " + Snippet(text, 80));
  }
  return {};
}

std::string BuildChatBody(const ChatParams& params, ServerKind kind) {
  ordered_json body = ordered_json::object();
  body["model"] = params.model;
  ordered_json messages = ordered_json::array();
  for (const ChatMessage& m : params.messages) {
    ordered_json msg = ordered_json::object();
    msg["role"] = m.role;
    ordered_json parts;
    if (!m.content_json.empty()) {
      parts = ordered_json::parse(m.content_json, nullptr, false);
    }
    if (!m.content_json.empty() && !parts.is_discarded()) {
      msg["content"] = std::move(parts);
    } else {
      msg["content"] = m.content;
    }
    messages.push_back(std::move(msg));
  }
  body["messages"] = std::move(messages);
  if (!params.messages_json.empty()) {
    ordered_json given = ordered_json::parse(params.messages_json, nullptr, false);
    if (!given.is_discarded() && given.is_array()) {
      body["messages"] = std::move(given);
    }
  }

  // Output length. Every server honours max_tokens (llama.cpp b4748 ignores
  // max_completion_tokens); the OpenAI-style servers also get the newer name.
  body["max_tokens"] = params.max_tokens;
  if (kind == ServerKind::kVllm || kind == ServerKind::kSglang || kind == ServerKind::kSim ||
      kind == ServerKind::kUnknown) {
    body["max_completion_tokens"] = params.max_tokens;
  }
  if (params.temperature) {
    body["temperature"] = *params.temperature;
  }
  body["stream"] = params.stream;
  if (params.stream) {
    ordered_json opts = ordered_json::object();
    opts["include_usage"] = true;
    if (params.continuous_usage && kind != ServerKind::kLlamaCpp) {
      opts["continuous_usage_stats"] = true;
    }
    body["stream_options"] = std::move(opts);
    if (params.continuous_usage && kind == ServerKind::kLlamaCpp) {
      body["timings_per_token"] = true;  // timings.predicted_n on every chunk
    }
  }
  if (!Trim(params.tools_json).empty()) {
    ordered_json tools = ordered_json::parse(params.tools_json, nullptr, false);
    if (!tools.is_discarded()) {
      body["tools"] = std::move(tools);
    }
  }
  if (!Trim(params.tool_choice_json).empty()) {
    ordered_json choice = ordered_json::parse(params.tool_choice_json, nullptr, false);
    if (!choice.is_discarded()) {
      body["tool_choice"] = std::move(choice);
    }
  }
  if (params.enable_thinking) {
    if (kind == ServerKind::kOllama) {
      body["think"] = *params.enable_thinking;  // Ollama has no chat_template_kwargs
    } else {
      body["chat_template_kwargs"] = ordered_json{{"enable_thinking", *params.enable_thinking}};
    }
  }

  // force_length: the one place that knows each server's minimum-length field.
  if (params.force_length) {
    switch (kind) {
      case ServerKind::kVllm:
      case ServerKind::kSim:
      case ServerKind::kUnknown:
        body["ignore_eos"] = true;
        body["min_tokens"] = params.max_tokens;
        break;
      case ServerKind::kSglang:
        // The OpenAI route reads min_tokens (protocol.py ChatCompletionRequest); the native
        // sampling parameter is min_new_tokens. Both are sent so every version honours one.
        body["ignore_eos"] = true;
        body["min_tokens"] = params.max_tokens;
        body["min_new_tokens"] = params.max_tokens;
        break;
      case ServerKind::kLlamaCpp:
        body["ignore_eos"] = true;
        body["n_predict"] = params.max_tokens;
        break;
      case ServerKind::kOllama:
        break;  // no ignore_eos: cannot force (see CanForceLength)
    }
  }

  if (!Trim(params.extra_body_json).empty()) {
    const ordered_json extra = ordered_json::parse(params.extra_body_json, nullptr, false);
    if (!extra.is_discarded() && extra.is_object()) {
      body.merge_patch(extra);
    }
  }
  return body.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

std::string HttpErrorReason(int status, std::string_view body) {
  std::string reason = "HTTP " + std::to_string(status);
  std::string message;
  const json doc = json::parse(body, nullptr, false);
  if (!doc.is_discarded() && doc.is_object()) {
    if (auto err = ErrorOf(doc)) {
      message = std::move(*err);
    } else if (const std::string* m = StringField(doc, "message")) {
      message = *m;
    } else if (const auto d = doc.find("detail"); d != doc.end()) {  // FastAPI
      message = d->is_string() ? d->get<std::string>()
                               : d->dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }
  if (!message.empty()) {
    reason += ": " + Snippet(message, 1000);
  } else if (!Trim(body).empty()) {
    reason += ": " + Snippet(Trim(body), 200);
  }
  return reason;
}

namespace {

// Records a token-bearing event (kinds != 0) after a chunk was applied. previous_*: the
// response's cumulative counts before the chunk; has_*: the chunk carried them.
void AddTokenEvent(ChatResponse& r, std::uint8_t kinds, std::int64_t t_ns, bool has_usage,
                   int previous_completion, bool has_predicted, int previous_predicted) {
  if (kinds == 0) {
    return;
  }
  TokenEvent ev;
  ev.t_ns = t_ns;
  ev.kinds = kinds;
  // Per-event token counts need usage on consecutive events (continuous_usage_stats). A usage
  // block seen only on a late chunk carries the total, not this event's share.
  if (has_usage && r.usage.completion_tokens >= 0 &&
      (previous_completion >= 0 || r.events.empty())) {
    ev.tokens = r.usage.completion_tokens - std::max(previous_completion, 0);
  } else if (has_predicted && (previous_predicted >= 0 || r.events.empty())) {
    // llama.cpp timings_per_token: the cumulative count of generated tokens.
    ev.tokens = std::max(0, r.timings_predicted_n - std::max(previous_predicted, 0));
  }
  ev.answer_end = static_cast<std::uint32_t>(r.answer.size());
  ev.reasoning_end = static_cast<std::uint32_t>(r.reasoning.size());
  r.events.push_back(ev);
}

// The fast path (client/chunk_scan.h): a chunk ScanChunk accepted, applied as the full parser
// would apply it.
void ApplyScannedChunk(const detail::ChunkFields& f, std::int64_t t_ns, ChatResponse& r) {
  if (r.server_model.empty() && f.model.present) {
    detail::AppendJsonText(f.model, r.server_model);
  }
  const int previous_completion = r.usage.completion_tokens;
  if (f.has_usage) {
    Usage& u = r.usage;
    if (f.prompt_tokens.present) {
      u.prompt_tokens = f.prompt_tokens.value;
    }
    if (f.completion_tokens.present) {
      u.completion_tokens = f.completion_tokens.value;
    }
    const detail::JsonInt& reasoning =
        f.completion_details ? f.details_reasoning_tokens : f.reasoning_tokens;
    if (reasoning.present) {
      u.reasoning_tokens = reasoning.value;
    }
    if (f.prompt_details && f.cached_tokens.present) {
      u.cached_tokens = f.cached_tokens.value;
    }
  }
  std::uint8_t kinds = 0;
  if (f.has_choice) {
    if (f.content.present && !f.content.raw.empty()) {
      detail::AppendJsonText(f.content, r.answer);
      kinds |= TokenEvent::kAnswer;
    }
    // Never both (as ApplyMessage).
    const detail::JsonText& reasoning =
        f.reasoning_content.present && !f.reasoning_content.raw.empty() ? f.reasoning_content
                                                                        : f.reasoning;
    if (reasoning.present && !reasoning.raw.empty()) {
      detail::AppendJsonText(reasoning, r.reasoning);
      kinds |= TokenEvent::kReasoning;
    }
    if (f.finish_reason.present) {
      r.finish_reason.clear();
      detail::AppendJsonText(f.finish_reason, r.finish_reason);
    }
  }
  AddTokenEvent(r, kinds, t_ns, f.has_usage, previous_completion, false, r.timings_predicted_n);
}

}  // namespace

bool ApplyStreamEvent(std::string_view data, std::int64_t t_ns, ChatResponse& r) {
  return detail::ApplyStreamEventImpl(data, t_ns, r, /*allow_fast=*/true);
}

bool detail::ApplyStreamEventImpl(std::string_view data, std::int64_t t_ns, ChatResponse& r,
                                  bool allow_fast) {
  std::string_view payload = Trim(data);
  if (payload.empty()) {
    return true;  // an empty data line: a keep-alive some servers send
  }
  if (payload == "[DONE]") {
    r.stream_done = true;
    return true;
  }
  std::optional<std::string> repaired = RepairUtf8(payload);
  if (repaired) {
    payload = *repaired;
    r.invalid_utf8 = true;
  }
  if (allow_fast) {
    detail::ChunkFields fields;
    if (detail::ScanChunk(payload, fields)) {
      ApplyScannedChunk(fields, t_ns, r);
      return true;
    }
  }
  const json doc = json::parse(payload, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    SetMalformed(r, "malformed event", payload);
    return false;
  }
  if (auto err = ErrorOf(doc)) {
    r.outcome = Outcome::kHttpError;
    r.reason = "error in stream: " + Snippet(*err, 1000);
    r.error_body.assign(payload.substr(0, kErrorBodyCap));
    return false;
  }
  ApplyCommon(doc, r);
  const int previous_completion = r.usage.completion_tokens;
  const int previous_predicted = r.timings_predicted_n;
  bool has_predicted = false;
  if (const auto t = doc.find("timings"); t != doc.end() && t->is_object()) {
    const int n = IntField(*t, "predicted_n", -1);
    if (n >= 0) {
      r.timings_predicted_n = n;
      has_predicted = true;
    }
  }
  bool has_usage = false;
  if (const auto u = doc.find("usage"); u != doc.end() && u->is_object()) {
    ApplyUsage(*u, r.usage);
    has_usage = true;
  }
  std::uint8_t kinds = 0;
  if (const json* choice = FirstChoice(doc)) {
    if (const auto delta = choice->find("delta"); delta != choice->end() && delta->is_object()) {
      kinds = ApplyMessage(*delta, /*streaming=*/true, r);
    } else if (const std::string* text = StringField(*choice, "text");
               text != nullptr && !text->empty()) {  // /v1/completions chunks
      r.answer += *text;
      kinds = TokenEvent::kAnswer;
    }
    if (const std::string* fr = StringField(*choice, "finish_reason")) {
      r.finish_reason = *fr;
    }
  }
  AddTokenEvent(r, kinds, t_ns, has_usage, previous_completion, has_predicted, previous_predicted);
  return true;
}

bool ApplyCompletionBody(std::string_view body, std::int64_t t_ns, ChatResponse& r) {
  std::optional<std::string> repaired = RepairUtf8(body);
  if (repaired) {
    body = *repaired;
    r.invalid_utf8 = true;
  }
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    SetMalformed(r, "malformed response body", Trim(body));
    return false;
  }
  if (auto err = ErrorOf(doc)) {
    r.outcome = Outcome::kHttpError;
    r.reason = "error in response: " + Snippet(*err, 1000);
    r.error_body.assign(body.substr(0, kErrorBodyCap));
    return false;
  }
  ApplyCommon(doc, r);
  if (const auto u = doc.find("usage"); u != doc.end() && u->is_object()) {
    ApplyUsage(*u, r.usage);
  }
  std::uint8_t kinds = 0;
  if (const json* choice = FirstChoice(doc)) {
    if (const auto msg = choice->find("message"); msg != choice->end() && msg->is_object()) {
      kinds = ApplyMessage(*msg, /*streaming=*/false, r);
    } else if (const std::string* text = StringField(*choice, "text");
               text != nullptr && !text->empty()) {
      r.answer += *text;
      kinds = TokenEvent::kAnswer;
    }
    if (const std::string* fr = StringField(*choice, "finish_reason")) {
      r.finish_reason = *fr;
    }
  }
  if (kinds != 0) {
    TokenEvent ev;
    ev.t_ns = t_ns;
    ev.kinds = kinds;
    ev.tokens = r.usage.completion_tokens;
    ev.answer_end = static_cast<std::uint32_t>(r.answer.size());
    ev.reasoning_end = static_cast<std::uint32_t>(r.reasoning.size());
    r.events.push_back(ev);
  }
  return true;
}

}  // namespace sb::client
