// `servebench compare RUN_A RUN_B [...]`: a comparison of two or more run directories, in the
// layout of the seeds' "At a glance" table (Metric | A | B | Advantage), plus sections for rate,
// roofline, speculative decoding, context, startup and resources, the quality tests both runs
// share, and a warning for each condition the runs did not share (docs/compare.md).
//
// The comparison is a data model (`Comparison`) computed once from the runs, then rendered as
// Markdown, JSON or HTML. For each figure that is a statistic of per-request values (medians,
// percentiles), the Advantage carries a 95% confidence interval of the ratio from a seeded
// percentile bootstrap over the runs' raw samples (samples.jsonl), and says "≈ within noise"
// when the interval holds 1. Quality adds the exact McNemar test on the tests both runs share.
// Deterministic: the same runs give the same output.
// Thread safety: pure functions (LoadCompareRun reads files).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/output_format.h"
#include "core/result.h"

namespace sb::report {

// One run as compare reads it: results.json, and the measured requests of samples.jsonl (warm-ups
// and superseded lines left out; failed requests kept, and left out of every interval). Without
// samples.jsonl (`has_samples` false), the raw values of results.json's stats objects stand in for
// them.
struct CompareRun {
  nlohmann::json results;
  std::vector<nlohmann::json> samples;
  bool has_samples = false;
  std::filesystem::path source;  // the directory or results.json it came from; may be empty
};

// Reads a run directory (or its results.json, with samples.jsonl beside it when present).
// Errors: as LoadResults; kIo / kParse when samples.jsonl exists but cannot be read, or a line
// is not JSON (the line number is named).
Result<CompareRun> LoadCompareRun(const std::filesystem::path& run_dir_or_file);

// Labels for the runs: each run's own --label (results.json labels.label), else its target.model.
// Where two runs share a label, the name of the
// directory each came from (sources[i]: the run directory or its results.json) is appended,
// "Qwen3-8B (20261202T090000Z-a)"; without sources, or if still ambiguous, "#<position>".
// REQUIRES: sources is empty or sources.size() == runs.size().
std::vector<std::string> DefaultLabels(const std::vector<nlohmann::json>& runs,
                                       const std::vector<std::filesystem::path>& sources = {});

// ---- The data model ---------------------------------------------------------------------------

enum class Better { kHigher, kLower, kNone };

// One run's figure in a row.
struct CompareCell {
  std::optional<double> value;  // the compared figure (a pass rate for scores); nullopt: missing
  std::string text;             // what the table shows ("92.8 tok/s", "—")
  std::optional<double> pass;   // score rows only
  std::optional<double> total;  // score rows only
  std::vector<double> samples;  // the raw per-request values behind the figure (may be empty)
  // How many values the figure summarises (a median's requests) when samples cannot be had: a
  // ratio without an interval then says "no CI", not "n=1".
  double n = 1;
  // How precisely value is known, in its unit (0: exactly). Two single values no further apart
  // than the larger of their resolutions tie (e.g. a server's time to ready, known to the poll).
  double resolution = 0;
};

enum class Verdict {
  kMissing,      // fewer than two runs have the figure
  kBetter,       // the winner's 95% interval of the ratio excludes 1
  kWithinNoise,  // the interval holds 1: "≈ within noise"
  kNoInterval,   // a ratio without an interval (a figure with one value per run)
  kEqual,        // counts: equal; single values within their resolution: a tie
  kCountDiff,    // counts: "+2 passed", "3 fewer"
};

struct Judgement {
  std::string text = "—";  // the Advantage cell
  Verdict verdict = Verdict::kMissing;
  std::optional<std::size_t> winner;  // index of the better run
  std::optional<std::size_t> runner_up;
  std::optional<double> ratio;   // winner over runner-up, >= 1 (loser ÷ winner for lower-better)
  std::optional<double> ci_low;  // 95% bootstrap interval of that ratio
  std::optional<double> ci_high;
  std::vector<std::size_t> within_noise;  // runs within noise of the best (the best included)
  bool same = false;  // the interval lies inside the equivalence margin: "same (within 2.5%)"
};

struct CompareRow {
  std::string metric;  // "Decode speed (median)"
  std::string key;     // stable: "decode_tok_s" (docs/compare.md)
  std::string unit;    // "tok/s"
  Better better = Better::kHigher;
  std::string word;                // "faster", "better", "more", "fewer", "passed"
  bool counts = false;             // scores and failures: compared exactly, no interval
  double quantile = 0.5;           // the statistic the interval resamples: 0.5 median, 0.9 p90, ...
  std::vector<CompareCell> cells;  // one per run
  Judgement judgement;
};

struct CompareSection {
  std::string id;     // "glance", "rate", "roofline", "spec_decode", "context", "startup",
                      // "resources", "tails"
  std::string title;  // "At a glance"
  std::string note;   // a line under the title; may be empty
  std::vector<CompareRow> rows;
};

// The paired test of two runs' quality on the tests both ran (matched by test id).
struct PairedQuality {
  std::size_t base = 0;   // run index (the first run)
  std::size_t other = 0;  // run index
  int shared = 0;         // tests both runs have
  int both_pass = 0;
  int base_only = 0;   // PASS in base, not in other
  int other_only = 0;  // PASS in other, not in base
  int neither = 0;
  double p_value = 1;  // exact McNemar (two-sided binomial on the discordant pairs)
  std::string text;    // one sentence
};

// A test whose status changed between the first run and another.
struct TestChange {
  std::size_t base = 0;
  std::size_t other = 0;
  std::string id;
  std::string name;
  std::string from;    // status in base ("PASS")
  std::string to;      // status in other ("FAIL")
  std::string change;  // "PASS → FAIL", "FAIL → PASS", "new EMPTY", "new LOOP"
  std::string reason;  // the other run's reason, when it has one
};

struct CompareRunInfo {
  std::string label;
  std::optional<std::string> model, endpoint, server_kind, server_version, status, started_at;
  std::string server;  // "vLLM 0.11.0", "built-in simulator"
  bool simulated = false;
  bool has_samples = false;
};

struct Comparison {
  std::vector<CompareRunInfo> runs;
  std::vector<std::string> notes;     // simulator, partial runs, runs with warnings
  std::vector<std::string> warnings;  // one per condition the runs did not share
  std::vector<CompareSection> sections;
  std::vector<PairedQuality> paired;
  std::vector<TestChange> changes;
  std::string method;            // how the Advantage is decided (one paragraph)
  double equivalence_pct = 2.5;  // --equivalence: a CI inside +-this is "same (within ...)"
};

// The default equivalence margin of compare (the seeds' run-to-run noise), in percent.
inline constexpr double kDefaultEquivalencePct = 2.5;

// True when the interval [lo, hi] of a ratio lies inside 1 +- pct% (pct >= 0).
bool WithinEquivalence(double lo, double hi, double pct);

// A ratio and its 95% interval as printed, at the same two decimals, the interval widened where
// rounding would leave the point outside it: "1.30× ... (95% CI 1.30–1.45×)".
struct PrintedRatio {
  std::string point, lo, hi;
};

PrintedRatio PrintRatioInterval(double ratio, double lo, double hi);

// The comparison of `runs` (in the given order). `labels`: one per run, or empty for
// DefaultLabels. Errors (kUsage): fewer than two runs; labels.size() neither 0 nor runs.size().
// `equivalence_pct`: the margin of "same (within PCT%)" (--equivalence).
Result<Comparison> BuildComparison(const std::vector<CompareRun>& runs,
                                   const std::vector<std::string>& labels,
                                   double equivalence_pct = kDefaultEquivalencePct);

std::string RenderCompareMarkdown(const Comparison& c);
// {"schema": "servebench.compare/2", ...} (docs/compare.md).
std::string RenderCompareJson(const Comparison& c);
// One self-contained page (no script, no external file), every text HTML-escaped.
std::string RenderCompareHtml(const Comparison& c);

// BuildComparison, then the renderer of `format`.
Result<std::string> Compare(const std::vector<CompareRun>& runs,
                            const std::vector<std::string>& labels, OutputFormat format);

// The same from results.json documents alone (no samples.jsonl: stats values stand in).
Result<std::string> Compare(const std::vector<nlohmann::json>& runs,
                            const std::vector<std::string>& labels, OutputFormat format);

}  // namespace sb::report
