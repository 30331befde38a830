// The speed profiles of `servebench perf` (and of `servebench run` when no suite is given):
// decode, concurrency, max-tokens, ttft, and rate (open-loop load, rate.cpp). Each returns the
// JSON object documented in docs/results-schema.md (perf.<profile>) and streams every finished
// request to a sample sink.
// Requests run through client::Client; nothing here touches the wire.
// Thread safety: a Session is used from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "client/chat.h"
#include "client/http_client.h"
#include "core/profile_table.h"
#include "perf/dataset_load.h"
#include "perf/images.h"
#include "perf/prometheus.h"
#include "perf/replay.h"
#include "perf/request_record.h"
#include "perf/schedule.h"
#include "perf/server_watch.h"
#include "perf/sessions.h"
#include "perf/shared_prefix.h"
#include "workload/length.h"
#include "workload/prompt.h"

namespace sb::perf {

struct PointStats;   // everything measured at one rate (rate.cpp)
struct ReplayTally;  // counts over a replay's requests (replay.cpp)

// Service-level objectives of the rate profile, in ms; TTFT and E2E count from the scheduled
// send. Unset = not checked. A request is good iff it succeeded and meets every set objective.
struct Slo {
  std::optional<double> ttft_ms;
  std::optional<double> tpot_ms;
  std::optional<double> e2e_ms;

