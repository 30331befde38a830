#include "sim/chunks.h"

namespace sb::sim {

void AppendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xF]);
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
}

void AppendUsageJson(std::string& out, int prompt_tokens, long long completion_tokens,
                     int reasoning_tokens, int cached_tokens) {
  out += "{\"prompt_tokens\":";
  out += std::to_string(prompt_tokens);
  out += ",\"total_tokens\":";
  out += std::to_string(prompt_tokens + completion_tokens);
  out += ",\"completion_tokens\":";
  out += std::to_string(completion_tokens);
  out += ",\"completion_tokens_details\":{\"reasoning_tokens\":";
  out += std::to_string(reasoning_tokens);
  out += '}';
  if (cached_tokens >= 0) {
    out += ",\"prompt_tokens_details\":{\"cached_tokens\":";
    out += std::to_string(cached_tokens);
    out += '}';
  }
  out += '}';
}

ChunkBuilder::ChunkBuilder(std::string_view id, std::int64_t created, std::string_view model,
                           std::string_view reasoning_field, bool continuous_usage,
                           int prompt_tokens)
    : continuous_usage_(continuous_usage), prompt_tokens_(prompt_tokens) {
  head_ = "data: {\"id\":";
  AppendJsonString(head_, id);
  head_ += ",\"object\":\"chat.completion.chunk\",\"created\":";
  head_ += std::to_string(created);
  head_ += ",\"model\":";
  AppendJsonString(head_, model);
  head_ += ',';
  AppendJsonString(reasoning_key_, reasoning_field);
  reasoning_key_ += ':';
}

void ChunkBuilder::AppendRole(std::string& out) const {
  out += head_;
  out +=
      "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
      "\"logprobs\":null,\"finish_reason\":null}]";
  if (continuous_usage_) {
    out += ",\"usage\":";
    AppendUsageJson(out, prompt_tokens_, 0, 0, cached_tokens_);
  }
  out += "}\n\n";
}

void ChunkBuilder::AppendDelta(std::string& out, std::string_view reasoning,
                               std::string_view content, std::string_view finish_reason,
                               long long completion_tokens, int reasoning_tokens,
                               std::string_view sim_json, std::string_view tool_calls) const {
  out += head_;
  out += "\"choices\":[{\"index\":0,\"delta\":{";
  if (!reasoning.empty()) {
    out += reasoning_key_;
    out += '"';
    out += reasoning;
    out += '"';
    if (!content.empty()) {
      out += ',';
    }
  }
  if (!content.empty() || (reasoning.empty() && tool_calls.empty())) {
    out += "\"content\":\"";
    out += content;
    out += '"';
  }
  if (!tool_calls.empty()) {
    if (!reasoning.empty() || !content.empty()) {
      out += ',';
    }
    out += "\"tool_calls\":[";
    out += tool_calls;
    out += ']';
  }
  out += "},\"logprobs\":null,\"finish_reason\":";
  if (finish_reason.empty()) {
    out += "null}]";
  } else {
    out += '"';
    out += finish_reason;
    out += "\",\"stop_reason\":null}]";
  }
  if (continuous_usage_) {
    out += ",\"usage\":";
    AppendUsageJson(out, prompt_tokens_, completion_tokens, reasoning_tokens, cached_tokens_);
  }
  if (!sim_json.empty()) {
    out += ",\"sim\":";
    out += sim_json;
  }
  out += "}\n\n";
}

void ChunkBuilder::AppendUsageChunk(std::string& out, long long completion_tokens,
                                    int reasoning_tokens, std::string_view sim_json) const {
  out += head_;
  out += "\"choices\":[],\"usage\":";
  AppendUsageJson(out, prompt_tokens_, completion_tokens, reasoning_tokens, cached_tokens_);
  if (!sim_json.empty()) {
    out += ",\"sim\":";
    out += sim_json;
  }
  out += "}\n\n";
}

}  // namespace sb::sim
