#include "roofline/model_shape.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sb::roofline {

namespace {

using nlohmann::json;

std::string Lower(std::string s) {
  for (char& c : s) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return s;
}

// Reads fields from `text_config` first (multimodal checkpoints nest the language model's
// fields there), then from the top level. Every error names the file and the field.
class Fields {
 public:
  Fields(const json& root, std::string source) : root_(root), source_(std::move(source)) {
    auto it = root_.find("text_config");
    if (it != root_.end() && it->is_object()) {
      text_ = &*it;
    }
  }

  // The value of `key`, or nullptr when it is absent or null in both places.
  const json* Find(std::string_view key) const {
    for (const json* scope : {text_, &root_}) {
      if (scope == nullptr) {
        continue;
      }
      auto it = scope->find(key);
      if (it != scope->end() && !it->is_null()) {
        return &*it;
      }
    }
    return nullptr;
  }

  // The first of `keys` present, or nullptr.
  const json* FindAny(std::initializer_list<std::string_view> keys, std::string_view* found) const {
    for (std::string_view k : keys) {
      if (const json* v = Find(k)) {
        *found = k;
        return v;
      }
    }
    return nullptr;
  }

  Error Missing(std::string_view key) const {
    return MakeError(ErrorCode::kSetup, fmt::format("{}: missing field '{}'", source_, key));
  }

  Error Bad(std::string_view key, std::string_view want) const {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("{}: field '{}' must be {}", source_, key, want));
  }

  // An integer >= min_value; nullopt when absent.
  Result<std::optional<std::int64_t>> OptionalInt(std::string_view key,
                                                  std::int64_t min_value = 1) const {
    const json* v = Find(key);
    if (v == nullptr) {
      return std::optional<std::int64_t>();
    }
    return Int(key, *v, min_value);
  }

  Result<std::optional<std::int64_t>> OptionalIntAny(std::initializer_list<std::string_view> keys,
                                                     std::int64_t min_value = 1) const {
    std::string_view key;
    const json* v = FindAny(keys, &key);
    if (v == nullptr) {
      return std::optional<std::int64_t>();
    }
    return Int(key, *v, min_value);
  }

  Result<std::int64_t> RequiredInt(std::string_view key, std::int64_t min_value = 1) const {
    auto v = OptionalInt(key, min_value);
    if (!v) {
      return v.error();
    }
    if (!v->has_value()) {
      return Missing(key);
    }
    return **v;
  }

  const std::string& source() const { return source_; }

 private:
  Result<std::optional<std::int64_t>> Int(std::string_view key, const json& v,
                                          std::int64_t min_value) const {
    // Integral floats ("hidden_size": 2048.0) are accepted; anything else is not.
    if (v.is_number_integer() ||
        (v.is_number_float() && v.get<double>() == static_cast<double>(v.get<std::int64_t>()))) {
      std::int64_t n = v.is_number_integer() ? v.get<std::int64_t>()
                                             : static_cast<std::int64_t>(v.get<double>());
      if (n >= min_value) {
        return std::optional<std::int64_t>(n);
      }
    }
    return Bad(key, min_value > 0 ? "a positive integer" : "a non-negative integer");
  }

  const json& root_;
  const json* text_ = nullptr;
  std::string source_;
};

// The format named by quantization_config or torch_dtype, in WeightFormat names; "" if none.
std::string DeclaredFormat(const Fields& f) {
  if (const json* q = f.Find("quantization_config"); q != nullptr && q->is_object()) {
    std::string method = Lower(q->value("quant_method", std::string()));
    std::string algo = Lower(q->value("quant_algo", std::string()));
    if (algo.find("nvfp4") != std::string::npos) {
      return "nvfp4";
    }
    if (method == "mxfp4" || algo.find("mxfp4") != std::string::npos) {
      return "mxfp4";
    }
    if (method == "fp8" || algo.find("fp8") != std::string::npos) {
      return "fp8";
    }
    if (method == "compressed-tensors") {
      std::string format = Lower(q->value("format", std::string()));
      if (format.find("nvfp4") != std::string::npos) {
        return "nvfp4";
      }
      if (format.find("float-quantized") != std::string::npos) {
        return "fp8";
      }
    }
    if ((method == "awq" || method == "gptq") && q->value("bits", 0) == 4 &&
        q->value("group_size", 0) == 128) {
      return "int4-g128";
    }
    return "";
  }
  const json* dtype = f.Find("torch_dtype");
  if (dtype == nullptr) {
    dtype = f.Find("dtype");
  }
  if (dtype != nullptr && dtype->is_string()) {
    std::string d = Lower(dtype->get<std::string>());
    if (d == "bfloat16") {
      return "bf16";
    }
    if (d == "float16") {
      return "fp16";
    }
    if (d == "float32") {
      return "f32";
    }
  }
  return "";
}

