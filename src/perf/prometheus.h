// Prometheus text exposition parsing, and the speculative-decoding counters of the servers we
// know (the names are listed in docs/metrics.md, "Speculative decoding"): vLLM v1 and v0,
// llama.cpp, SGLang.
// Pure functions; the scraping (GET /metrics) is done by the caller.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"

namespace sb::perf {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Parses the text format: comments and blank lines skipped, labels with escapes, values
// including NaN/+Inf, an optional timestamp. A malformed line is a kProtocol error naming it.
Result<std::vector<PromSample>> ParsePrometheus(std::string_view text);

// Σ of the samples called `name` whose labels include every pair in `match`; nullopt if none.
std::optional<double> SumOf(const std::vector<PromSample>& samples, std::string_view name,
                            const std::map<std::string, std::string>& match = {});

// Cumulative speculative-decoding counters at one instant (one scrape).
struct SpecCounters {
  std::string source;                     // "vllm", "vllm-v0", "llama.cpp", "sglang"
  std::optional<double> drafts;           // verification steps with a draft
  std::optional<double> draft_tokens;     // tokens proposed
  std::optional<double> accepted_tokens;  // tokens accepted
  std::vector<double> accepted_per_pos;   // [i] = steps that accepted at least i+1 tokens
  // SGLang exposes only last-batch gauges, not counters: reported as they are.
  std::optional<double> gauge_accept_length, gauge_accept_rate;
  // Server-wide request counters, to detect traffic that is not ours.
  std::optional<double> requests_finished;  // Σ finished requests (any reason)
  std::optional<double> requests_running;   // gauge at this instant
};

// Reads the counters of whichever server exposes them; nullopt when none is present.
std::optional<SpecCounters> ReadSpecCounters(const std::vector<PromSample>& samples);

// Accumulated deltas over one or more measurement windows.
struct SpecWindow {
  std::string source;
  double drafts = 0, draft_tokens = 0, accepted_tokens = 0;
  std::vector<double> accepted_per_pos;
  bool has_drafts = false;  // v0 exposes no draft-step counter
  std::optional<double> gauge_accept_length, gauge_accept_rate;

  // Adds after − before (counters only; gauges take `after`'s value).
  void Add(const SpecCounters& before, const SpecCounters& after);

  bool empty() const { return draft_tokens == 0 && !gauge_accept_length && !gauge_accept_rate; }
};

// {"source", "acceptance_rate", "mean_acceptance_length", "num_drafts", "num_draft_tokens",
//  "num_accepted_tokens", "per_position"} as in docs/results-schema.md; null when empty.
nlohmann::json SpecJson(const SpecWindow& w);

}  // namespace sb::perf
