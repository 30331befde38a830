#include "perf/profiles.h"

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/number_format.h"
#include "core/stats.h"
#include "perf/histogram.h"
#include "perf/metrics.h"
#include "perf/self_check.h"

namespace sb::perf {

using nlohmann::json;

namespace {

std::int64_t NowNs() {
  return ToNanos(std::chrono::steady_clock::now());
}

json Opt(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

json OptInt(int v) {
  return v >= 0 ? json(v) : json(nullptr);
}

json ParseOrNull(const std::string& text) {
  if (text.empty()) {
    return nullptr;
  }
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? json(nullptr) : j;
}

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

Session::Session(client::Client& client, SessionTarget target, SampleSink on_sample,
                 ProgressSink on_progress, std::stop_token stop, std::int64_t t0_ns)
    : client_(client),
      target_(std::move(target)),
      on_sample_(std::move(on_sample)),
      on_progress_(std::move(on_progress)),
      stop_(std::move(stop)),
      t0_ns_(t0_ns),
      session_nonce_(std::random_device{}() & 0xffffffU) {
  // Without a probe of the caller's (SetHealthProbe), the session's own client asks.
  watch_.SetProbe(
      [this]() { return ProbeModels(client_, ServerWatch::ProbeLimit(first_byte_limit_)); });
}

void Session::Warn(const std::string& text) {
  if (std::find(warnings_.begin(), warnings_.end(), text) == warnings_.end()) {
    warnings_.push_back(text);
  }
}

client::ChatParams Session::Params(const ProfileOptions& options, const std::string& prompt,
                                   int max_tokens, bool force) {
  client::ChatParams p;
  p.model = target_.model;
  // A unique first line per request: a server's prefix cache cannot turn a repeated prompt into
  // a fake prefill speed.
  // --allow-cache turns it off.
  p.messages.push_back({"user",
                        options.allow_cache
                            ? prompt
                            : fmt::format("[request {:x}-{}] {}", session_nonce_, ++nonce_, prompt),
                        ""});
  p.max_tokens = max_tokens;
  p.force_length = force;
  p.temperature = options.temperature;
  p.enable_thinking = options.enable_thinking;
  p.stream = true;
  // Per-chunk token counts make per-token ITL exact under speculative decoding; only the servers
  // known to accept the field get it.
  p.continuous_usage =
      target_.kind == client::ServerKind::kVllm || target_.kind == client::ServerKind::kSglang ||
      target_.kind == client::ServerKind::kLlamaCpp || target_.kind == client::ServerKind::kSim;
  return p;
}

void BoundStream(client::ChatCall& call, int max_tokens) {
  const std::int64_t asked = std::max(1, max_tokens);
  call.max_stream_tokens = kStreamTokensFactor * asked + kStreamTokensMargin;
  call.keep_text_bytes = static_cast<std::size_t>(asked) * kKeptBytesPerToken + kKeptBytesMargin;
}

json RequestRecord(const client::ChatResponse& r, const std::string& profile,
                   const std::string& label, std::int64_t t0_ns, bool warmup) {
  RequestMetrics m = ComputeMetrics(r);
  const bool ok = r.outcome == client::Outcome::kOk;
  if (!ok) {
    // A request that failed has no speed: its partial stream would make one up.
    m.decode_tok_s.reset();
    m.tpot_ms.reset();
    m.wall_tok_s.reset();
  }
  // A server that ignored stream=true sent the whole answer as one body (ComputeMetrics gives
  // it no speed).
  const bool unstreamed = ok && CameAsOneBody(r);
  json rec = {
      {"id", r.id},
      {"profile", profile},
      {"label", label},
      {"status", std::string(client::OutcomeName(r.outcome))},
      {"reason", r.reason.empty() ? json(nullptr) : json(r.reason)},
      {"http_status", r.http_status},
      {"sent_at_ms",
       r.send_ns != 0 ? json(static_cast<double>(r.send_ns - t0_ns) / 1e6) : json(nullptr)},
      {"ttft_ms", Opt(m.ttft_ms)},
      {"ttfa_ms", Opt(m.ttfa_ms)},
      {"e2e_ms", Opt(m.e2e_ms)},
      {"decode_tok_s", Opt(m.decode_tok_s)},
      {"tpot_ms", Opt(m.tpot_ms)},
      {"prompt_tokens", OptInt(r.usage.prompt_tokens)},
      {"completion_tokens", ok || !m.tokens_estimated ? json(m.completion_tokens) : json()},
      {"reasoning_tokens", OptInt(r.usage.reasoning_tokens)},
      {"tokens_estimated", ok && m.tokens_estimated},
      {"chunks", m.chunks},
      {"finish_reason", r.finish_reason.empty() ? json(nullptr) : json(r.finish_reason)},
  };
  if (r.scheduled_ns != 0) {
    rec["scheduled_at_ms"] = static_cast<double>(r.scheduled_ns - t0_ns) / 1e6;
  }
  json server = json::object();
  if (!r.sim_json.empty()) {
    server["sim"] = ParseOrNull(r.sim_json);
  }
  if (!r.timings_json.empty()) {
    server["timings"] = ParseOrNull(r.timings_json);
  }
  if (!server.empty()) {
    rec["server"] = std::move(server);
  }
  if (warmup) {
    rec["warmup"] = true;
  }
  if (r.replayed) {
    rec["replayed"] = true;  // from the journal of a resumed run: not sent again
  }
  if (unstreamed) {
    rec["streamed"] = false;
  }
  if (r.retries > 0) {
    rec["retries"] = r.retries;
    rec["retry_reasons"] = r.retry_reasons;
  }
  return rec;
}

json Session::Record(const client::ChatResponse& r, const std::string& profile,
                     const std::string& label, bool warmup) const {
  return RequestRecord(r, profile, label, t0_ns_, warmup);
}

std::vector<client::ChatResponse> Session::Execute(std::vector<client::ChatParams> params,
                                                   const std::string& profile,
                                                   const std::vector<std::string>& labels,
                                                   const BatchLimits& limits) {
  // One batch is one unit of the run's journal: replayed whole on --resume, or sent whole.
  client::UnitScope unit(client_,
                         fmt::format("{} {}", profile, labels.empty() ? "" : labels.front()));
  std::vector<client::ChatCall> calls;
  calls.reserve(params.size());
  std::uint64_t first_id = next_id_;
  for (auto& p : params) {
    client::ChatCall call;
    call.id = next_id_++;
    call.body = client::BuildChatBody(p, target_.kind);
    call.stream = p.stream;
    call.total_timeout = request_timeout_;
    call.first_byte_timeout = first_byte_override_;
    BoundStream(call, p.max_tokens);
    calls.push_back(std::move(call));
  }
  bool warmup = profile == "warmup";
  last_resources_.reset();
  client::RunHooks hooks;
  hooks.max_in_flight = limits.max_in_flight;
  hooks.start_until = limits.start_until;
  hooks.preconnect = limits.preconnect;
  hooks.on_done = [&](const client::ChatResponse& r) {
    if (r.send_ns == 0 && r.reason == client::kNotStartedReason) {
      return;  // the closed loop's window closed before it was needed: never a request
    }
    if (on_sample_) {
      on_sample_(Record(r, profile, labels[r.id - first_id], warmup));
    }
  };
  // Self-check (every profile, as rate does): how long each event waited in the client between
  // being read from the socket and being processed.
  Histogram event_delay;
  hooks.on_event = [&](const client::ChatResponse& r) {
    if (event_hook_) {
      event_hook_(r);
    }
    if (!r.replayed) {  // a replayed event was read by an earlier process: no delay here
      event_delay.Record(NowNs() - r.events.back().t_ns);
    }
    return true;
  };
  std::optional<SpecCounters> spec_before = warmup ? std::nullopt : ScrapeSpec();
  std::vector<client::ChatResponse> out = client_.RunChats(calls, hooks, stop_);
  if (limits.start_until) {
    std::erase_if(out, [](const client::ChatResponse& r) {
      return r.send_ns == 0 && r.reason == client::kNotStartedReason;
    });
  }
  last_self_check_.reset();
  if (!warmup && !event_delay.empty()) {
    const ClientCheck check = CheckClient(out, event_delay, client_bound_ms_);
    // "c64" of a level's "c64 stream 1", "c64 stream 2", ...; a lone request's whole label.
    std::string what = labels.empty() ? "" : labels.front();
    if (labels.size() > 1) {
      what = what.substr(0, what.find(' '));
    }
    NoteClientBound(what, check.reasons);
    last_self_check_ = std::make_shared<const json>(check.json);
  }
  last_window_ = SpecWindow{};
  if (spec_before) {
    if (auto spec_after = ScrapeSpec()) {
      last_window_.Add(*spec_before, *spec_after);
      spec_total_.Add(*spec_before, *spec_after);
      // Traffic that is not ours makes every server-side counter (and speed) suspect.
      if (spec_before->requests_running.value_or(0) > 0) {
        Warn(
            fmt::format("The server was already running {:.0f} request(s) that were not ours "
                        "when a measurement began: speed and speculative-decoding figures may "
                        "include other traffic.",
                        *spec_before->requests_running));
      }
      if (spec_before->requests_finished && spec_after->requests_finished &&
          *spec_after->requests_finished - *spec_before->requests_finished >
              static_cast<double>(calls.size())) {
        Warn(
            "The server finished more requests during a measurement window than servebench "
            "sent: speculative-decoding figures include other traffic.");
      }
    }
  }
  if (!warmup && !spec_before) {
    // No Prometheus counters: llama.cpp reports drafted/accepted tokens per response.
    for (const auto& r : out) {
      if (AddTimingsDrafts(r.timings_json, last_window_)) {
        AddTimingsDrafts(r.timings_json, spec_total_);
      }
    }
  }
  if (!warmup) {
    // Wall time counts the time requests were in flight: for requests sent together, from the
    // first send to the last token of any of them (never the sum of overlapping requests).
    std::int64_t first_send = 0, last_token = 0;
    long long batch_tokens = 0;
    for (const auto& r : out) {
      if (r.outcome == client::Outcome::kCancelled && r.send_ns == 0) {
        continue;  // never sent (interrupted): not a measured request
      }
      RequestMetrics m = ComputeMetrics(r);
      ++requests_;
      // A server that stopped answering (refused, or frozen: no byte at all) ends the run; a
      // reset stream or an error from a live server is an ordinary failure (ServerWatch).
      ObserveResponse(r);
      if (r.outcome == client::Outcome::kCancelled) {
        ++interrupted_;  // sent, then cut short by a stop (Ctrl-C): not the server's failure
        continue;
      }
      if (r.outcome != client::Outcome::kOk) {
        ++failed_;
        continue;  // a failed request contributes no tokens and no time
      }
      completion_tokens_ += m.completion_tokens;
      batch_tokens += m.completion_tokens;
      if (first_send == 0 || r.send_ns < first_send) {
        first_send = r.send_ns;
      }
      if (!r.events.empty()) {
        last_token = std::max(last_token, r.events.back().t_ns);
      }
      if (CameAsOneBody(r)) {
        Warn(
            "The server ignored stream=true and answered with one JSON body: no TTFT, decode "
            "speed or throughput can be measured from such answers, so they are left out.");
      }
      if (r.invalid_utf8) {
        Warn("The server sent text that is not valid UTF-8; the invalid bytes were replaced.");
      }
      if (m.tokens_estimated && !r.events.empty()) {
        Warn(
            "Some completion token counts are estimated (the server sent no usage); "
            "tok/s figures from those requests count streamed chunks, not tokens.");
      }
    }
    if (last_token > first_send && first_send != 0) {
      wall_time_s_ += static_cast<double>(last_token - first_send) / 1e9;
    }
    ObserveWindow(first_send, last_token, batch_tokens, !out.empty() && out.front().replayed);
  }
  return out;
}

std::chrono::milliseconds Session::AuxLimit(std::chrono::milliseconds usual) const {
  return request_timeout_.count() > 0 ? std::min(usual, request_timeout_) : usual;
}

void Session::ObserveResponse(const client::ChatResponse& r) {
  if (watch_.Observe(r)) {
    Warn(fmt::format("The server stopped answering: {}; the remaining requests were not sent.",
                     watch_.reason()));
  }
}

std::optional<SpecCounters> Session::ScrapeSpec() {
  if (!scrape_spec_) {
    return std::nullopt;
  }
  auto resp = client_.Get("/metrics", AuxLimit(std::chrono::milliseconds(10'000)));
  if (!resp || resp->status != 200) {
    scrape_spec_ = false;
    return std::nullopt;
  }
  // Some servers answer /metrics with JSON (their own stats, or an error object): that is not
  // the Prometheus text format, and not a problem worth a warning in every run.
  const auto first = resp->body.find_first_not_of(" \t\r\n");
  if (resp->content_type.find("json") != std::string::npos ||
      (first != std::string::npos && (resp->body[first] == '{' || resp->body[first] == '['))) {
    scrape_spec_ = false;
    return std::nullopt;
  }
  auto samples = ParsePrometheus(resp->body);
  if (!samples) {
    Warn(samples.error().message);
    scrape_spec_ = false;
    return std::nullopt;
  }
  auto counters = ReadSpecCounters(samples.value());
  if (!counters) {
    scrape_spec_ = false;  // no speculative decoding on this server
  }
  return counters;
}

void Session::ObserveWindow(std::int64_t begin_ns, std::int64_t end_ns, long long output_tokens,
                            bool replayed) {
  last_resources_.reset();
  if (window_observer_ && !replayed && begin_ns != 0 && end_ns > begin_ns) {
    json r = window_observer_(begin_ns, end_ns, output_tokens);
    if (!r.is_null()) {
      last_resources_ = std::make_shared<const json>(std::move(r));
    }
  }
}

void Session::AttachResources(json& row) const {
  if (last_resources_) {
    row["resources"] = *last_resources_;
  }
  AttachSelfCheck(row);
}

void Session::AttachSelfCheck(json& row) const {
  if (last_self_check_) {
    row["self_check"] = *last_self_check_;
  }
}

json Session::SpecDecode() const {
  return SpecJson(spec_total_);
}

void Session::WarmUp(const ProfileOptions& options) {
  while (warmups_done_ < options.warmup && !Halted()) {
    ++warmups_done_;
    auto r = Execute({Params(options, "Say hello.", 16, false)}, "warmup",
                     {fmt::format("warm-up {}", warmups_done_)});
    if (r.front().outcome != client::Outcome::kOk && on_progress_) {
      on_progress_(fmt::format("warm-up request failed: {}", r.front().reason));
    }
  }
}

namespace {

// Appends the record of each response to `rows`; returns the number of failed requests. A
// request a stop (Ctrl-C) cut short is recorded ("cancelled") but is not a failure: the summary
// counts it as interrupted.
int CollectRows(const std::vector<client::ChatResponse>& rs, json& rows,
                const std::function<json(const client::ChatResponse&)>& record) {
  int errors = 0;
  for (const auto& r : rs) {
    if (r.outcome == client::Outcome::kCancelled && r.send_ns == 0) {
      continue;
    }
    rows.push_back(record(r));
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
  for (int n : options.levels) {
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
    int errors = CollectRows(
        rs, rows, [&](const auto& x) { return Record(x, "concurrency", labels[idx++], false); });
    std::vector<double> per_stream, ttft;
    std::int64_t first_send = 0, last_token = 0;
    int ok = 0;
    for (const auto& r : rs) {
      RequestMetrics m = ComputeMetrics(r);
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
                  {"throughput_tok_s", Opt(throughput)},
                  {"per_stream_decode_tok_s", StatsJson(per_stream)},
                  {"ttft_ms", StatsJson(ttft)},
                  {"peak_in_flight", PeakInFlight(rs)},
                  {"requests", rows}};
    if (!last_window_.empty()) {
      level["spec_decode"] = SpecJson(last_window_);
    }
    AttachResources(level);
    if (on_progress_) {
      // Failures first: a figure from the streams that succeeded must not hide the rest. Counts
      // are of the requests sent (a closed loop sends more than its N streams).
      const auto sent = static_cast<long long>(rows.size());
      const char* what = closed_loop ? "requests" : "streams";
      on_progress_(errors > 0
                       ? fmt::format("concurrency {}: {} of {} {} failed ({:.0f}%; first: {}); {} "
                                     "tok/s combined over the {} that finished",
                                     n, errors, sent, what, sent > 0 ? 100.0 * errors / sent : 0.0,
                                     FirstFailure(rs),
                                     throughput ? FixedGrouped(*throughput, 1) : "no figure", ok)
                       : fmt::format("concurrency {}: {}/{} {} ok, {} tok/s combined", n, ok, sent,
                                     what, throughput ? FixedGrouped(*throughput, 1) : "n/a"));
    }
    levels.push_back(std::move(level));
  }
  json out = {{"tokens", options.tokens}, {"levels", levels}};
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
  for (int len : options.lengths) {
    if (Halted()) {
      break;
    }
    json runs = json::array();
    std::vector<double> wall, tok_s, decode;
    int errors = 0;
    std::string first_failure;
    for (int i = 0; i < options.length_runs && !Halted(); ++i) {
      std::string label = fmt::format("{} tokens run {}", len, i + 1);
      auto rs = Execute({Params(options, kDecodePrompt, len, true)}, "max_tokens", {label});
      errors += CollectRows(rs, runs,
                            [&](const auto& x) { return Record(x, "max_tokens", label, false); });
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
    lengths.push_back(json{{"max_tokens", len},
                           {"runs", runs},
                           {"wall_s", StatsJson(wall)},
                           {"tok_s", StatsJson(tok_s)},
                           {"decode_tok_s", StatsJson(decode)},
                           {"errors", errors}});
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
                           {"prompt_tokens", OptInt(prompt_tokens)},
                           {"runs", runs},
                           {"ttft_ms", StatsJson(ttft)},
                           {"errors", errors}});
  }
  return json{{"max_tokens", options.ttft_max_tokens}, {"prompts", prompts}};
}

void Session::NoteClientBound(const std::string& what, const std::vector<std::string>& reasons) {
  ++client_bound_.checked;
  if (!reasons.empty()) {
    client_bound_.flagged.push_back(what);
    if (client_bound_.first_reasons.empty()) {
      client_bound_.first_reasons = reasons;
    }
  }
}

void Session::WarnClientBound(const std::string& profile) {
  ClientBoundNotes notes = std::exchange(client_bound_, ClientBoundNotes{});
  if (notes.flagged.empty()) {
    return;
  }
  std::vector<std::string> shown(
      notes.flagged.begin(),
      notes.flagged.begin() + static_cast<long>(std::min<std::size_t>(notes.flagged.size(), 8)));
  if (notes.flagged.size() > shown.size()) {
    shown.push_back(fmt::format("+{} more", notes.flagged.size() - shown.size()));
  }
  Warn(fmt::format(
      "{}: the client, not the server, may be the bottleneck in {} of {} measured batch{} ({}; "
      "{}: {}): the client's own delays are a material share of the measured figures. Run the "
      "client on its own cores or lower the load.",
      profile, notes.flagged.size(), notes.checked, notes.checked == 1 ? "" : "es",
      fmt::join(shown, ", "), notes.flagged.front(), fmt::join(notes.first_reasons, "; ")));
}

json Session::Run(std::string_view name, const ProfileOptions& options) {
  if (const ProfileSpec* p = FindProfile(name)) {
    return Run(p->id, options);
  }
  const std::string text =
      fmt::format("unknown profile '{}' (available: {})", name, ProfileNameList());
  Warn(text);
  return json{{"error", text}};
}

json Session::Run(ProfileId id, const ProfileOptions& options) {
  request_timeout_ = options.request_timeout;
  if (options.first_byte_timeout.count() > 0) {
    first_byte_limit_ = options.first_byte_timeout;
  }
  client_bound_ms_ = options.client_bound_ms;
  client_bound_ = ClientBoundNotes{};
  dataset_active_ =
      options.dataset.loaded && (id == ProfileId::kConcurrency || id == ProfileId::kRate);
  dataset_sent_ = dataset_wraps_ = 0;
  StartDataset(options);
  auto run = [&]() -> json {
    switch (id) {
      case ProfileId::kDecode:
        return Decode(options);
      case ProfileId::kConcurrency:
        return Concurrency(options);
      case ProfileId::kMaxTokens:
        return MaxTokens(options);
      case ProfileId::kTtft:
        return Ttft(options);
      case ProfileId::kContext:
        return Context(options);
      case ProfileId::kRate:
        return Rate(options);
      case ProfileId::kReplay:
        return Replay(options);
    }
    return json::object();  // unreachable: -Wswitch names a profile without a case
  };
  json out = run();
  if (dataset_active_ && out.is_object()) {
    out["dataset"] = DatasetJson(options);
  }
  dataset_active_ = false;
  WarnClientBound(std::string(Profile(id).name));  // once per profile, naming the rows
  return out;
}

json Session::Summary() const {
  json s = {
      {"total", 0},
      {"pass", 0},
      {"fail", 0},
      {"empty", 0},
      {"loop", 0},
      {"unsupported", 0},
      {"error", 0},
      {"timeout", 0},
      {"pass_rate", nullptr},
      {"effective_pass_rate", nullptr},
      {"requests", requests_},
      {"failed_requests", failed_},
      {"interrupted_requests", interrupted_},
      {"completion_tokens", completion_tokens_},
      {"wall_time_s", wall_time_s_},
      {"avg_tok_s", wall_time_s_ > 0 ? json(static_cast<double>(completion_tokens_) / wall_time_s_)
                                     : json(nullptr)}};
  return s;
}

}  // namespace sb::perf
