// The memory-bandwidth roofline of single-stream decode: a decode step must read every weight
// it uses (and the KV cache) from memory once, so tok/s can not exceed
//   bandwidth / (bytes read per step / tokens per step).
// Roofline() computes the bytes by tensor class from a ModelShape and a WeightFormat;
// RooflineJson() is the `roofline` object of results.json; the renderers turn that object into
// the `servebench roofline` table, a report.md section and a console line. Definitions and a
// worked hand computation: docs/roofline.md. Bytes are bytes; GB = 1e9 bytes.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"
#include "roofline/hardware.h"
#include "roofline/model_shape.h"
#include "roofline/weight_format.h"

namespace sb::roofline {

struct RooflineOptions {
  // Tokens already in the KV cache when the token is decoded (prompt + output so far); 0 leaves
  // the KV cache out.
  std::int64_t context_tokens = 0;
  // Tokens produced per forward pass of the target model (>= 1). With speculative decoding this
  // is the mean acceptance length: the weights are read once per step for several tokens.
  double tokens_per_step = 1;
  // Bytes the drafter (a draft model or MTP head, all its passes) reads per step.
  double draft_bytes = 0;
  // Bytes per KV-cache element: 2 for bf16/fp16, 1 for an fp8 KV cache.
  double kv_bytes_per_element = 2;
  // Bytes per element of the linear-attention recurrent state (read and written each step).
  double state_bytes_per_element = 2;
  // Routed experts read per MoE layer per step. 0 (default): one token's experts_per_token, the
  // strict ceiling. N >= 1: the expected number of distinct experts when N tokens (the verified
  // tokens of a speculative step) are routed independently and uniformly: E (1 - (1 - k/E)^N).
  double verify_tokens = 0;
};

// One tensor class read per step.
struct WeightPart {
  std::string name;  // "attention", "routed experts (8 of 128)", "lm_head", ...
  double params = 0;
  double bits = 0;
  double bytes = 0;  // params x bits / 8
};

struct Estimate {
  std::vector<WeightPart> parts;  // per step, in a fixed order; classes with no weights omitted
  double experts_per_step = 0;    // routed experts read per MoE layer per step (0: dense)
  // Bytes moved per step.
  double weight_bytes = 0;  // Σ parts
  double kv_bytes = 0;      // KV cache read at context_tokens
  double state_bytes = 0;   // linear-attention state, read + written
  double draft_bytes = 0;
  double bytes_per_step = 0;  // the four above
  double tokens_per_step = 1;
  double bytes_per_token = 0;             // bytes_per_step / tokens_per_step
  double bytes_per_token_without_kv = 0;  // the same with kv_bytes left out
  double bandwidth_gb_s = 0;
  double ceiling_tok_s = 0;             // bandwidth / bytes_per_token
  double ceiling_tok_s_without_kv = 0;  // bandwidth / bytes_per_token_without_kv

  // measured / ceiling x 100.
  double PercentOfCeiling(double measured_tok_s) const {
    return ceiling_tok_s > 0 ? 100.0 * measured_tok_s / ceiling_tok_s : 0.0;
  }
};

// kUsage error for options out of range (tokens_per_step < 1, negative sizes, no bandwidth).
Result<Estimate> Roofline(const ModelShape& shape, const WeightFormat& format,
                          const Hardware& hardware, const RooflineOptions& options);

// The `roofline` object of results.json (docs/roofline.md §6): the inputs, the per-step bytes,
// the ceiling, and the measured figure with its percentage when `measured_tok_s` is given
// (null otherwise).
nlohmann::json RooflineJson(const ModelShape& shape, const WeightFormat& format,
                            const Hardware& hardware, const RooflineOptions& options,
                            const Estimate& estimate,
                            std::optional<double> measured_tok_s = std::nullopt);

// The table `servebench roofline` prints, from a RooflineJson object. Ends with a newline.
std::string RenderRooflineText(const nlohmann::json& roofline);

// The report.md section ("### Memory-bandwidth roofline ...") for a whole results.json
// document; "" when it has no `roofline` object. The measured figure is
// perf.decode.decode_tok_s.median when present (else roofline.measured_tok_s); tokens per step
// is spec_decode.mean_acceptance_length when measured (else roofline.tokens_per_step). Never
// throws on odd input.
std::string RenderRooflineMarkdown(const nlohmann::json& results);

// One line for the terminal beside the decode result, same sources as the Markdown section:
// "roofline: ceiling 125.4 tok/s (2.18 GB per token at 273 GB/s, DGX Spark (GB10)); measured
// 76.7 tok/s = 61.1% of it\n"; "" when the document has no `roofline` object.
std::string RenderRooflineConsole(const nlohmann::json& results);

}  // namespace sb::roofline
