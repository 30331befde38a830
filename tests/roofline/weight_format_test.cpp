#include "roofline/weight_format.h"

#include <string>

#include <gtest/gtest.h>

namespace sb::roofline {
namespace {

WeightFormat Resolve(const std::string& name, const FormatOverrides& o = {}) {
  auto f = ResolveWeightFormat(name, o);
  EXPECT_TRUE(f.has_value()) << name << ": " << (f ? "" : f.error().message);
  return f ? f.value() : WeightFormat{};
}

// bits = bytes per block x 8 / weights per block, from the ggml block structs (ggml-common.h).
double BlockBits(int bytes, int weights) {
  return bytes * 8.0 / weights;
}

struct Expected {
  const char* name;
  double bits;
  double attention;
  double lm_head;
  double embedding;
  double router;
};

// docs/roofline.md §3: every format's widths.
TEST(WeightFormat, EveryFormatsBitsPerWeight) {
  const double q6k = BlockBits(128 + 64 + 16 + 2, 256);
  const Expected table[] = {
      {"bf16", 16, 16, 16, 16, 16},
      {"fp16", 16, 16, 16, 16, 16},
      {"f32", 32, 32, 32, 32, 32},
      {"fp8", 8, 8, 16, 16, 16},
      {"int8", 8, 8, 16, 16, 16},
      {"nvfp4", 4 + 8.0 / 16, 4.5, 16, 16, 16},
      {"mxfp4", 4 + 8.0 / 32, 16, 16, 16, 16},
      {"int4-g128", 4 + 20.0 / 128, 4.15625, 16, 16, 16},
      {"Q8_0", BlockBits(2 + 32, 32), 8.5, 8.5, 8.5, 32},
      {"Q6_K", q6k, q6k, q6k, q6k, 32},
      {"Q5_K", BlockBits(2 + 2 + 12 + 32 + 128, 256), 5.5, q6k, 5.5, 32},
      {"Q5_1", BlockBits(2 + 2 + 4 + 16, 32), 6, q6k, 6, 32},
      {"Q5_0", BlockBits(2 + 4 + 16, 32), 5.5, q6k, 5.5, 32},
      {"Q4_K", BlockBits(2 + 2 + 12 + 128, 256), 4.5, q6k, 4.5, 32},
      {"Q4_1", BlockBits(2 + 2 + 16, 32), 5, q6k, 5, 32},
      {"Q4_0", BlockBits(2 + 16, 32), 4.5, q6k, 4.5, 32},
      {"IQ4_XS", BlockBits(2 + 2 + 4 + 128, 256), 4.25, q6k, 4.25, 32},
      {"IQ4_NL", BlockBits(2 + 16, 32), 4.5, q6k, 4.5, 32},
      {"Q3_K", BlockBits(32 + 64 + 12 + 2, 256), 3.4375, q6k, 3.4375, 32},
      {"IQ3_S", BlockBits(2 + 64 + 8 + 32 + 4, 256), 3.4375, q6k, 3.4375, 32},
      {"IQ3_XXS", BlockBits(2 + 96, 256), 3.0625, 5.5, 3.0625, 32},
      {"Q2_K", BlockBits(16 + 64 + 2 + 2, 256), 2.625, q6k, 2.625, 32},
      {"IQ2_XXS", BlockBits(2 + 64, 256), 2.0625, 5.5, 2.0625, 32},
      {"IQ1_S", BlockBits(2 + 32 + 16, 256), 1.5625, 5.5, 1.5625, 32},
  };
  ASSERT_EQ(ListWeightFormats().size(), std::size(table));
  for (const Expected& e : table) {
    WeightFormat f = Resolve(e.name);
    EXPECT_EQ(f.name, e.name);
    EXPECT_DOUBLE_EQ(f.bits_per_weight, e.bits) << e.name;
    EXPECT_DOUBLE_EQ(f.attention_bits, e.attention) << e.name;
    EXPECT_DOUBLE_EQ(f.lm_head_bits, e.lm_head) << e.name;
    EXPECT_DOUBLE_EQ(f.embedding_bits, e.embedding) << e.name;
    EXPECT_DOUBLE_EQ(f.router_bits, e.router) << e.name;
    EXPECT_FALSE(f.arithmetic.empty()) << e.name;
  }
  // The figures the issue names.
  EXPECT_DOUBLE_EQ(Resolve("Q8_0").bits_per_weight, 8.5);
  EXPECT_DOUBLE_EQ(Resolve("Q6_K").bits_per_weight, 6.5625);
  EXPECT_DOUBLE_EQ(Resolve("Q5_K").bits_per_weight, 5.5);
  EXPECT_DOUBLE_EQ(Resolve("Q4_K").bits_per_weight, 4.5);
  EXPECT_DOUBLE_EQ(Resolve("Q3_K").bits_per_weight, 3.4375);
  EXPECT_DOUBLE_EQ(Resolve("Q2_K").bits_per_weight, 2.625);
  EXPECT_DOUBLE_EQ(Resolve("IQ4_XS").bits_per_weight, 4.25);
  EXPECT_DOUBLE_EQ(Resolve("nvfp4").bits_per_weight, 4.5);
  EXPECT_DOUBLE_EQ(Resolve("mxfp4").bits_per_weight, 4.25);
}

TEST(WeightFormat, NamesAreCaseAndPunctuationInsensitiveWithAliases) {
  EXPECT_EQ(Resolve("BF16").name, "bf16");
  EXPECT_EQ(Resolve("bfloat16").name, "bf16");
  EXPECT_EQ(Resolve("NVFP4").name, "nvfp4");
  EXPECT_EQ(Resolve("q4_k").name, "Q4_K");
  EXPECT_EQ(Resolve("q4-k").name, "Q4_K");
  EXPECT_EQ(Resolve("awq").name, "int4-g128");
  EXPECT_EQ(Resolve("float16").name, "fp16");
}

TEST(WeightFormat, LlamaQuantizeFileTypesMapToTheirMainTypeWithANote) {
  WeightFormat f = Resolve("Q4_K_M");
  EXPECT_EQ(f.name, "Q4_K");
  EXPECT_DOUBLE_EQ(f.bits_per_weight, 4.5);
  EXPECT_EQ(f.note.rfind("Q4_K_M is a llama-quantize file type: mostly Q4_K", 0), 0u) << f.note;
  EXPECT_EQ(Resolve("q5_k_s").name, "Q5_K");
  EXPECT_EQ(Resolve("Q3_K_L").name, "Q3_K");
  EXPECT_TRUE(Resolve("Q4_K").note.empty());
  // An explicit width makes the caveat moot.
  FormatOverrides o;
  o.bits_per_weight = 4.89;
  EXPECT_TRUE(Resolve("Q4_K_M", o).note.empty());
}

TEST(WeightFormat, BitsPerWeightOverrideMovesOnlyTheClassesThatFollowTheBody) {
  FormatOverrides o;
  o.bits_per_weight = 5;
  WeightFormat nv = Resolve("nvfp4", o);
  EXPECT_DOUBLE_EQ(nv.bits_per_weight, 5);
  EXPECT_DOUBLE_EQ(nv.attention_bits, 5);
  EXPECT_DOUBLE_EQ(nv.lm_head_bits, 16);  // the format keeps it bf16
  EXPECT_DOUBLE_EQ(nv.router_bits, 16);
  WeightFormat bf = Resolve("bf16", o);
  EXPECT_DOUBLE_EQ(bf.lm_head_bits, 5);  // follows the body
  EXPECT_NE(bf.arithmetic.find("--bits-per-weight"), std::string::npos);
  FormatOverrides each;
  each.lm_head_bits = 6.5625;
  each.attention_bits = 8;
  each.router_bits = 32;
  each.embedding_bits = 4.5;
  WeightFormat g = Resolve("nvfp4", each);
  EXPECT_DOUBLE_EQ(g.bits_per_weight, 4.5);
  EXPECT_DOUBLE_EQ(g.lm_head_bits, 6.5625);
  EXPECT_DOUBLE_EQ(g.attention_bits, 8);
  EXPECT_DOUBLE_EQ(g.router_bits, 32);
  EXPECT_DOUBLE_EQ(g.embedding_bits, 4.5);
}

TEST(WeightFormat, CustomWidthWithoutAName) {
  FormatOverrides o;
  o.bits_per_weight = 4.8;
  WeightFormat f = Resolve("", o);
  EXPECT_EQ(f.name, "custom");
  EXPECT_DOUBLE_EQ(f.bits_per_weight, 4.8);
  EXPECT_DOUBLE_EQ(f.lm_head_bits, 4.8);
  EXPECT_DOUBLE_EQ(f.router_bits, 4.8);
}

TEST(WeightFormat, Errors) {
  auto unknown = ResolveWeightFormat("fp4");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::kUsage);
  EXPECT_EQ(unknown.error().message.rfind("unknown weight format 'fp4' (known: bf16, fp16", 0), 0u)
      << unknown.error().message;
  auto none = ResolveWeightFormat("");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kUsage);
  for (double bad : {0.0, -1.0, 65.0}) {
    FormatOverrides o;
    o.bits_per_weight = bad;
    auto f = ResolveWeightFormat("bf16", o);
    ASSERT_FALSE(f) << bad;
    EXPECT_EQ(f.error().message.rfind("--bits-per-weight", 0), 0u);
  }
  FormatOverrides lm;
  lm.lm_head_bits = 0;
  EXPECT_EQ(ResolveWeightFormat("nvfp4", lm).error().message.rfind("--lm-head-bits", 0), 0u);
}

}  // namespace
}  // namespace sb::roofline
