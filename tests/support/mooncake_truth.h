// Test support: what a Mooncake trace says each request must get, computed from the trace file
// alone: its lengths, its time, and the tokens a prefix cache holds for it (block k of a request
// is cached iff an earlier request had the same hash ids 0..k, counting full blocks only).
#pragma once

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb::testing {

struct MooncakeTruth {
  int input = 0, output = 0, cached = 0;
  double timestamp_ms = 0;
};

// The first `max_lines` requests of the trace (all when 0), `block` tokens per hash id.
inline std::vector<MooncakeTruth> ReadMooncakeTruth(const std::string& path, int block,
                                                    std::size_t max_lines = 0) {
  std::ifstream in(path);
  std::vector<std::vector<long long>> seen;
  std::vector<MooncakeTruth> out;
  std::string line;
  while ((max_lines == 0 || out.size() < max_lines) && std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    const auto ids = j["hash_ids"].get<std::vector<long long>>();
    std::size_t best = 0;
    for (const auto& s : seen) {
      std::size_t k = 0;
      while (k < ids.size() && k < s.size() && ids[k] == s[k]) {
        ++k;
      }
      best = std::max(best, k);
    }
    MooncakeTruth e;
    e.input = j["input_length"];
    e.output = j["output_length"];
    e.timestamp_ms = j["timestamp"].get<double>();
    e.cached = static_cast<int>(std::min<std::size_t>(best, e.input / block)) * block;
    out.push_back(e);
    seen.push_back(ids);
  }
  return out;
}

}  // namespace sb::testing
