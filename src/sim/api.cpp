#include "sim/api.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/api_internal.h"
#include "sim/chunks.h"
#include "sim/prefix_cache.h"
#include "sim/tokenizer.h"
#include "sim/tool_calls.h"

namespace sb::sim {

using api_detail::BadRequest;
using api_detail::Dump;
using api_detail::ParseRequest;
using api_detail::PromptScan;
using api_detail::ScanMessages;
using nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

std::string_view ErrorType(int status) {
  switch (status) {
    case 400:
      return "BadRequestError";
    case 404:
      return "NotFoundError";
    case 429:
      return "RateLimitError";
    case 500:
      return "InternalServerError";
    case 503:
      return "ServiceUnavailableError";
    default:
      return "Error";
  }
}

// Reads an optional integer field; null counts as absent.
std::variant<std::optional<long long>, Reply> OptionalInt(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    return std::optional<long long>{};
  }
  if (it->is_number_integer()) {
    return std::optional<long long>{it->get<long long>()};
  }
  if (it->is_number_float()) {
    const double v = it->get<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
      return std::optional<long long>{static_cast<long long>(v)};
    }
  }
  return BadRequest(std::string(key) + ": Input should be a valid integer");
}

std::variant<bool, Reply> OptionalBool(const json& j, const char* key, bool fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    return fallback;
  }
  if (!it->is_boolean()) {
    return BadRequest(std::string(key) + ": Input should be a valid boolean");
  }
  return it->get<bool>();
}

std::int64_t RoleId(std::string_view role) {
  if (role == "system" || role == "developer") {
    return kRoleSystemId;
  }
  if (role == "user") {
    return kRoleUserId;
  }
  if (role == "assistant") {
    return kRoleAssistantId;
  }
  if (role == "tool") {
    return kRoleToolId;
  }
  return kRoleOtherId;
}

// Reads [[sim:...]] markers from the text parts.
std::optional<Reply> ReadMarkers(const std::vector<std::string_view>& texts, ChatRequest& req) {
  constexpr std::string_view kOpen = "[[sim:";
  for (const std::string_view text : texts) {
    std::size_t pos = 0;
    while ((pos = text.find(kOpen, pos)) != std::string_view::npos) {
      const std::size_t body = pos + kOpen.size();
      const std::size_t close = text.find("]]", body);
      if (close == std::string_view::npos) {
        return BadRequest("unterminated simulator marker: " + std::string(text.substr(pos, 40)));
      }
      const std::string_view marker = text.substr(body, close - body);
      pos = close + 2;
      if (marker.starts_with("fault=")) {
        const std::string_view kind = marker.substr(6);
        const auto fault = ParseFault(kind);
        if (!fault) {
          return BadRequest("unknown simulator fault '" + std::string(kind) +
                            "' in [[sim:fault=...]] (expected " + std::string(kFaultList) + ")");
        }
        req.forced_fault = *fault;
      } else if (marker.starts_with("tokens=")) {
        const std::string_view num = marker.substr(7);
        int n = 0;
        const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
        if (num.empty() || ec != std::errc() || p != num.data() + num.size() || n < 1) {
          return BadRequest("invalid simulator marker [[sim:tokens=" + std::string(num) +
                            "]] (expected a positive integer)");
        }
        req.forced_tokens = n;
      } else if (marker == "loop") {
        req.loop = true;
      } else {
        return BadRequest("unknown simulator marker [[sim:" + std::string(marker) + "]]");
      }
    }
  }
  return std::nullopt;
}

