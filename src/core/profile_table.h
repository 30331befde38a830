// The speed profiles, each registered once (the way ninja lists its tools in one table): the
// name users type and every output shows, the key of its section in results.json, the rows it
// writes there, the flags only it reads, and whether `run` runs it by default. Everything that
// names a profile reads this table: perf's dispatch, the plan's checks, `--help`, completion,
// the suite runner, the CSV export, the resource rows and the store. An unknown name is an
// error wherever one is given. How to add a profile: docs/architecture.md.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sb {

enum class ProfileId {
  kDecode,
  kConcurrency,
  kMaxTokens,
  kTtft,
  kContext,
  kRate,
  kReplay,
  kSessions,
  kPrefixCache,
};

// One metric of a profile's rows, for the writers that render any profile from its rows alone
// (report.md's and report.html's generic sections, compare's rows): the row's field holds a
// statistics object ({"median", "p99", "n", ...}; the median is shown) or a plain number.
struct MetricSpec {
  std::string_view field;  // "warm_ttft_ms"
  std::string_view label;  // "TTFT warm": a column header, a series' name
  std::string_view unit;   // "ms", "tok/s", "x" (a ratio), "tokens", "%" (a fraction 0..1)
  int better = 0;          // +1: higher is better, -1: lower is, 0: neither (no verdict)
};

// A flag that only some profiles read, declared here and registered by the CLI for every
// command that runs profiles: its value arrives in ProfileOptions::args (ProfileArgs below),
// so a new profile's flags need no code in src/cli. A flag several profiles read (--tokens,
// --dataset, --arrival) is listed in each one's option array, with the same declaration, so
// the table knows every profile that reads it. Flags every profile reads, or other code too
// (--warmup, --seed, --late-ms, --allow-cache, the target's), are the CLI's own.
struct OptionSpec {
  enum Kind {
    kNumber,   // one number in [min, max]
    kNumbers,  // numbers: "1,2,4" (or "1 2 4", or the flag given again)
    kText,     // one text value, its grammar checked by the profile that reads it
    kTexts,    // text items, as kNumbers ("ttft_ms=500,tpot_ms=50")
    kChoice,   // one of `choices`
    kFlag,     // no value: on when given
  };

  std::string_view flag;  // "--prefix-hits"
  Kind kind = kNumber;
  std::string_view default_value;  // as the user would type it: "3", "1000,4000"; "" = none
  double min = 0;                  // every number must lie in [min, max] ...
  double max = 1e9;
  bool integer = true;  // ... and be a whole number when set
  std::string_view help;
  std::string_view choices = {};  // kChoice: "poisson,constant,gamma"
  bool min_open = false;          // min itself is out: (min, max]
};

struct ProfileSpec {
  ProfileId id;
  // The one spelling on the command line, in reports, the CSV export and the store
  // ("max-tokens").
  std::string_view name;
  // Its section of results.json, perf.<key>: "max_tokens" for max-tokens (results.json schema
  // 1 spelled it so; the schema is kept, docs/results-schema.md).
  std::string_view key;
  // The array of rows inside that section ("levels", "lengths" ...), and the field of each row
  // that says where it sits in the sweep ("concurrency", "max_tokens" ...; "" for none).
  std::string_view rows;
  std::string_view dim;
  // The unit of dim in the CSV export ("streams", "tokens" ...; "" for none).
  std::string_view dim_unit;
  // `run` runs it when no --profiles is given.
  bool in_default_run;
  // A suite's `profile:` test may name it (rate needs a schedule and SLOs: perf only).
  bool in_suites;
  // One line for --help and completion.
  std::string_view summary;
  // The options this profile reads that not every profile does, registered from here
  // (OptionSpec).
  std::span<const OptionSpec> options = {};
  // Its rows' metrics. A profile with metrics and no writer of its own is drawn from them by
  // report.md, report.html and compare (docs/architecture.md "The profile table").
  std::span<const MetricSpec> metrics = {};
  // The heading of its sections in the reports and in compare ("Prefix cache").
  std::string_view title = {};
  // True when report.md and report.html draw it with sections of their own (the profiles older
  // than the table's metrics: their sections carry tails, frontiers, classes and notes a table
  // of medians does not); false when they draw it from its metrics. compare draws every profile
  // that has metrics from them, a row per place and metric (docs/compare.md).
  bool own_sections = false;
};

