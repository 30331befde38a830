#include "roofline/roofline.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/escape.h"
#include "core/json_read.h"

namespace sb::roofline {

namespace {

using nlohmann::json;

constexpr double kBytesPerGb = 1e9;

// An integral value as a JSON integer (so byte counts read "2176323584", not "2176323584.0").
json Num(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) {
    return static_cast<std::int64_t>(v);
  }
  return v;
}

// ---- Null-safe reads (the renderers never throw on odd input) ---------------------------------

// The text at `path`, "" when there is none (core/json_read.h reads the rest).
std::string Text(const json& j, std::initializer_list<std::string_view> path) {
  return StringAt(j, path).value_or("");
}

// ---- Number formats ---------------------------------------------------------------------------

// 2176323584 -> "2,176,323,584" (rounded to an integer).
std::string Thousands(double v) {
  auto n = static_cast<long long>(std::llround(v));
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

// Bits: "4.5", "16", "6.5625".
std::string Bits(double b) {
  return fmt::format("{:g}", b);
}

std::string Gb(double bytes) {
  return fmt::format("{:.3f} GB", bytes / kBytesPerGb);
}

// 30532911744 -> "30.53B".
std::string Billions(double params) {
  return fmt::format("{:.2f}B", params / 1e9);
}

// A Markdown table cell (core/escape.h).
std::string Cell(std::string_view s) {
  return MarkdownCell(s, std::string::npos);
}

// ---- What the renderers derive from a results document ---------------------------------------

struct Derived {
  double tokens_per_step = 1;
  bool tokens_measured = false;  // from spec_decode.mean_acceptance_length
  double bytes_per_step = 0;
  double kv_bytes = 0;
  double bytes_per_token = 0;
  double bytes_per_token_without_kv = 0;
  double bandwidth_gb_s = 0;
  std::optional<double> ceiling;
  std::optional<double> ceiling_without_kv;
  std::optional<double> measured;
  bool measured_is_decode_median = false;
};

// Recomputes the per-token figures from the stored per-step bytes, so a measured acceptance
// length (known only after the run) replaces the tokens_per_step the run started with.
Derived Derive(const json& roof, const json* results) {
  Derived d;
  d.tokens_per_step = NumberAt(roof, {"tokens_per_step"}).value_or(1);
  if (results != nullptr) {
    if (auto mal = NumberAt(*results, {"spec_decode", "mean_acceptance_length"});
        mal && *mal >= 1) {
      d.tokens_per_step = *mal;
      d.tokens_measured = true;
    }
    if (auto m = NumberAt(*results, {"perf", "decode", "decode_tok_s", "median"})) {
      d.measured = m;
      d.measured_is_decode_median = true;
    }
  }
  if (!d.measured) {
    d.measured = NumberAt(roof, {"measured_tok_s"});
  }
  if (d.tokens_per_step < 1) {
    d.tokens_per_step = 1;
  }
  d.bytes_per_step = NumberAt(roof, {"bytes_per_step", "total"}).value_or(0);
  d.kv_bytes = NumberAt(roof, {"bytes_per_step", "kv_cache"}).value_or(0);
  d.bandwidth_gb_s = NumberAt(roof, {"hardware", "bandwidth_gb_s"}).value_or(0);
  d.bytes_per_token = d.bytes_per_step / d.tokens_per_step;
  d.bytes_per_token_without_kv = (d.bytes_per_step - d.kv_bytes) / d.tokens_per_step;
  if (d.bytes_per_token > 0 && d.bandwidth_gb_s > 0) {
    d.ceiling = d.bandwidth_gb_s * kBytesPerGb / d.bytes_per_token;
  }
  if (d.bytes_per_token_without_kv > 0 && d.bandwidth_gb_s > 0) {
    d.ceiling_without_kv = d.bandwidth_gb_s * kBytesPerGb / d.bytes_per_token_without_kv;
  }
  return d;
}

std::string FormatLine(const json& roof) {
  const json* f = Find(roof, {"weight_format"});
  if (f == nullptr) {
    return "—";
  }
  return fmt::format("{}: {} bits/weight (attention {}, lm_head {}, embeddings {}, router {})",
                     Text(*f, {"name"}), Bits(NumberAt(*f, {"bits_per_weight"}).value_or(0)),
                     Bits(NumberAt(*f, {"attention_bits"}).value_or(0)),
                     Bits(NumberAt(*f, {"lm_head_bits"}).value_or(0)),
                     Bits(NumberAt(*f, {"embedding_bits"}).value_or(0)),
                     Bits(NumberAt(*f, {"router_bits"}).value_or(0)));
}

std::string ModelLine(const json& roof) {
  const json* m = Find(roof, {"model"});
  if (m == nullptr) {
    return "—";
  }
  std::string type = Text(*m, {"model_type"});
  std::string out = fmt::format("{} layers", Thousands(NumberAt(*m, {"layers"}).value_or(0)));
  auto full = NumberAt(*m, {"full_attention_layers"}).value_or(0);
  auto sliding = NumberAt(*m, {"sliding_attention_layers"}).value_or(0);
  auto linear = NumberAt(*m, {"linear_attention_layers"}).value_or(0);
  if (sliding > 0 || linear > 0) {
    out += fmt::format(" ({} full attention", Thousands(full));
    if (sliding > 0) {
      out += fmt::format(", {} sliding window", Thousands(sliding));
    }
    if (linear > 0) {
      out += fmt::format(", {} linear attention", Thousands(linear));
    }
    out += ")";
  }
  if (auto e = NumberAt(*m, {"num_experts"}); e && *e > 0) {
    out += fmt::format(", MoE {} of {} experts",
                       Thousands(NumberAt(*m, {"experts_per_token"}).value_or(0)), Thousands(*e));
  } else {
    out += ", dense";
  }
  return type.empty() ? out : type + ", " + out;
}

}  // namespace

// ---- The estimate -------------------------------------------------------------------------------

Result<Estimate> Roofline(const ModelShape& shape, const WeightFormat& format,
                          const Hardware& hardware, const RooflineOptions& o) {
  if (!(o.tokens_per_step >= 1) || !std::isfinite(o.tokens_per_step)) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("tokens per step must be at least 1 (got {})", o.tokens_per_step));
  }
  if (o.context_tokens < 0 || !(o.draft_bytes >= 0) || !(o.kv_bytes_per_element > 0) ||
      !(o.state_bytes_per_element > 0) || !(o.verify_tokens == 0 || o.verify_tokens >= 1)) {
    return MakeError(ErrorCode::kUsage,
                     "context and draft bytes must be >= 0, element sizes > 0, verify tokens 0 or "
                     ">= 1");
  }
  if (!(hardware.bandwidth_gb_s > 0)) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("hardware '{}' has no positive bandwidth", hardware.id));
  }
  ParamCounts c = CountParams(shape);
  Estimate e;
  auto add = [&e](std::string name, double params, double bits) {
    if (params > 0) {
      e.parts.push_back({std::move(name), params, bits, params * bits / 8});
    }
  };
  add("attention", static_cast<double>(c.attention), format.attention_bits);
  add("linear attention", static_cast<double>(c.linear_attention), format.attention_bits);
  add("dense MLP", static_cast<double>(c.dense_mlp), format.bits_per_weight);
  std::int64_t moe_layers = shape.CountLayers(MlpKind::kMoe);
  if (moe_layers > 0 && shape.num_experts > 0) {
    double k = static_cast<double>(shape.experts_per_token);
    double n = static_cast<double>(shape.num_experts);
    std::string name;
    if (o.verify_tokens > 0) {
      e.experts_per_step = n * (1 - std::pow(1 - k / n, o.verify_tokens));
      name = fmt::format("routed experts ({:.2f} of {} per step)", e.experts_per_step,
                         shape.num_experts);
    } else {
      e.experts_per_step = k;
      name = fmt::format("routed experts ({} of {})", shape.experts_per_token, shape.num_experts);
    }
    add(name,
        static_cast<double>(moe_layers) * e.experts_per_step *
            static_cast<double>(ExpertParams(shape)),
        format.bits_per_weight);
  }
  add("shared experts", static_cast<double>(c.shared_experts), format.bits_per_weight);
  add("router", static_cast<double>(c.router), format.router_bits);
  add("lm_head", static_cast<double>(c.lm_head), format.lm_head_bits);
  add("embedding row", static_cast<double>(c.embedding_row), format.embedding_bits);
  for (const WeightPart& p : e.parts) {
    e.weight_bytes += p.bytes;
  }
  auto ctx = static_cast<double>(o.context_tokens);
  double sliding_ctx = std::min(ctx, static_cast<double>(shape.sliding_window));
  e.kv_bytes = (static_cast<double>(FullKvElementsPerToken(shape)) * ctx +
                static_cast<double>(SlidingKvElementsPerToken(shape)) * sliding_ctx) *
               o.kv_bytes_per_element;
  e.state_bytes = 2.0 * static_cast<double>(LinearStateElementsPerLayer(shape)) *
                  static_cast<double>(shape.CountLayers(AttentionKind::kLinear)) *
                  o.state_bytes_per_element;
  e.draft_bytes = o.draft_bytes;
  e.bytes_per_step = e.weight_bytes + e.kv_bytes + e.state_bytes + e.draft_bytes;
  e.tokens_per_step = o.tokens_per_step;
  e.bytes_per_token = e.bytes_per_step / e.tokens_per_step;
  e.bytes_per_token_without_kv = (e.bytes_per_step - e.kv_bytes) / e.tokens_per_step;
  e.bandwidth_gb_s = hardware.bandwidth_gb_s;
  e.ceiling_tok_s = e.bandwidth_gb_s * kBytesPerGb / e.bytes_per_token;
  e.ceiling_tok_s_without_kv = e.bandwidth_gb_s * kBytesPerGb / e.bytes_per_token_without_kv;
  return e;
}