// The scripted answer whose key equals the text parts joined by "\n", or nullptr.
const SimAnswer* FindAnswer(const std::vector<std::string_view>& texts, const SimOptions& options) {
  if (options.answers.empty()) {
    return nullptr;
  }
  std::size_t size = texts.empty() ? 0 : texts.size() - 1;
  for (const std::string_view t : texts) {
    size += t.size();
  }
  for (const SimAnswer& a : options.answers) {
    if (a.key.size() != size) {
      continue;
    }
    std::size_t pos = 0;
    bool equal = true;
    for (std::size_t i = 0; i < texts.size() && equal; ++i) {
      if (i > 0) {
        equal = a.key[pos++] == '\n';
      }
      equal = equal && a.key.compare(pos, texts[i].size(), texts[i]) == 0;
      pos += texts[i].size();
    }
    if (equal) {
      return &a;
    }
  }
  return nullptr;
}

void ApplyAnswer(const SimAnswer& a, ChatRequest& req) {
  req.scripted = true;
  req.answer_words = AnswerPieces(a.content);
  int call_index = 0;
  for (const SimToolCall& call : a.tool_calls) {
    ChatRequest::ToolToken first;
    first.call = call_index;
    first.name = call.name;
    first.id = "call_" + std::to_string(call_index) + "_" +
               std::to_string(Fnv1a64(call.name + call.arguments) % 100000000ULL);
    req.tool_tokens.push_back(std::move(first));
    for (std::string& piece : AnswerPieces(call.arguments)) {
      req.tool_tokens.push_back({call_index, "", "", std::move(piece)});
    }
    ++call_index;
  }
  if (!req.forced_tokens) {
    req.forced_tokens =
        std::max<int>(1, static_cast<int>(req.answer_words.size() + req.tool_tokens.size()));
  }
  if (a.reasoning_tokens >= 0) {
    req.reasoning_tokens = a.reasoning_tokens;
  }
  req.loop = req.loop || a.loop;
  if (!a.fault.empty() && !req.forced_fault) {
    req.forced_fault = ParseFault(a.fault);
  }
}

std::string ContextMessage(const SimOptions& options, int prompt_tokens) {
  return "This model's maximum context length is " + std::to_string(options.max_model_len) +
         " tokens. However, your request has " + std::to_string(prompt_tokens) +
         " input tokens. Please reduce the length of the input messages.";
}

}  // namespace

