// The shape of a decoder-only transformer as read from a Hugging Face `config.json`: layer
// count, widths, attention kind per layer (full, sliding window, linear/Gated DeltaNet) and MLP
// kind per layer (dense or mixture of experts), and the parameter counts derived from it.
// Covers dense Llama/Qwen2/Qwen3/Mistral, MoE Qwen2-MoE/Qwen3-MoE/Mixtral/GLM-style, hybrid
// Qwen3-Next/Qwen3.5-style configs, and multimodal configs with a nested `text_config`.
// Counts are of weight matrices only (see docs/roofline.md §2). Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace sb::roofline {

enum class AttentionKind {
  kFull,     // softmax attention over the whole context
  kSliding,  // softmax attention over the last sliding_window tokens
  kLinear,   // linear attention (Gated DeltaNet): a fixed-size recurrent state, no KV cache
};

enum class MlpKind { kDense, kMoe };

struct ModelShape {
  std::string source;      // the file it was read from ("" when parsed from text)
  std::string model_type;  // "qwen3_moe", "llama", ... ("" when the config has none)

  std::int64_t num_layers = 0;
  std::int64_t hidden_size = 0;
  std::int64_t vocab_size = 0;
  bool tie_word_embeddings = false;

  // Softmax attention.
  std::int64_t num_attention_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;        // default hidden_size / num_attention_heads
  bool attn_output_gate = false;    // Qwen3-Next/3.5: q_proj also emits a per-head gate
  std::int64_t sliding_window = 0;  // tokens; used by kSliding layers

  // Linear attention (Gated DeltaNet; Qwen3-Next/3.5); zero when no layer is linear.
  std::int64_t linear_num_key_heads = 0;
  std::int64_t linear_num_value_heads = 0;
  std::int64_t linear_key_head_dim = 0;
  std::int64_t linear_value_head_dim = 0;
  std::int64_t linear_conv_kernel_dim = 0;

  // MLP.
  std::int64_t intermediate_size = 0;         // dense MLP layers
  std::int64_t num_experts = 0;               // routed experts per MoE layer; 0 = dense model
  std::int64_t experts_per_token = 0;         // routed experts each token uses
  std::int64_t moe_intermediate_size = 0;     // one routed expert's width
  std::int64_t shared_intermediate_size = 0;  // all shared experts together; 0 = none
  bool shared_expert_gate = false;            // Qwen2-MoE/Qwen3-Next: sigmoid gate hidden -> 1

  // Per layer, num_layers entries each.
  std::vector<AttentionKind> attention;
  std::vector<MlpKind> mlp;

  // The weight format the config itself declares ("nvfp4", "fp8", "mxfp4", "bf16", ...), from
  // quantization_config or torch_dtype; "" when it says nothing we recognise.
  std::string declared_format;

  std::int64_t CountLayers(AttentionKind kind) const;
  std::int64_t CountLayers(MlpKind kind) const;
};

// Parses a config.json. Errors (kSetup) name the file and the missing or bad field:
// "qwen3.json: missing field 'hidden_size'". Fields are looked up in `text_config` first when
// the config has one (multimodal checkpoints), then at the top level.
Result<ModelShape> LoadModelConfig(const std::filesystem::path& path);

// The same from text; `source` names it in errors.
Result<ModelShape> ParseModelConfig(std::string_view json_text, const std::string& source);

// Weight parameters by role (matrices only; norms, biases and per-head scalars are left out).
struct ParamCounts {
  std::int64_t attention = 0;         // q/k/v/o of full and sliding layers, all layers
  std::int64_t linear_attention = 0;  // Gated DeltaNet projections and conv, all layers
  std::int64_t dense_mlp = 0;         // gate/up/down of dense MLP layers
  std::int64_t experts_total = 0;     // every routed expert of every MoE layer
  std::int64_t experts_active = 0;    // experts_per_token routed experts per MoE layer
  std::int64_t shared_experts = 0;    // shared experts (+ their sigmoid gate)
  std::int64_t router = 0;            // hidden x num_experts per MoE layer
  std::int64_t embedding = 0;         // vocab x hidden input embedding
  std::int64_t lm_head = 0;           // vocab x hidden output projection (the embedding if tied)
  std::int64_t embedding_row = 0;     // hidden: the one embedding row a decoded token reads
  bool lm_head_tied = false;          // the lm_head is the embedding matrix (stored once)

  // Distinct parameters stored (a tied lm_head counted once).
  std::int64_t Total() const;
  // Parameters read to decode one token: everything but the unused routed experts and all but
  // one embedding row; the lm_head is read in full.
  std::int64_t ActivePerToken() const;
};

ParamCounts CountParams(const ModelShape& shape);

// One routed expert's parameters (gate, up and down projections).
std::int64_t ExpertParams(const ModelShape& shape);

// Elements of one linear-attention layer's recurrent state (Gated DeltaNet state plus the
// causal-conv window); 0 when the model has no linear layers.
std::int64_t LinearStateElementsPerLayer(const ModelShape& shape);

// Elements of K and V cached per token of context, over all full-attention layers
// (2 x kv_heads x head_dim x layers). Sliding layers are separate: SlidingKvElementsPerToken.
std::int64_t FullKvElementsPerToken(const ModelShape& shape);
std::int64_t SlidingKvElementsPerToken(const ModelShape& shape);

}  // namespace sb::roofline
