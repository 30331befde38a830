// Weight formats and their storage cost in bits per weight, scale overhead included: bf16/fp16,
// fp8, int8, NVFP4, MXFP4, 4-bit AWQ/GPTQ, and the GGUF (llama.cpp) block types. A checkpoint
// rarely stores every tensor in its headline format, so a resolved format carries one width per
// tensor class (attention, MLP/experts, lm_head, input embedding, MoE router). The arithmetic and
// the defaults are in docs/roofline.md §3. Thread safety: pure functions over a constant table.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace sb::roofline {

struct WeightFormat {
  std::string name;             // canonical name: "nvfp4", "bf16", "Q4_K", ...
  double bits_per_weight = 16;  // MLPs, routed and shared experts
  double attention_bits = 16;   // q/k/v/o and linear-attention projections
  double lm_head_bits = 16;     // output projection
  double embedding_bits = 16;   // input embedding (one row is read per token)
  double router_bits = 16;      // MoE router (and shared-expert gate)
  std::string arithmetic;       // how bits_per_weight is made up: "4 + 8/16 = 4.5"
  std::string note;             // caveats worth printing, or ""
};

// Explicit widths that replace the format's defaults (--bits-per-weight and friends).
// bits_per_weight also moves every class that follows the body by default (e.g. the lm_head of
// a bf16 checkpoint), but not the classes the format keeps at a fixed width (the bf16 lm_head
// of an NVFP4 checkpoint).
struct FormatOverrides {
  std::optional<double> bits_per_weight;
  std::optional<double> attention_bits;
  std::optional<double> lm_head_bits;
  std::optional<double> embedding_bits;
  std::optional<double> router_bits;
};

// Resolves a format name, case-insensitively and ignoring '-', '_', '.', with aliases
// ("bfloat16", "awq"). A bare "fp4" is refused: NVFP4 and MXFP4 differ. llama-quantize file
// types such as "Q4_K_M" map to their main block type and say so in `note`. An empty name with
// overrides.bits_per_weight set gives a "custom" format. kUsage error for an unknown name or
// a width outside (0, 64].
Result<WeightFormat> ResolveWeightFormat(std::string_view name, const FormatOverrides& overrides);

inline Result<WeightFormat> ResolveWeightFormat(std::string_view name) {
  return ResolveWeightFormat(name, FormatOverrides{});
}

// Every canonical format name with its bits per weight, in table order (for --help and docs).
struct FormatListing {
  std::string name;
  double bits_per_weight = 0;
  std::string arithmetic;
};

std::vector<FormatListing> ListWeightFormats();

}  // namespace sb::roofline