namespace api_detail {

Reply BadRequest(const std::string& message) {
  return ErrorReply(400, message);
}

// Parse failures become a 400 with nlohmann's message, the way vLLM reports pydantic errors.
std::variant<json, Reply> ParseJson(std::string_view body) {
  try {
    return json::parse(body.begin(), body.end());
  } catch (const json::parse_error& e) {
    return BadRequest(std::string("JSON decode error: ") + e.what());
  }
}

// Walks `messages` (the chat template of docs/simulator.md). Returns an error reply for a
// malformed message. `want_ids` also lists the template's token ids.
std::optional<Reply> ScanMessages(const json& messages, bool want_ids, PromptScan& scan) {
  if (!messages.is_array()) {
    return BadRequest("messages: Input should be a valid list");
  }
  if (messages.empty()) {
    return BadRequest("messages: List should have at least 1 item");
  }
  if (want_ids) {
    scan.ids.push_back(kBosId);
  }
  std::size_t index = 0;
  for (const auto& m : messages) {
    const std::string where = "messages[" + std::to_string(index++) + "]";
    if (!m.is_object()) {
      return BadRequest(where + ": Input should be a valid dictionary");
    }
    const auto role_it = m.find("role");
    if (role_it == m.end() || !role_it->is_string()) {
      return BadRequest(where + ".role: Field required");
    }
    const std::string_view role = role_it->get_ref<const std::string&>();
    scan.hash = Fnv1a64(role, scan.hash);
    scan.tokens += kMessageOverheadTokens;
    if (want_ids) {
      scan.ids.insert(scan.ids.end(), {kMessageStartId, RoleId(role), kMessageSepId});
    }
    auto add_text = [&](const std::string& text) {
      scan.tokens += CountTokens(text, scan.chars_per_token);
      scan.hash = Fnv1a64(text, scan.hash);
      scan.texts.push_back(text);
      if (want_ids) {
        for (const auto t : SplitTokens(text, scan.chars_per_token)) {
          scan.ids.push_back(TokenId(t));
        }
      }
    };
    auto add_media = [&](int& counter, std::int64_t id) {
      ++counter;
      scan.tokens += kMediaPartTokens;
      if (want_ids) {
        scan.ids.insert(scan.ids.end(), kMediaPartTokens, id);
      }
    };
    const auto content_it = m.find("content");
    if (content_it != m.end() && !content_it->is_null()) {
      const json& content = *content_it;
      if (content.is_string()) {
        add_text(content.get_ref<const std::string&>());
      } else if (content.is_array()) {
        std::size_t pi = 0;
        for (const auto& part : content) {
          const std::string pwhere = where + ".content[" + std::to_string(pi++) + "]";
          if (!part.is_object()) {
            return BadRequest(pwhere + ": Input should be a valid dictionary");
          }
          const auto type_it = part.find("type");
          if (type_it == part.end() || !type_it->is_string()) {
            return BadRequest(pwhere + ".type: Field required");
          }
          const std::string& type = type_it->get_ref<const std::string&>();
          if (type == "text") {
            const auto text_it = part.find("text");
            if (text_it == part.end() || !text_it->is_string()) {
              return BadRequest(pwhere + ".text: Field required");
            }
            add_text(text_it->get_ref<const std::string&>());
          } else if (type == "image_url") {
            add_media(scan.images, kImageId);
          } else if (type == "video_url") {
            add_media(scan.videos, kVideoId);
          } else if (type == "input_audio" || type == "audio_url") {
            add_media(scan.audios, kAudioId);
          } else {
            return BadRequest("Unknown part type: " + type);
          }
        }
      } else {
        return BadRequest(where + ".content: Input should be a valid string or list");
      }
    }
    if (want_ids) {
      scan.ids.push_back(kMessageEndId);
    }
  }
  if (want_ids) {
    scan.ids.push_back(kAssistantId);
  }
  return std::nullopt;
}

std::optional<Reply> CheckModel(const json& j, const SimOptions& options) {
  const auto it = j.find("model");
  if (it == j.end() || it->is_null()) {
    return std::nullopt;  // vLLM serves its one model when none is named
  }
  if (!it->is_string()) {
    return BadRequest("model: Input should be a valid string");
  }
  const std::string& model = it->get_ref<const std::string&>();
  if (model != options.model) {
    return ErrorReply(404, "The model `" + model + "` does not exist.");
  }
  return std::nullopt;
}

std::variant<json, Reply> ParseRequest(std::string_view body, const SimOptions& options) {
  auto parsed = ParseJson(body);
  if (std::holds_alternative<Reply>(parsed)) {
    return parsed;
  }
  const json& j = std::get<json>(parsed);
  if (!j.is_object()) {
    return BadRequest("Input should be a valid dictionary or object");
  }
  if (auto err = CheckModel(j, options)) {
    return std::move(*err);
  }
  return parsed;
}

}  // namespace api_detail

Reply ErrorReply(int status, std::string_view message) {
  ojson body;
  body["error"] = ojson{
      {"message", message}, {"type", ErrorType(status)}, {"param", nullptr}, {"code", status}};
  Reply r;
  r.status = status;
  r.body = Dump(body);
  return r;
}