// ---- The table --------------------------------------------------------------------------------
// Every profile, in the order `run` runs them. Adding one: an id above, an entry here, its
// runner in src/perf (docs/architecture.md "How to add ...").

// Builders of the declarations below, one per kind (every field set).
constexpr OptionSpec IntOption(std::string_view flag, std::string_view def, double min, double max,
                               std::string_view help) {
  return {flag, OptionSpec::kNumber, def, min, max, true, help, {}, false};
}

constexpr OptionSpec IntsOption(std::string_view flag, std::string_view def, double min, double max,
                                std::string_view help) {
  return {flag, OptionSpec::kNumbers, def, min, max, true, help, {}, false};
}

// min_open: min itself is out, (min, max].
constexpr OptionSpec RealOption(std::string_view flag, std::string_view def, double min, double max,
                                std::string_view help, bool min_open = false) {
  return {flag, OptionSpec::kNumber, def, min, max, false, help, {}, min_open};
}

constexpr OptionSpec RealsOption(std::string_view flag, std::string_view def, double min,
                                 double max, std::string_view help, bool min_open = false) {
  return {flag, OptionSpec::kNumbers, def, min, max, false, help, {}, min_open};
}

constexpr OptionSpec TextOption(std::string_view flag, std::string_view def,
                                std::string_view help) {
  return {flag, OptionSpec::kText, def, 0, 0, false, help, {}, false};
}

constexpr OptionSpec TextsOption(std::string_view flag, std::string_view help) {
  return {flag, OptionSpec::kTexts, {}, 0, 0, false, help, {}, false};
}

constexpr OptionSpec ChoiceOption(std::string_view flag, std::string_view choices,
                                  std::string_view def, std::string_view help) {
  return {flag, OptionSpec::kChoice, def, 0, 0, false, help, choices, false};
}

constexpr OptionSpec FlagOption(std::string_view flag, std::string_view help) {
  return {flag, OptionSpec::kFlag, {}, 0, 0, false, help, {}, false};
}

// The load's shape, shared by the profiles that send generated prompts (docs/load.md,
// docs/workloads.md).
inline constexpr OptionSpec kTokensOption =
    IntOption("--tokens", "256", 2, 1e7,
              "Forced output tokens per request (decode, concurrency); sessions: each synthetic "
              "answer's budget");
inline constexpr OptionSpec kRunsOption = IntOption(
    "--runs", "3", 1, 1e7, "Repetitions (decode, ttft, prefix-cache); the median is quoted");
inline constexpr OptionSpec kGpusOption =
    IntOption("--gpus", "", 1, 1e5,
              "GPUs serving the model: the frontier's total tok/s is also given per GPU "
              "(concurrency, rate, sessions)");
inline constexpr OptionSpec kImagesOption =
    IntOption("--images-per-request", "0", 0, 64,
              "decode, concurrency, rate, sessions: N generated PNG images in each prompt (each "
              "sessions turn); a server without vision refuses them (UNSUPPORTED)");
inline constexpr OptionSpec kImageSizeOption =
    TextOption("--image-size", "512x512", "--images-per-request: each image's WxH in pixels");
inline constexpr OptionSpec kInputTokensOption =
    TextOption("--input-tokens", "0",
               "Prompt tokens per request, exact to the server's tokenizer (decode, concurrency, "
               "rate): N, uniform:A-B, normal:MEAN,SD, lognormal:MEDIAN,SIGMA or file:PATH (drawn "
               "per request, seeded by --seed; docs/workloads.md). 0: a short prompt");
