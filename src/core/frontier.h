// The throughput-vs-interactivity frontier of a sweep (issue 23, docs/metrics.md "Frontier"):
// one point per level (concurrency level, rate) with tok/s per user on x and total output tok/s
// on y (per GPU when the GPU count is known), and which points are Pareto-optimal. Pure
// functions on numbers: perf builds results.json's "frontier" arrays with them, and the reports
// derive the same points for a run written before those arrays existed.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sb {

struct FrontierInput {
  double level = 0;                // the sweep's value: streams, req/s
  std::string label;               // "c8", "4 req/s"
  std::optional<double> per_user;  // median per-stream decode tok/s
  std::optional<double> tpot_ms;   // median TPOT (ms): 1000 / TPOT is the other per-user
  std::optional<double> total;     // total output tok/s of the level
};

struct FrontierPoint {
  double level = 0;
  std::string label;
  double per_user = 0;                  // x: median per-stream decode tok/s
  std::optional<double> per_user_tpot;  // 1000 / median TPOT
  double total = 0;                     // total output tok/s
  std::optional<double> total_per_gpu;  // total / gpus, when gpus > 0
  bool pareto = false;                  // no other point is at least as good on both axes
                                        // and better on one
};

// For each (x, y), whether it is Pareto-optimal when both are to be maximised: no other point
// has x' >= x and y' >= y with one of them strictly greater. Equal points are all optimal.
std::vector<bool> ParetoOptimal(const std::vector<std::pair<double, double>>& xy);

// The frontier of a sweep, in the inputs' order. An input without a per-user or total figure
// (a level where every request failed) has no point. `gpus` <= 0: no per-GPU figure.
std::vector<FrontierPoint> BuildFrontier(const std::vector<FrontierInput>& inputs, int gpus);

}  // namespace sb