namespace {

// The answer: a scripted one the prompt names, a drawn tool call, or the arithmetic the last
// message asks for (else filler words).
void ChooseAnswer(const PromptScan& scan, const json& j, const SimOptions& options,
                  ChatRequest& req) {
  if (const SimAnswer* answer = FindAnswer(scan.texts, options)) {
    ApplyAnswer(*answer, req);
  } else if (auto call = DrawToolCall(j.value("tools", json()), options.tool_call_probability,
                                      options.seed, scan.hash)) {
    SimAnswer drawn;  // a generated tool call (tool_calls.h), streamed like a scripted one
    drawn.tool_calls.push_back(std::move(*call));
    ApplyAnswer(drawn, req);
    req.scripted = false;
  } else {
    for (auto it = scan.texts.rbegin(); it != scan.texts.rend(); ++it) {
      if (auto product = ArithmeticAnswer(*it)) {
        req.answer_words = {" " + std::to_string(*product)};
        break;
      }
    }
  }
}

// max_completion_tokens (or max_tokens) and min_tokens, checked as vLLM checks them.
std::optional<Reply> ReadTokenLimits(const json& j, ChatRequest& req) {
  // max_completion_tokens wins over the deprecated max_tokens, as in vLLM.
  auto mct = OptionalInt(j, "max_completion_tokens");
  if (auto* reply = std::get_if<Reply>(&mct)) {
    return std::move(*reply);
  }
  auto mt = OptionalInt(j, "max_tokens");
  if (auto* reply = std::get_if<Reply>(&mt)) {
    return std::move(*reply);
  }
  std::optional<long long> max_tokens = std::get<std::optional<long long>>(mct);
  if (!max_tokens) {
    max_tokens = std::get<std::optional<long long>>(mt);
  }
  if (max_tokens) {
    if (*max_tokens < 1) {
      return BadRequest("max_tokens must be at least 1, got " + std::to_string(*max_tokens) + ".");
    }
    req.max_tokens =
        static_cast<int>(std::min<long long>(*max_tokens, std::numeric_limits<int>::max()));
  }
  auto min_tokens = OptionalInt(j, "min_tokens");
  if (auto* reply = std::get_if<Reply>(&min_tokens)) {
    return std::move(*reply);
  }
  if (const auto v = std::get<std::optional<long long>>(min_tokens)) {
    if (*v < 0) {
      return BadRequest("min_tokens must be greater than or equal to 0, got " + std::to_string(*v) +
                        ".");
    }
    if (req.max_tokens && *v > *req.max_tokens) {
      return BadRequest("min_tokens must be less than or equal to max_tokens=" +
                        std::to_string(*req.max_tokens) + ", got " + std::to_string(*v) + ".");
    }
    req.min_tokens = static_cast<int>(std::min<long long>(*v, std::numeric_limits<int>::max()));
  }
  return std::nullopt;
}

// ignore_eos, stream and stream_options.
std::optional<Reply> ReadStreamOptions(const json& j, ChatRequest& req) {
  const struct {
    const char* key;
    bool* field;
  } bools[] = {{"ignore_eos", &req.ignore_eos}, {"stream", &req.stream}};

  for (const auto& [key, field] : bools) {
    auto v = OptionalBool(j, key, false);
    if (auto* reply = std::get_if<Reply>(&v)) {
      return std::move(*reply);
    }
    *field = std::get<bool>(v);
  }
  if (const auto it = j.find("stream_options"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) {
      return BadRequest("stream_options: Input should be a valid dictionary");
    }
    if (!req.stream) {
      return BadRequest("Stream options can only be defined when `stream=True`.");
    }
    auto usage = OptionalBool(*it, "include_usage", false);
    if (auto* reply = std::get_if<Reply>(&usage)) {
      return std::move(*reply);
    }
    auto continuous = OptionalBool(*it, "continuous_usage_stats", false);
    if (auto* reply = std::get_if<Reply>(&continuous)) {
      return std::move(*reply);
    }
    req.include_usage = std::get<bool>(usage);
    req.continuous_usage = std::get<bool>(continuous);
  }
  return std::nullopt;
}

// Thinking on or off (chat_template_kwargs), and a temperature that is a number.
std::optional<Reply> ReadThinking(const json& j, const SimOptions& options, ChatRequest& req) {
  req.thinking = options.thinking_by_default;
  if (const auto it = j.find("chat_template_kwargs"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) {
      return BadRequest("chat_template_kwargs: Input should be a valid dictionary");
    }
    for (const char* key : {"enable_thinking", "thinking"}) {
      if (const auto k = it->find(key); k != it->end() && k->is_boolean()) {
        req.thinking = k->get<bool>();
      }
    }
  }
  if (const auto it = j.find("temperature"); it != j.end() && !it->is_null() && !it->is_number()) {
    return BadRequest("temperature: Input should be a valid number");
  }
  return std::nullopt;
}

// The prompt and the asked-for tokens within the model's context, in vLLM's words.
std::optional<Reply> CheckContext(const SimOptions& options, const ChatRequest& req) {
  if (req.prompt_tokens >= options.max_model_len) {
    return BadRequest(ContextMessage(options, req.prompt_tokens));
  }
  if (req.max_tokens &&
      static_cast<long long>(req.prompt_tokens) + *req.max_tokens > options.max_model_len) {
    return BadRequest(
        "'max_tokens' or 'max_completion_tokens' is too large: " + std::to_string(*req.max_tokens) +
        ". This model's maximum context length is " + std::to_string(options.max_model_len) +
        " tokens and your request has " + std::to_string(req.prompt_tokens) + " input tokens (" +
        std::to_string(*req.max_tokens) + " > " + std::to_string(options.max_model_len) + " - " +
        std::to_string(req.prompt_tokens) + ").");
  }
  return std::nullopt;
}

}  // namespace

