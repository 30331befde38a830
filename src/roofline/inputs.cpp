#include "roofline/inputs.h"

#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/hardware.h"
#include "roofline/model_shape.h"
#include "roofline/roofline.h"
#include "roofline/weight_format.h"

namespace sb::roofline {

namespace {

using nlohmann::json;

struct Inputs {
  ModelShape shape;
  WeightFormat format;
  Hardware hardware;
  RooflineOptions options;
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

Result<HardwareTable> LoadTable(const RooflineArgs& a) {
  HardwareTable table = HardwareTable::Builtin();
  if (!a.hardware_file.empty()) {
    if (auto ok = table.LoadFile(a.hardware_file); !ok) {
      return ok.error();
    }
  }
  return table;
}

Result<Hardware> ResolveHardware(const RooflineArgs& a) {
  if (a.bandwidth_gb_s.has_value() && !(*a.bandwidth_gb_s > 0)) {
    return MakeError(ErrorCode::kUsage, "--bandwidth-gb-s must be positive");
  }
  if (a.hardware.empty()) {
    if (!a.bandwidth_gb_s.has_value()) {
      return MakeError(ErrorCode::kUsage,
                       "--hardware is required (or --bandwidth-gb-s); --list-hardware shows the "
                       "built-in table");
    }
    return Hardware{"custom", "custom", *a.bandwidth_gb_s, {}, "--bandwidth-gb-s"};
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
  auto shape = LoadModelConfig(a.model_config);
  if (!shape) {
    return shape.error();
  }
  in.shape = std::move(shape.value());
  FormatOverrides o{a.bits_per_weight, a.attention_bits, a.lm_head_bits, a.embedding_bits,
                    a.router_bits};
  // No --weight-format: what the config declares; a bare --bits-per-weight gives "custom".
  std::string name = a.weight_format;
  if (name.empty() && !a.bits_per_weight.has_value()) {
    name = in.shape.declared_format.empty() ? "bf16" : in.shape.declared_format;
  }
  auto format = ResolveWeightFormat(name, o);
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
  auto e = Roofline(in->shape, in->format, in->hardware, in->options);
  if (!e) {
    return e.error();
  }
  return RooflineJson(in->shape, in->format, in->hardware, in->options, *e, measured);
}

std::string ListHardware(const HardwareTable& table) {
  std::string out =
      fmt::format("{:<18}{:<28}{:>8}  {:<34}{}\n", "id", "name", "GB/s", "aliases", "source");
  for (const Hardware& h : table.entries()) {
    out += fmt::format("{:<18}{:<28}{:>8}  {:<34}{}\n", h.id, h.name,
                       fmt::format("{:g}", h.bandwidth_gb_s),
                       fmt::format("{}", fmt::join(h.aliases, ", ")), h.source);
  }
  return out;
}

std::string ListFormats() {
  std::string out = fmt::format("{:<12}{:>9}  {}\n", "format", "bits", "arithmetic");
  for (const FormatListing& f : ListWeightFormats()) {
    out += fmt::format("{:<12}{:>9}  {}\n", f.name, fmt::format("{:g}", f.bits_per_weight),
                       f.arithmetic);
  }
  return out;
}

}  // namespace

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
  return a.json ? j->dump(2) + "\n" : RenderRooflineText(*j);
}

Result<json> RooflineResultsJson(const RooflineArgs& a, std::optional<double> measured_tok_s) {
  return Compute(a, measured_tok_s);
}

}  // namespace sb::roofline
