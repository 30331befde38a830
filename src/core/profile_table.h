// The speed profiles, each registered once (the way ninja lists its tools in one table): the
// name users type and every output shows, the key of its section in results.json, the rows it
// writes there, the flags only it reads, and whether `run` runs it by default. Everything that
// names a profile reads this table: perf's dispatch, the plan's checks, `--help`, completion,
// the suite runner, the CSV export, the resource rows and the store. An unknown name is an
// error wherever one is given. How to add a profile: docs/architecture.md.
#pragma once

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

// A flag only one profile reads, declared here and registered by the CLI for every command
// that runs profiles: its value arrives in ProfileOptions::args (ProfileArgs below), so a new
// profile's flags need no code in src/cli. The concurrency, max-tokens, context and
// prefix-cache numbers are declared so. Flags that take text, a choice or nothing (--trace,
// --arrival, --context-cached), those two profiles share (--dataset), and the rate, replay and
// sessions profiles' flags (read into their own option structs) are registered by hand and
// named in ProfileSpec::flags.
struct OptionSpec {
  enum Kind { kNumber, kNumbers };  // one number, or a comma-separated list of them

  std::string_view flag;  // "--prefix-hits"
  Kind kind = kNumber;
  std::string_view default_value;  // as the user would type it: "3", "1000,4000"
  double min = 0;                  // every value must lie in [min, max] ...
  double max = 1e9;
  bool integer = true;  // ... and be a whole number when set
  std::string_view help;
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
  // The hand-registered options only this profile reads (a comma-separated list, "" for none).
  std::string_view flags;
  // The options only this profile reads, registered from here (OptionSpec).
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

inline constexpr OptionSpec kConcurrencyOptions[] = {
    {"--levels", OptionSpec::kNumbers, "1,2,4,8", 1, 1e6, true,
     "Concurrency profile: the levels, parallel streams each"},
};

inline constexpr OptionSpec kMaxTokensOptions[] = {
    {"--lengths", OptionSpec::kNumbers, "64,128,256,512,1024", 1, 1e7, true,
     "Max-tokens profile: the output lengths"},
    {"--length-runs", OptionSpec::kNumber, "1", 1, 1e4, true,
     "Max-tokens profile: repetitions per output length"},
};

inline constexpr OptionSpec kContextOptions[] = {
    {"--sizes", OptionSpec::kNumbers, "100,500,2000,8000,32000,128000", 1, 1e8, true,
     "Context profile: prompt sizes, in the server's tokens"},
    {"--depth", OptionSpec::kNumber, "0.5", 0, 1, false,
     "Context profile: where the question sits in the filler (0 = start, 1 = end)"},
};

inline constexpr OptionSpec kPrefixCacheOptions[] = {
    {"--prefix-sizes", OptionSpec::kNumbers, "1000,4000", 16, 1e7, true,
     "Prefix-cache profile: shared prefix sizes, in the server's tokens"},
    {"--prefix-hits", OptionSpec::kNumber, "3", 1, 1000, true,
     "Prefix-cache profile: requests that reuse each cold prefix (warm TTFT is their median)"},
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
     true, true, "single-stream decode speed, TTFT excluded (median of --runs)", "", {}, {}, "",
     true},
    {ProfileId::kConcurrency, "concurrency", "concurrency", "levels", "concurrency", "streams",
     true, true, "throughput at each of --levels parallel streams (closed loop)",
     "--dataset,--dataset-format,--dataset-order,--skip-bad-lines,--shared-prefix",
     kConcurrencyOptions, {}, "", true},
    {ProfileId::kMaxTokens, "max-tokens", "max_tokens", "lengths", "max_tokens", "tokens",
     true, true, "decode speed at each output length of --lengths", "", kMaxTokensOptions, {}, "",
     true},
    {ProfileId::kTtft, "ttft", "ttft", "prompts", "name", "prompt",
     true, true, "time to first token for a short and a long prompt", "", {}, {}, "", true},
    {ProfileId::kContext, "context", "context", "rows", "size", "tokens",
     true, true, "prefill and decode at each prompt size of --sizes",
     "--context-cached", kContextOptions, kContextMetrics, "Context", true},
    {ProfileId::kRate, "rate", "rate", "rates", "rate_rps", "req/s",
     false, false, "open-loop load at each of --rates, goodput against --slo, --search-rate",
     "--rates,--arrival,--burstiness,--rate-tokens,--slo,--slo-fraction,--search-rate,"
     "--search-steps,--max-concurrency,--dataset,--dataset-format,--dataset-order,"
     "--skip-bad-lines,--shared-prefix", {}, {}, "", true},
    {ProfileId::kReplay, "replay", "replay", "classes", "class", "class",
     false, false, "a request trace (Mooncake, BurstGPT, Azure, JSONL) replayed on its own clock",
     "--trace,--trace-format,--time-scale,--block-tokens", {}, kReplayMetrics,
     "Replay per request class", true},
    {ProfileId::kSessions, "sessions", "sessions", "turns", "turn", "turn",
     false, false, "multi-turn conversations and tool-calling agent loops with think time",
     "--sessions,--turns,--turn-input-tokens,--system-prompt-tokens,--think-ms,"
     "--session-concurrency,--session-rate,--max-sessions,--max-tool-rounds,"
     "--tool-result-tokens,--keep-reasoning", {}, kSessionsMetrics, "Sessions per turn", true},
    {ProfileId::kPrefixCache, "prefix-cache", "prefix_cache", "prefixes", "prefix_tokens", "tokens",
     false, false, "time to first token with a cold and a warm shared prefix at each of --prefix-sizes",
     "", kPrefixCacheOptions, kPrefixCacheMetrics, "Prefix cache"},
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

// True when `flag` ("--levels") is one only profile p reads: in its flags or its options.
bool ProfileReads(const ProfileSpec& p, std::string_view flag);

// The table's option called `flag` and its profile; {nullptr, nullptr} when there is none.
std::pair<const ProfileSpec*, const OptionSpec*> FindOption(std::string_view flag);

// "" when `value` is a valid value of option o, else why not ("--prefix-hits must be a whole
// number in [1, 1000], got 0").
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

  // The one number of a kNumber option.
  double Number(std::string_view flag) const;
  // The numbers of a kNumbers option, in the order given.
  std::vector<double> Numbers(std::string_view flag) const;
  // The same, of an integer option (OptionSpec::integer), as ints.
  int Int(std::string_view flag) const;
  std::vector<int> Ints(std::string_view flag) const;

 private:
  std::string_view Text(std::string_view flag) const;

  std::map<std::string, std::string, std::less<>> given_;
};

}  // namespace sb