inline constexpr OptionSpec kOutputTokensOption =
    TextOption("--output-tokens", "",
               "Forced output tokens per request drawn from N, uniform:A-B, normal:MEAN,SD, "
               "lognormal:MEDIAN,SIGMA or file:PATH (decode, concurrency, rate, synthetic "
               "sessions; seeded by --seed; instead of --tokens / --rate-tokens)");
inline constexpr OptionSpec kRequestsOption =
    IntOption("--requests", "", 1, 1e6,
              "rate: requests per rate (default 100); concurrency: a sustained closed loop, N in "
              "flight per level until M requests were sent (the cap of a --duration-s level; "
              "default 20 x N)");
inline constexpr OptionSpec kDurationOption =
    RealOption("--duration-s", "", 0, 604800,
               "rate: arrivals during this many seconds per rate instead of --requests; "
               "concurrency: keep N in flight for this many seconds per level; sessions: no "
               "session starts after this many seconds");
inline constexpr OptionSpec kMaxRequestsOption =
    IntOption("--max-requests", "0", 0, 1e9,
              "replay: only the first N requests of the trace; --dataset: only the first N "
              "entries of its order (0 = all)");

// Shared by concurrency and rate (docs/workloads.md "Datasets", "Shared prefixes").
inline constexpr OptionSpec kDatasetOption = TextOption(
    "--dataset", "",
    "concurrency, rate: take each request's prompt from this file (ShareGPT JSON or JSONL with "
    "prompt/messages, output_tokens, images)");
inline constexpr OptionSpec kDatasetFormatOption =
    ChoiceOption("--dataset-format", "sharegpt,jsonl", "",
                 "--dataset: sharegpt or jsonl (default: told by the first character)");
inline constexpr OptionSpec kDatasetOrderOption =
    ChoiceOption("--dataset-order", "file,shuffle", "file",
                 "--dataset: file (in the file's order) or shuffle (seeded by --seed)");
inline constexpr OptionSpec kSkipBadLinesOption = FlagOption(
    "--skip-bad-lines", "--dataset: skip and count bad lines instead of stopping at the first");
inline constexpr OptionSpec kSharedPrefixOption = TextOption(
    "--shared-prefix", "",
    "concurrency, rate: GROUPS:TOKENS: each prompt starts with one of GROUPS shared prefixes of "
    "TOKENS tokens (round robin), then its unique part (docs/workloads.md)");
// Shared by rate and sessions (--session-rate).
inline constexpr OptionSpec kArrivalOption =
    ChoiceOption("--arrival", "constant,poisson,gamma", "poisson",
                 "rate, sessions (--session-rate): arrival process: poisson, constant, gamma");

inline constexpr OptionSpec kDecodeOptions[] = {
    kTokensOption,    kRunsOption,        kImagesOption,
    kImageSizeOption, kInputTokensOption, kOutputTokensOption,
};

// What both sustained-load profiles (concurrency, rate) read after their own options: GPUs,
// images, the prompt and answer lengths, the loop's size, a dataset, shared prefixes.
inline constexpr OptionSpec kSustainedLoadOptions[] = {
    kGpusOption,         kImagesOption,        kImageSizeOption,    kInputTokensOption,
    kOutputTokensOption, kRequestsOption,      kDurationOption,     kMaxRequestsOption,
    kDatasetOption,      kDatasetFormatOption, kDatasetOrderOption, kSkipBadLinesOption,
    kSharedPrefixOption,
};

// `head` then `tail`: one option list made of two (an OptionSpec list cannot be spliced into
// another's initializer).
template <std::size_t N, std::size_t M>
constexpr std::array<OptionSpec, N + M> JoinOptions(const OptionSpec (&head)[N],
                                                    const OptionSpec (&tail)[M]) {
  std::array<OptionSpec, N + M> out{};
  for (std::size_t i = 0; i < N; ++i) {
    out[i] = head[i];
  }
  for (std::size_t i = 0; i < M; ++i) {
    out[N + i] = tail[i];
  }
  return out;
}