  bool empty() const { return !ttft_ms && !tpot_ms && !e2e_ms; }
};

// Open-loop load: the "rate" profile (docs/load.md).
struct RateOptions {
  std::vector<double> rates;  // req/s: one open-loop run per rate (the sweep)
  Arrival arrival = Arrival::kPoisson;
  double burstiness = 1.0;  // gamma shape (--arrival gamma); 1 = Poisson
  int requests = 100;       // requests per rate (unless duration_s > 0)
  double duration_s = 0;    // > 0: arrivals during this many seconds per rate
  std::uint64_t seed = 1;   // arrival pattern (the same at every rate)
  int tokens = 64;          // forced output tokens per request
  Slo slo;
  double slo_fraction = 0.99;                       // a rate meets the SLOs iff good / sent >= this
  std::optional<std::pair<double, double>> search;  // highest rate meeting the SLOs in [min, max]
  int search_steps = 6;                             // bisection probes after the two ends
  double late_ms = 1.0;  // a send this far behind its schedule counts as late
  // > 0: at most this many requests in flight (vLLM's --max-concurrency); an arrival finding
  // them all busy waits in the client, and that wait counts from the scheduled time.
  int max_concurrency = 0;
  // > 0: the first sweep point's schedule starts at this steady-clock time (ns) rather than at
  // once: the shards of one load start together (--start-at, docs/scale-out.md). A time already
  // past when the point is ready is ignored (the point starts at once) with a warning.
  std::int64_t start_at_ns = 0;
  // Each point also carries its exact histograms ("histograms"), which `servebench merge` adds
  // up; set for a shard (--shard), off otherwise (they are large).
  bool histograms = false;
  // Makes the extra clients max_concurrency needs (one per worker thread) for the server root.
  std::function<std::unique_ptr<client::Client>(const std::string& root)> new_client;
};

// "ttft_ms=500", "tpot_ms=50", "e2e_ms=2000" items (any subset) -> Slo; kUsage error otherwise.
Result<Slo> ParseSlo(const std::vector<std::string>& items);
// "MIN:MAX" (req/s, 0 < MIN < MAX) -> the pair; kUsage error otherwise.
Result<std::pair<double, double>> ParseRateRange(std::string_view text);
// kUsage error naming the bad option (the --flag spelling).
Result<void> ValidateRateOptions(const RateOptions& options);

struct ProfileOptions {
  int tokens = 256;          // forced output tokens (decode, concurrency)
  int runs = 3;              // repetitions (decode, ttft)
  int ttft_max_tokens = 16;  // output budget of a TTFT request
  int warmup = 1;            // warm-up requests per session (excluded)
  int gpus =
      0;  // --gpus: GPUs serving the model; the frontier's total is also per GPU (0: unknown)
  std::optional<bool> enable_thinking;  // chat_template_kwargs.enable_thinking
  std::optional<double> temperature;
  std::chrono::milliseconds request_timeout{0};  // per request total limit (0 = none)
  // The client's first-byte limit (--first-byte-timeout-s). The context profile scales it with
  // the prompt: limit × max(1, prompt tokens / 8,000), so a 128K prefill gets 16× the limit.
  std::chrono::milliseconds first_byte_timeout{0};
  RateOptions rate;          // the rate profile
  ReplayOptions replay;      // the replay profile (replay.h)
  SessionsOptions sessions;  // the sessions profile (sessions.h)
  ImageLoad images;          // images in decode, concurrency, rate and sessions prompts (images.h)
  // --dataset (dataset_load.h): concurrency and rate take their prompts from it.
  DatasetOptions dataset;
  // --allow-cache: no unique nonce at the start of each prompt (a server's prefix cache may then
  // serve repeated prompt text).
  bool allow_cache = false;
  // --shared-prefix GROUPS:TOKENS (shared_prefix.h): concurrency and rate prompts start with one
  // of GROUPS shared prefixes; groups 0 = off.
  SharedPrefix shared_prefix;
  // Context scaling (context.cpp): the answer budget, and whether to measure the prefix-cached
  // case too (each prompt sent a second time). Its sizes and depth, like the concurrency
  // levels and the max-tokens lengths, are table options (args below).
  int context_max_tokens = 16;
  bool context_cached = false;
  // > 0: every decode, concurrency and rate prompt is this many tokens by the server's own
  // tokenizer (filler text before the task; as the context profile counts). 0 = a short prompt.
  int input_tokens = 0;
  // Length distributions (docs/workloads.md "Length distributions"), for decode, concurrency and
  // rate: when set, each request's prompt size (exact to the server's tokenizer, as
  // input_tokens) and forced output length are drawn from these instead of input_tokens and
  // tokens / rate.tokens; clamped to the server's context. Seeded by rate.seed (input lengths)
  // and rate.seed + 1 (output lengths), one sequence per session, in request order.
  std::optional<workload::LengthSpec> input_lengths;
  std::optional<workload::LengthSpec> output_lengths;
  // Sustained closed loop for the concurrency profile (docs/load.md): keep each level's N
  // requests in flight until level_requests have been sent, or for level_duration_s seconds
  // (then at most level_requests, default 20 × N). Both 0 = one request per stream.
  int level_requests = 0;
  double level_duration_s = 0;
  // The values of the options the profile table declares (core/profile_table.h OptionSpec),
  // as given; a flag not given reads as the table's default.
  ProfileArgs args;
  // A batch is flagged client-bound when the client's event delay p99 (an event waiting in the
  // client between being read and being processed) exceeds this (rate: --late-ms).
  double client_bound_ms = 1.0;
};

// Sets the fields of o that the table's options feed (the load's shape: --tokens, --runs,
// --input-tokens ...; the rate, replay, sessions and dataset options, --shared-prefix,
// --context-cached) from o.args, for each flag given: a flag not given leaves its field as it
// is (its default is the table's). The older profiles' numbers (--levels, --sizes ...) are read
// from args by their runners. kUsage error naming the flag when a value's grammar is wrong
// (--slo, --search-rate, --shared-prefix, --input-tokens, --output-tokens,
// --turn-input-tokens, --think-ms). The ranges and choices were checked by CheckOption.
Result<void> ApplyProfileArgs(ProfileOptions& o);

// The profiles `run` executes by default, in the table's order (core/profile_table.h).
std::vector<std::string> DefaultProfileNames();

struct SessionTarget {
  std::string model;
  client::ServerKind kind = client::ServerKind::kUnknown;
  std::int64_t max_model_len = 0;  // 0 = unknown; caps the context profile
};

// Receives each finished request's record (samples.jsonl line) as soon as it finishes; by value,
// so a sink that keeps it (the run's sample writer) takes it without a copy, and typed, so the
// measuring thread never builds its JSON.
using SampleSink = std::function<void(Sample)>;
// Receives short human progress lines ("decode run 2/3: 199.1 tok/s").
using ProgressSink = std::function<void(const std::string&)>;
// Called after every measured batch (a decode run, a concurrency level, a rate point ...) with
// its window (first send -> last token of the requests that succeeded, steady-clock ns) and
// their output tokens; what it returns becomes the row's "resources" (docs/metrics.md). Not
// called for a batch replayed from the journal or one where nothing succeeded.
using WindowObserver = std::function<nlohmann::json(std::int64_t begin_ns, std::int64_t end_ns,
                                                    long long output_tokens)>;

// A closed-loop batch (the concurrency profile's --requests / --duration-s): at most
// max_in_flight at once (0 = all at once), none started at or after start_until. preconnect:
// the batch's connections are opened first, unmeasured (client::RunHooks::preconnect).
struct BatchLimits {
  std::size_t max_in_flight = 0;
  std::optional<SteadyTime> start_until;
  bool preconnect = false;
};

struct TurnFact;       // sessions_summary.h
struct SessionsTally;  // sessions_summary.h
struct Finished;       // a finished sessions request (sessions_run.cpp)

class Session {
 public:
  Session(client::Client& client, SessionTarget target, SampleSink on_sample,
          ProgressSink on_progress, std::stop_token stop, std::int64_t t0_ns);