std::variant<ChatRequest, Reply> ParseChatRequest(std::string_view body,
                                                  const SimOptions& options) {
  auto parsed = ParseRequest(body, options);
  if (auto* reply = std::get_if<Reply>(&parsed)) {
    return std::move(*reply);
  }
  const json& j = std::get<json>(parsed);
  const auto messages_it = j.find("messages");
  if (messages_it == j.end()) {
    return BadRequest("messages: Field required");
  }
  PromptScan scan;
  scan.chars_per_token = options.chars_per_token;
  const bool caching = options.prefix_cache_tokens > 0;
  if (auto err = ScanMessages(*messages_it, caching, scan)) {
    return std::move(*err);
  }

  // Rejected modalities, in vLLM's words (limit 0 per prompt).
  const struct {
    const char* name;
    int count;
  } modalities[] = {{"image", scan.images}, {"video", scan.videos}, {"audio", scan.audios}};

  for (const auto& [name, count] : modalities) {
    if (count == 0) {
      continue;
    }
    for (const auto& r : options.reject) {
      if (r == name) {
        return BadRequest("At most 0 " + std::string(name) + "(s) may be provided in one prompt.");
      }
    }
  }

  ChatRequest req;
  req.prompt_tokens = scan.tokens;
  req.text_hash = scan.hash;
  if (caching) {
    req.block_keys = BlockKeys(scan.ids, options.block_tokens);
  }
  if (!scan.texts.empty()) {
    std::string_view last = scan.texts.back();
    last = last.substr(0, std::min(last.find('\n'), std::size_t{80}));
    req.log_text.assign(last);
  }
  if (auto err = ReadMarkers(scan.texts, req)) {
    return std::move(*err);
  }
  ChooseAnswer(scan, j, options, req);

  if (auto err = ReadTokenLimits(j, req)) {
    return std::move(*err);
  }
  if (auto err = ReadStreamOptions(j, req)) {
    return std::move(*err);
  }
  if (auto err = ReadThinking(j, options, req)) {
    return std::move(*err);
  }
  if (auto err = CheckContext(options, req)) {
    return std::move(*err);
  }
  return req;
}

std::string ModelsBody(const SimOptions& options, std::int64_t created) {
  ojson permission = {{"id", "modelperm-servebench-sim"},
                      {"object", "model_permission"},
                      {"created", created},
                      {"allow_create_engine", false},
                      {"allow_sampling", true},
                      {"allow_logprobs", true},
                      {"allow_search_indices", false},
                      {"allow_view", true},
                      {"allow_fine_tuning", false},
                      {"organization", "*"},
                      {"group", nullptr},
                      {"is_blocking", false}};
  ojson model = {{"id", options.model},
                 {"object", "model"},
                 {"created", created},
                 {"owned_by", "servebench-sim"},
                 {"root", options.model},
                 {"parent", nullptr},
                 {"max_model_len", options.max_model_len},
                 {"permission", ojson::array({permission})}};
  ojson out = {{"object", "list"}, {"data", ojson::array({model})}};
  return Dump(out);
}

