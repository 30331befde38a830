// results.json's "frontier" arrays (issue 23 item 1, docs/metrics.md "Frontier"): one point per
// concurrency level or rate with tok/s per user against total output tok/s (per GPU with
// --gpus), each marked Pareto-optimal or not (core/frontier.h).
#pragma once

#include <nlohmann/json.hpp>

namespace sb::perf {

// From perf.concurrency.levels: per user = per_stream_decode_tok_s.median, 1000 / tpot_ms.p50;
// total = throughput_tok_s.
nlohmann::json ConcurrencyFrontier(const nlohmann::json& levels, int gpus);

// From perf.rate.rates (the sweep's points): per user = the median decode_tok_s of the point's
// successful requests, 1000 / tpot_ms.p50; total = output_tok_s.
nlohmann::json RateFrontier(const nlohmann::json& points, int gpus);

}  // namespace sb::perf
