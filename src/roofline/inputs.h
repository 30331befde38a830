// The inputs of a roofline (docs/roofline.md): a model's config.json, a weight format, a hardware
// entry and the decode options, resolved and computed into the results.json "roofline" object,
// or the text `servebench roofline` prints. The flags that fill RooflineArgs are in
// cli/roofline_command.h. Thread safety: pure functions (they read the files named).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"

namespace sb::roofline {

struct RooflineArgs {
  std::string model_config;               // path to config.json
  std::string weight_format;              // "" = what the config declares (else bf16)
  std::string hardware;                   // name or alias from the hardware table
  std::string hardware_file;              // JSON file adding or updating hardware entries
  std::optional<double> bandwidth_gb_s;   // replaces the hardware's figure (or names none)
  std::int64_t context = 0;               // tokens in the KV cache
  double tokens_per_step = 1;             // speculative decoding: mean acceptance length
  double verify_tokens = 0;               // tokens verified per step (expert union); 0 = off
  double draft_bytes = 0;                 // drafter bytes per step
  std::optional<double> measured_tok_s;   // a measured decode speed to compare
  std::optional<double> bits_per_weight;  // the weight-format overrides
  std::optional<double> attention_bits;
  std::optional<double> lm_head_bits;
  std::optional<double> embedding_bits;
  std::optional<double> router_bits;
  std::string kv_cache_dtype = "bf16";  // bf16 | fp16 | fp8 | fp32
  std::string state_dtype = "bf16";     // linear-attention state: bf16 | fp16 | fp32
  bool list_hardware = false;
  bool list_formats = false;
  bool json = false;
};

// What `servebench roofline` prints: the table, the JSON object (--json), or a listing.
// kUsage / kSetup errors for bad inputs.
Result<std::string> RooflineOutput(const RooflineArgs& args);

// The results.json "roofline" object for `perf`/`run` (RooflineJson of roofline/roofline.h),
// with `measured_tok_s` (the decode median) when known; kUsage / kSetup error for bad inputs,
// so calling it with nullopt before the run fails fast. REQUIRES: !args.model_config.empty().
Result<nlohmann::json> RooflineResultsJson(const RooflineArgs& args,
                                           std::optional<double> measured_tok_s);

}  // namespace sb::roofline
