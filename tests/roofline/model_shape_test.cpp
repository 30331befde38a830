#include "roofline/model_shape.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace sb::roofline {
namespace {

using nlohmann::json;

std::string DataPath(const std::string& name) {
  return std::string(SB_SOURCE_DIR) + "/tests/roofline/data/" + name;
}

ModelShape Load(const std::string& name) {
  auto s = LoadModelConfig(DataPath(name));
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().message);
  return s ? s.value() : ModelShape{};
}

json Llama() {
  return json{{"model_type", "llama"},     {"num_hidden_layers", 32},
              {"hidden_size", 4096},       {"intermediate_size", 14336},
              {"num_attention_heads", 32}, {"num_key_value_heads", 8},
              {"vocab_size", 128256},      {"tie_word_embeddings", false}};
}

Result<ModelShape> Parse(const json& j) {
  return ParseModelConfig(j.dump(), "test.json");
}

// ---- Real configs: every field the roofline reads, and the hand-counted parameters -----------

TEST(ModelShape, Qwen3MoeFields) {
  ModelShape s = Load("qwen3_moe_config.json");
  EXPECT_EQ(s.model_type, "qwen3_moe");
  EXPECT_EQ(s.num_layers, 48);
  EXPECT_EQ(s.hidden_size, 2048);
  EXPECT_EQ(s.vocab_size, 151936);
  EXPECT_EQ(s.num_attention_heads, 32);
  EXPECT_EQ(s.num_kv_heads, 4);
  EXPECT_EQ(s.head_dim, 128);  // given; hidden/heads would be 64
  EXPECT_FALSE(s.attn_output_gate);
  EXPECT_EQ(s.num_experts, 128);
  EXPECT_EQ(s.experts_per_token, 8);
  EXPECT_EQ(s.moe_intermediate_size, 768);
  EXPECT_EQ(s.shared_intermediate_size, 0);
  EXPECT_EQ(s.CountLayers(MlpKind::kMoe), 48);
  EXPECT_EQ(s.CountLayers(AttentionKind::kFull), 48);
  EXPECT_FALSE(s.tie_word_embeddings);
  EXPECT_EQ(s.declared_format, "bf16");
  EXPECT_EQ(s.source, DataPath("qwen3_moe_config.json"));
}

