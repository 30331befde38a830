// Tail latency of one level of a sweep (concurrency, max-tokens): p50/p90/p99 of TTFT, ITL, TPOT
// and E2E in the rate profile's shape (PercentilesJson), so every level of every sweep reports
// its tails the same way (docs/metrics.md, "Tails per level").
#pragma once

#include <nlohmann/json.hpp>

#include "client/chat.h"
#include "perf/histogram.h"
#include "perf/metrics.h"

namespace sb::perf {

class LevelTails {
 public:
  // Records one response: successful streams only (a failed request has no latency to rank).
  // ITL is per token: each chunk gap spread over the tokens the chunk carried, as the rate
  // profile does.
  void Add(const client::ChatResponse& r, const RequestMetrics& m);

  // Writes "itl_ms", "tpot_ms" and "e2e_ms" into `row`, and "ttft_ms" when `with_ttft` (the
  // concurrency level keeps its own ttft_ms, which already has p50/p90/p99).
  void WriteTo(nlohmann::json& row, bool with_ttft) const;

  const Histogram& ttft() const { return ttft_; }

  const Histogram& itl() const { return itl_; }

  const Histogram& tpot() const { return tpot_; }

  const Histogram& e2e() const { return e2e_; }

 private:
  Histogram ttft_, itl_, tpot_, e2e_;
};

}  // namespace sb::perf