Result<void> ParseLayerKinds(const Fields& f, ModelShape& s) {
  s.attention.assign(static_cast<std::size_t>(s.num_layers), AttentionKind::kFull);
  if (const json* types = f.Find("layer_types")) {
    if (!types->is_array() || static_cast<std::int64_t>(types->size()) != s.num_layers) {
      return f.Bad("layer_types",
                   fmt::format("an array of num_hidden_layers ({}) strings", s.num_layers));
    }
    for (std::size_t i = 0; i < types->size(); ++i) {
      const json& t = (*types)[i];
      std::string name = t.is_string() ? t.get<std::string>() : std::string();
      if (name == "full_attention" || name == "attention") {
        s.attention[i] = AttentionKind::kFull;
      } else if (name == "sliding_attention") {
        s.attention[i] = AttentionKind::kSliding;
      } else if (name == "linear_attention") {
        s.attention[i] = AttentionKind::kLinear;
      } else {
        return MakeError(ErrorCode::kSetup,
                         fmt::format("{}: layer_types[{}] is '{}'; known: full_attention, "
                                     "sliding_attention, linear_attention",
                                     f.source(), i, t.is_string() ? name : t.dump()));
      }
    }
  } else if (f.Find("full_attention_interval") != nullptr) {
    // Qwen3-Next: every interval-th layer is full attention, the others linear.
    auto n = f.RequiredInt("full_attention_interval");
    if (!n) {
      return n.error();
    }
    for (std::int64_t i = 0; i < s.num_layers; ++i) {
      s.attention[static_cast<std::size_t>(i)] =
          (i + 1) % *n == 0 ? AttentionKind::kFull : AttentionKind::kLinear;
    }
  }
  if (s.CountLayers(AttentionKind::kSliding) > 0) {
    auto w = f.RequiredInt("sliding_window");
    if (!w) {
      return w.error();
    }
    s.sliding_window = *w;
  }
  return {};
}

Result<void> ParseLinearAttention(const Fields& f, ModelShape& s) {
  if (s.CountLayers(AttentionKind::kLinear) == 0) {
    return {};
  }

  struct Item {
    const char* key;
    std::int64_t* out;
  };

  for (const Item& it : {Item{"linear_num_key_heads", &s.linear_num_key_heads},
                         Item{"linear_num_value_heads", &s.linear_num_value_heads},
                         Item{"linear_key_head_dim", &s.linear_key_head_dim},
                         Item{"linear_value_head_dim", &s.linear_value_head_dim},
                         Item{"linear_conv_kernel_dim", &s.linear_conv_kernel_dim}}) {
    auto v = f.RequiredInt(it.key);
    if (!v) {
      return v.error();
    }
    *it.out = *v;
  }
  return {};
}