std::string TruthJson(const Truth& t) {
  const double queue_ms = static_cast<double>(t.start_ns - t.recv_ns) / 1e6;
  const double ttft_ms = static_cast<double>(t.first_token_ns - t.recv_ns) / 1e6;
  double decode_tok_s = 0.0;
  if (t.completion_tokens > 1 && t.last_token_ns > t.first_token_ns) {
    decode_tok_s = static_cast<double>(t.completion_tokens - 1) * 1e9 /
                   static_cast<double>(t.last_token_ns - t.first_token_ns);
  }
  ojson j = {{"recv_ns", t.recv_ns},
             {"start_ns", t.start_ns},
             {"first_token_ns", t.first_token_ns},
             {"last_token_ns", t.last_token_ns},
             {"queue_ms", queue_ms},
             {"ttft_ms", ttft_ms},
             {"decode_tok_s", decode_tok_s},
             {"prompt_tokens", t.prompt_tokens},
             {"completion_tokens", t.completion_tokens},
             {"reasoning_tokens", t.reasoning_tokens},
             {"steps", t.steps},
             {"drafts", t.drafts},
             {"draft_tokens", t.draft_tokens},
             {"accepted_tokens", t.accepted_tokens},
             {"max_emit_lag_us", static_cast<double>(t.max_emit_lag_ns) / 1e3},
             {"first_emit_lag_us", static_cast<double>(t.first_emit_lag_ns) / 1e3}};
  if (t.read_lag_ns >= 0) {
    j["read_lag_us"] = static_cast<double>(t.read_lag_ns) / 1e3;
  }
  if (t.cached_tokens >= 0) {
    j["cached_tokens"] = t.cached_tokens;
  }
  return Dump(j);
}

std::string CompletionBody(std::string_view id, std::int64_t created, const SimOptions& options,
                           std::string_view reasoning, std::string_view content,
                           std::string_view finish_reason, const Truth& truth,
                           const std::vector<SimToolCall>& tool_calls,
                           const std::vector<std::string>& tool_ids) {
  ojson message = {{"role", "assistant"}};
  message["content"] = content.empty() && (!reasoning.empty() || !tool_calls.empty())
                           ? ojson(nullptr)
                           : ojson(content);
  message[options.reasoning_field] = reasoning.empty() ? ojson(nullptr) : ojson(reasoning);
  message["tool_calls"] = ojson::array();
  for (std::size_t i = 0; i < tool_calls.size(); ++i) {
    message["tool_calls"].push_back(ojson{
        {"id", i < tool_ids.size() ? tool_ids[i] : "call_" + std::to_string(i)},
        {"type", "function"},
        {"function", {{"name", tool_calls[i].name}, {"arguments", tool_calls[i].arguments}}}});
  }
  ojson choice = {{"index", 0},
                  {"message", std::move(message)},
                  {"logprobs", nullptr},
                  {"finish_reason", finish_reason},
                  {"stop_reason", nullptr}};
  std::string usage;
  AppendUsageJson(usage, truth.prompt_tokens, truth.completion_tokens, truth.reasoning_tokens,
                  truth.cached_tokens);
  ojson out = {{"id", id},
               {"object", "chat.completion"},
               {"created", created},
               {"model", options.model},
               {"choices", ojson::array({std::move(choice)})},
               {"usage", ojson::parse(usage)},
               {"prompt_logprobs", nullptr},
               {"sim", ojson::parse(TruthJson(truth))}};
  return Dump(out);
}

}  // namespace sb::sim
