// The prefix-cache profile (docs/metrics.md "Prefix cache"): what a server's prefix cache saves
// on the time to first token. For each size of --prefix-sizes, --runs times: one request whose
// prompt starts with a prefix no request has carried (cold), then --prefix-hits requests that
// start with the same prefix and ask another question each (warm), one at a time. The row gives
// both TTFTs, their ratio and the prompt tokens the server says it served from its cache.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "core/stats.h"
#include "perf/metrics.h"
#include "perf/profiles.h"

namespace sb::perf {

namespace {

using nlohmann::json;

// What follows the prefix: a different question for each request that shares it.
constexpr const char* kQuestions[] = {
    "In one sentence, what is the text above about?",
    "Name one word that appears in the text above.",
    "Give the text above a short title.",
    "Which idea in the text above comes first?",
};

// The key of the profile's section and of its records' "profile".
constexpr const char* kKey = "prefix_cache";

}  // namespace

json RunPrefixCache(Session& s, const ProfileOptions& options) {
  s.WarmUp(options);
  // The prefix must come first in the prompt, so no unique line goes before it: the prefix's own
  // tag keeps a cold prompt cold.
  ProfileOptions shared = options;
  shared.allow_cache = true;
  const int hits = static_cast<int>(options.args.Number("--prefix-hits"));
  const int budget = options.ttft_max_tokens;
  const int overhead = s.TemplateOverhead();
  json rows = json::array();
  std::vector<int> uncached;  // sizes whose warm requests the server said none was cached of
  for (const double asked : options.args.Numbers("--prefix-sizes")) {
    if (s.Halted()) {
      break;
    }
    const int size = static_cast<int>(asked);
    json row = {{"prefix_tokens", size}};
    // A prompt the server cannot hold would only be refused: not sent (64 tokens for the
    // question and the template).
    if (const std::int64_t limit = s.target().max_model_len;
        limit > 0 && size + 64 + budget > limit) {
      row["skipped"] = fmt::format("over the server's max model length ({} tokens)", limit);
      row["runs"] = json::array();
      row["errors"] = 0;
      rows.push_back(std::move(row));
      continue;
    }
    std::vector<double> cold, warm, cached, prompts;
    json runs = json::array();
    int errors = 0;
    int counted = -1;
    s.ScaleFirstByteLimit(options, size);
    for (int run = 0; run < options.runs && !s.Halted(); ++run) {
      auto [prefix, n] = s.FitText(fmt::format("[prefix {}] ", s.UniqueTag()), size,
                                   Mix64(static_cast<std::uint64_t>(size) * 131 + run), overhead);
      counted = n;
      for (int i = 0; i <= hits && !s.Halted(); ++i) {
        const std::string label = i == 0 ? fmt::format("{} run {} cold", size, run + 1)
                                         : fmt::format("{} run {} warm {}", size, run + 1, i);
        const std::string prompt =
            prefix + "\n\n" + kQuestions[static_cast<std::size_t>(i) % std::size(kQuestions)];
        const auto rs = s.Execute({s.Params(shared, prompt, budget, false)}, kKey, {label});
        const client::ChatResponse& r = rs.front();
        if (r.outcome == client::Outcome::kCancelled && r.send_ns == 0) {
          break;
        }
        runs.push_back(s.Record(r, kKey, label, false).ToJson());
        const RequestMetrics m = ComputeMetrics(r);
        if (r.outcome != client::Outcome::kOk || !m.ttft_ms) {
          errors += r.outcome != client::Outcome::kCancelled ? 1 : 0;
          if (i == 0) {
            break;  // no cold prefix reached the cache: this run's "warm" requests would be cold
          }
          continue;
        }
        (i == 0 ? cold : warm).push_back(*m.ttft_ms);
        if (i == 0 && r.usage.prompt_tokens > 0) {
          prompts.push_back(r.usage.prompt_tokens);
        }
        if (const int c = CachedPromptTokens(r); i > 0 && c >= 0) {
          cached.push_back(c);
        }
      }
    }
    s.ScaleFirstByteLimit(options, 0);
    // The prefix by the server's tokenizer, and the whole cold prompt by its usage: the chat
    // template's own tokens (a system prompt it adds) are in the prompt and in what it caches.
    row["prefix_counted"] = counted >= 0 ? json(counted) : json(nullptr);
    row["prompt_tokens"] = prompts.empty() ? json(nullptr) : json(Median(prompts));
    row["runs"] = std::move(runs);
    row["cold_ttft_ms"] = StatsJson(cold);
    row["warm_ttft_ms"] = StatsJson(warm);
    const bool both = !cold.empty() && !warm.empty() && Median(warm) > 0;
    row["speedup"] = both ? json(Median(cold) / Median(warm)) : json(nullptr);
    row["cached_tokens"] = cached.empty() ? json(nullptr) : StatsJson(cached);
    row["errors"] = errors;
    if (both) {
      s.Progress(
          fmt::format("prefix-cache {} tokens: TTFT {:.1f} ms cold, {:.1f} ms warm ({:.2f}x)", size,
                      Median(cold), Median(warm), Median(cold) / Median(warm)));
    }
    if (!cached.empty() && *std::max_element(cached.begin(), cached.end()) == 0) {
      uncached.push_back(size);
    }
    rows.push_back(std::move(row));
  }
  if (!uncached.empty()) {
    s.Warn(fmt::format(
        "prefix-cache: the server served no prompt token of the repeated prefixes ({} tokens) "
        "from a cache (usage cached_tokens 0 on every warm request): its prefix cache is off, "
        "or smaller than the prefix",
        fmt::join(uncached, ", ")));
  }
  return json{{"hits", hits}, {"max_tokens", budget}, {"prefixes", std::move(rows)}};
}

}  // namespace sb::perf