Result<void> ParseMlp(const Fields& f, ModelShape& s) {
  auto experts = f.OptionalIntAny({"num_experts", "num_local_experts", "n_routed_experts"}, 0);
  if (!experts) {
    return experts.error();
  }
  s.num_experts = experts->value_or(0);
  s.mlp.assign(static_cast<std::size_t>(s.num_layers),
               s.num_experts > 0 ? MlpKind::kMoe : MlpKind::kDense);
  auto intermediate = f.OptionalInt("intermediate_size");
  if (!intermediate) {
    return intermediate.error();
  }
  if (s.num_experts > 0) {
    auto k = f.OptionalIntAny({"num_experts_per_tok", "experts_per_token", "moe_topk"});
    if (!k) {
      return k.error();
    }
    if (!k->has_value()) {
      return f.Missing("num_experts_per_tok");
    }
    s.experts_per_token = **k;
    if (s.experts_per_token > s.num_experts) {
      return f.Bad("num_experts_per_tok", "at most the number of experts");
    }
    auto moe = f.OptionalInt("moe_intermediate_size");
    if (!moe) {
      return moe.error();
    }
    // Mixtral-style configs give the expert width as intermediate_size.
    if (moe->has_value()) {
      s.moe_intermediate_size = **moe;
    } else if (intermediate->has_value()) {
      s.moe_intermediate_size = **intermediate;
    } else {
      return f.Missing("moe_intermediate_size");
    }
    auto shared = f.OptionalInt("shared_expert_intermediate_size", 0);
    auto n_shared = f.OptionalInt("n_shared_experts", 0);
    if (!shared) {
      return shared.error();
    }
    if (!n_shared) {
      return n_shared.error();
    }
    if (shared->value_or(0) > 0) {
      s.shared_intermediate_size = **shared;
      s.shared_expert_gate = true;  // Qwen2-MoE / Qwen3-Next: sigmoid(hidden -> 1) gate
    } else if (n_shared->value_or(0) > 0) {
      s.shared_intermediate_size = **n_shared * s.moe_intermediate_size;  // DeepSeek/GLM
    }
    // Which layers are dense: mlp_only_layers (Qwen), decoder_sparse_step (Qwen),
    // first_k_dense_replace (DeepSeek/GLM).
    auto step = f.OptionalInt("decoder_sparse_step");
    auto first_dense = f.OptionalInt("first_k_dense_replace", 0);
    if (!step) {
      return step.error();
    }
    if (!first_dense) {
      return first_dense.error();
    }
    for (std::int64_t i = 0; i < s.num_layers; ++i) {
      bool moe_layer = (i + 1) % step->value_or(1) == 0 && i >= first_dense->value_or(0);
      s.mlp[static_cast<std::size_t>(i)] = moe_layer ? MlpKind::kMoe : MlpKind::kDense;
    }
    if (const json* only = f.Find("mlp_only_layers")) {
      if (!only->is_array()) {
        return f.Bad("mlp_only_layers", "an array of layer indices");
      }
      for (const json& idx : *only) {
        if (!idx.is_number_integer() || idx.get<std::int64_t>() < 0 ||
            idx.get<std::int64_t>() >= s.num_layers) {
          return f.Bad("mlp_only_layers", "an array of layer indices");
        }
        s.mlp[idx.get<std::size_t>()] = MlpKind::kDense;
      }
    }
  }
  if (s.CountLayers(MlpKind::kDense) > 0) {
    if (!intermediate->has_value()) {
      return f.Missing("intermediate_size");
    }
    s.intermediate_size = **intermediate;
  }
  return {};
}

Result<ModelShape> ParseFields(const Fields& f, ModelShape s) {
  if (f.Find("kv_lora_rank") != nullptr) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("{}: multi-head latent attention (kv_lora_rank, DeepSeek-style) "
                                 "is not modelled; pass a config with standard attention",
                                 f.source()));
  }
  if (const json* t = f.Find("model_type"); t != nullptr && t->is_string()) {
    s.model_type = t->get<std::string>();
  }
  for (auto [key, out] :
       {std::pair{"num_hidden_layers", &s.num_layers}, std::pair{"hidden_size", &s.hidden_size},
        std::pair{"vocab_size", &s.vocab_size},
        std::pair{"num_attention_heads", &s.num_attention_heads}}) {
    auto v = f.RequiredInt(key);
    if (!v) {
      return v.error();
    }
    *out = *v;
  }
  auto kv = f.OptionalInt("num_key_value_heads");
  auto head_dim = f.OptionalInt("head_dim");
  if (!kv) {
    return kv.error();
  }
  if (!head_dim) {
    return head_dim.error();
  }
  s.num_kv_heads = kv->value_or(s.num_attention_heads);  // absent = multi-head attention
  if (head_dim->has_value()) {
    s.head_dim = **head_dim;
  } else if (s.hidden_size % s.num_attention_heads == 0) {
    s.head_dim = s.hidden_size / s.num_attention_heads;
  } else {
    return f.Missing("head_dim");
  }
  if (const json* tie = f.Find("tie_word_embeddings")) {
    if (!tie->is_boolean()) {
      return f.Bad("tie_word_embeddings", "true or false");
    }
    s.tie_word_embeddings = tie->get<bool>();
  }
  if (const json* gate = f.Find("attn_output_gate")) {
    if (!gate->is_boolean()) {
      return f.Bad("attn_output_gate", "true or false");
    }
    s.attn_output_gate = gate->get<bool>();
  } else {
    s.attn_output_gate =
        s.model_type.rfind("qwen3_next", 0) == 0 || s.model_type.rfind("qwen3_5", 0) == 0;
  }
  if (auto ok = ParseLayerKinds(f, s); !ok) {
    return ok.error();
  }
  if (auto ok = ParseLinearAttention(f, s); !ok) {
    return ok.error();
  }
  if (auto ok = ParseMlp(f, s); !ok) {
    return ok.error();
  }
  s.declared_format = DeclaredFormat(f);
  return s;
}

}  // namespace

std::int64_t ModelShape::CountLayers(AttentionKind kind) const {
  return std::count(attention.begin(), attention.end(), kind);
}

std::int64_t ModelShape::CountLayers(MlpKind kind) const {
  return std::count(mlp.begin(), mlp.end(), kind);
}

