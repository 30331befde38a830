#include "core/frontier.h"

#include <cmath>

namespace sb {

std::vector<bool> ParetoOptimal(const std::vector<std::pair<double, double>>& xy) {
  std::vector<bool> out(xy.size(), true);
  for (std::size_t i = 0; i < xy.size(); ++i) {
    for (std::size_t j = 0; j < xy.size() && out[i]; ++j) {
      const auto& [xi, yi] = xy[i];
      const auto& [xj, yj] = xy[j];
      if (j != i && xj >= xi && yj >= yi && (xj > xi || yj > yi)) {
        out[i] = false;
      }
    }
  }
  return out;
}

std::vector<FrontierPoint> BuildFrontier(const std::vector<FrontierInput>& inputs, int gpus) {
  std::vector<FrontierPoint> out;
  for (const FrontierInput& in : inputs) {
    if (!in.per_user || !in.total || !std::isfinite(*in.per_user) || !std::isfinite(*in.total)) {
      continue;
    }
    FrontierPoint p;
    p.level = in.level;
    p.label = in.label;
    p.per_user = *in.per_user;
    p.total = *in.total;
    if (in.tpot_ms && *in.tpot_ms > 0) {
      p.per_user_tpot = 1000.0 / *in.tpot_ms;
    }
    if (gpus > 0) {
      p.total_per_gpu = *in.total / gpus;
    }
    out.push_back(std::move(p));
  }
  std::vector<std::pair<double, double>> xy;
  for (const FrontierPoint& p : out) {
    xy.emplace_back(p.per_user, p.total);
  }
  const std::vector<bool> optimal = ParetoOptimal(xy);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].pareto = optimal[i];
  }
  return out;
}

}  // namespace sb