// ---- results.json -------------------------------------------------------------------------------

json RooflineJson(const ModelShape& shape, const WeightFormat& format, const Hardware& hardware,
                  const RooflineOptions& options, const Estimate& e,
                  std::optional<double> measured_tok_s) {
  ParamCounts c = CountParams(shape);
  json parts = json::array();
  for (const WeightPart& p : e.parts) {
    parts.push_back(
        {{"part", p.name}, {"params", Num(p.params)}, {"bits", p.bits}, {"bytes", Num(p.bytes)}});
  }
  json measured = nullptr;
  json percent = nullptr;
  if (measured_tok_s.has_value()) {
    measured = *measured_tok_s;
    percent = e.PercentOfCeiling(*measured_tok_s);
  }
  return json{
      {"model",
       {{"config", shape.source},
        {"model_type", shape.model_type},
        {"layers", shape.num_layers},
        {"full_attention_layers", shape.CountLayers(AttentionKind::kFull)},
        {"sliding_attention_layers", shape.CountLayers(AttentionKind::kSliding)},
        {"linear_attention_layers", shape.CountLayers(AttentionKind::kLinear)},
        {"num_experts", shape.num_experts},
        {"experts_per_token", shape.experts_per_token},
        {"params_total", c.Total()},
        {"params_active_per_token", c.ActivePerToken()}}},
      {"weight_format",
       {{"name", format.name},
        {"bits_per_weight", format.bits_per_weight},
        {"attention_bits", format.attention_bits},
        {"lm_head_bits", format.lm_head_bits},
        {"embedding_bits", format.embedding_bits},
        {"router_bits", format.router_bits},
        {"arithmetic", format.arithmetic},
        {"note", format.note.empty() ? json(nullptr) : json(format.note)}}},
      {"hardware",
       {{"id", hardware.id},
        {"name", hardware.name},
        {"bandwidth_gb_s", hardware.bandwidth_gb_s},
        {"source", hardware.source}}},
      {"context_tokens", options.context_tokens},
      {"tokens_per_step", options.tokens_per_step},
      {"verify_tokens", options.verify_tokens > 0 ? json(options.verify_tokens) : json(nullptr)},
      {"experts_per_step", e.experts_per_step},
      {"kv_bytes_per_element", options.kv_bytes_per_element},
      {"state_bytes_per_element", options.state_bytes_per_element},
      {"weights", parts},
      {"bytes_per_step",
       {{"weights", Num(e.weight_bytes)},
        {"kv_cache", Num(e.kv_bytes)},
        {"linear_state", Num(e.state_bytes)},
        {"draft", Num(e.draft_bytes)},
        {"total", Num(e.bytes_per_step)}}},
      {"bytes_per_token", Num(e.bytes_per_token)},
      {"ceiling_tok_s", e.ceiling_tok_s},
      {"bytes_per_token_without_kv", Num(e.bytes_per_token_without_kv)},
      {"ceiling_tok_s_without_kv", e.ceiling_tok_s_without_kv},
      {"measured_tok_s", measured},
      {"percent_of_ceiling", percent}};
}