  // Runs one profile (core/profile_table.h). By name: a name the table does not know is
  // answered {"error": "unknown profile ..."} and a warning, never another profile.
  nlohmann::json Run(ProfileId id, const ProfileOptions& options);
  nlohmann::json Run(std::string_view name, const ProfileOptions& options);

  nlohmann::json Decode(const ProfileOptions& options);
  nlohmann::json Concurrency(const ProfileOptions& options);
  nlohmann::json MaxTokens(const ProfileOptions& options);
  nlohmann::json Ttft(const ProfileOptions& options);
  nlohmann::json Context(const ProfileOptions& options);  // context.cpp
  // Open-loop load at each of options.rate.rates, then the SLO search if asked (docs/load.md).
  nlohmann::json Rate(const ProfileOptions& options);
  // Every request of a trace at its trace time (replay.h, replay.cpp).
  nlohmann::json Replay(const ProfileOptions& options);
  // Multi-turn conversations and agent loops (sessions.h, sessions_run.cpp).
  nlohmann::json Sessions(const ProfileOptions& options);

  // The results.json "summary" speed fields over every measured (non-warm-up) request so far.
  nlohmann::json Summary() const;

  // Problems a reader must know about (estimated token counts, failed requests ...).
  const std::vector<std::string>& warnings() const { return warnings_; }

  bool interrupted() const { return stop_.stop_requested(); }

  // True once the user stopped the run or the server stopped answering: no more requests.
  bool Halted() const { return stop_.stop_requested() || watch_.gone(); }

  // True once the server stopped answering (ServerWatch: requests in a row without any answer,
  // then a health probe without one).
  bool server_gone() const { return watch_.gone(); }

  // Why the server is judged gone (ServerWatch::reason), "" while it is not.
  const std::string& gone_reason() const { return watch_.reason(); }

  // Feeds a finished request of the run's (the suite runner's too) to the server watch; the
  // session warns when it shows the server gone. Every measured request of a profile is fed.
  void ObserveResponse(const client::ChatResponse& r);

  // The health probe of the server watch (default: GET /v1/models through the session's client,
  // within ServerWatch::ProbeLimit of the first-byte limit).
  void SetHealthProbe(ServerWatch::Probe probe) { watch_.SetProbe(std::move(probe)); }

