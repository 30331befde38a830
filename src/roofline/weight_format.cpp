#include "roofline/weight_format.h"

#include <array>
#include <cctype>

#include <fmt/format.h>

namespace sb::roofline {

namespace {

// A width of 0 in a class column means "as the body" (bits_per_weight, or its override).
constexpr double kFollow = 0;

// llama.cpp stores the MoE router (ffn_gate_inp) in F32 in every GGUF file: the converter
// writes it as F32 and llama-quantize never quantizes it.
constexpr double kGgufRouter = 32;
// llama-quantize writes output.weight (the lm_head) as Q6_K for every k-quant and legacy file
// type, and as Q5_K for the very low-bit IQ1/IQ2/IQ3_XXS file types (llama_tensor_get_type).
constexpr double kGgufQ6K = 6.5625;
constexpr double kGgufQ5K = 5.5;

struct Entry {
  std::string_view name;
  std::string_view aliases;  // comma-separated
  double bits;
  double attention;
  double lm_head;
  double embedding;
  double router;
  std::string_view arithmetic;
  std::string_view note;
};

constexpr std::string_view kMixNote =
    "is a llama-quantize file type: mostly {}, with some tensors (attn_v, part of ffn_down) in a "
    "wider type, so a file averages somewhat more bits than {}; for the exact figure pass "
    "--bits-per-weight = 8 x file bytes / parameters";

// clang-format off
constexpr std::array<Entry, 24> kFormats = {{
  // Hugging Face checkpoints.
  {"bf16", "bfloat16", 16, kFollow, kFollow, kFollow, kFollow, "16 (no scales)", ""},
  {"fp16", "float16,f16,half", 16, kFollow, kFollow, kFollow, kFollow, "16 (no scales)", ""},
  {"f32", "fp32,float32", 32, kFollow, kFollow, kFollow, kFollow, "32 (no scales)", ""},
  {"fp8", "fp8_e4m3,e4m3,float8,fp8-dynamic,w8a8-fp8", 8, kFollow, 16, 16, 16,
   "8 (+ an FP32 scale per tensor, per output channel or per 128x128 block: at most "
   "32 / input width bits, 0.016 at width 2048; left out)", ""},
  {"int8", "w8a8,w8a16,int8-channel", 8, kFollow, 16, 16, 16,
   "8 (+ an FP32 scale per output channel: 32 / input width bits, 0.016 at width 2048; left "
   "out)", ""},
  {"nvfp4", "modelopt-fp4,nvfp4-pack-quantized", 4.5, kFollow, 16, 16, 16,
   "4 (E2M1) + 8/16 (one FP8 E4M3 scale per 16 weights) = 4.5; + one FP32 scale per tensor "
   "(left out)", ""},
  {"mxfp4", "mx-fp4", 4.25, 16, 16, 16, 16,
   "4 (E2M1) + 8/32 (one E8M0 scale per 32 weights) = 4.25",
   "MXFP4 as gpt-oss ships it: only the MLP experts are MXFP4; attention, router, embeddings "
   "and lm_head stay bf16 (override with --attention-bits)"},
  {"int4-g128", "awq,gptq,w4a16,int4", 4.15625, kFollow, 16, 16, 16,
   "4 + (16 + 4)/128 (an fp16 scale and a 4-bit zero point per group of 128) = 4.15625", ""},
  // GGUF block types (ggml-common.h block structs; QK_K = 256).
  {"Q8_0", "", 8.5, kFollow, kFollow, kFollow, kGgufRouter,
   "(2 + 32) bytes per 32 weights: fp16 scale + 32 x int8 = 8.5", ""},
  {"Q6_K", "", 6.5625, kFollow, kGgufQ6K, kFollow, kGgufRouter,
   "(128 + 64 + 16 + 2) = 210 bytes per 256: ql, qh, int8 scales, fp16 d = 6.5625", ""},
  {"Q5_K", "Q5_K_M,Q5_K_S", 5.5, kFollow, kGgufQ6K, kFollow, kGgufRouter,
   "(2 + 2 + 12 + 32 + 128) = 176 bytes per 256: d, dmin, scales, qh, qs = 5.5", ""},
  {"Q5_1", "", 6, kFollow, kGgufQ6K, kFollow, kGgufRouter,
   "(2 + 2 + 4 + 16) = 24 bytes per 32: d, m, qh, qs = 6.0", ""},
  {"Q5_0", "", 5.5, kFollow, kGgufQ6K, kFollow, kGgufRouter,
   "(2 + 4 + 16) = 22 bytes per 32: d, qh, qs = 5.5", ""},
  {"Q4_K", "Q4_K_M,Q4_K_S", 4.5, kFollow, kGgufQ6K, kFollow, kGgufRouter,
   "(2 + 2 + 12 + 128) = 144 bytes per 256: d, dmin, scales, qs = 4.5", ""},
  {"Q4_1", "", 5, kFollow, kGgufQ6K, kFollow, kGgufRouter,
   "(2 + 2 + 16) = 20 bytes per 32: d, m, qs = 5.0", ""},
  {"Q4_0", "", 4.5, kFollow, kGgufQ6K, kFollow, kGgufRouter,
   "(2 + 16) = 18 bytes per 32: fp16 d + 32 x 4 bits = 4.5", ""},
  {"IQ4_XS", "", 4.25, kFollow, kGgufQ6K, kFollow, kGgufRouter,
   "(2 + 2 + 4 + 128) = 136 bytes per 256: d, scales_h, scales_l, qs = 4.25", ""},
  {"IQ4_NL", "", 4.5, kFollow, kGgufQ6K, kFollow, kGgufRouter,
   "(2 + 16) = 18 bytes per 32: d, qs = 4.5", ""},
  {"Q3_K", "Q3_K_S,Q3_K_M,Q3_K_L", 3.4375, kFollow, kGgufQ6K, kFollow, kGgufRouter,
   "(32 + 64 + 12 + 2) = 110 bytes per 256: hmask, qs, scales, d = 3.4375", ""},
  {"IQ3_S", "IQ3_M", 3.4375, kFollow, kGgufQ6K, kFollow, kGgufRouter,
   "(2 + 64 + 8 + 32 + 4) = 110 bytes per 256: d, qs, qh, signs, scales = 3.4375", ""},
  {"IQ3_XXS", "", 3.0625, kFollow, kGgufQ5K, kFollow, kGgufRouter,
   "(2 + 96) = 98 bytes per 256: d, qs = 3.0625", ""},
  {"Q2_K", "Q2_K_S", 2.625, kFollow, kGgufQ6K, kFollow, kGgufRouter,
   "(16 + 64 + 2 + 2) = 84 bytes per 256: scales, qs, d, dmin = 2.625", ""},
  {"IQ2_XXS", "", 2.0625, kFollow, kGgufQ5K, kFollow, kGgufRouter,
   "(2 + 64) = 66 bytes per 256: d, qs = 2.0625", ""},
  {"IQ1_S", "", 1.5625, kFollow, kGgufQ5K, kFollow, kGgufRouter,
   "(2 + 32 + 16) = 50 bytes per 256: d, qs, qh = 1.5625", ""},
}};

// clang-format on

// Lower case without '-', '_', '.' and spaces: "Q4_K_M", "q4-k-m" and "q4km" are one name.
std::string Key(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == '_' || c == '.' || c == ' ') {
      continue;
    }
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// The entry named `name`; *alias is set to the alias it was found by ("" for the name).
const Entry* FindEntry(std::string_view name, std::string* alias) {
  std::string key = Key(name);
  for (const Entry& e : kFormats) {
    if (Key(e.name) == key) {
      alias->clear();
      return &e;
    }
    std::string_view rest = e.aliases;
    while (!rest.empty()) {
      std::size_t comma = rest.find(',');
      std::string_view a = rest.substr(0, comma);
      if (Key(a) == key) {
        *alias = std::string(a);
        return &e;
      }
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return nullptr;
}

bool ValidBits(double b) {
  return b > 0 && b <= 64;
}

std::string KnownNames() {
  std::string out;
  for (const Entry& e : kFormats) {
    out += out.empty() ? "" : ", ";
    out += e.name;
  }
  return out;
}

}  // namespace

Result<WeightFormat> ResolveWeightFormat(std::string_view name, const FormatOverrides& o) {
  for (const auto& [flag, v] : {std::pair{"--bits-per-weight", o.bits_per_weight},
                                std::pair{"--attention-bits", o.attention_bits},
                                std::pair{"--lm-head-bits", o.lm_head_bits},
                                std::pair{"--embedding-bits", o.embedding_bits},
                                std::pair{"--router-bits", o.router_bits}}) {
    if (v.has_value() && !ValidBits(*v)) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("{} {}: a width must be above 0 and at most 64 bits", flag, *v));
    }
  }
  WeightFormat f;
  Entry custom{"custom", "", 0, kFollow, kFollow, kFollow, kFollow, "given", ""};
  const Entry* e = &custom;
  std::string alias;
  if (name.empty()) {
    if (!o.bits_per_weight.has_value()) {
      return MakeError(ErrorCode::kUsage, "no weight format: pass --weight-format (" +
                                              KnownNames() + ") or --bits-per-weight");
    }
  } else {
    e = FindEntry(name, &alias);
    if (e == nullptr) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("unknown weight format '{}' (known: {})", name, KnownNames()));
    }
  }
  f.name = std::string(e->name);
  double body = o.bits_per_weight.value_or(e->bits);
  auto resolve = [body](double table, const std::optional<double>& given) {
    return given.value_or(table == kFollow ? body : table);
  };
  f.bits_per_weight = body;
  f.attention_bits = resolve(e->attention, o.attention_bits);
  f.lm_head_bits = resolve(e->lm_head, o.lm_head_bits);
  f.embedding_bits = resolve(e->embedding, o.embedding_bits);
  f.router_bits = resolve(e->router, o.router_bits);
  f.arithmetic = o.bits_per_weight.has_value()
                     ? fmt::format("{} (given with --bits-per-weight)", *o.bits_per_weight)
                     : std::string(e->arithmetic);
  f.note = std::string(e->note);
  // A llama-quantize file type ("Q4_K_M") names a mixture, not one block type.
  if (!alias.empty() && e->router == kGgufRouter && !o.bits_per_weight.has_value()) {
    f.note = alias + " " + fmt::format(fmt::runtime(kMixNote), e->name, e->name);
  }
  return f;
}

std::vector<FormatListing> ListWeightFormats() {
  std::vector<FormatListing> out;
  for (const Entry& e : kFormats) {
    out.push_back({std::string(e.name), e.bits, std::string(e.arithmetic)});
  }
  return out;
}

}  // namespace sb::roofline
