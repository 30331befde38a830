#include "cli/roofline_command.h"

#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace sb::cli {

void AddRooflineInputs(CLI::App* cmd, roofline::RooflineArgs& a, RooflineFlags flags) {
  cmd->add_option("--model-config", a.model_config,
                  "The model's config.json (Hugging Face), for the memory-bandwidth roofline");
  cmd->add_option("--weight-format", a.weight_format,
                  "bf16, fp16, fp8, int8, nvfp4, mxfp4, int4-g128 or a GGUF type (Q8_0, Q6_K, "
                  "Q4_K_M, ...); default: what the config declares, else bf16");
  cmd->add_option("--hardware", a.hardware,
                  "Hardware name or alias (spark, h100, h200, 4090, 5090, pro6000, thor, m4-max, "
                  "...; `servebench roofline --list-hardware`)");
  cmd->add_option("--hardware-file", a.hardware_file,
                  "JSON file adding hardware: {\"my-gpu\": {\"bandwidth_gb_s\": 1000}}");
  cmd->add_option("--bandwidth-gb-s", a.bandwidth_gb_s,
                  "Memory bandwidth in GB/s (replaces the hardware's figure, or stands alone)");
  cmd->add_option("--bits-per-weight", a.bits_per_weight,
                  "Bits per weight of the MLP/expert weights, scales included (overrides the "
                  "format)");
  cmd->add_option("--attention-bits", a.attention_bits, "Bits per weight of attention");
  cmd->add_option("--lm-head-bits", a.lm_head_bits,
                  "Bits per weight of the lm_head (default 16 for fp8/int8/nvfp4/mxfp4/int4)");
  cmd->add_option("--embedding-bits", a.embedding_bits, "Bits per weight of the input embedding");
  cmd->add_option("--router-bits", a.router_bits,
                  "Bits per weight of the MoE router (default 16; 32 for GGUF)");
  cmd->add_option("--kv-cache-dtype", a.kv_cache_dtype, "KV-cache element type")
      ->check(CLI::IsMember({"bf16", "fp16", "fp8", "fp32"}))
      ->capture_default_str();
  cmd->add_option("--state-dtype", a.state_dtype, "Linear-attention state element type")
      ->check(CLI::IsMember({"bf16", "fp16", "fp32"}))
      ->capture_default_str();
  cmd->add_option("--draft-bytes", a.draft_bytes,
                  "Bytes the draft model / MTP head reads per speculative step (all passes)");
  if (flags == RooflineFlags::kRooflineCommand) {
    cmd->add_option("--context", a.context,
                    "Tokens in the KV cache; its read is added per step (0 = weights only)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
  } else {
    cmd->add_option("--roofline-context", a.context,
                    "Tokens in the KV cache for the roofline (0 = weights only)")
        ->check(CLI::NonNegativeNumber);
  }
}

CLI::App* AddRooflineCommand(CLI::App& app, roofline::RooflineArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "roofline",
      "Memory-bandwidth ceiling of single-stream decode: bytes read per token and tok/s = "
      "bandwidth / bytes, from a config.json, weight format and hardware");
  AddRooflineInputs(cmd, a, RooflineFlags::kRooflineCommand);
  cmd->add_option("--tokens-per-step", a.tokens_per_step,
                  "Tokens per forward pass: speculative decoding's mean acceptance length")
      ->check(CLI::Range(1.0, 1e6))
      ->capture_default_str();
  cmd->add_option("--verify-tokens", a.verify_tokens,
                  "Tokens verified per speculative step: MoE reads the union of their experts "
                  "(expected under uniform routing); 0 = one token's experts (the strict ceiling)");
  cmd->add_option("--measured", a.measured_tok_s, "A measured decode tok/s to compare");
  cmd->add_flag("--list-hardware", a.list_hardware, "List the hardware table and exit");
  cmd->add_flag("--list-formats", a.list_formats, "List the weight formats and exit");
  cmd->add_flag("--json", a.json, "Print the results.json \"roofline\" object instead");
  return cmd;
}

int RunRoofline(const roofline::RooflineArgs& a) {
  auto out = roofline::RooflineOutput(a);
  if (!out) {
    std::fprintf(stderr, "servebench: error: %s\n", out.error().message.c_str());
    return out.error().code == ErrorCode::kUsage ? kExitUsage : kExitSetup;
  }
  std::fwrite(out->data(), 1, out->size(), stdout);
  return kExitOk;
}

}  // namespace sb::cli
