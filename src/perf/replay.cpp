// The replay profile (replay.h): a trace's requests at their trace times on the open-loop
// schedule, per-request records with the trace's lengths beside the server's, the cached prompt
// tokens the server reports, and a summary per request class. docs/workloads.md is the manual.
#include "perf/replay.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "perf/metrics.h"
#include "perf/profiles.h"
#include "perf/request_classes.h"
#include "workload/length.h"
#include "workload/prompt.h"

namespace sb::perf {

using nlohmann::json;

namespace {

// The first send is scheduled this long after every body is built (as the rate profile does).
constexpr std::int64_t kLeadNs = 20'000'000;
// Arrival-rate buckets of the summary: one per second of the trace, at most this many.
constexpr std::size_t kMaxRateBuckets = 3600;

std::int64_t NowNs() {
  return ToNanos(std::chrono::steady_clock::now());
}

double Ms(std::int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

using Fact = RequestFact;

// Trace arrivals and actual sends per second of the replay.
json ArrivalsJson(const std::vector<Fact>& facts, std::int64_t start_ns) {
  std::vector<long long> trace, sent;
  auto bump = [](std::vector<long long>& v, std::int64_t ns) {
    const auto k = static_cast<std::size_t>(std::max<std::int64_t>(0, ns) / 1'000'000'000);
    if (k >= kMaxRateBuckets) {
      return;
    }
    if (v.size() <= k) {
      v.resize(k + 1, 0);
    }
    ++v[k];
  };
  for (const Fact& f : facts) {
    bump(trace, f.scheduled_ns - start_ns);
    if (f.send_ns != 0) {
      bump(sent, f.send_ns - start_ns);
    }
  }
  json out = json::array();
  for (std::size_t k = 0; k < std::max(trace.size(), sent.size()); ++k) {
    out.push_back({{"second", k},
                   {"trace_rps", k < trace.size() ? trace[k] : 0},
                   {"sent_rps", k < sent.size() ? sent[k] : 0}});
  }
  return out;
}

}  // namespace

Result<void> PrepareReplay(ReplayOptions& o) {
  auto usage = [](const std::string& text) { return Error{ErrorCode::kUsage, text}; };
  if (o.trace.empty()) {
    return usage("--profile replay needs --trace FILE");
  }
  std::optional<workload::TraceFormat> format;
  if (!o.format.empty()) {
    format = workload::ParseTraceFormat(o.format);
    if (!format) {
      return usage("--trace-format must be mooncake, burstgpt, azure or jsonl, got '" + o.format +
                   "'");
    }
  }
  if (!(std::isfinite(o.time_scale) && o.time_scale > 0)) {
    return usage(fmt::format("--time-scale must be > 0, got {}", o.time_scale));
  }
  if (o.max_requests < 0) {
    return usage(fmt::format("--max-requests must be >= 0, got {}", o.max_requests));
  }
  if (o.block_tokens < 1 || o.block_tokens > 1 << 20) {
    return usage(fmt::format("--block-tokens must be in [1, 1048576], got {}", o.block_tokens));
  }
  auto trace = workload::ReadTrace(o.trace, format, static_cast<std::size_t>(o.max_requests));
  if (!trace) {
    return trace.error();
  }
  o.loaded = std::make_shared<const workload::Trace>(std::move(trace).value());
  return {};
}

// Counts over the replay's requests as they finish.
struct ReplayTally {
  long long late = 0, ok = 0, failed = 0, sent = 0, tokens = 0;
  std::int64_t ok_first = std::numeric_limits<std::int64_t>::max(), ok_last = 0;
  std::vector<double> lags_ms;
};

namespace {

// The fact of one finished replay request: latencies from the scheduled send, every token gap.
Fact FactOf(const client::ChatResponse& r, const RequestMetrics& m, const std::string& cls) {
  Fact f;
  f.cls = cls;
  f.ok = r.outcome == client::Outcome::kOk;
  f.scheduled_ns = r.scheduled_ns;
  f.send_ns = r.send_ns;
  f.input_tokens = r.usage.prompt_tokens > 0 ? r.usage.prompt_tokens : -1;
  f.output_tokens = f.ok ? m.completion_tokens : -1;
  f.cached_tokens = CachedPromptTokens(r);
  if (f.ok && !r.events.empty()) {
    f.ttft_ms = Ms(r.events.front().t_ns - r.scheduled_ns);
    f.e2e_ms = Ms(r.events.back().t_ns - r.scheduled_ns);
    for (std::size_t k = 1; k < r.events.size(); ++k) {
      const std::int64_t per = r.events[k].tokens > 0 ? r.events[k].tokens : 1;
      f.itl_ms.push_back(Ms(r.events[k].t_ns - r.events[k - 1].t_ns) / static_cast<double>(per));
    }
  }
  return f;
}

// The replay's summary (docs/results-schema.md, perf.replay), before its windows and resources.
json ReplayJson(const ReplayOptions& ro, const workload::Trace& trace, const ReplayTally& t,
                double late_ms, std::int64_t start_ns, const std::vector<Fact>& done,
                json requests) {
  const std::size_t n = trace.requests.size();
  const double span_s =
      n >= 2 ? static_cast<double>(trace.requests.back().at_us) / 1e6 * ro.time_scale : 0;
  std::int64_t first_send = std::numeric_limits<std::int64_t>::max(), last_send = 0;
  for (const Fact& f : done) {
    first_send = std::min(first_send, f.send_ns);
    last_send = std::max(last_send, f.send_ns);
  }
  return {
      {"trace", ro.trace},
      {"format", workload::TraceFormatName(trace.format)},
      {"time_scale", ro.time_scale},
      {"block_tokens", ro.block_tokens},
      {"scheduled", n},
      {"skipped_failures", trace.skipped},
      {"sent", t.sent},
      {"ok", t.ok},
      {"failed", t.failed},
      {"unsent", static_cast<long long>(n) - t.sent},
      {"late", t.late},
      {"late_ms", late_ms},
      {"send_lag_ms", SummaryStatsJson(t.lags_ms)},
      {"trace_rate_rps", span_s > 0 ? json(static_cast<double>(n - 1) / span_s) : json(nullptr)},
      {"achieved_rate_rps", t.sent >= 2 && last_send > first_send
                                ? json(static_cast<double>(t.sent - 1) /
                                       (static_cast<double>(last_send - first_send) / 1e9))
                                : json(nullptr)},
      {"cache", CacheJson(done)},
      {"classes", ClassesJson(done)},
      {"arrivals", ArrivalsJson(done, start_ns)},
      {"requests", std::move(requests)}};
}

}  // namespace

Session::BlockFit Session::FitBlockPrompt(std::span<const std::int64_t> hash_ids, int input,
                                          int block_tokens, const workload::PromptShape& shape,
                                          std::uint64_t seed, double& tokens_per_word) {
  // Exact to the server's tokenizer where it has one. A word of the block text is one token on
  // the simulator and on large vocabularies, more on a small one: the word count is scaled by
  // the tokens per word measured (a secant step through the template's fixed share), then the
  // last gap is padded with one-token words after the text (its unique end: the blocks that
  // requests share stay identical).
  auto words_for = [&](double tpw) {
    return shape.overhead +
           std::max(1, static_cast<int>(std::lround((input - shape.overhead) / tpw)));
  };
  int target = words_for(tokens_per_word);
  std::string best;
  std::optional<int> best_count, fewest;
  for (int step = 0; step < 5; ++step) {
    std::string text = workload::BlockPromptText(hash_ids, target, block_tokens, shape, seed);
    const auto count = CountPromptTokens(text);
    if (!count) {
      return {std::move(text), BlockFit::kUncounted, -1};  // as the trace's length in words
    }
    if (target == shape.overhead + 1) {
      fewest = count;  // one word: the shortest prompt there is
    }
    if (*count <= input && (!best_count || *count > *best_count)) {
      best = text;
      best_count = count;
    }
    if (*count == input) {
      return {std::move(text), BlockFit::kExact, *count};
    }
    const int words = std::max(1, target - shape.overhead);
    if (*count > shape.overhead) {
      tokens_per_word =
          std::clamp(static_cast<double>(*count - shape.overhead) / words, 0.25, 16.0);
    }
    int next = words_for(tokens_per_word);
    if (next == target) {
      next += *count < input ? 1 : -1;
    }
    if (next < shape.overhead + 1) {
      break;
    }
    target = next;
  }
  if (!best_count) {
    std::string text = workload::BlockPromptText(hash_ids, target, block_tokens, shape, seed);
    return {std::move(text), fewest ? BlockFit::kTooShort : BlockFit::kMissed, fewest.value_or(-1)};
  }
  for (const char* unit : {" a", " and"}) {
    std::string padded = best;
    for (int k = *best_count; k < input; ++k) {
      padded += unit;
    }
    const auto count = CountPromptTokens(padded);
    if (count && *count == input) {
      return {std::move(padded), BlockFit::kExact, *count};
    }
  }
  return {std::move(best), BlockFit::kMissed, *best_count};
}

std::vector<client::ChatCall> Session::ReplayCalls(const ProfileOptions& options,
                                                   const ReplayOptions& ro,
                                                   std::vector<int>& asked_input) {
  const workload::Trace& trace = *ro.loaded;
  const std::size_t n = trace.requests.size();
  // Where the message text sits among the server's tokens: the simulator's template is
  // documented (4 tokens before the text, 6 in all); elsewhere the template's total is counted
  // and the blocks start at the text (shifted by the template's leading tokens, which moves but
  // does not change which blocks requests share).
  workload::PromptShape shape{4, 6};
  if (target_.kind != client::ServerKind::kSim) {
    const auto one = CountPromptTokens("x");
    shape = {0, one ? std::max(0, *one - 1) : 0};
  }
  std::vector<client::ChatCall> calls(n);
  asked_input.assign(n, 0);
  const std::uint64_t seed_base = next_id_;  // a distinct text after the shared blocks
  double tokens_per_word = 1.0;              // the server's, learnt from the first prompts
  int clamped = 0, unfitted = 0, too_short = 0, shortest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const workload::TraceRequest& t = trace.requests[i];
    int output = t.output_tokens;
    int input = t.input_tokens;
    if (target_.max_model_len > 0 && input + output > target_.max_model_len) {
      ++clamped;
      output = std::max<int>(1, std::min<std::int64_t>(output, target_.max_model_len / 4));
      input = static_cast<int>(std::max<std::int64_t>(1, target_.max_model_len - output));
    }
    asked_input[i] = input;
    client::ChatParams p = Params(options, "", output, true);
    if (!t.messages_json.empty()) {
      p.messages = ChatMessagesFromJson(t.messages_json);
    } else if (!t.prompt.empty()) {
      p.messages = {{"user", t.prompt, ""}};
    } else {
      const std::uint64_t seed = Mix64(session_nonce_ ^ ((seed_base + i) * 0x9e37ULL));
      BlockFit fit =
          FitBlockPrompt(t.hash_ids, input, ro.block_tokens, shape, seed, tokens_per_word);
      unfitted += fit.outcome == BlockFit::kMissed || fit.outcome == BlockFit::kUncounted ? 1 : 0;
      if (fit.outcome == BlockFit::kTooShort) {
        ++too_short;
        shortest = fit.tokens;
      }
      const std::string text = std::move(fit.text);
      p.messages = {{"user", text, ""}};
    }
    calls[i].body = client::BuildChatBody(p, target_.kind);
    calls[i].stream = true;
    calls[i].total_timeout = options.request_timeout;
    BoundStream(calls[i], output);
  }
  // Counting a prompt may send requests of its own (the tokenizer's calibration against a
  // server with only a plain /tokenize, as llama.cpp): ids are given after, so the calls have
  // consecutive ids and r.id - first_id indexes them.
  for (auto& call : calls) {
    call.id = next_id_++;
  }
  if (clamped > 0) {
    Warn(
        fmt::format("replay: {} requests did not fit the server's context ({} tokens) and were "
                    "cut to fit",
                    clamped, target_.max_model_len));
  }
  if (too_short > 0) {
    Warn(
        fmt::format("replay: {} requests ask for fewer tokens than this server's chat template "
                    "plus one word (about {} tokens); each was sent as that shortest prompt",
                    too_short, shortest));
  }
  if (unfitted > 0) {
    Warn(
        fmt::format("replay: {} prompts could not be fitted to their trace length exactly "
                    "(the server's tokenizer is not available or would not converge)",
                    unfitted));
  }
  return calls;
}

json Session::Replay(const ProfileOptions& options) {
  ReplayOptions ro = options.replay;
  if (!ro.loaded) {
    if (auto ok = PrepareReplay(ro); !ok) {
      Warn("replay: " + ok.error().message);
      return {{"error", ok.error().message}};
    }
  }
  const workload::Trace& trace = *ro.loaded;
  const std::size_t n = trace.requests.size();
  const std::string format(workload::TraceFormatName(trace.format));
  const std::string cls = "trace:" + format;
  std::vector<int> asked_input;
  std::vector<client::ChatCall> calls = ReplayCalls(options, ro, asked_input);
  const std::uint64_t first_id = n > 0 ? calls.front().id : next_id_;

  client::UnitScope unit(client_, "replay");
  last_self_check_.reset();
  const ServerCounters counters_before = BeginWindow();  // before the schedule starts
  const std::int64_t start_ns = NowNs() + kLeadNs;
  for (std::size_t i = 0; i < n; ++i) {
    const double at_ns = static_cast<double>(trace.requests[i].at_us) * 1e3 * ro.time_scale;
    calls[i].send_at = SteadyTime(
        std::chrono::duration_cast<SteadyTime::duration>(Nanos(start_ns + std::llround(at_ns))));
  }
  const std::int64_t late_ns = std::llround(options.rate.late_ms * 1e6);
  std::vector<Fact> facts(n);
  std::vector<std::optional<RequestRecord>> rows(n);
  ReplayTally tally;
  client::RunHooks hooks;
  hooks.on_event = [&](const client::ChatResponse& r) {
    if (event_hook_) {
      event_hook_(r);
    }
    return true;
  };
  hooks.on_done = [&](const client::ChatResponse& r) {
    if (r.outcome == client::Outcome::kCancelled && r.send_ns == 0) {
      return;  // never sent
    }
    const std::size_t i = r.id - first_id;
    if (r.id < first_id || i >= n) {
      return;  // not one of the trace's calls (ids are consecutive: never)
    }
    const workload::TraceRequest& t = trace.requests[i];
    const RequestMetrics m = ComputeMetrics(r);
    const Fact& f = facts[i] = FactOf(r, m, cls);
    if (f.ok && !r.events.empty()) {
      tally.ok_first = std::min(tally.ok_first, r.send_ns);
      tally.ok_last = std::max(tally.ok_last, r.events.back().t_ns);
    }
    ++tally.sent;
    tally.ok += f.ok ? 1 : 0;
    tally.failed += f.ok ? 0 : 1;
    tally.tokens += f.ok ? m.completion_tokens : 0;
    const std::int64_t lag = r.send_ns - r.scheduled_ns;
    tally.lags_ms.push_back(Ms(lag));
    tally.late += lag > late_ns ? 1 : 0;
    RequestRecord rec = Record(r, "replay", fmt::format("{} #{}", format, i + 1), false);
    RequestRecord::Workload& w = rec.workload.emplace();
    w.cls = f.cls;
    w.input_tokens = f.input_tokens;
    w.output_tokens = f.output_tokens;
    w.cached_tokens = f.cached_tokens;
    w.scheduled_ms = Ms(r.scheduled_ns - start_ns);  // from the schedule's start
    w.sent_ms = Ms(r.send_ns - start_ns);
    RequestRecord::Schedule& s = rec.schedule.emplace();
    s.lag_ms = Ms(lag);
    s.ttft_ms = f.ttft_ms;
    s.e2e_ms = f.e2e_ms;
    rec.trace = RequestRecord::TraceLine{t.line, t.input_tokens, t.output_tokens, asked_input[i]};
    if (on_sample_) {
      on_sample_(Sample{rec, nullptr});
    }
    rows[i] = std::move(rec);
  };
  const std::vector<client::ChatResponse> results = client_.RunChats(calls, hooks, stop_);
  EndWindow(counters_before, calls.size());
  TallyReplay(tally, results, options.rate.late_ms);

  std::vector<Fact> done;
  json requests = json::array();
  for (std::size_t i = 0; i < n; ++i) {
    if (rows[i]) {
      done.push_back(facts[i]);
      requests.push_back(rows[i]->ToJson());  // after the window, off the measuring path
    }
  }
  json out =
      ReplayJson(ro, trace, tally, options.rate.late_ms, start_ns, done, std::move(requests));
  AttachCacheWindow(out);
  AttachResources(out);
  if (on_progress_) {
    on_progress_(
        fmt::format("replay: {} of {} sent, {} ok, {} late", tally.sent, n, tally.ok, tally.late));
  }
  return out;
}

void Session::TallyReplay(const ReplayTally& t, const std::vector<client::ChatResponse>& results,
                          double late_ms) {
  AddToTotals(t.sent, t.failed, t.ok, t.tokens, t.ok_first, t.ok_last,
              !results.empty() && results.front().replayed);
  if (t.ok == 0) {
    for (const auto& r : results) {
      ObserveResponse(r);
    }
  }
  if (t.sent > 0 && !t.lags_ms.empty() &&
      *std::max_element(t.lags_ms.begin(), t.lags_ms.end()) > 0) {
    std::vector<double> sorted = t.lags_ms;
    std::sort(sorted.begin(), sorted.end());
    const double p99 = sorted[static_cast<std::size_t>(0.99 * (sorted.size() - 1))];
    if (p99 > late_ms) {
      NoteClientBound("replay",
                      {fmt::format("schedule lag p99 {:.3f} ms is above {:g} ms", p99, late_ms)});
    }
  }
}

}  // namespace sb::perf