inline constexpr OptionSpec kConcurrencyOwnOptions[] = {
    IntsOption("--levels", "1,2,4,8", 1, 1e6, "concurrency: the levels, parallel streams each"),
    kTokensOption,
};
inline constexpr auto kConcurrencyOptions =
    JoinOptions(kConcurrencyOwnOptions, kSustainedLoadOptions);

inline constexpr OptionSpec kTtftOptions[] = {
    kRunsOption,
};

inline constexpr OptionSpec kMaxTokensOptions[] = {
    IntsOption("--lengths", "64,128,256,512,1024", 1, 1e7, "max-tokens: the output lengths"),
    IntOption("--length-runs", "1", 1, 1e4, "max-tokens: repetitions per output length"),
};

inline constexpr OptionSpec kContextOptions[] = {
    IntsOption("--sizes", "100,500,2000,8000,32000,128000", 1, 1e8,
               "context: prompt sizes, in the server's tokens"),
    RealOption("--depth", "0.5", 0, 1,
               "context: where the question sits in the filler (0 = start, 1 = end)"),
    FlagOption("--context-cached",
               "context: send each prompt twice and report the prefix-cached TTFT too"),
};

// The rate profile (open-loop load, docs/load.md).
inline constexpr OptionSpec kRateOwnOptions[] = {
    RealsOption("--rates", "", 0, 1e6, "rate: arrival rates in req/s, one open-loop run each",
                /*min_open=*/true),
    kArrivalOption,
    RealOption("--burstiness", "1", 0, 1e6,
               "rate: gamma shape (--arrival gamma): gaps' CV = 1/sqrt(X); < 1 burstier",
               /*min_open=*/true),
    IntOption("--rate-tokens", "64", 1, 1e7, "rate: forced output tokens per request"),
    TextsOption("--slo",
                "rate: objectives from the scheduled send, e.g. ttft_ms=500,tpot_ms=50,"
                "e2e_ms=5000; with --fail-on-slo also each concurrency level's (from its send)"),
    RealOption("--slo-fraction", "0.99", 0, 1,
               "rate: share of good requests a rate needs to meet the SLOs", /*min_open=*/true),
    TextOption("--search-rate", "",
               "rate: find the highest rate in MIN:MAX (req/s) that meets the SLOs"),
    IntOption("--search-steps", "6", 0, 30, "rate: bisection steps of --search-rate"),
    IntOption("--max-concurrency", "0", 0, 4096,
              "rate: at most N requests in flight; later arrivals wait in the client (the wait "
              "counts from the scheduled time); 0 = no cap"),
};
inline constexpr auto kRateOptions = JoinOptions(kRateOwnOptions, kSustainedLoadOptions);

// The replay profile (a trace at its own times, docs/workloads.md).
inline constexpr OptionSpec kReplayOptions[] = {
    TextOption("--trace", "",
               "replay: the trace file (Mooncake JSONL, BurstGPT CSV, Azure 2023 CSV or "
               "servebench JSONL)"),
    ChoiceOption("--trace-format", "mooncake,burstgpt,azure,jsonl", "",
                 "replay: mooncake, burstgpt, azure or jsonl (default: told by the first line)"),
    RealOption("--time-scale", "1", 0, 1e6,
               "replay: each request is sent at its trace time x this (0.5 = twice as fast)",
               /*min_open=*/true),
    IntOption("--block-tokens", "512", 1, 1048576,
              "replay: prompt tokens per Mooncake hash id (the published traces: 512)"),
    kMaxRequestsOption,
};

