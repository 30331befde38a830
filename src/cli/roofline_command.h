// `servebench roofline`: the memory-bandwidth ceiling of single-stream decode for a model's
// config.json, a weight format and a hardware entry (docs/roofline.md), printed as a small table
// (or JSON). The same inputs can be added to `perf`/`run`, so a decode result gets its roofline
// in results.json ("roofline") and report.md. Thread safety: used from main's thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"

namespace CLI {
class App;
}  // namespace CLI

namespace sb::cli {

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

// Which command the inputs are added to. `perf`/`run` take the model and hardware inputs only
// (tokens per step and the measured speed come from the run), and name the context option
// --roofline-context so it can not be mistaken for a prompt size.
enum class RooflineFlags { kRooflineCommand, kSpeedCommand };

// Adds --model-config, --weight-format, --hardware, --hardware-file, --bandwidth-gb-s,
// --bits-per-weight, --attention-bits, --lm-head-bits, --embedding-bits, --router-bits,
// --kv-cache-dtype, --state-dtype, --draft-bytes and the context option to `cmd`.
void AddRooflineInputs(CLI::App* cmd, RooflineArgs& args, RooflineFlags flags);

// Adds the `roofline` subcommand (the inputs plus --context, --tokens-per-step,
// --verify-tokens, --measured, --list-hardware, --list-formats, --json) and returns it.
CLI::App* AddRooflineCommand(CLI::App& app, RooflineArgs& args);

// What `servebench roofline` prints: the table, the JSON object (--json), or a listing.
// kUsage / kSetup errors for bad inputs.
Result<std::string> RooflineOutput(const RooflineArgs& args);

// Runs the subcommand: prints RooflineOutput to stdout, or the error to stderr; returns the
// exit code (0, 2 usage, 3 setup).
int RunRoofline(const RooflineArgs& args);

// The results.json "roofline" object for `perf`/`run` (RooflineJson of roofline/roofline.h),
// with `measured_tok_s` (the decode median) when known; kUsage / kSetup error for bad inputs,
// so calling it with nullopt before the run fails fast. REQUIRES: !args.model_config.empty().
Result<nlohmann::json> RooflineResultsJson(const RooflineArgs& args,
                                           std::optional<double> measured_tok_s);

}  // namespace sb::cli