  // Speculative-decoding acceptance over every measurement window so far (results.json
  // "spec_decode"), null when the server exposes no such counters.
  nlohmann::json SpecDecode() const;

  // The resource sampler's hook (set before the first profile runs).
  void SetWindowObserver(WindowObserver observer) { window_observer_ = std::move(observer); }

  // ---- For profile runners ---------------------------------------------------------------
  // A profile's runner is a Session method or, for a profile added since the table, a free
  // function in its own file that uses only what follows (docs/architecture.md "How to add").

  // The warm-up requests of options.warmup (excluded from results; once per session).
  void WarmUp(const ProfileOptions& options);
  // A streamed request of `prompt` with the session's model and sampling options; its first
  // line is a unique tag (a prefix cache cannot serve it) unless --allow-cache is set.
  client::ChatParams Params(const ProfileOptions& options, const std::string& prompt,
                            int max_tokens, bool force);
  // One measured batch: the requests sent together, each request's record to the sample sink
  // (labels[i] for params[i]), the session's totals, server counters and resources updated.
  // One unit of the run's journal: replayed whole on --resume.
  std::vector<client::ChatResponse> Execute(std::vector<client::ChatParams> params,
                                            const std::string& profile,
                                            const std::vector<std::string>& labels,
                                            const BatchLimits& limits = BatchLimits());
  // The record of `r` (samples.jsonl's line, and a row's "runs" item) with what the session
  // adds: the images it carried, and a load profile's workload fields (request_record.h).
  RequestRecord Record(const client::ChatResponse& r, const std::string& profile,
                       const std::string& label, bool warmup) const;
  // Adds the latest batch's "resources" to a row, when there are any.
  void AttachResources(nlohmann::json& row) const;
  // `head` followed by filler text, `tokens` tokens in all by the server's tokenizer (the chat
  // template's own tokens not counted when overhead >= 0 is what they are); the count reached,
  // -1 when the server has no tokenizer (the text is then an estimate).
  std::pair<std::string, int> FitText(const std::string& head, int tokens, std::uint64_t seed,
                                      int overhead);
  // The first-byte limit of the requests that follow, for a prompt of `prompt_tokens`: the
  // client's --first-byte-timeout-s × max(1, prompt_tokens / 8,000), as the context profile
  // scales it (a long prefill is not a frozen server); 0 = back to the client's own limit.
  void ScaleFirstByteLimit(const ProfileOptions& options, int prompt_tokens);
  // The chat template's tokens around one message's text, by the server's tokenizer; -1
  // without one.
  int TemplateOverhead();
  // A tag no other prompt of any session carries ("3f2a1c-7"): makes a text unique.
  std::string UniqueTag();
  // A line for the live progress ("prefix-cache 4000: 3.1× faster warm").
  void Progress(const std::string& line) const;
  // A problem the reader must know about (results.json "warnings"; each text once).
  void Warn(const std::string& text);

  const SessionTarget& target() const { return target_; }

  // Called inside the client's I/O loop after every streamed event of every profile; tests
  // use it to make the client the bottleneck (it must not call back into the Client).
  void SetEventHook(std::function<void(const client::ChatResponse&)> hook) {
    event_hook_ = std::move(hook);
  }