// ---- Renderers ----------------------------------------------------------------------------------

std::string RenderRooflineText(const json& roof) {
  Derived d = Derive(roof, nullptr);
  std::string out;
  out += fmt::format("model     {}: {}\n", Text(roof, {"model", "config"}), ModelLine(roof));
  out += fmt::format("params    {} total, {} read per token\n",
                     Thousands(NumberAt(roof, {"model", "params_total"}).value_or(0)),
                     Thousands(NumberAt(roof, {"model", "params_active_per_token"}).value_or(0)));
  out += fmt::format("format    {}\n", FormatLine(roof));
  out +=
      fmt::format("          bits per weight: {}\n", Text(roof, {"weight_format", "arithmetic"}));
  out += fmt::format("hardware  {}: {} GB/s ({})\n", Text(roof, {"hardware", "name"}),
                     Bits(d.bandwidth_gb_s), Text(roof, {"hardware", "source"}));
  out += "\n";
  constexpr std::string_view kRow = "{:<40}{:>16}{:>9}{:>17}\n";
  out += fmt::format(kRow, "read per step", "params", "bits", "bytes");
  double params_read = 0;
  if (const json* w = Find(roof, {"weights"}); w != nullptr && w->is_array()) {
    for (const json& p : *w) {
      params_read += NumberAt(p, {"params"}).value_or(0);
      out += fmt::format(kRow, Text(p, {"part"}), Thousands(NumberAt(p, {"params"}).value_or(0)),
                         Bits(NumberAt(p, {"bits"}).value_or(0)),
                         Thousands(NumberAt(p, {"bytes"}).value_or(0)));
    }
  }
  out += fmt::format(kRow, "weights", Thousands(params_read), "",
                     Thousands(NumberAt(roof, {"bytes_per_step", "weights"}).value_or(0)));
  out += fmt::format(kRow,
                     fmt::format("KV cache ({} tokens of context)",
                                 Thousands(NumberAt(roof, {"context_tokens"}).value_or(0))),
                     "", Bits(8 * NumberAt(roof, {"kv_bytes_per_element"}).value_or(0)),
                     Thousands(d.kv_bytes));
  if (auto s = NumberAt(roof, {"bytes_per_step", "linear_state"}); s && *s > 0) {
    out += fmt::format(kRow, "linear-attention state (read+write)", "",
                       Bits(8 * NumberAt(roof, {"state_bytes_per_element"}).value_or(0)),
                       Thousands(*s));
  }
  if (auto s = NumberAt(roof, {"bytes_per_step", "draft"}); s && *s > 0) {
    out += fmt::format(kRow, "draft model / MTP", "", "", Thousands(*s));
  }
  out += fmt::format(kRow, "total per step", "", "", Thousands(d.bytes_per_step));
  out += fmt::format(kRow, "tokens per step", "", "", fmt::format("{:.2f}", d.tokens_per_step));
  out += fmt::format(kRow, "bytes per token", "", "", Thousands(d.bytes_per_token));
  out += "\n";
  if (d.ceiling) {
    out += fmt::format("ceiling   {:.2f} tok/s", *d.ceiling);
    if (d.kv_bytes > 0 && d.ceiling_without_kv) {
      out += fmt::format(" ({:.2f} tok/s without the KV cache)", *d.ceiling_without_kv);
    }
    out += "\n";
  }
  if (d.measured && d.ceiling) {
    out += fmt::format("measured  {:.2f} tok/s = {:.1f}% of the ceiling\n", *d.measured,
                       100 * *d.measured / *d.ceiling);
  }
  if (std::string note = Text(roof, {"weight_format", "note"}); !note.empty()) {
    out += "note: " + note + "\n";
  }
  return out;
}