// The sessions profile (multi-turn conversations and agent loops, docs/sessions.md).
inline constexpr OptionSpec kSessionsOptions[] = {
    TextOption("--sessions", "",
               "sessions: a session file (JSONL, one conversation per line: turns, tools, "
               "tool_results, think_ms, output_tokens; docs/sessions.md); without it, synthetic "
               "sessions"),
    IntOption("--turns", "4", 1, 10000, "sessions: user turns per synthetic session"),
    TextOption("--turn-input-tokens", "64",
               "sessions: tokens of each synthetic user message (a distribution as "
               "--input-tokens)"),
    IntOption("--system-prompt-tokens", "0", 0, 1e7,
              "sessions: one system prompt of N tokens shared by every synthetic session (0 = "
              "none)"),
    TextOption("--think-ms", "",
               "sessions: pause after each answer before the next turn, in ms (a distribution "
               "as --input-tokens; a session file's think_ms wins; default none)"),
    IntOption("--session-concurrency", "4", 1, 4096,
              "sessions: conversations in flight at once (closed loop)"),
    RealOption("--session-rate", "0", 0, 1e6,
               "sessions: start new sessions at this rate per second (open loop, --arrival "
               "poisson or constant), at most --session-concurrency in flight; 0 = closed loop"),
    IntOption("--max-sessions", "0", 0, 1e7,
              "sessions: how many sessions (a file: its first N, 0 = all; synthetic: 0 = 16)"),
    IntOption("--max-tool-rounds", "4", 0, 1000,
              "sessions: tool-call rounds per turn at most; then the turn ends"),
    IntOption("--tool-result-tokens", "32", 1, 1e6,
              "sessions: words of a generated tool result (a call the file scripts no result "
              "for)"),
    kTokensOption,
    kOutputTokensOption,
    kGpusOption,
    kImagesOption,
    kImageSizeOption,
    kDurationOption,
    FlagOption("--keep-reasoning",
               "sessions: send earlier answers' reasoning back (reasoning_content), as a chat "
               "template that keeps it would; default: dropped"),
    kArrivalOption,
};

inline constexpr OptionSpec kPrefixCacheOptions[] = {
    IntsOption("--prefix-sizes", "1000,4000", 16, 1e7,
               "prefix-cache: shared prefix sizes, in the server's tokens"),
    IntOption("--prefix-hits", "3", 1, 1000,
              "prefix-cache: requests that reuse each cold prefix (warm TTFT is their "
              "median)"),
    kRunsOption,
};

inline constexpr MetricSpec kContextMetrics[] = {
    {"ttft_ms", "TTFT", "ms", -1},
    {"prefill_tok_s", "Prefill tok/s", "tok/s", +1},
    {"decode_tok_s", "Decode tok/s", "tok/s", +1},
};

inline constexpr MetricSpec kReplayMetrics[] = {
    {"ttft_ms", "TTFT", "ms", -1},
    {"itl_ms", "ITL", "ms", -1},
    {"e2e_ms", "E2E", "ms", -1},
};

inline constexpr MetricSpec kSessionsMetrics[] = {
    {"ttft_ms", "TTFT", "ms", -1},
    {"tpot_ms", "TPOT", "ms", -1},
    {"cached_tokens", "Cached tokens", "tokens", 0},
};

inline constexpr MetricSpec kPrefixCacheMetrics[] = {
    {"cold_ttft_ms", "TTFT cold", "ms", -1},
    {"warm_ttft_ms", "TTFT warm", "ms", -1},
    {"speedup", "Speedup", "x", +1},
    {"cached_tokens", "Cached tokens", "tokens", 0},
};

