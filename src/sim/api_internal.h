// What api.cpp (the chat request) and api_tokens.cpp (/tokenize, /detokenize,
// /apply-template) share: replies in vLLM's words and the scan of a chat's messages. Internal to
// src/sim.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/api.h"
#include "sim/tokenizer.h"

namespace sb::sim::api_detail {

// Serialises without throwing on invalid UTF-8 (e.g. a marker excerpt cut mid-character).
template <typename J>
std::string Dump(const J& j) {
  return j.dump(-1, ' ', false, nlohmann::detail::error_handler_t::replace);
}

// A 400 in vLLM's shape.
Reply BadRequest(const std::string& message);

// Parse failures become a 400 with nlohmann's message, the way vLLM reports pydantic errors.
std::variant<nlohmann::json, Reply> ParseJson(std::string_view body);

// What a scan over the messages found.
struct PromptScan {
  int tokens = kChatOverheadTokens;
  int images = 0;
  int videos = 0;
  int audios = 0;
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  std::vector<std::string_view> texts;  // the text parts, in order (views into the json)
  std::vector<std::int64_t> ids;        // filled only when want_ids
  int chars_per_token = 0;              // in: SimOptions::chars_per_token
};

// Walks `messages` (the chat template of docs/simulator.md). Returns an error reply for a
// malformed message. `want_ids` also lists the template's token ids.
std::optional<Reply> ScanMessages(const nlohmann::json& messages, bool want_ids, PromptScan& scan);

// The body of a chat, tokenize or detokenize request: a JSON object that names the served
// model or none (ParseJson, then a 404 for a model other than the one served); else the 400 or 404
// reply, in vLLM's words.
std::variant<nlohmann::json, Reply> ParseRequest(std::string_view body, const SimOptions& options);

}  // namespace sb::sim::api_detail