 private:
  // The latest batch's window through the observer (stored for AttachResources).
  void ObserveWindow(std::int64_t begin_ns, std::int64_t end_ns, long long output_tokens,
                     bool replayed);
  // The client-side self-check of the latest batch (Execute): event delay percentiles and
  // the client-bound verdict; attached to each row as "self_check".
  void AttachSelfCheck(nlohmann::json& row) const;
  // The server's token counter (context.cpp): chosen once per session.
  void ChooseCounter();
  std::optional<int> CountPromptTokens(const std::string& content);
  std::string CounterName() const;
  // Filler words w for which content_for(w) is `size` tokens (start from `words`, or a guess
  // when < 0); the count reached, nullopt without a tokenizer.
  std::pair<int, std::optional<int>> FitWords(int size, int words,
                                              const std::function<std::string(int)>& content_for);
  // A forced-length request whose prompt ends with `task`, options.input_tokens long when set.
  client::ChatParams LoadParams(const ProfileOptions& options, const std::string& task,
                                int max_tokens);
  // params with ProfileOptions::images added to its last message (images.h).
  client::ChatParams WithImages(client::ChatParams params) const;
  // Dataset prompts (dataset_load.cpp): the order for this profile, the next entry's request,
  // a ShareGPT reply's length in tokens, and the profile's "dataset" summary.
  void StartDataset(const ProfileOptions& options);
  client::ChatParams DatasetParams(const ProfileOptions& options, int max_tokens);
  int ReplyTokens(const std::string& reply);
  nlohmann::json DatasetJson(const ProfileOptions& options) const;
  // --shared-prefix (shared_prefix.cpp): puts the next group's prefix before `content`, and the
  // profile's "shared_prefix" summary.
  void ApplySharedPrefix(const ProfileOptions& options, std::string& content);
  nlohmann::json SharedPrefixJson(const ProfileOptions& options) const;
  // The sessions profile's scripts (sessions.cpp): the file's, or synthetic ones fitted to the
  // server's tokenizer; a text of `tokens` tokens after `head` and its count (-1: not counted).
  std::vector<SessionScript> SessionScripts(const ProfileOptions& options);
  RequestRecord SessionsRecord(const client::ChatResponse& r, const std::string& label, int turn,
                               int tool_round, int user_tokens, double think_ms,
                               std::size_t session, TurnFact& fact) const;
  // One finished sessions request: its record (to `records` and the sample sink) and its share
  // of `t`; true when the server is gone (the run halts).
  bool TakeSessionsTurn(const Finished& f, const std::vector<SessionScript>& scripts,
                        SessionsTally& t, std::vector<RequestRecord>& records);
  nlohmann::json RatePoint(const ProfileOptions& options, double rate_rps,
                           const std::string& phase);
  // A rate point's calls, bodies built and ids consecutive (rate.cpp).
  std::vector<client::ChatCall> RateCalls(const ProfileOptions& options, std::size_t n);
  // When a rate point's schedule starts: shortly from now, or --start-at for a shard's first.
  std::int64_t PointStart(const RateOptions& ro);
  // Adds a measured batch to the session's totals (results.json summary; its wall time runs
  // from the first successful send to the last token) and observes its resources window.
  void AddToTotals(long long sent, long long failed, long long ok, long long tokens,
                   std::int64_t ok_first_send, std::int64_t ok_last_token, bool replayed);
  // Adds a finished rate point to the session's totals, says whether the server is gone, and
  // warns about estimated counts and answers of another length than `tokens`.
  void TallyPoint(const PointStats& st, const std::vector<client::ChatResponse>& results,
                  bool wrong_length, int tokens);
  // The replay's calls (replay.cpp): each trace request's prompt, fitted to the server's
  // tokenizer, and the input length asked of each; ids consecutive.
  std::vector<client::ChatCall> ReplayCalls(const ProfileOptions& options, const ReplayOptions& ro,
                                            std::vector<int>& asked_input);

  // A trace request's prompt of `input` tokens whose leading blocks follow its hash ids
  // (replay.cpp); `tokens_per_word` carries what the server's tokenizer showed from one prompt
  // to the next. `tokens`: the count reached (kMissed), the shortest prompt (kTooShort).
  struct BlockFit {
    enum Outcome { kExact, kMissed, kTooShort, kUncounted };

    std::string text;
    Outcome outcome = kUncounted;
    int tokens = -1;
  };