// clang-format off
inline constexpr ProfileSpec kProfiles[] = {
    {ProfileId::kDecode, "decode", "decode", "runs", "", "",
     true, true, "single-stream decode speed, TTFT excluded (median of --runs)", kDecodeOptions,
     {}, "", true},
    {ProfileId::kConcurrency, "concurrency", "concurrency", "levels", "concurrency", "streams",
     true, true, "throughput at each of --levels parallel streams (closed loop)",
     kConcurrencyOptions, {}, "", true},
    {ProfileId::kMaxTokens, "max-tokens", "max_tokens", "lengths", "max_tokens", "tokens",
     true, true, "decode speed at each output length of --lengths", kMaxTokensOptions, {}, "",
     true},
    {ProfileId::kTtft, "ttft", "ttft", "prompts", "name", "prompt",
     true, true, "time to first token for a short and a long prompt", kTtftOptions, {}, "",
     true},
    {ProfileId::kContext, "context", "context", "rows", "size", "tokens",
     true, true, "prefill and decode at each prompt size of --sizes",
     kContextOptions, kContextMetrics, "Context", true},
    {ProfileId::kRate, "rate", "rate", "rates", "rate_rps", "req/s",
     false, false, "open-loop load at each of --rates, goodput against --slo, --search-rate",
     kRateOptions, {}, "", true},
    {ProfileId::kReplay, "replay", "replay", "classes", "class", "class",
     false, false, "a request trace (Mooncake, BurstGPT, Azure, JSONL) replayed on its own clock",
     kReplayOptions, kReplayMetrics, "Replay per request class", true},
    {ProfileId::kSessions, "sessions", "sessions", "turns", "turn", "turn",
     false, false, "multi-turn conversations and tool-calling agent loops with think time",
     kSessionsOptions, kSessionsMetrics, "Sessions per turn", true},
    {ProfileId::kPrefixCache, "prefix-cache", "prefix_cache", "prefixes", "prefix_tokens", "tokens",
     false, false, "time to first token with a cold and a warm shared prefix at each of --prefix-sizes",
     kPrefixCacheOptions, kPrefixCacheMetrics, "Prefix cache"},
};
// clang-format on

// Every profile, in the order `run` runs them.
std::span<const ProfileSpec> Profiles();

// The profile called `name` (its name; its results.json key is accepted too, so files written
// before the table still load); nullptr when there is none.
const ProfileSpec* FindProfile(std::string_view name);

// The table's entry for id.
const ProfileSpec& Profile(ProfileId id);

// The table's name of the profile called `name` or keyed so ("max_tokens" -> "max-tokens");
// `name` itself when the table has no such profile ("suite", "resources").
std::string ProfileDisplayName(std::string_view name);

// "decode, concurrency, max-tokens, ttft, context, rate" (for messages and --help).
std::string ProfileNameList(bool suites_only = false);

// True when `flag` ("--levels") is one of the options profile p reads.
bool ProfileReads(const ProfileSpec& p, std::string_view flag);

// The table's option called `flag` and its profile; {nullptr, nullptr} when there is none.
std::pair<const ProfileSpec*, const OptionSpec*> FindOption(std::string_view flag);

// "" when `value` is a valid value of option o, else why not ("--prefix-hits must be a whole
// number in [1, 1000], got '0'"; "--arrival must be one of constant, poisson, gamma, got 'x'").
// A number's range, a choice and the items of a list are checked here; the grammar of a text
// value (--slo, --shared-prefix) by the profile that reads it.
std::string CheckOption(const OptionSpec& o, std::string_view value);

// The values of the table's options (OptionSpec) as the user gave them, by flag. A flag not
// given reads as its default. Values are checked when given (CheckOption), so the readers
// below see valid text; a flag the table does not know reads as nothing (0, empty).
class ProfileArgs {
 public:
  void Set(std::string_view flag, std::string value);

  // The values given, by flag (results.json records them).
  const std::map<std::string, std::string, std::less<>>& given() const { return given_; }

  // Typed setters for callers that are not the command line (suites, tests, benchmarks).
  void SetNumber(std::string_view flag, double value);
  void SetInts(std::string_view flag, const std::vector<int>& values);

  // True when `flag` was given (a default is not).
  bool Given(std::string_view flag) const { return given_.find(flag) != given_.end(); }

  // The value as given, else the table's default ("" for none).
  std::string_view Value(std::string_view flag) const;
  // The items of a kTexts or kNumbers option, in the order given.
  std::vector<std::string> Texts(std::string_view flag) const;

  // True when a kFlag option was given.
  bool Flag(std::string_view flag) const { return Given(flag); }

  // The one number of a kNumber option.
  double Number(std::string_view flag) const;
  // The numbers of a kNumbers option, in the order given.
  std::vector<double> Numbers(std::string_view flag) const;
  // The same, of an integer option (OptionSpec::integer), as ints.
  int Int(std::string_view flag) const;
  std::vector<int> Ints(std::string_view flag) const;

 private:
  std::map<std::string, std::string, std::less<>> given_;
};

}  // namespace sb
