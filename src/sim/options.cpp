// Validate(SimOptions): every check with a message that names the option and the value.
#include <cmath>
#include <string>

#include "sim/engine.h"
#include "sim/sim_server.h"

namespace sb::sim {
namespace {

Error Bad(const std::string& message) {
  return MakeError(ErrorCode::kUsage, message);
}

std::string Num(double v) {
  std::string s = std::to_string(v);
  // to_string gives 6 decimals; trim trailing zeros for readable messages ("0.5", "3").
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') {
      s.pop_back();
    }
    if (!s.empty() && s.back() == '.') {
      s.pop_back();
    }
  }
  return s;
}

bool NonNegativeFinite(double v) {
  return std::isfinite(v) && v >= 0.0;
}

}  // namespace

Result<void> Validate(const SimOptions& o) {
  if (o.host.empty()) {
    return Bad("host must not be empty");
  }
  if (o.port < 0 || o.port > 65535) {
    return Bad("port must be in [0, 65535], got " + std::to_string(o.port));
  }
  if (o.threads < 1 || o.threads > 256) {
    return Bad("threads must be in [1, 256], got " + std::to_string(o.threads));
  }
  if (o.model.empty()) {
    return Bad("model must not be empty");
  }

  const struct {
    const char* name;
    double value;
  } non_negative[] = {{"ttft_ms", o.ttft_ms},
                      {"prefill_us_per_token", o.prefill_us_per_token},
                      {"itl_ms", o.itl_ms},
                      {"jitter_ms", o.jitter_ms},
                      {"concurrency_slowdown", o.concurrency_slowdown},
                      {"stall_ms", o.stall_ms},
                      {"retry_after_s", o.retry_after_s},
                      {"spin_us", o.spin_us}};

  for (const auto& [name, value] : non_negative) {
    if (!NonNegativeFinite(value)) {
      return Bad(std::string(name) + " must be a finite number >= 0, got " + Num(value));
    }
  }
  if (o.spin_us > 10000.0) {
    return Bad("spin_us must be <= 10000, got " + Num(o.spin_us));
  }
  if (o.retry_after_s > 86400.0) {
    return Bad("retry_after_s must be <= 86400, got " + Num(o.retry_after_s));
  }
  if (o.giant_event_bytes < 1 || o.giant_event_bytes > (std::size_t{1} << 30)) {
    return Bad("giant_event_bytes must be in [1, 1073741824], got " +
               std::to_string(o.giant_event_bytes));
  }
  if (o.max_batch < 1) {
    return Bad("max_batch must be >= 1, got " + std::to_string(o.max_batch));
  }
  if (o.default_output_tokens < 1) {
    return Bad("default_output_tokens must be >= 1, got " +
               std::to_string(o.default_output_tokens));
  }
  if (o.thinking_tokens < 0) {
    return Bad("thinking_tokens must be >= 0, got " + std::to_string(o.thinking_tokens));
  }
  if (o.max_model_len < 2) {
    return Bad("max_model_len must be >= 2, got " + std::to_string(o.max_model_len));
  }
  if (o.spec_tokens < 0 || o.spec_tokens > 64) {
    return Bad("spec_tokens must be in [0, 64], got " + std::to_string(o.spec_tokens));
  }
  if (static_cast<int>(o.spec_accept.size()) != o.spec_tokens) {
    return Bad("spec_accept has " + std::to_string(o.spec_accept.size()) +
               " values but spec_tokens is " + std::to_string(o.spec_tokens) +
               " (give one acceptance rate per draft position)");
  }
  for (std::size_t i = 0; i < o.spec_accept.size(); ++i) {
    const double p = o.spec_accept[i];
    if (!std::isfinite(p) || p < 0.0 || p > 1.0) {
      return Bad("spec_accept[" + std::to_string(i) + "] = " + Num(p) + " is not in [0, 1]");
    }
    if (i > 0 && p > o.spec_accept[i - 1]) {
      return Bad("spec_accept must be non-increasing (P(at least i+1 accepted)), but spec_accept[" +
                 std::to_string(i) + "] = " + Num(p) + " > spec_accept[" + std::to_string(i - 1) +
                 "] = " + Num(o.spec_accept[i - 1]));
    }
  }
  for (const auto& m : o.reject) {
    if (m != "image" && m != "video" && m != "audio") {
      return Bad("reject: unknown modality '" + m + "' (expected image, video or audio)");
    }
  }
  if (!std::isfinite(o.fault_rate) || o.fault_rate < 0.0 || o.fault_rate > 1.0) {
    return Bad("fault_rate must be in [0, 1], got " + Num(o.fault_rate));
  }
  for (const auto& k : o.fault_kinds) {
    if (!ParseFault(k)) {
      return Bad("fault_kinds: unknown fault '" + k + "' (expected " + std::string(kFaultList) +
                 ")");
    }
  }
  if (o.reasoning_field != "reasoning_content" && o.reasoning_field != "reasoning") {
    return Bad("reasoning_field must be reasoning_content or reasoning, got '" + o.reasoning_field +
               "'");
  }
  if (o.prefix_cache_tokens < 0) {
    return Bad("prefix_cache_tokens must be >= 0, got " + std::to_string(o.prefix_cache_tokens));
  }
  if (o.block_tokens < 1 || o.block_tokens > 1 << 20) {
    return Bad("block_tokens must be in [1, 1048576], got " + std::to_string(o.block_tokens));
  }
  if (o.chars_per_token < 0 || o.chars_per_token > 64) {
    return Bad("chars_per_token must be in [0, 64], got " + std::to_string(o.chars_per_token));
  }
  if (!(o.tool_call_probability >= 0 && o.tool_call_probability <= 1)) {
    return Bad("tool_call_probability must be in [0, 1], got " +
               std::to_string(o.tool_call_probability));
  }
  for (const SimAnswer& a : o.answers) {
    if (!a.fault.empty() && !ParseFault(a.fault)) {
      return Bad("answer fault must be " + std::string(kFaultList) + ", got '" + a.fault + "'");
    }
  }
  return {};
}

}  // namespace sb::sim