std::string RenderRooflineMarkdown(const json& results) {
  const json* roof = Find(results, {"roofline"});
  if (roof == nullptr || !roof->is_object()) {
    return "";
  }
  Derived d = Derive(*roof, &results);
  std::string hw = Text(*roof, {"hardware", "name"});
  std::string out = "### Memory-bandwidth roofline\n\n";
  if (d.ceiling) {
    out += fmt::format(
        "Decode reads the active weights and the KV cache once per step; at {} GB/s on {} that "
        "caps single-stream decode at **{:.1f} tok/s**",
        Bits(d.bandwidth_gb_s), Cell(hw), *d.ceiling);
    if (d.measured) {
      out += fmt::format("; measured **{:.1f} tok/s** = **{:.1f}%** of the ceiling", *d.measured,
                         100 * *d.measured / *d.ceiling);
    }
    out += ".\n\n";
  }
  out += "| Quantity | Value |\n|---|---:|\n";
  auto row = [&out](std::string_view k, const std::string& v) {
    out += fmt::format("| {} | {} |\n", k, v);
  };
  row("Model config", Cell(Text(*roof, {"model", "config"})) + " (" + Cell(ModelLine(*roof)) + ")");
  row("Parameters: total / read per token",
      Billions(NumberAt(*roof, {"model", "params_total"}).value_or(0)) + " / " +
          Billions(NumberAt(*roof, {"model", "params_active_per_token"}).value_or(0)));
  row("Weight format", Cell(FormatLine(*roof)));
  row("Hardware", fmt::format("{}, {} GB/s", Cell(hw), Bits(d.bandwidth_gb_s)));
  row("Weights read per step", Gb(NumberAt(*roof, {"bytes_per_step", "weights"}).value_or(0)));
  row(fmt::format("KV cache read per step ({} tokens of context)",
                  Thousands(NumberAt(*roof, {"context_tokens"}).value_or(0))),
      Gb(d.kv_bytes));
  if (auto s = NumberAt(*roof, {"bytes_per_step", "linear_state"}); s && *s > 0) {
    row("Linear-attention state per step (read + write)", Gb(*s));
  }
  if (auto s = NumberAt(*roof, {"bytes_per_step", "draft"}); s && *s > 0) {
    row("Draft model / MTP per step", Gb(*s));
  }
  row("Tokens per step",
      fmt::format("{:.2f}{}", d.tokens_per_step,
                  d.tokens_measured ? " (measured mean acceptance length)" : ""));
  row("Bytes per token", Gb(d.bytes_per_token));
  row("Ceiling", d.ceiling ? fmt::format("{:.1f} tok/s", *d.ceiling) : "—");
  if (d.kv_bytes > 0) {
    row("Ceiling without the KV cache",
        d.ceiling_without_kv ? fmt::format("{:.1f} tok/s", *d.ceiling_without_kv) : "—");
  }
  row(d.measured_is_decode_median ? "Measured decode (median)" : "Measured decode",
      d.measured ? fmt::format("{:.1f} tok/s", *d.measured) : "—");
  row("Of ceiling",
      d.measured && d.ceiling ? fmt::format("{:.1f}%", 100 * *d.measured / *d.ceiling) : "—");
  out += "\n";
  if (std::string note = Text(*roof, {"weight_format", "note"}); !note.empty()) {
    out += "Note: " + Cell(note) + "\n\n";
  }
  return out;
}

std::string RenderRooflineConsole(const json& results) {
  const json* roof = Find(results, {"roofline"});
  if (roof == nullptr || !roof->is_object()) {
    return "";
  }
  Derived d = Derive(*roof, &results);
  if (!d.ceiling) {
    return "";
  }
  std::string out = fmt::format(
      "roofline: ceiling {:.1f} tok/s ({:.2f} GB per token at {} GB/s, {})", *d.ceiling,
      d.bytes_per_token / kBytesPerGb, Bits(d.bandwidth_gb_s), Text(*roof, {"hardware", "name"}));
  if (d.measured) {
    out += fmt::format("; measured {:.1f} tok/s = {:.1f}% of it", *d.measured,
                       100 * *d.measured / *d.ceiling);
  }
  return out + "\n";
}

}  // namespace sb::roofline
