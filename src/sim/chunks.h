// Streaming chunk serialisation for the per-token hot path: pre-built prefix strings per stream,
// plain appends, no JSON library. Produces vLLM-shaped SSE events ("data: {...}\n\n").
// Token text from TokenText() never needs JSON escaping; everything else is escaped here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sb::sim {

// Appends s as a JSON string literal (with quotes).
void AppendJsonString(std::string& out, std::string_view s);

// Appends `{"prompt_tokens":P,"total_tokens":P+C,"completion_tokens":C,
// "completion_tokens_details":{"reasoning_tokens":R}}`, plus
// `"prompt_tokens_details":{"cached_tokens":K}` when cached_tokens >= 0 (the prefix cache is on).
void AppendUsageJson(std::string& out, int prompt_tokens, long long completion_tokens,
                     int reasoning_tokens, int cached_tokens = -1);

class ChunkBuilder {
 public:
  ChunkBuilder(std::string_view id, std::int64_t created, std::string_view model,
               std::string_view reasoning_field, bool continuous_usage, int prompt_tokens);

  // The opening role-only delta: {"role":"assistant","content":""}.
  void AppendRole(std::string& out) const;

  // One decode step: delta with the reasoning text and/or the answer text (either may be
  // empty), finish_reason (empty = null), cumulative usage when continuous_usage is on, and
  // the ground-truth object `sim_json` at the top level when non-empty.
  // `tool_calls` (items of the delta's tool_calls array, already JSON) is added when not empty.
  void AppendDelta(std::string& out, std::string_view reasoning, std::string_view content,
                   std::string_view finish_reason, long long completion_tokens,
                   int reasoning_tokens, std::string_view sim_json,
                   std::string_view tool_calls = {}) const;

  // The trailing usage chunk ("choices":[]), with `sim_json` when non-empty.
  void AppendUsageChunk(std::string& out, long long completion_tokens, int reasoning_tokens,
                        std::string_view sim_json) const;

  // Prompt tokens served from the prefix cache, reported in every usage object (-1: none).
  void set_cached_tokens(int cached) { cached_tokens_ = cached; }

  static void AppendDone(std::string& out) { out += "data: [DONE]\n\n"; }

  // A deliberately broken event for the "malformed" fault.
  static void AppendMalformed(std::string& out) { out += "data: {\"choices\": [\n\n"; }

 private:
  std::string head_;           // data: {"id":..,"object":..,"created":..,"model":..,
  std::string reasoning_key_;  // "reasoning_content":
  bool continuous_usage_ = false;
  int prompt_tokens_ = 0;
  int cached_tokens_ = -1;
};

}  // namespace sb::sim
