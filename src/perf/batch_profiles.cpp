// The profiles that send a counted batch and wait for it: decode, concurrency, max-tokens and
// TTFT (profiles.h). The open-loop ones are rate.cpp and replay.cpp; context scaling context.cpp.
#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/number_format.h"
#include "core/profile_table.h"
#include "core/stats.h"
#include "perf/frontier.h"
#include "perf/histogram.h"
#include "perf/metrics.h"
#include "perf/profiles.h"
#include "perf/request_classes.h"
#include "perf/self_check.h"
#include "perf/tails.h"

namespace sb::perf {

using nlohmann::json;

namespace {

// Prompts for the TTFT profile: the seeds' three prompt kinds, with lengths that differ by an
// order of magnitude so prefill cost is visible.
struct TtftPrompt {
  const char* name;
  int filler_words;
  const char* question;
};

constexpr std::array<TtftPrompt, 3> kTtftPrompts = {{
    {"short", 0, "What is 2+2?"},
    {"medium", 150, "Explain, in a few sentences, how a CPU executes one instruction."},
    {"long", 1500, "Summarise the text above in one sentence."},
}};

constexpr const char* kDecodePrompt =
    "Write a long, detailed essay about the history of computing, from mechanical calculators "
    "to modern accelerators. Keep writing until you are told to stop.";

}  // namespace

namespace {

// Appends the record of each response to `rows` (and to `records`, when given); returns the
// number of failed requests. A request a stop (Ctrl-C) cut short is recorded ("cancelled") but is
// not a failure: the summary counts it as interrupted.
int CollectRows(const std::vector<client::ChatResponse>& rs, json& rows,
                const std::function<RequestRecord(const client::ChatResponse&)>& record,
                std::vector<RequestRecord>* records = nullptr) {
  int errors = 0;
  for (const auto& r : rs) {
    if (r.outcome == client::Outcome::kCancelled && r.send_ns == 0) {
      continue;
    }
    RequestRecord rec = record(r);
    rows.push_back(rec.ToJson());
    if (records != nullptr) {
      records->push_back(std::move(rec));
    }
    if (r.outcome != client::Outcome::kOk && r.outcome != client::Outcome::kCancelled) {
      ++errors;
    }
  }
  return errors;
}

// The most requests the client had in flight at once (send to done), from the responses' own
// times: the closed loop's cap, checked.
long long PeakInFlight(const std::vector<client::ChatResponse>& rs) {
  std::vector<std::pair<std::int64_t, int>> edges;
  for (const auto& r : rs) {
    if (r.send_ns != 0 && r.done_ns >= r.send_ns) {
      edges.emplace_back(r.send_ns, 1);
      edges.emplace_back(r.done_ns, -1);
    }
  }
  std::sort(edges.begin(), edges.end());  // at a tie an end (-1) sorts before a start
  long long now = 0, peak = 0;
  for (const auto& [t, d] : edges) {
    now += d;
    peak = std::max(peak, now);
  }
  return peak;
}

// The first failed response's note, for a progress line ("" when none failed).
std::string FirstFailure(const std::vector<client::ChatResponse>& rs) {
  for (const auto& r : rs) {
    if (r.outcome != client::Outcome::kOk &&
        !(r.outcome == client::Outcome::kCancelled && r.send_ns == 0)) {
      return FailureNote(r);
    }
  }
  return "";
}

// A concurrency level's progress line. Failures first: a figure from the streams that succeeded
// must not hide the rest. Counts are of the requests sent (a closed loop sends more than its N
// streams).
std::string LevelProgressLine(int n, int errors, int ok, long long sent, bool closed_loop,
                              const std::vector<client::ChatResponse>& rs,
                              std::optional<double> throughput) {
  const char* what = closed_loop ? "requests" : "streams";
  if (errors > 0) {
    return fmt::format(
        "concurrency {}: {} of {} {} failed ({:.0f}%; first: {}); {} tok/s combined over the {} "
        "that finished",
        n, errors, sent, what, sent > 0 ? 100.0 * errors / sent : 0.0, FirstFailure(rs),
        throughput ? FixedGrouped(*throughput, 1) : "no figure", ok);
  }
  return fmt::format("concurrency {}: {}/{} {} ok, {} tok/s combined", n, ok, sent, what,
                     throughput ? FixedGrouped(*throughput, 1) : "n/a");
}

}  // namespace

json Session::Decode(const ProfileOptions& options) {
  WarmUp(options);
  if (!client::CanForceLength(target_.kind)) {
    Warn("This server cannot be told to ignore end-of-sequence; decode runs may stop early.");
  }
  json runs = json::array();
  std::vector<double> tok_s, ttft, e2e, itl;
  std::map<int, long long> tokens_per_chunk;  // only when the server reports per-chunk counts
  int errors = 0;
  for (int i = 0; i < options.runs && !Halted(); ++i) {
    std::string label = fmt::format("run {}", i + 1);
    auto rs = Execute({LoadParams(options, kDecodePrompt, options.tokens)}, "decode", {label});
    const auto& r = rs.front();
    errors +=
        CollectRows(rs, runs, [&](const auto& x) { return Record(x, "decode", label, false); });
    if (!last_window_.empty() && !runs.empty()) {
      runs.back()["spec_decode"] = SpecJson(last_window_);
    }
    if (!runs.empty()) {
      AttachResources(runs.back());
    }
    RequestMetrics m = ComputeMetrics(r);
    if (r.outcome == client::Outcome::kOk && m.decode_tok_s) {
      tok_s.push_back(*m.decode_tok_s);
      ttft.push_back(*m.ttft_ms);
      e2e.push_back(*m.e2e_ms);
      for (std::size_t k = 1; k < r.events.size(); ++k) {
        int n = r.events[k].tokens;
        if (n > 0) {
          ++tokens_per_chunk[n];
          double gap_ms = static_cast<double>(r.events[k].t_ns - r.events[k - 1].t_ns) / 1e6;
          itl.insert(itl.end(), static_cast<std::size_t>(n), gap_ms / n);
        }
      }
      if (m.completion_tokens != options.tokens && !options.output_lengths) {
        Warn(fmt::format("decode asked for {} tokens but a run produced {}.", options.tokens,
                         m.completion_tokens));
      }
    }
    if (on_progress_) {
      on_progress_(r.outcome == client::Outcome::kOk && m.decode_tok_s
                       ? fmt::format("decode {}/{}: {} tok/s, TTFT {} ms", i + 1, options.runs,
                                     FixedGrouped(*m.decode_tok_s, 1), MillisecondsText(*m.ttft_ms))
                       : fmt::format("decode {}/{}: {}", i + 1, options.runs, FailureNote(r)));
    }
  }
  json out = {
      {"tokens", options.tokens},
      {"input_tokens", options.input_tokens > 0 ? json(options.input_tokens) : json()},
      {"input_lengths", options.input_lengths ? json(options.input_lengths->text) : json(nullptr)},
      {"output_lengths",
       options.output_lengths ? json(options.output_lengths->text) : json(nullptr)},
      {"runs", runs},
      {"decode_tok_s", StatsJson(tok_s)},
      {"ttft_ms", StatsJson(ttft)},
      {"e2e_ms", StatsJson(e2e)},
      {"errors", errors}};
  if (!tokens_per_chunk.empty()) {
    json hist = json::object();
    for (auto [n, count] : tokens_per_chunk) {
      hist[std::to_string(n)] = count;
    }
    out["tokens_per_chunk"] = hist;
    // Per-token ITL: each chunk gap divided over the tokens it carried (exact with per-chunk
    // counts); one value per token, so the statistics weigh tokens, not chunks.
    out["itl_ms"] = StatsJson(itl);
  }
  return out;
}

json Session::Concurrency(const ProfileOptions& options) {
  WarmUp(options);
  json levels = json::array();
  const bool closed_loop = options.level_requests > 0 || options.level_duration_s > 0;
  for (int n : options.args.Ints("--levels")) {
    if (Halted()) {
      break;
    }
    // One request per stream, or (closed loop) n in flight, each finished one replaced at once,
    // until level_requests were sent or the level's duration passed.
    int count = n;
    BatchLimits limits;
    // N streams leave together: their connections are opened first, so TTFT measures the
    // server, not N handshakes racing the server's accept queue (docs/metrics.md).
    limits.preconnect = true;
    if (closed_loop) {
      count = options.level_requests > 0 ? options.level_requests : 20 * n;
      limits.max_in_flight = static_cast<std::size_t>(n);
    }
    std::vector<client::ChatParams> params;
    std::vector<std::string> labels;
    for (int i = 0; i < count; ++i) {
      params.push_back(LoadParams(options, kDecodePrompt, options.tokens));
      labels.push_back(closed_loop ? fmt::format("c{} request {}", n, i + 1)
                                   : fmt::format("c{} stream {}", n, i + 1));
    }
    if (options.level_duration_s > 0) {
      // Bodies are built before the window opens: it starts now.
      limits.start_until = std::chrono::steady_clock::now() +
                           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(options.level_duration_s));
    }
    auto rs = Execute(std::move(params), "concurrency", labels, limits);
    if (options.level_duration_s > 0 && !Halted() && static_cast<int>(rs.size()) == count &&
        count > 0 && rs.back().send_ns != 0 && rs.back().send_ns < ToNanos(*limits.start_until)) {
      Warn(fmt::format(
          "concurrency {}: all {} requests were sent before --duration-s {:g} ended; raise "
          "--requests (the cap of a timed level) to keep the load up for the whole window.",
          n, count, options.level_duration_s));
    }
    json rows = json::array();
    std::size_t idx = 0;
    std::vector<RequestRecord> records;
    int errors = CollectRows(
        rs, rows, [&](const auto& x) { return Record(x, "concurrency", labels[idx++], false); },
        &records);
    std::vector<double> per_stream, ttft;
    std::int64_t first_send = 0, last_token = 0;
    int ok = 0;
    LevelTails tails;
    for (const auto& r : rs) {
      RequestMetrics m = ComputeMetrics(r);
      tails.Add(r, m);
      if (r.outcome == client::Outcome::kOk) {
        ++ok;
        if (m.decode_tok_s) {
          per_stream.push_back(*m.decode_tok_s);
        }
        if (m.ttft_ms) {
          ttft.push_back(*m.ttft_ms);
        }
      }
      if (r.send_ns != 0 && (first_send == 0 || r.send_ns < first_send)) {
        first_send = r.send_ns;
      }
      if (!r.events.empty()) {
        last_token = std::max(last_token, r.events.back().t_ns);
      }
    }
    auto throughput = CombinedThroughput(rs);
    json level = {{"concurrency", n},
                  {"sent", static_cast<long long>(rows.size())},
                  {"ok", ok},
                  {"errors", errors},
                  {"wall_s", last_token > first_send && first_send != 0
                                 ? json(static_cast<double>(last_token - first_send) / 1e9)
                                 : json(nullptr)},
                  {"throughput_tok_s", NumberOrNull(throughput)},
                  {"per_stream_decode_tok_s", StatsJson(per_stream)},
                  {"ttft_ms", StatsJson(ttft)},
                  {"peak_in_flight", PeakInFlight(rs)},
                  {"requests", rows}};
    tails.WriteTo(level, /*with_ttft=*/false);
    AddClassRows(level, FactsOf(records));  // per class and cache outcome (request_classes.h)
    AttachCacheWindow(level);
    if (!last_window_.empty()) {
      level["spec_decode"] = SpecJson(last_window_);
    }
    AttachResources(level);
    if (on_progress_) {
      on_progress_(LevelProgressLine(n, errors, ok, static_cast<long long>(rows.size()),
                                     closed_loop, rs, throughput));
    }
    levels.push_back(std::move(level));
  }
  json out = {{"tokens", options.tokens}, {"levels", levels}};
  out["gpus"] = options.gpus > 0 ? json(options.gpus) : json(nullptr);
  out["frontier"] = ConcurrencyFrontier(levels, options.gpus);
  if (options.input_tokens > 0) {
    out["input_tokens"] = options.input_tokens;
  }
  if (options.input_lengths) {
    out["input_lengths"] = options.input_lengths->text;
  }
  if (options.output_lengths) {
    out["output_lengths"] = options.output_lengths->text;
  }
  if (closed_loop) {
    out["closed_loop"] = {
        {"requests", options.level_requests > 0 ? json(options.level_requests) : json()},
        {"duration_s", options.level_duration_s > 0 ? json(options.level_duration_s) : json()}};
  }
  return out;
}

