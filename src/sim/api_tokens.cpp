// The simulator's token endpoints, as vLLM serves them: /tokenize, /detokenize and the chat
// template (docs/simulator.md), with the vocabulary /detokenize reads.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/api.h"
#include "sim/api_internal.h"
#include "sim/chunks.h"
#include "sim/tokenizer.h"

namespace sb::sim {

using api_detail::BadRequest;
using api_detail::Dump;
using api_detail::ParseJson;
using api_detail::ParseRequest;
using api_detail::PromptScan;
using api_detail::ScanMessages;
using nlohmann::json;
using ojson = nlohmann::ordered_json;

Vocabulary::Vocabulary() {
  for (const std::string_view word : FillerWords()) {
    Add(word.substr(1));  // without the leading space, which the tokenizer drops
  }
  for (char c = 33; c < 127; ++c) {
    Add(std::string_view(&c, 1));
  }
}

void Vocabulary::Add(std::string_view token) {
  constexpr std::size_t kCap = std::size_t{1} << 20;
  if (by_id_.size() >= kCap) {
    return;
  }
  by_id_.try_emplace(TokenId(token), token);
}

const std::string* Vocabulary::Find(std::int64_t id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &it->second;
}

Reply Tokenize(std::string_view body, const SimOptions& options, Vocabulary& vocabulary) {
  auto parsed = ParseRequest(body, options);
  if (auto* reply = std::get_if<Reply>(&parsed)) {
    return std::move(*reply);
  }
  const json& j = std::get<json>(parsed);
  std::vector<std::int64_t> ids;
  std::vector<std::string_view> pieces;  // llama.cpp with_pieces
  bool llama = false;
  if (const auto it = j.find("messages"); it != j.end()) {
    if (options.plain_tokenize) {
      return BadRequest("content: Field required (this server tokenizes plain text only)");
    }
    PromptScan scan;
    scan.chars_per_token = options.chars_per_token;
    if (auto err = ScanMessages(*it, true, scan)) {
      return std::move(*err);
    }
    for (const auto text : scan.texts) {
      for (const auto t : SplitTokens(text, options.chars_per_token)) {
        vocabulary.Add(t);
      }
    }
    ids = std::move(scan.ids);
  } else {
    const char* key = nullptr;
    if (j.contains("prompt")) {
      key = "prompt";
    } else if (j.contains("content")) {
      key = "content";
      llama = true;
    } else {
      return BadRequest("prompt: Field required (or messages, or llama.cpp's content)");
    }
    const json& text = j.at(key);
    if (!text.is_string()) {
      return BadRequest(std::string(key) + ": Input should be a valid string");
    }
    for (const auto t : SplitTokens(text.get_ref<const std::string&>(), options.chars_per_token)) {
      vocabulary.Add(t);
      ids.push_back(TokenId(t));
      pieces.push_back(t);
    }
  }
  ojson out;
  if (llama) {
    const auto wp = j.find("with_pieces");
    if (wp != j.end() && wp->is_boolean() && wp->get<bool>()) {
      ojson arr = ojson::array();
      for (std::size_t i = 0; i < ids.size(); ++i) {
        arr.push_back(ojson{{"id", ids[i]}, {"piece", pieces[i]}});
      }
      out["tokens"] = std::move(arr);
    } else {
      out["tokens"] = ids;
    }
  } else {
    out["count"] = ids.size();
    out["max_model_len"] = options.max_model_len;
    out["tokens"] = ids;
    out["token_strs"] = nullptr;
  }
  Reply r;
  r.body = Dump(out);
  return r;
}

Reply ApplyTemplate(std::string_view body) {
  auto parsed = ParseJson(body);
  if (auto* reply = std::get_if<Reply>(&parsed)) {
    return std::move(*reply);
  }
  const json& j = std::get<json>(parsed);
  const auto messages = j.is_object() ? j.find("messages") : j.end();
  if (!j.is_object() || messages == j.end() || !messages->is_array() || messages->empty()) {
    return BadRequest("messages: Field required (a non-empty list)");
  }
  std::string prompt = "^";
  for (const json& m : *messages) {
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") ||
        !m["content"].is_string()) {
      return BadRequest(
          "messages: each needs a role and a string content (the simulator's "
          "/apply-template takes text only)");
    }
    const std::string& role = m["role"].get_ref<const std::string&>();
    const char* mark = role == "system" || role == "developer" ? "$"
                       : role == "user"                        ? "@"
                       : role == "assistant"                   ? "&"
                       : role == "tool"                        ? "%"
                                                               : "?";
    prompt += std::string("<") + mark + ": " + m["content"].get<std::string>() + " >";
  }
  prompt += "!";
  ojson out;
  out["prompt"] = prompt;
  Reply r;
  r.body = Dump(out);
  return r;
}

Reply Detokenize(std::string_view body, const SimOptions& options, const Vocabulary& vocabulary) {
  auto parsed = ParseRequest(body, options);
  if (auto* reply = std::get_if<Reply>(&parsed)) {
    return std::move(*reply);
  }
  const json& j = std::get<json>(parsed);
  const auto it = j.find("tokens");
  if (it == j.end() || !it->is_array()) {
    return BadRequest("tokens: Field required (a list of token ids)");
  }
  std::string text;
  for (const auto& v : *it) {
    if (!v.is_number_integer()) {
      return BadRequest("tokens: Input should be a list of integers");
    }
    const auto id = v.get<std::int64_t>();
    if (id < kFirstTextId) {
      if (id == kImageId || id == kVideoId || id == kAudioId) {
        continue;  // media placeholders have no text
      }
      continue;  // chat template markers
    }
    const std::string* token = vocabulary.Find(id);
    if (token == nullptr) {
      return BadRequest("token id " + std::to_string(id) +
                        " is unknown to the simulator (ids become known once /tokenize saw them)");
    }
    if (!text.empty()) {
      text += ' ';
    }
    text += *token;
  }
  ojson out;
  out["prompt"] = text;
  out["content"] = text;
  Reply r;
  r.body = Dump(out);
  return r;
}

}  // namespace sb::sim
