#include "cli/roofline_command.h"

#include <cstdio>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "roofline/hardware.h"
#include "roofline/model_shape.h"
#include "roofline/roofline.h"
#include "roofline/weight_format.h"

namespace sb::cli {

namespace {

using nlohmann::json;

struct Inputs {
  roofline::ModelShape shape;
  roofline::WeightFormat format;
  roofline::Hardware hardware;
  roofline::RooflineOptions options;
};

Result<double> DtypeBytes(const std::string& flag, const std::string& dtype) {
  if (dtype == "bf16" || dtype == "fp16") {
    return 2.0;
  }
  if (dtype == "fp8") {
    return 1.0;
  }
  if (dtype == "fp32") {
    return 4.0;
  }
  return MakeError(ErrorCode::kUsage,
                   fmt::format("{} {}: expected bf16, fp16, fp8 or fp32", flag, dtype));
}

Result<roofline::HardwareTable> LoadTable(const RooflineArgs& a) {
  roofline::HardwareTable table = roofline::HardwareTable::Builtin();
  if (!a.hardware_file.empty()) {
    if (auto ok = table.LoadFile(a.hardware_file); !ok) {
      return ok.error();
    }
  }
  return table;
}

Result<roofline::Hardware> ResolveHardware(const RooflineArgs& a) {
  if (a.bandwidth_gb_s.has_value() && !(*a.bandwidth_gb_s > 0)) {
    return MakeError(ErrorCode::kUsage, "--bandwidth-gb-s must be positive");
  }
  if (a.hardware.empty()) {
    if (!a.bandwidth_gb_s.has_value()) {
      return MakeError(ErrorCode::kUsage,
                       "--hardware is required (or --bandwidth-gb-s); --list-hardware shows the "
                       "built-in table");
    }
    return roofline::Hardware{"custom", "custom", *a.bandwidth_gb_s, {}, "--bandwidth-gb-s"};
  }
  auto table = LoadTable(a);
  if (!table) {
    return table.error();
  }
  auto hw = table->Find(a.hardware);
  if (!hw) {
    return hw.error();
  }
  if (a.bandwidth_gb_s.has_value()) {
    hw->bandwidth_gb_s = *a.bandwidth_gb_s;
    hw->source = "--bandwidth-gb-s";
  }
  return hw;
}

Result<Inputs> Resolve(const RooflineArgs& a) {
  if (a.model_config.empty()) {
    return MakeError(ErrorCode::kUsage, "--model-config PATH (a model's config.json) is required");
  }
  Inputs in;
  auto shape = roofline::LoadModelConfig(a.model_config);
  if (!shape) {
    return shape.error();
  }
  in.shape = std::move(shape.value());
  roofline::FormatOverrides o{a.bits_per_weight, a.attention_bits, a.lm_head_bits, a.embedding_bits,
                              a.router_bits};
  // No --weight-format: what the config declares; a bare --bits-per-weight gives "custom".
  std::string name = a.weight_format;
  if (name.empty() && !a.bits_per_weight.has_value()) {
    name = in.shape.declared_format.empty() ? "bf16" : in.shape.declared_format;
  }
  auto format = roofline::ResolveWeightFormat(name, o);
  if (!format) {
    return format.error();
  }
  in.format = std::move(format.value());
  auto hw = ResolveHardware(a);
  if (!hw) {
    return hw.error();
  }
  in.hardware = std::move(hw.value());
  auto kv = DtypeBytes("--kv-cache-dtype", a.kv_cache_dtype);
  if (!kv) {
    return kv.error();
  }
  auto state = DtypeBytes("--state-dtype", a.state_dtype);
  if (!state) {
    return state.error();
  }
  in.options.context_tokens = a.context;
  in.options.tokens_per_step = a.tokens_per_step;
  in.options.verify_tokens = a.verify_tokens;
  in.options.draft_bytes = a.draft_bytes;
  in.options.kv_bytes_per_element = *kv;
  in.options.state_bytes_per_element = *state;
  return in;
}

Result<json> Compute(const RooflineArgs& a, std::optional<double> measured) {
  auto in = Resolve(a);
  if (!in) {
    return in.error();
  }
  if (measured.has_value() && !(*measured > 0)) {
    return MakeError(ErrorCode::kUsage, "--measured must be a positive tok/s figure");
  }
  auto e = roofline::Roofline(in->shape, in->format, in->hardware, in->options);
  if (!e) {
    return e.error();
  }
  return roofline::RooflineJson(in->shape, in->format, in->hardware, in->options, *e, measured);
}

std::string ListHardware(const roofline::HardwareTable& table) {
  std::string out =
      fmt::format("{:<18}{:<28}{:>8}  {:<34}{}\n", "id", "name", "GB/s", "aliases", "source");
  for (const roofline::Hardware& h : table.entries()) {
    out += fmt::format("{:<18}{:<28}{:>8}  {:<34}{}\n", h.id, h.name,
                       fmt::format("{:g}", h.bandwidth_gb_s),
                       fmt::format("{}", fmt::join(h.aliases, ", ")), h.source);
  }
  return out;
}

std::string ListFormats() {
  std::string out = fmt::format("{:<12}{:>9}  {}\n", "format", "bits", "arithmetic");
  for (const roofline::FormatListing& f : roofline::ListWeightFormats()) {
    out += fmt::format("{:<12}{:>9}  {}\n", f.name, fmt::format("{:g}", f.bits_per_weight),
                       f.arithmetic);
  }
  return out;
}

}  // namespace

void AddRooflineInputs(CLI::App* cmd, RooflineArgs& a, RooflineFlags flags) {
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

CLI::App* AddRooflineCommand(CLI::App& app, RooflineArgs& a) {
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

Result<std::string> RooflineOutput(const RooflineArgs& a) {
  if (a.list_hardware || a.list_formats) {
    std::string out;
    if (a.list_hardware) {
      auto table = LoadTable(a);
      if (!table) {
        return table.error();
      }
      out += ListHardware(*table);
    }
    if (a.list_formats) {
      out += (out.empty() ? "" : "\n") + ListFormats();
    }
    return out;
  }
  auto j = Compute(a, a.measured_tok_s);
  if (!j) {
    return j.error();
  }
  return a.json ? j->dump(2) + "\n" : roofline::RenderRooflineText(*j);
}

int RunRoofline(const RooflineArgs& a) {
  auto out = RooflineOutput(a);
  if (!out) {
    std::fprintf(stderr, "servebench: error: %s\n", out.error().message.c_str());
    return out.error().code == ErrorCode::kUsage ? kExitUsage : kExitSetup;
  }
  std::fwrite(out->data(), 1, out->size(), stdout);
  return kExitOk;
}

Result<json> RooflineResultsJson(const RooflineArgs& a, std::optional<double> measured_tok_s) {
  return Compute(a, measured_tok_s);
}

}  // namespace sb::cli