json Session::MaxTokens(const ProfileOptions& options) {
  WarmUp(options);
  json lengths = json::array();
  const int length_runs = options.args.Int("--length-runs");
  for (int len : options.args.Ints("--lengths")) {
    if (Halted()) {
      break;
    }
    json runs = json::array();
    std::vector<double> wall, tok_s, decode;
    int errors = 0;
    std::string first_failure;
    LevelTails tails;
    for (int i = 0; i < length_runs && !Halted(); ++i) {
      std::string label = fmt::format("{} tokens run {}", len, i + 1);
      const std::string key(Profile(ProfileId::kMaxTokens).key);  // samples' "profile"
      auto rs = Execute({Params(options, kDecodePrompt, len, true)}, key, {label});
      errors += CollectRows(rs, runs, [&](const auto& x) { return Record(x, key, label, false); });
      if (first_failure.empty()) {
        first_failure = FirstFailure(rs);
      }
      if (!last_window_.empty() && !runs.empty()) {
        runs.back()["spec_decode"] = SpecJson(last_window_);
      }
      if (!runs.empty()) {
        AttachResources(runs.back());
      }
      RequestMetrics m = ComputeMetrics(rs.front());
      tails.Add(rs.front(), m);
      if (rs.front().outcome == client::Outcome::kOk && m.completion_tokens != len) {
        Warn(
            fmt::format("max-tokens asked for {} tokens but a run produced {} (finish reason "
                        "\"{}\"): that row is not the requested length.",
                        len, m.completion_tokens, rs.front().finish_reason));
      }
      if (rs.front().outcome == client::Outcome::kOk && m.e2e_ms) {
        wall.push_back(*m.e2e_ms / 1e3);
        if (m.wall_tok_s) {
          tok_s.push_back(*m.wall_tok_s);
        }
        if (m.decode_tok_s) {
          decode.push_back(*m.decode_tok_s);
        }
      }
    }
    if (on_progress_ && errors > 0) {
      on_progress_(fmt::format("max_tokens {}: {} of {} failed (first: {})", len, errors,
                               runs.size(), first_failure));
    }
    if (on_progress_ && !tok_s.empty()) {
      on_progress_(fmt::format("max_tokens {}: {:.2f} s, {} tok/s", len, Median(wall),
                               FixedGrouped(Median(tok_s), 1)));
    }
    json row = {{Profile(ProfileId::kMaxTokens).dim, len},
                {"runs", runs},
                {"wall_s", StatsJson(wall)},
                {"tok_s", StatsJson(tok_s)},
                {"decode_tok_s", StatsJson(decode)},
                {"errors", errors}};
    tails.WriteTo(row, /*with_ttft=*/true);
    lengths.push_back(std::move(row));
  }
  return json{{"lengths", lengths}};
}

