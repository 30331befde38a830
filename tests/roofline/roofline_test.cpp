#include "roofline/roofline.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace sb::roofline {
namespace {

using nlohmann::json;

std::string DataPath(const std::string& name) {
  return std::string(SB_SOURCE_DIR) + "/tests/roofline/data/" + name;
}

ModelShape Model(const std::string& name) {
  auto s = LoadModelConfig(DataPath(name));
  EXPECT_TRUE(s) << (s ? "" : s.error().message);
  return s ? s.value() : ModelShape{};
}

WeightFormat Format(const std::string& name) {
  return ResolveWeightFormat(name).value();
}

Hardware Spark() {
  return HardwareTable::Builtin().Find("spark").value();
}

Estimate Estim(const ModelShape& m, const WeightFormat& f, const RooflineOptions& o = {},
               const Hardware& h = Spark()) {
  auto e = Roofline(m, f, h, o);
  EXPECT_TRUE(e) << (e ? "" : e.error().message);
  return e ? e.value() : Estimate{};
}

double PartBytes(const Estimate& e, const std::string& prefix) {
  for (const WeightPart& p : e.parts) {
    if (p.name.rfind(prefix, 0) == 0) {
      return p.bytes;
    }
  }
  ADD_FAILURE() << "no part " << prefix;
  return -1;
}

// ---- The hand computations of docs/roofline.md §5, to the byte and to 0.01 tok/s -------------

// §5.1: Qwen3-30B-A3B at NVFP4 on DGX Spark.
TEST(RooflineHand, Qwen3MoeNvfp4OnSpark) {
  Estimate e = Estim(Model("qwen3_moe_config.json"), Format("nvfp4"));
  EXPECT_EQ(PartBytes(e, "attention"), 509'607'936);  // 905,969,664 x 4.5 / 8
  EXPECT_EQ(PartBytes(e, "routed experts (8 of 128)"), 1'019'215'872);
  EXPECT_EQ(PartBytes(e, "router"), 25'165'824);    // 12,582,912 x 2
  EXPECT_EQ(PartBytes(e, "lm_head"), 622'329'856);  // 311,164,928 x 2
  EXPECT_EQ(PartBytes(e, "embedding row"), 4'096);
  EXPECT_EQ(e.parts.size(), 5u);
  EXPECT_EQ(e.experts_per_step, 8);
  EXPECT_EQ(e.weight_bytes, 2'176'323'584);
  EXPECT_EQ(e.kv_bytes, 0);
  EXPECT_EQ(e.bytes_per_step, 2'176'323'584);
  EXPECT_EQ(e.bytes_per_token, 2'176'323'584);
  EXPECT_NEAR(e.ceiling_tok_s, 125.44, 0.005);
  EXPECT_NEAR(e.PercentOfCeiling(76.7), 61.14, 0.005);
}

// §5.1, at 4,096 tokens of context: + 48 layers x 2 x 4 heads x 128 x 2 bytes per token.
TEST(RooflineHand, Qwen3MoeNvfp4KvAt4096) {
  RooflineOptions o;
  o.context_tokens = 4096;
  Estimate e = Estim(Model("qwen3_moe_config.json"), Format("nvfp4"), o);
  EXPECT_EQ(e.kv_bytes, 402'653'184);  // 98,304 x 4,096
  EXPECT_EQ(e.bytes_per_token, 2'578'976'768);
  EXPECT_NEAR(e.ceiling_tok_s, 105.86, 0.005);
  EXPECT_EQ(e.bytes_per_token_without_kv, 2'176'323'584);
  EXPECT_NEAR(e.ceiling_tok_s_without_kv, 125.44, 0.005);
}

TEST(RooflineHand, Qwen3MoeBf16OnSpark) {
  Estimate e = Estim(Model("qwen3_moe_config.json"), Format("bf16"));
  EXPECT_EQ(e.bytes_per_token, 6'083'317'760);
  EXPECT_NEAR(e.ceiling_tok_s, 44.88, 0.005);
}

// §5.2: Llama-3-8B, bf16 and NVFP4, on DGX Spark.
TEST(RooflineHand, Llama3Bf16OnSpark) {
  Estimate e = Estim(Model("llama3_8b_config.json"), Format("bf16"));
  EXPECT_EQ(PartBytes(e, "attention"), 2'684'354'560);
  EXPECT_EQ(PartBytes(e, "dense MLP"), 11'274'289'152);
  EXPECT_EQ(PartBytes(e, "lm_head"), 1'050'673'152);
  EXPECT_EQ(PartBytes(e, "embedding row"), 8'192);
  EXPECT_EQ(e.bytes_per_token, 15'009'325'056);
  EXPECT_NEAR(e.ceiling_tok_s, 18.19, 0.005);
}

TEST(RooflineHand, Llama3Nvfp4OnSpark) {
  Estimate e = Estim(Model("llama3_8b_config.json"), Format("nvfp4"));
  EXPECT_EQ(e.weight_bytes, 4'976'549'888);
  EXPECT_NEAR(e.ceiling_tok_s, 54.86, 0.005);
  RooflineOptions o;
  o.context_tokens = 8192;
  Estimate k = Estim(Model("llama3_8b_config.json"), Format("nvfp4"), o);
  EXPECT_EQ(k.kv_bytes, 1'073'741'824);  // 32 x 2 x 8 x 128 x 2 = 131,072 per token
  EXPECT_NEAR(k.ceiling_tok_s, 45.12, 0.005);
}

// The docs quote the same numbers the code computes.
TEST(RooflineHand, DocsQuoteTheseNumbers) {
  std::ifstream in(std::string(SB_SOURCE_DIR) + "/docs/roofline.md");
  ASSERT_TRUE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  for (const char* figure : {"2,176,323,584", "125.44", "402,653,184", "2,578,976,768", "105.86",
                             "15,009,325,056", "18.19", "4,976,549,888", "54.86", "30,531,911,680",
                             "3,041,658,880", "8,029,995,008", "61.1"}) {
    EXPECT_NE(doc.find(figure), std::string::npos) << figure;
  }
  // Every built-in hardware id and format name has a row.
  HardwareTable table = HardwareTable::Builtin();
  for (const Hardware& h : table.entries()) {
    EXPECT_NE(doc.find("`" + h.id + "`"), std::string::npos) << h.id;
  }
  for (const FormatListing& f : ListWeightFormats()) {
    EXPECT_NE(doc.find("`" + f.name + "`"), std::string::npos) << f.name;
  }
}

// ---- Each term
// -----------------------------------------------------------------------------------

TEST(Roofline, SpeculativeTokensPerStepDivideTheStep) {
  ModelShape m = Model("qwen3_moe_config.json");
  Estimate one = Estim(m, Format("nvfp4"));
  RooflineOptions o;
  o.tokens_per_step = 2.13;
  Estimate spec = Estim(m, Format("nvfp4"), o);
  EXPECT_EQ(spec.bytes_per_step, one.bytes_per_step);  // the weights are read once per step
  EXPECT_DOUBLE_EQ(spec.bytes_per_token, 2'176'323'584 / 2.13);
  EXPECT_NEAR(spec.ceiling_tok_s, 125.4409 * 2.13, 0.001);
  EXPECT_DOUBLE_EQ(spec.ceiling_tok_s / one.ceiling_tok_s, 2.13);
  // The drafter's reads are added per step, then divided too.
  o.draft_bytes = 300'000'000;
  Estimate drafted = Estim(m, Format("nvfp4"), o);
  EXPECT_EQ(drafted.bytes_per_step, 2'476'323'584);
  EXPECT_DOUBLE_EQ(drafted.bytes_per_token, 2'476'323'584 / 2.13);
}

TEST(Roofline, VerifyTokensReadTheUnionOfExperts) {
  ModelShape m = Model("qwen3_moe_config.json");
  RooflineOptions o;
  o.tokens_per_step = 2.13;
  o.verify_tokens = 4;
  Estimate e = Estim(m, Format("nvfp4"), o);
  double distinct = 128 * (1 - std::pow(1 - 8.0 / 128, 4));  // 29.123046875
  EXPECT_DOUBLE_EQ(e.experts_per_step, distinct);
  EXPECT_DOUBLE_EQ(PartBytes(e, "routed experts"), 48 * distinct * 4'718'592 * 4.5 / 8);
  o.verify_tokens = 1;  // one token: exactly its own experts
  EXPECT_DOUBLE_EQ(Estim(m, Format("nvfp4"), o).experts_per_step, 8);
}

TEST(Roofline, KvCacheScalesWithContextAndElementSize) {
  ModelShape m = Model("qwen3_moe_config.json");
  RooflineOptions o;
  o.context_tokens = 1000;
  EXPECT_EQ(Estim(m, Format("nvfp4"), o).kv_bytes, 98'304'000);
  o.kv_bytes_per_element = 1;  // fp8 KV cache
  EXPECT_EQ(Estim(m, Format("nvfp4"), o).kv_bytes, 49'152'000);
}

TEST(Roofline, SlidingLayersReadAtMostTheirWindow) {
  ModelShape m = Model("gpt_oss_20b_config.json");
  RooflineOptions o;
  o.context_tokens = 1000;
  Estimate e = Estim(m, Format("mxfp4"), o);
  // 12 full layers read 1,000 tokens, 12 sliding layers 128; 2 x 8 x 64 elements x 2 bytes.
  EXPECT_EQ(e.kv_bytes, 12 * 2 * 8 * 64 * 2 * (1000 + 128));
  // gpt-oss keeps attention bf16; the experts are MXFP4.
  EXPECT_EQ(PartBytes(e, "attention"), 24.0 * (2880 * 4096 * 2 + 2 * 2880 * 512) * 2);
  EXPECT_EQ(PartBytes(e, "routed experts (4 of 32)"), 24.0 * 4 * 3 * 2880 * 2880 * 4.25 / 8);
}

TEST(Roofline, LinearAttentionStateIsReadAndWrittenEachStep) {
  ModelShape m = Model("qwen3_next_config.json");
  Estimate e = Estim(m, Format("bf16"));
  EXPECT_EQ(e.state_bytes, 2.0 * 548'864 * 36 * 2);
  EXPECT_EQ(e.bytes_per_step, e.weight_bytes + e.state_bytes);
  EXPECT_EQ(PartBytes(e, "linear attention"), 36.0 * 33'718'272 * 2);
  EXPECT_EQ(PartBytes(e, "shared experts"), 48.0 * (3'145'728 + 2048) * 2);
  RooflineOptions o;
  o.context_tokens = 100;
  EXPECT_EQ(Estim(m, Format("bf16"), o).kv_bytes, 12 * 2 * 2 * 256 * 2 * 100);  // 12 full layers
}

TEST(Roofline, OtherHardwareScalesTheCeiling) {
  ModelShape m = Model("llama3_8b_config.json");
  Hardware h200 = HardwareTable::Builtin().Find("h200").value();
  Estimate e = Estim(m, Format("bf16"), {}, h200);
  EXPECT_DOUBLE_EQ(e.ceiling_tok_s, 4800e9 / 15'009'325'056);
}

TEST(Roofline, BadOptionsAreUsageErrors) {
  ModelShape m = Model("llama3_8b_config.json");
  auto bad = [&](RooflineOptions o) {
    auto e = Roofline(m, Format("bf16"), Spark(), o);
    return !e && e.error().code == ErrorCode::kUsage;
  };
  RooflineOptions o;
  o.tokens_per_step = 0.5;
  EXPECT_TRUE(bad(o));
  o = {};
  o.context_tokens = -1;
  EXPECT_TRUE(bad(o));
  o = {};
  o.draft_bytes = -1;
  EXPECT_TRUE(bad(o));
  o = {};
  o.verify_tokens = 0.5;
  EXPECT_TRUE(bad(o));
  o = {};
  o.kv_bytes_per_element = 0;
  EXPECT_TRUE(bad(o));
  Hardware none;
  EXPECT_FALSE(Roofline(m, Format("bf16"), none, {}));
}

// ---- results.json and the renderers -----------------------------------------------------------

json RoofJson(std::optional<double> measured = std::nullopt, std::int64_t context = 0) {
  ModelShape m = Model("qwen3_moe_config.json");
  WeightFormat f = Format("nvfp4");
  RooflineOptions o;
  o.context_tokens = context;
  Estimate e = Estim(m, f, o);
  return RooflineJson(m, f, Spark(), o, e, measured);
}

TEST(RooflineJson, CarriesInputsBytesAndCeiling) {
  json j = RoofJson(76.7);
  EXPECT_EQ(j["model"]["params_total"], 30'531'911'680);
  EXPECT_EQ(j["model"]["params_active_per_token"], 3'041'658'880);
  EXPECT_EQ(j["model"]["num_experts"], 128);
  EXPECT_EQ(j["weight_format"]["name"], "nvfp4");
  EXPECT_EQ(j["weight_format"]["bits_per_weight"], 4.5);
  EXPECT_EQ(j["weight_format"]["lm_head_bits"], 16.0);
  EXPECT_EQ(j["hardware"]["id"], "dgx-spark");
  EXPECT_EQ(j["hardware"]["bandwidth_gb_s"], 273.0);
  EXPECT_EQ(j["bytes_per_step"]["total"], 2'176'323'584);
  EXPECT_TRUE(j["bytes_per_step"]["total"].is_number_integer());
  EXPECT_EQ(j["bytes_per_token"], 2'176'323'584);
  EXPECT_NEAR(j["ceiling_tok_s"].get<double>(), 125.44, 0.005);
  EXPECT_EQ(j["measured_tok_s"], 76.7);
  EXPECT_NEAR(j["percent_of_ceiling"].get<double>(), 61.14, 0.005);
  EXPECT_EQ(j["weights"].size(), 5u);
  EXPECT_EQ(j["weights"][1]["part"], "routed experts (8 of 128)");
  EXPECT_TRUE(RoofJson()["measured_tok_s"].is_null());
  EXPECT_TRUE(RoofJson()["percent_of_ceiling"].is_null());
}

TEST(RooflineText, ShowsEveryPartAndTheCeiling) {
  std::string text = RenderRooflineText(RoofJson(76.7, 4096));
  for (const char* part :
       {"qwen3_moe, 48 layers, MoE 8 of 128 experts", "30,531,911,680 total",
        "3,041,658,880 read per token", "nvfp4: 4.5 bits/weight", "DGX Spark (GB10): 273 GB/s",
        "routed experts (8 of 128)", "1,019,215,872", "622,329,856", "KV cache (4,096 tokens",
        "402,653,184", "2,578,976,768",
        "ceiling   105.86 tok/s (125.44 tok/s without the KV cache)",
        "measured  76.70 tok/s = 72.5% of the ceiling"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  }
}

json Results(const json& roof) {
  return json{{"schema", "servebench.results/1"},
              {"perf", {{"decode", {{"decode_tok_s", {{"n", 3}, {"median", 76.7}}}}}}},
              {"spec_decode", nullptr},
              {"roofline", roof}};
}

TEST(RooflineMarkdown, SectionWithMeasuredDecode) {
  std::string md = RenderRooflineMarkdown(Results(RoofJson()));
  EXPECT_EQ(md.rfind("### Memory-bandwidth roofline\n\n", 0), 0u) << md;
  for (const char* part :
       {"**125.4 tok/s**", "measured **76.7 tok/s** = **61.1%** of the ceiling",
        "| Quantity | Value |", "| Parameters: total / read per token | 30.53B / 3.04B |",
        "| Hardware | DGX Spark (GB10), 273 GB/s |", "| Weights read per step | 2.176 GB |",
        "| Tokens per step | 1.00 |", "| Measured decode (median) | 76.7 tok/s |",
        "| Of ceiling | 61.1% |"}) {
    EXPECT_NE(md.find(part), std::string::npos) << part << "\n" << md;
  }
}

TEST(RooflineMarkdown, MeasuredAcceptanceLengthReplacesTokensPerStep) {
  json results = Results(RoofJson());
  results["spec_decode"] = {{"acceptance_rate", 0.71}, {"mean_acceptance_length", 2.13}};
  std::string md = RenderRooflineMarkdown(results);
  EXPECT_NE(md.find("| Tokens per step | 2.13 (measured mean acceptance length) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("**267.2 tok/s**"), std::string::npos) << md;  // 125.44 x 2.13
  EXPECT_NE(md.find("= **28.7%** of the ceiling"), std::string::npos) << md;
}

TEST(RooflineMarkdown, WithoutDecodeUsesTheStoredMeasurement) {
  json results = {{"roofline", RoofJson(100.0)}};
  std::string md = RenderRooflineMarkdown(results);
  EXPECT_NE(md.find("| Measured decode | 100.0 tok/s |"), std::string::npos) << md;
  json none = {{"roofline", RoofJson()}};
  EXPECT_NE(RenderRooflineMarkdown(none).find("| Of ceiling | — |"), std::string::npos);
}

TEST(RooflineMarkdown, NoSectionAndNoThrowOnOddInput) {
  EXPECT_EQ(RenderRooflineMarkdown(json::object()), "");
  EXPECT_EQ(RenderRooflineMarkdown(json{{"roofline", nullptr}}), "");
  EXPECT_EQ(RenderRooflineMarkdown(json{{"roofline", "x"}}), "");
  EXPECT_EQ(RenderRooflineMarkdown(json::array()), "");
  EXPECT_EQ(RenderRooflineConsole(json::object()), "");
  json odd = {{"roofline", {{"hardware", 5}, {"bytes_per_step", {{"total", "many"}}}}},
              {"perf", {{"decode", "x"}}},
              {"spec_decode", {{"mean_acceptance_length", 0.2}}}};
  std::string md;
  EXPECT_NO_THROW(md = RenderRooflineMarkdown(odd));
  EXPECT_NE(md.find("| Ceiling | — |"), std::string::npos) << md;
  EXPECT_NO_THROW(RenderRooflineText(odd["roofline"]));
  EXPECT_EQ(RenderRooflineConsole(odd), "");
}

TEST(RooflineMarkdown, EscapesThePath) {
  json roof = RoofJson();
  roof["model"]["config"] = "a|b<c>.json";
  std::string md = RenderRooflineMarkdown(Results(roof));
  // The report's one Markdown cell escape (core/escape.h): '|' and '<' backslash-escaped.
  EXPECT_NE(md.find("a\\|b\\<c>.json"), std::string::npos) << md;
}

TEST(RooflineConsole, OneLine) {
  EXPECT_EQ(RenderRooflineConsole(Results(RoofJson())),
            "roofline: ceiling 125.4 tok/s (2.18 GB per token at 273 GB/s, DGX Spark (GB10)); "
            "measured 76.7 tok/s = 61.1% of it\n");
}

}  // namespace
}  // namespace sb::roofline
