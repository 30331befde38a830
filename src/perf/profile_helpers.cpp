// The speed profiles' free helpers (profiles.h): profile names, statistics objects, llama.cpp's
// draft timings, the deterministic filler text of long prompts.
#include <algorithm>
#include <array>
#include <random>

#include <nlohmann/json.hpp>

#include "core/stats.h"
#include "perf/profiles.h"

namespace sb::perf {

using nlohmann::json;

bool AddTimingsDrafts(const std::string& timings_json, SpecWindow& window) {
  if (timings_json.empty()) {
    return false;
  }
  json t = json::parse(timings_json, nullptr, /*allow_exceptions=*/false);
  if (!t.is_object() || !t.contains("draft_n") || !t["draft_n"].is_number()) {
    return false;
  }
  window.source = "llama.cpp-timings";
  window.draft_tokens += t["draft_n"].get<double>();
  window.accepted_tokens += t.value("draft_n_accepted", 0.0);
  return true;
}

std::vector<std::string> DefaultProfileNames() {
  std::vector<std::string> names;
  for (const ProfileSpec& p : Profiles()) {
    if (p.in_default_run) {
      names.emplace_back(p.name);
    }
  }
  return names;
}

json StatsJson(const std::vector<double>& values) {
  if (values.empty()) {
    return json{{"n", 0}};
  }
  sb::Summary s = Summarize(values);
  return json{{"n", s.n},        {"min", s.min}, {"median", s.median},
              {"mean", s.mean},  {"max", s.max}, {"p50", s.p50},
              {"p90", s.p90},    {"p99", s.p99}, {"stddev", s.n > 1 ? json(s.stddev) : json()},
              {"values", values}};
}

json SummaryStatsJson(const std::vector<double>& values) {
  json s = StatsJson(values);
  s.erase("values");
  return s;
}

std::string FillerText(int words, std::uint64_t seed) {
  static constexpr std::array<const char*, 48> kWords = {
      "river",   "stone",  "market", "engine",  "garden", "signal", "window",  "harbor",
      "letter",  "forest", "bridge", "lantern", "orbit",  "copper", "meadow",  "circuit",
      "archive", "valley", "thread", "compass", "summer", "ladder", "canvas",  "pocket",
      "morning", "silver", "number", "station", "winter", "ribbon", "planet",  "shadow",
      "kitchen", "marble", "column", "feather", "island", "mirror", "tunnel",  "velvet",
      "anchor",  "basket", "candle", "desert",  "echo",   "falcon", "glacier", "hollow"};
  std::mt19937_64 rng(seed);
  std::string out;
  out.reserve(static_cast<std::size_t>(words) * 8);
  int in_sentence = 0;
  for (int i = 0; i < words; ++i) {
    std::string w = kWords[rng() % kWords.size()];
    if (in_sentence == 0) {
      w[0] = static_cast<char>(w[0] - 'a' + 'A');
    }
    out += w;
    ++in_sentence;
    if (in_sentence >= 8 + static_cast<int>(rng() % 8) || i + 1 == words) {
      out += ". ";
      in_sentence = 0;
    } else {
      out += ' ';
    }
  }
  return out;
}

}  // namespace sb::perf
