#pragma once
// The SLO gate (`run` / `perf --fail-on-slo`, docs/load.md "The SLO gate"): after a run, every
// concurrency level and rate point (or only the one --slo-at names) is judged against --slo and
// --slo-fraction from what results.json holds; the verdict goes into results.json ("gates.slo"),
// report.md and the console, and a missed SLO makes the run exit 1. Pure functions of their
// inputs; thread safety: none needed.

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "perf/profiles.h"

namespace sb::run {

// --slo-at: where the gate looks. Unset (nullopt) = every concurrency level and rate measured.
struct SloAt {
  enum class Kind { kConcurrency, kRate };
  Kind kind = Kind::kConcurrency;
  double value = 0;  // the level (streams) or the rate (req/s)
};

struct SloGateArgs {
  bool fail_on_slo = false;  // --fail-on-slo
  std::optional<SloAt> at;   // --slo-at
  std::string at_text;       // --slo-at as given
};

// "concurrency=8" or "rate=5" (also "rate=2.5"); kUsage error naming --slo-at otherwise.
Result<SloAt> ParseSloAt(std::string_view text);

// The plan's gate flags against its --slo: --fail-on-slo needs --slo; --slo-at needs
// --fail-on-slo. kUsage errors.
Result<void> CheckSloGateArgs(const SloGateArgs& args, const perf::Slo& slo);

// The gate's verdict over results.json: {"slo", "slo_fraction", "at", "met", "checks": [{"where",
// "profile", "level", "sent", "good", "fraction", "met", "failed": ["ttft_ms", ...]}], "reason"}.
// Nothing measured where it was asked (no level, no rate point, or --slo-at names none of them):
// not met, and "reason" says so.
nlohmann::json EvaluateSloGate(const nlohmann::json& results, const perf::Slo& slo,
                               double slo_fraction, const std::optional<SloAt>& at);

// One line per missed check for stderr ("servebench: gate failed: ..."); empty when met.
std::string SloGateConsole(const nlohmann::json& verdict);

}  // namespace sb::run
