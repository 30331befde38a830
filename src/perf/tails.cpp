#include "perf/tails.h"

#include <cmath>

namespace sb::perf {

namespace {

std::int64_t Ns(double ms) {
  return std::llround(ms * 1e6);
}

}  // namespace

void LevelTails::Add(const client::ChatResponse& r, const RequestMetrics& m) {
  if (r.outcome != client::Outcome::kOk) {
    return;
  }
  if (m.ttft_ms) {
    ttft_.Record(Ns(*m.ttft_ms));
  }
  if (m.e2e_ms) {  // an answer that came as one body still has a real end-to-end time
    e2e_.Record(Ns(*m.e2e_ms));
  }
  if (m.tpot_ms) {
    tpot_.Record(Ns(*m.tpot_ms));
  }
  if (CameAsOneBody(r)) {
    return;
  }
  for (std::size_t k = 1; k < r.events.size(); ++k) {
    const std::int64_t gap = r.events[k].t_ns - r.events[k - 1].t_ns;
    const std::int64_t n = r.events[k].tokens > 0 ? r.events[k].tokens : 1;
    itl_.Record(gap / n, n);
  }
}

void LevelTails::WriteTo(nlohmann::json& row, bool with_ttft) const {
  if (with_ttft) {
    row["ttft_ms"] = PercentilesJson(ttft_, 1e6);
  }
  row["itl_ms"] = PercentilesJson(itl_, 1e6);
  row["tpot_ms"] = PercentilesJson(tpot_, 1e6);
  row["e2e_ms"] = PercentilesJson(e2e_, 1e6);
}

}  // namespace sb::perf
