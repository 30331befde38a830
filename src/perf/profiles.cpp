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
#include "perf/frontier.h"
#include "perf/histogram.h"
#include "perf/metrics.h"
#include "perf/self_check.h"
#include "perf/tails.h"

namespace sb::perf {

using nlohmann::json;

namespace {

std::int64_t NowNs() {
  return ToNanos(std::chrono::steady_clock::now());
}

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

int Session::TemplateOverhead() {
  // "x" is one token on every tokenizer seen.
  const std::optional<int> one = CountPromptTokens("x");
  return one ? std::max(0, *one - 1) : -1;
}

void Session::ScaleFirstByteLimit(const ProfileOptions& options, int prompt_tokens) {
  first_byte_override_ = prompt_tokens > 0
                             ? ScaledFirstByteTimeout(options.first_byte_timeout, prompt_tokens)
                             : std::chrono::milliseconds(0);
}

std::string Session::UniqueTag() {
  return fmt::format("{:x}-{}", session_nonce_, ++nonce_);
}

void Session::Progress(const std::string& line) const {
  if (on_progress_) {
    on_progress_(line);
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

RequestRecord Session::Record(const client::ChatResponse& r, const std::string& profile,
                              const std::string& label, bool warmup) const {
  RequestRecord rec = MakeRecord(r, profile, label, t0_ns_, warmup);
  if (images_.per_request > 0 && (profile == "decode" || profile == "concurrency" ||
                                  profile == "rate" || profile == "sessions")) {
    rec.images = images_.per_request;  // images.h: what each such request carried
    rec.image_bytes = images_.bytes;
  }
  if (profile == "concurrency" || profile == "rate") {
    // The workload fields every load record carries (docs/workloads.md): the server's counts,
    // cached prompt tokens as the server reports them, the schedule (a closed loop's request is
    // scheduled when it is sent) and the request's class.
    RequestRecord::Workload& w = rec.workload.emplace();
    w.input_tokens = r.usage.prompt_tokens > 0 ? r.usage.prompt_tokens : -1;
    w.output_tokens = rec.ok() && rec.completion_tokens ? *rec.completion_tokens : -1;
    w.cached_tokens = CachedPromptTokens(r);
    w.sent_ms = rec.sent_at_ms;
    w.scheduled_ms = rec.scheduled_at_ms ? rec.scheduled_at_ms : rec.sent_at_ms;
    w.cls = dataset_active_ ? "dataset" : prefix_active_ ? "shared-prefix" : "synthetic";
    if (const auto g = prefix_group_by_id_.find(r.id); g != prefix_group_by_id_.end()) {
      w.cls = fmt::format("{}shared-prefix:{}", dataset_active_ ? "dataset/" : "", g->second);
    }
  }
  return rec;
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
    NotePrefixGroup(call.id, p);
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
      on_sample_(Sample{Record(r, profile, labels[r.id - first_id], warmup), nullptr});
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
  const ServerCounters before = warmup ? ServerCounters{} : BeginWindow();
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
    NoteClientBound(what, check.reasons, check.sim_reasons);
    last_self_check_ = std::make_shared<const json>(check.json);
  }
  EndWindow(before, calls.size());  // a warm-up only clears the last window
  if (!warmup && !before.spec) {
    // No Prometheus counters: llama.cpp reports drafted/accepted tokens per response.
    for (const auto& r : out) {
      if (AddTimingsDrafts(r.timings_json, last_window_)) {
        AddTimingsDrafts(r.timings_json, spec_total_);
      }
    }
  }
  if (!warmup) {
    AccountBatch(out);
  }
  return out;
}

void Session::AccountBatch(const std::vector<client::ChatResponse>& out) {
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

std::chrono::milliseconds Session::AuxLimit(std::chrono::milliseconds usual) const {
  return request_timeout_.count() > 0 ? std::min(usual, request_timeout_) : usual;
}

void Session::ObserveResponse(const client::ChatResponse& r) {
  if (images_.per_request > 0) {
    if (auto refused = ImageRefusal(r)) {
      Warn(*refused);
    }
  }
  if (watch_.Observe(r)) {
    Warn(fmt::format("The server stopped answering: {}; the remaining requests were not sent.",
                     watch_.reason()));
  }
}

Session::ServerCounters Session::ScrapeCounters() {
  if (!scrape_metrics_) {
    return {};
  }
  auto resp = client_.Get("/metrics", AuxLimit(std::chrono::milliseconds(10'000)));
  if (!resp || resp->status != 200) {
    scrape_metrics_ = false;
    return {};
  }
  // Some servers answer /metrics with JSON (their own stats, or an error object): that is not
  // the Prometheus text format, and not a problem worth a warning in every run.
  const auto first = resp->body.find_first_not_of(" \t\r\n");
  if (resp->content_type.find("json") != std::string::npos ||
      (first != std::string::npos && (resp->body[first] == '{' || resp->body[first] == '['))) {
    scrape_metrics_ = false;
    return {};
  }
  auto samples = ParsePrometheus(resp->body);
  if (!samples) {
    Warn(samples.error().message);
    scrape_metrics_ = false;
    return {};
  }
  ServerCounters c{ReadSpecCounters(samples.value()), ReadPrefixCacheCounters(samples.value())};
  if (!c.spec && !c.cache) {
    scrape_metrics_ = false;  // neither speculative decoding nor a prefix cache to count
  }
  return c;
}

Session::ServerCounters Session::BeginWindow() {
  return ScrapeCounters();
}

void Session::EndWindow(const ServerCounters& before, std::size_t sent) {
  last_window_ = SpecWindow{};
  last_cache_window_.reset();
  if (!before.spec && !before.cache) {
    return;
  }
  const ServerCounters after = ScrapeCounters();
  if (before.cache && after.cache) {
    json w = PrefixCacheWindowJson(*before.cache, *after.cache);
    if (!w.is_null()) {
      last_cache_window_ = std::make_shared<const json>(std::move(w));
    }
  }
  if (!before.spec || !after.spec) {
    return;
  }
  const SpecCounters& spec_before = *before.spec;
  const SpecCounters& spec_after = *after.spec;
  last_window_.Add(spec_before, spec_after);
  spec_total_.Add(spec_before, spec_after);
  // Traffic that is not ours makes every server-side counter (and speed) suspect.
  if (spec_before.requests_running.value_or(0) > 0) {
    Warn(
        fmt::format("The server was already running {:.0f} request(s) that were not ours "
                    "when a measurement began: speed and speculative-decoding figures may "
                    "include other traffic.",
                    *spec_before.requests_running));
  }
  if (spec_before.requests_finished && spec_after.requests_finished &&
      *spec_after.requests_finished - *spec_before.requests_finished > static_cast<double>(sent)) {
    Warn(
        "The server finished more requests during a measurement window than servebench "
        "sent: speculative-decoding figures include other traffic.");
  }
}

void Session::AddToTotals(long long sent, long long failed, long long ok, long long tokens,
                          std::int64_t ok_first_send, std::int64_t ok_last_token, bool replayed) {
  requests_ += sent;
  failed_ += failed;
  completion_tokens_ += tokens;
  if (ok > 0 && ok_last_token > ok_first_send) {
    wall_time_s_ += static_cast<double>(ok_last_token - ok_first_send) / 1e9;
  }
  ObserveWindow(ok > 0 ? ok_first_send : 0, ok_last_token, tokens, replayed);
}

void Session::AttachCacheWindow(json& row) const {
  if (!last_cache_window_ || !row.contains("cache") || !row["cache"].is_object()) {
    return;
  }
  const json& w = *last_cache_window_;
  if (w.contains("share") && w["share"].is_null()) {
    return;  // nothing looked up in this window (a batch replayed from the journal)
  }
  row["cache"]["server_metrics"] = w;
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

void Session::NoteClientBound(const std::string& what, const std::vector<std::string>& reasons,
                              const std::vector<std::string>& sim_reasons) {
  ++client_bound_.checked;
  if (!reasons.empty()) {
    client_bound_.flagged.push_back(what);
    if (client_bound_.first_reasons.empty()) {
      client_bound_.first_reasons = reasons;
    }
  }
  if (!sim_reasons.empty()) {
    client_bound_.sim_behind.push_back(what);
    if (client_bound_.first_sim_reasons.empty()) {
      client_bound_.first_sim_reasons = sim_reasons;
    }
  }
}

namespace {

// At most 8 labels, then "+N more".
std::vector<std::string> FirstLabels(const std::vector<std::string>& labels) {
  std::vector<std::string> shown(
      labels.begin(), labels.begin() + static_cast<long>(std::min<std::size_t>(labels.size(), 8)));
  if (labels.size() > shown.size()) {
    shown.push_back(fmt::format("+{} more", labels.size() - shown.size()));
  }
  return shown;
}

}  // namespace

void Session::WarnClientBound(const std::string& profile) {
  ClientBoundNotes notes = std::exchange(client_bound_, ClientBoundNotes{});
  if (!notes.sim_behind.empty()) {
    Warn(fmt::format(
        "{}: the simulator was itself behind its schedule in {} of {} measured batch{} ({}; "
        "{}: {}): those figures include the simulator's own lateness, not only the client's and "
        "the modelled server's. Give `servebench sim` more event loops (--threads) on cores of "
        "its own, or lower the load.",
        profile, notes.sim_behind.size(), notes.checked, notes.checked == 1 ? "" : "es",
        fmt::join(FirstLabels(notes.sim_behind), ", "), notes.sim_behind.front(),
        fmt::join(notes.first_sim_reasons, "; ")));
  }
  if (notes.flagged.empty()) {
    return;
  }
  const std::vector<std::string> shown = FirstLabels(notes.flagged);
  Warn(fmt::format(
      "{}: the client, not the server, may be the bottleneck in {} of {} measured batch{} ({}; "
      "{}: {}): the client's own delays are a material share of the measured figures. Run the "
      "client on its own cores or lower the load.",
      profile, notes.flagged.size(), notes.checked, notes.checked == 1 ? "" : "es",
      fmt::join(shown, ", "), notes.flagged.front(), fmt::join(notes.first_reasons, "; ")));
}

// The runners of the profiles added since the table, each in its own file.
json RunPrefixCache(Session& s, const ProfileOptions& options);  // prefix_cache.cpp

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
  images_ = options.images;
  dataset_active_ =
      options.dataset.loaded && (id == ProfileId::kConcurrency || id == ProfileId::kRate);
  dataset_sent_ = dataset_wraps_ = 0;
  prefix_active_ =
      options.shared_prefix.groups > 0 && (id == ProfileId::kConcurrency || id == ProfileId::kRate);
  prefix_next_ = 0;
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
      case ProfileId::kSessions:
        return Sessions(options);
      case ProfileId::kPrefixCache:
        return RunPrefixCache(*this, options);
    }
    return json::object();  // unreachable: -Wswitch names a profile without a case
  };
  json out = run();
  if (dataset_active_ && out.is_object()) {
    out["dataset"] = DatasetJson(options);
  }
  dataset_active_ = false;
  if (prefix_active_ && out.is_object()) {
    out["shared_prefix"] = SharedPrefixJson(options);
  }
  prefix_active_ = false;
  prefix_group_by_id_.clear();
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