Result<ModelShape> ParseModelConfig(std::string_view json_text, const std::string& source) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    return MakeError(ErrorCode::kSetup, fmt::format("{}: not valid JSON ({})", source, e.what()));
  }
  if (!root.is_object()) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("{}: a model config must be a JSON object", source));
  }
  ModelShape s;
  s.source = source;
  return ParseFields(Fields(root, source), std::move(s));
}

Result<ModelShape> LoadModelConfig(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("cannot read model config '{}'", path.string()));
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseModelConfig(text.str(), path.string());
}

// ---- Parameter counts --------------------------------------------------------------------------

std::int64_t ExpertParams(const ModelShape& s) {
  return 3 * s.hidden_size * s.moe_intermediate_size;
}

namespace {

std::int64_t SoftmaxAttentionParams(const ModelShape& s) {
  std::int64_t q_out = s.num_attention_heads * s.head_dim * (s.attn_output_gate ? 2 : 1);
  std::int64_t kv_out = s.num_kv_heads * s.head_dim;
  std::int64_t o_in = s.num_attention_heads * s.head_dim;
  return s.hidden_size * q_out + 2 * s.hidden_size * kv_out + o_in * s.hidden_size;
}

// Gated DeltaNet: in_proj_qkvz (hidden -> 2 key_dim + 2 value_dim), in_proj_ba (hidden ->
// 2 value heads), a depthwise causal conv over q, k, v, and out_proj (value_dim -> hidden).
std::int64_t LinearAttentionParams(const ModelShape& s) {
  std::int64_t key_dim = s.linear_num_key_heads * s.linear_key_head_dim;
  std::int64_t value_dim = s.linear_num_value_heads * s.linear_value_head_dim;
  std::int64_t in_qkvz = s.hidden_size * (2 * key_dim + 2 * value_dim);
  std::int64_t in_ba = s.hidden_size * 2 * s.linear_num_value_heads;
  std::int64_t conv = (2 * key_dim + value_dim) * s.linear_conv_kernel_dim;
  std::int64_t out = value_dim * s.hidden_size;
  return in_qkvz + in_ba + conv + out;
}

}  // namespace

std::int64_t LinearStateElementsPerLayer(const ModelShape& s) {
  if (s.CountLayers(AttentionKind::kLinear) == 0) {
    return 0;
  }
  std::int64_t key_dim = s.linear_num_key_heads * s.linear_key_head_dim;
  std::int64_t value_dim = s.linear_num_value_heads * s.linear_value_head_dim;
  std::int64_t recurrent =
      s.linear_num_value_heads * s.linear_key_head_dim * s.linear_value_head_dim;
  std::int64_t conv = (2 * key_dim + value_dim) * (s.linear_conv_kernel_dim - 1);
  return recurrent + conv;
}

std::int64_t FullKvElementsPerToken(const ModelShape& s) {
  return 2 * s.num_kv_heads * s.head_dim * s.CountLayers(AttentionKind::kFull);
}

std::int64_t SlidingKvElementsPerToken(const ModelShape& s) {
  return 2 * s.num_kv_heads * s.head_dim * s.CountLayers(AttentionKind::kSliding);
}

ParamCounts CountParams(const ModelShape& s) {
  ParamCounts c;
  std::int64_t softmax_layers = s.num_layers - s.CountLayers(AttentionKind::kLinear);
  c.attention = softmax_layers * SoftmaxAttentionParams(s);
  c.linear_attention = s.CountLayers(AttentionKind::kLinear) * LinearAttentionParams(s);
  c.dense_mlp = s.CountLayers(MlpKind::kDense) * 3 * s.hidden_size * s.intermediate_size;
  std::int64_t moe_layers = s.CountLayers(MlpKind::kMoe);
  c.experts_total = moe_layers * s.num_experts * ExpertParams(s);
  c.experts_active = moe_layers * s.experts_per_token * ExpertParams(s);
  c.shared_experts = moe_layers * (3 * s.hidden_size * s.shared_intermediate_size +
                                   (s.shared_expert_gate ? s.hidden_size : 0));
  c.router = moe_layers * s.hidden_size * s.num_experts;
  c.embedding = s.vocab_size * s.hidden_size;
  c.lm_head = s.vocab_size * s.hidden_size;
  c.embedding_row = s.hidden_size;
  c.lm_head_tied = s.tie_word_embeddings;
  return c;
}

std::int64_t ParamCounts::Total() const {
  return attention + linear_attention + dense_mlp + experts_total + shared_experts + router +
         embedding + (lm_head_tied ? 0 : lm_head);
}

std::int64_t ParamCounts::ActivePerToken() const {
  return attention + linear_attention + dense_mlp + experts_active + shared_experts + router +
         embedding_row + lm_head;
}

}  // namespace sb::roofline