  BlockFit FitBlockPrompt(std::span<const std::int64_t> hash_ids, int input, int block_tokens,
                          const workload::PromptShape& shape, std::uint64_t seed,
                          double& tokens_per_word);
  // Adds a finished replay to the session's totals; notes a send lag p99 above late_ms.
  void TallyReplay(const ReplayTally& t, const std::vector<client::ChatResponse>& results,
                   double late_ms);
  // The client-bound self-check of each measured batch, said once per profile by Run();
  // `sim_reasons`: the simulator measured was itself behind (ClientCheck::sim_reasons).
  void NoteClientBound(const std::string& what, const std::vector<std::string>& reasons,
                       const std::vector<std::string>& sim_reasons = {});
  void WarnClientBound(const std::string& profile);
  // An auxiliary request's limit: `usual`, or --request-timeout-s when that is shorter.
  std::chrono::milliseconds AuxLimit(std::chrono::milliseconds usual) const;

  // What one GET /metrics says: speculative-decoding and prefix-cache counters, each nullopt
  // when the server has none (after a scrape with neither, scraping stops for the session).
  struct ServerCounters {
    std::optional<SpecCounters> spec;
    std::optional<PrefixCacheCounters> cache;
  };

  ServerCounters ScrapeCounters();
  // Around every measured batch: the counters before it, then last_window_ (and spec_total_)
  // and last_cache_window_ from the difference after it. `sent` is how many requests the batch
  // sent (more finished on the server means traffic that is not ours).
  ServerCounters BeginWindow();
  void EndWindow(const ServerCounters& before, std::size_t sent);
  // Adds the last window's prefix-cache figures to row["cache"] as "server_metrics" (when the
  // server counted any prompt token in it).
  void AttachCacheWindow(nlohmann::json& row) const;