json Session::Ttft(const ProfileOptions& options) {
  WarmUp(options);
  json prompts = json::array();
  for (const auto& tp : kTtftPrompts) {
    if (Halted()) {
      break;
    }
    std::string text = tp.filler_words > 0 ? FillerText(tp.filler_words, 42) + "\n\n" + tp.question
                                           : std::string(tp.question);
    // A prompt the server's context cannot hold is not sent (it would only be refused with a
    // 400): counted with the server's tokenizer, as the context profile counts.
    if (const std::int64_t limit = target_.max_model_len; limit > 0 && tp.filler_words > 0) {
      if (auto n = CountPromptTokens(text); n && *n + options.ttft_max_tokens > limit) {
        std::string why = fmt::format(
            "over the server's max model length ({} tokens): the prompt is {} tokens, plus {} "
            "for the answer",
            limit, *n, options.ttft_max_tokens);
        if (on_progress_) {
          on_progress_(fmt::format("ttft {}: skipped ({})", tp.name, why));
        }
        prompts.push_back(json{{"name", tp.name},
                               {"prompt_tokens", *n},
                               {"runs", json::array()},
                               {"ttft_ms", StatsJson({})},
                               {"errors", 0},
                               {"skipped", why}});
        continue;
      }
    }
    json runs = json::array();
    std::vector<double> ttft;
    int errors = 0;
    int prompt_tokens = -1;
    std::string first_failure;
    for (int i = 0; i < options.runs && !Halted(); ++i) {
      std::string label = fmt::format("{} run {}", tp.name, i + 1);
      auto rs = Execute({Params(options, text, options.ttft_max_tokens, false)}, "ttft", {label});
      errors +=
          CollectRows(rs, runs, [&](const auto& x) { return Record(x, "ttft", label, false); });
      if (first_failure.empty()) {
        first_failure = FirstFailure(rs);
      }
      if (!runs.empty()) {
        AttachResources(runs.back());
      }
      const auto& r = rs.front();
      RequestMetrics m = ComputeMetrics(r);
      if (r.outcome == client::Outcome::kOk && m.ttft_ms) {
        ttft.push_back(*m.ttft_ms);
      }
      if (r.usage.prompt_tokens >= 0) {
        prompt_tokens = r.usage.prompt_tokens;
      }
    }
    if (on_progress_ && errors > 0) {
      on_progress_(fmt::format("ttft {}: {} of {} failed (first: {})", tp.name, errors, runs.size(),
                               first_failure));
    }
    if (on_progress_ && !ttft.empty()) {
      on_progress_(fmt::format("ttft {}: {} ms (median of {})", tp.name,
                               MillisecondsText(Median(ttft)), ttft.size()));
    }
    prompts.push_back(json{{"name", tp.name},
                           {"prompt_tokens", CountOrNull(prompt_tokens)},
                           {"runs", runs},
                           {"ttft_ms", StatsJson(ttft)},
                           {"errors", errors}});
  }
  return json{{"max_tokens", options.ttft_max_tokens}, {"prompts", prompts}};
}

}  // namespace sb::perf