// docs/roofline.md §5.1, step 1.
TEST(ModelShape, Qwen3MoeParamsMatchHandCount) {
  ParamCounts c = CountParams(Load("qwen3_moe_config.json"));
  EXPECT_EQ(c.attention, 905'969'664);  // 48 x 18,874,368
  EXPECT_EQ(c.linear_attention, 0);
  EXPECT_EQ(c.dense_mlp, 0);
  EXPECT_EQ(c.experts_active, 1'811'939'328);  // 48 x 8 x 4,718,592
  EXPECT_EQ(c.experts_total, 28'991'029'248);  // 48 x 128 x 4,718,592
  EXPECT_EQ(c.shared_experts, 0);
  EXPECT_EQ(c.router, 12'582'912);    // 48 x 2048 x 128
  EXPECT_EQ(c.lm_head, 311'164'928);  // 151,936 x 2048
  EXPECT_EQ(c.embedding, 311'164'928);
  EXPECT_EQ(c.embedding_row, 2048);
  EXPECT_EQ(c.Total(), 30'531'911'680);          // "30.5B"
  EXPECT_EQ(c.ActivePerToken(), 3'041'658'880);  // "3.3B activated" minus the embedding table
}

// docs/roofline.md §5.2, step 1.
TEST(ModelShape, Llama3DenseParamsMatchHandCount) {
  ModelShape s = Load("llama3_8b_config.json");
  EXPECT_EQ(s.head_dim, 128);  // default hidden / heads
  EXPECT_EQ(s.num_experts, 0);
  EXPECT_EQ(s.CountLayers(MlpKind::kDense), 32);
  ParamCounts c = CountParams(s);
  EXPECT_EQ(c.attention, 1'342'177'280);  // 32 x 41,943,040
  EXPECT_EQ(c.dense_mlp, 5'637'144'576);  // 32 x 3 x 4096 x 14336
  EXPECT_EQ(c.experts_total, 0);
  EXPECT_EQ(c.router, 0);
  EXPECT_EQ(c.lm_head, 525'336'576);
  EXPECT_EQ(c.Total(), 8'029'995'008);  // "8.03B"
  EXPECT_EQ(c.ActivePerToken(), 7'504'662'528);
}

TEST(ModelShape, Qwen3NextHybridLinearAttention) {
  ModelShape s = Load("qwen3_next_config.json");
  EXPECT_EQ(s.CountLayers(AttentionKind::kFull), 12);  // every 4th layer
  EXPECT_EQ(s.CountLayers(AttentionKind::kLinear), 36);
  EXPECT_EQ(s.attention[3], AttentionKind::kFull);
  EXPECT_EQ(s.attention[0], AttentionKind::kLinear);
  EXPECT_TRUE(s.attn_output_gate);
  EXPECT_TRUE(s.shared_expert_gate);
  EXPECT_EQ(s.shared_intermediate_size, 512);
  EXPECT_EQ(s.linear_num_value_heads, 32);
  ParamCounts c = CountParams(s);
  EXPECT_EQ(c.attention, 12 * 27'262'976);  // q+gate 16,777,216 + k,v 2,097,152 + o 8,388,608
  EXPECT_EQ(c.linear_attention, 36 * 33'718'272);  // qkvz 25,165,824 + ba 131,072 + conv
                                                   // 32,768 + out 8,388,608
  EXPECT_EQ(c.experts_active, 48 * 10 * 3'145'728);
  EXPECT_EQ(c.shared_experts, 48 * (3'145'728 + 2048));
  EXPECT_EQ(c.router, 48 * 2048 * 512);
  EXPECT_EQ(c.Total(), 79'674'179'584);  // "80B"
  EXPECT_EQ(c.ActivePerToken(), 3'563'554'816);
  // State: 32 heads x 128 x 128 + conv window (2 x 2048 + 4096) x 3.
  EXPECT_EQ(LinearStateElementsPerLayer(s), 524'288 + 24'576);
  EXPECT_EQ(FullKvElementsPerToken(s), 2 * 2 * 256 * 12);
}

TEST(ModelShape, GptOssSlidingLayersAndMxfp4) {
  ModelShape s = Load("gpt_oss_20b_config.json");
  EXPECT_EQ(s.CountLayers(AttentionKind::kSliding), 12);
  EXPECT_EQ(s.CountLayers(AttentionKind::kFull), 12);
  EXPECT_EQ(s.sliding_window, 128);
  EXPECT_EQ(s.num_experts, 32);  // num_local_experts
  EXPECT_EQ(s.experts_per_token, 4);
  EXPECT_EQ(s.moe_intermediate_size, 2880);  // Mixtral-style: intermediate_size is the expert
  EXPECT_EQ(s.declared_format, "mxfp4");
  EXPECT_EQ(SlidingKvElementsPerToken(s), 2 * 8 * 64 * 12);
  ParamCounts c = CountParams(s);
  EXPECT_EQ(c.experts_active, 24LL * 4 * 3 * 2880 * 2880);
}

// ---- Field variants ---------------------------------------------------------------------------

TEST(ModelShape, NestedTextConfigWinsOverTopLevel) {
  json text = Llama();
  text["num_hidden_layers"] = 4;
  text["layer_types"] = {"linear_attention", "linear_attention", "linear_attention",
                         "full_attention"};
  text["linear_num_key_heads"] = 16;
  text["linear_num_value_heads"] = 32;
  text["linear_key_head_dim"] = 128;
  text["linear_value_head_dim"] = 128;
  text["linear_conv_kernel_dim"] = 4;
  text.erase("tie_word_embeddings");
  json root = {{"model_type", "qwen3_5_moe"},
               {"num_hidden_layers", 99},  // the vision tower's, say: text_config wins
               {"tie_word_embeddings", true},
               {"text_config", text},
               {"vision_config", {{"hidden_size", 1152}}}};
  auto s = Parse(root);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->num_layers, 4);
  EXPECT_EQ(s->model_type, "llama");    // text_config's
  EXPECT_TRUE(s->tie_word_embeddings);  // only at the top level
  EXPECT_EQ(s->CountLayers(AttentionKind::kLinear), 3);
  ParamCounts c = CountParams(*s);
  EXPECT_EQ(c.Total(), c.attention + c.linear_attention + c.dense_mlp + c.embedding);  // tied
}

TEST(ModelShape, DenseLayersAmongMoe) {
  json j = Llama();
  j["num_experts"] = 8;
  j["num_experts_per_tok"] = 2;
  j["moe_intermediate_size"] = 1024;
  j["mlp_only_layers"] = {0, 5};
  j["decoder_sparse_step"] = 2;  // layers 1, 3, 5, ... are MoE, except 5 (mlp_only)
  auto s = Parse(j);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->CountLayers(MlpKind::kMoe), 15);
  EXPECT_EQ(s->mlp[0], MlpKind::kDense);
  EXPECT_EQ(s->mlp[1], MlpKind::kMoe);
  EXPECT_EQ(s->mlp[5], MlpKind::kDense);
  ParamCounts c = CountParams(*s);
  EXPECT_EQ(c.dense_mlp, 17LL * 3 * 4096 * 14336);
  EXPECT_EQ(c.experts_active, 15LL * 2 * 3 * 4096 * 1024);
}

TEST(ModelShape, DeepSeekStyleSharedExpertsAndFirstDenseLayers) {
  json j = Llama();
  j["n_routed_experts"] = 64;
  j["num_experts_per_tok"] = 6;
  j["moe_intermediate_size"] = 1408;
  j["n_shared_experts"] = 2;
  j["first_k_dense_replace"] = 1;
  auto s = Parse(j);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->num_experts, 64);
  EXPECT_EQ(s->shared_intermediate_size, 2 * 1408);
  EXPECT_FALSE(s->shared_expert_gate);
  EXPECT_EQ(s->CountLayers(MlpKind::kDense), 1);
  EXPECT_EQ(CountParams(*s).shared_experts, 31LL * 3 * 4096 * 2816);
}

TEST(ModelShape, KvHeadsDefaultToHeads) {
  json j = Llama();
  j.erase("num_key_value_heads");
  auto s = Parse(j);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->num_kv_heads, 32);
}

TEST(ModelShape, DeclaredFormatFromQuantizationConfig) {
  json j = Llama();
  j["quantization_config"] = {{"quant_method", "modelopt"}, {"quant_algo", "NVFP4"}};
  EXPECT_EQ(Parse(j)->declared_format, "nvfp4");
  j["quantization_config"] = {{"quant_method", "fp8"}};
  EXPECT_EQ(Parse(j)->declared_format, "fp8");
  j["quantization_config"] = {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}};
  EXPECT_EQ(Parse(j)->declared_format, "int4-g128");
  j.erase("quantization_config");
  j["torch_dtype"] = "float16";
  EXPECT_EQ(Parse(j)->declared_format, "fp16");
}

// ---- Errors name the file and the field --------------------------------------------------------

TEST(ModelShapeErrors, MissingFile) {
  auto s = LoadModelConfig("/nonexistent/dir/config.json");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kSetup);
  EXPECT_EQ(s.error().message, "cannot read model config '/nonexistent/dir/config.json'");
}

TEST(ModelShapeErrors, BadJson) {
  auto s = ParseModelConfig("{\"hidden_size\": 2048,", "cfg.json");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kSetup);
  EXPECT_EQ(s.error().message.rfind("cfg.json: not valid JSON", 0), 0u) << s.error().message;
  auto arr = ParseModelConfig("[1, 2]", "cfg.json");
  ASSERT_FALSE(arr);
  EXPECT_EQ(arr.error().message, "cfg.json: a model config must be a JSON object");
}

TEST(ModelShapeErrors, EachRequiredFieldIsNamed) {
  for (const char* field :
       {"num_hidden_layers", "hidden_size", "vocab_size", "num_attention_heads"}) {
    json j = Llama();
    j.erase(field);
    auto s = Parse(j);
    ASSERT_FALSE(s) << field;
    EXPECT_EQ(s.error().code, ErrorCode::kSetup);
    EXPECT_EQ(s.error().message, std::string("test.json: missing field '") + field + "'");
  }
  json dense = Llama();
  dense.erase("intermediate_size");
  EXPECT_EQ(Parse(dense).error().message, "test.json: missing field 'intermediate_size'");
  json null_field = Llama();
  null_field["hidden_size"] = nullptr;
  EXPECT_EQ(Parse(null_field).error().message, "test.json: missing field 'hidden_size'");
}

TEST(ModelShapeErrors, MissingFieldInARealFileNamesThePath) {
  json j = Llama();
  j.erase("vocab_size");
  auto s = ParseModelConfig(j.dump(), DataPath("llama3_8b_config.json"));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, DataPath("llama3_8b_config.json") + ": missing field 'vocab_size'");
}

TEST(ModelShapeErrors, MoeAndLinearFields) {
  json moe = Llama();
  moe["num_experts"] = 8;
  EXPECT_EQ(Parse(moe).error().message, "test.json: missing field 'num_experts_per_tok'");
  moe["num_experts_per_tok"] = 9;
  EXPECT_EQ(Parse(moe).error().message,
            "test.json: field 'num_experts_per_tok' must be at most the number of experts");
  json linear = Llama();
  linear["full_attention_interval"] = 4;
  EXPECT_EQ(Parse(linear).error().message, "test.json: missing field 'linear_num_key_heads'");
  json sliding = Llama();
  sliding["num_hidden_layers"] = 2;
  sliding["layer_types"] = {"sliding_attention", "full_attention"};
  EXPECT_EQ(Parse(sliding).error().message, "test.json: missing field 'sliding_window'");
}

TEST(ModelShapeErrors, BadValues) {
  json j = Llama();
  j["hidden_size"] = "4096";
  EXPECT_EQ(Parse(j).error().message, "test.json: field 'hidden_size' must be a positive integer");
  j["hidden_size"] = 0;
  EXPECT_EQ(Parse(j).error().message, "test.json: field 'hidden_size' must be a positive integer");
  j["hidden_size"] = 4096.5;
  EXPECT_FALSE(Parse(j));
  j["hidden_size"] = 4096.0;  // integral floats are fine
  EXPECT_TRUE(Parse(j));
  json types = Llama();
  types["layer_types"] = {"full_attention"};
  EXPECT_EQ(Parse(types).error().message,
            "test.json: field 'layer_types' must be an array of num_hidden_layers (32) strings");
  json unknown = Llama();
  unknown["num_hidden_layers"] = 1;
  unknown["layer_types"] = {"mamba"};
  EXPECT_EQ(Parse(unknown).error().message.rfind("test.json: layer_types[0] is 'mamba'", 0), 0u);
  json mla = Llama();
  mla["kv_lora_rank"] = 512;
  EXPECT_NE(Parse(mla).error().message.find("kv_lora_rank"), std::string::npos);
}

}  // namespace
}  // namespace sb::roofline