  client::Client& client_;
  SessionTarget target_;
  SampleSink on_sample_;
  ProgressSink on_progress_;
  std::stop_token stop_;
  std::int64_t t0_ns_;
  std::uint64_t next_id_ = 1;
  std::uint64_t nonce_ = 0;      // makes every prompt unique (defeats prefix caching) ...
  std::uint64_t session_nonce_;  // ... across invocations too (random per session)
  std::chrono::milliseconds request_timeout_{0};      // ProfileOptions::request_timeout of Run()
  std::chrono::milliseconds first_byte_override_{0};  // set around a long context prompt
  ServerWatch watch_;
  // The client's first-byte limit (ProfileOptions::first_byte_timeout of Run()), for the probe.
  std::chrono::milliseconds first_byte_limit_{60'000};
  int warmups_done_ = 0;
  bool first_point_started_ = false;  // RateOptions::start_at_ns applies to the first point only
  // Totals over measured requests, for Summary().
  long long requests_ = 0, failed_ = 0, completion_tokens_ = 0;
  long long interrupted_ = 0;  // sent, then cut short by a stop
  double wall_time_s_ = 0;
  // Speculative decoding: scraped around every measured batch (docs/metrics.md).
  bool scrape_metrics_ = true;
  SpecWindow spec_total_;
  SpecWindow last_window_;  // the latest measured batch's window (empty if not scraped)
  // The latest measured batch's prefix-cache window (PrefixCacheWindowJson), or null.
  std::shared_ptr<const nlohmann::json> last_cache_window_;
  WindowObserver window_observer_;
  std::shared_ptr<const nlohmann::json> last_resources_;  // the latest batch's, or null
  std::vector<std::string> warnings_;
  std::function<void(const client::ChatResponse&)> event_hook_;
  double client_bound_ms_ = 1.0;  // ProfileOptions::client_bound_ms of Run()
  std::shared_ptr<const nlohmann::json> last_self_check_;  // the latest batch's
  ImageLoad images_;  // ProfileOptions::images of Run(): records say what a request carried

  struct ClientBoundNotes {
    int checked = 0;                         // measured batches checked in this profile
    std::vector<std::string> flagged;        // their labels ("c64", "rate 4 req/s")
    std::vector<std::string> first_reasons;  // the first flagged batch's reasons
    std::vector<std::string> sim_behind;     // labels of batches whose simulator was behind
    std::vector<std::string> first_sim_reasons;
  };

  ClientBoundNotes client_bound_;
  // The token counter (context.cpp): -1 until chosen.
  int count_mode_ = -1;
  int template_overhead_ = 0;
  double tokens_per_word_ = 1.3;
  std::map<int, int> fit_words_;  // --input-tokens size -> filler words that fitted last
  // The length samplers of ProfileOptions::input_lengths / output_lengths (made on first use).
  std::unique_ptr<workload::LengthSampler> input_sampler_, output_sampler_;
  // --dataset: whether the running profile reads it, its order, the next draw, and counts.
  bool dataset_active_ = false;
  std::vector<std::size_t> dataset_order_;
  std::size_t dataset_next_ = 0;
  long long dataset_sent_ = 0, dataset_wraps_ = 0, dataset_estimated_ = 0;
  std::optional<int> reply_base_;  // the template's tokens around a reply; -1 = no tokenizer
  // --shared-prefix: whether the running profile reads it, the next request's turn, each
  // group's text and token count (-1: not counted), and the group of the latest request.
  bool prefix_active_ = false;
  std::size_t prefix_next_ = 0;
  std::vector<std::string> prefix_texts_;
  std::vector<int> prefix_counts_;
  int last_prefix_group_ = -1;
  // The prefix group (1-based) of each call sent with one, by call id: its record's class.
  std::unordered_map<std::uint64_t, int> prefix_group_by_id_;
  // Notes the group of `params`' prefix (its first message starts with the group's head) for
  // the call `id`; nothing when --shared-prefix is off.
  void NotePrefixGroup(std::uint64_t id, const client::ChatParams& params);
  // Counts a measured batch's requests, failures and tokens, adds the time it was in flight to
  // the wall time, warns about answers that cannot be measured as they should.
  void AccountBatch(const std::vector<client::ChatResponse>& out);
};

// What perf keeps of one request (docs/bounds.md): a stream is stopped past
// kStreamTokensFactor x max_tokens + kStreamTokensMargin tokens (a server that ignores
// max_tokens), and answer text past kKeptBytesPerToken x max_tokens + kKeptBytesMargin bytes is
// not kept (token counts and timestamps are). Sets call's max_stream_tokens and keep_text_bytes.
inline constexpr std::int64_t kStreamTokensFactor = 4;
inline constexpr std::int64_t kStreamTokensMargin = 16;
inline constexpr std::size_t kKeptBytesPerToken = 16;
inline constexpr std::size_t kKeptBytesMargin = 4096;
void BoundStream(client::ChatCall& call, int max_tokens);

// Serialises a statistics object {"n","min","median","mean","max","p50","p90","p99","stddev",
// "values"}; an empty series is {"n": 0}.
nlohmann::json StatsJson(const std::vector<double>& values);
// The same without "values": for summaries whose raw series is elsewhere (the request records).
nlohmann::json SummaryStatsJson(const std::vector<double>& values);

// Adds a llama.cpp response's `timings.draft_n` / `draft_n_accepted` to window (servers without
// speculative-decoding counters in /metrics). Returns false when the timings carry no drafts.
bool AddTimingsDrafts(const std::string& timings_json, SpecWindow& window);

// Prompt tokens the server served from its prefix cache: usage.prompt_tokens_details.
// cached_tokens (vLLM, SGLang), else llama.cpp's timings.cache_n; -1 when the server says nothing.
int CachedPromptTokens(const client::ChatResponse& r);

// The first-byte limit for a prompt of `prompt_tokens`: base × max(1, prompt_tokens / 8,000).
std::chrono::milliseconds ScaledFirstByteTimeout(std::chrono::milliseconds base, int prompt_tokens);

// A deterministic English filler text of about `words` words (for long prompts).
std::string FillerText(int words, std::uint64_t seed);

}  // namespace sb::perf
