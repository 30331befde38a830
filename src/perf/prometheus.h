// Prometheus text exposition parsing, and the speculative-decoding and prefix-cache counters of
// the servers we know (the names are listed in docs/metrics.md, "Speculative decoding", and
// docs/workloads.md, "Per class and cache outcome"): vLLM v1 and v0, llama.cpp, SGLang.
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

// Prefix-cache figures at one instant: vLLM v1's counters of prompt tokens looked up in and
// served from its prefix cache (vllm:prefix_cache_queries_total, vllm:prefix_cache_hits_total),
// or SGLang's gauge (sglang:cache_hit_rate, a recent average, not a counter).
struct PrefixCacheCounters {
  std::string source;  // "vllm", "sglang"
  std::optional<double> queries, hits;
  std::optional<double> gauge_hit_rate;
};

// Reads them from whichever server exposes them; nullopt when none is present.
std::optional<PrefixCacheCounters> ReadPrefixCacheCounters(const std::vector<PromSample>& samples);

// The window between two scrapes, as the server counts it (every request it served, ours or
// not): {"source", "prompt_tokens", "cached_tokens", "share"} from counters (share null when no
// prompt token was looked up), {"source", "hit_rate_gauge"} from a gauge (after's value);
// null when the two scrapes carry neither.
nlohmann::json PrefixCacheWindowJson(const PrefixCacheCounters& before,
                                     const PrefixCacheCounters& after);

}  // namespace sb::perf
