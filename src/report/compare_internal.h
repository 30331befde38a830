// Internal to the compare files: building rows and sections of a Comparison (compare.h).
#pragma once

#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/compare.h"

namespace sb::report::compare_detail {

using nlohmann::json;

// What a row compares and how it words the Advantage.
struct RowSpec {
  std::string metric;
  std::string key;
  std::string unit;
  Better better = Better::kHigher;
  std::string word = "faster";
  bool counts = false;
  double quantile = 0.5;
};

// The item of run's array (a path) whose `field` equals v, or nullptr.
const nlohmann::json* ItemWith(const nlohmann::json& run,
                               std::initializer_list<std::string_view> array,
                               std::string_view field, double v);
// Every value of `field` over the items of that array, in every run (the union of the sweeps).
std::set<double> NumbersOver(const std::vector<CompareRun>& runs,
                             std::initializer_list<std::string_view> array, std::string_view field);

CompareCell Missing();
CompareCell Cell(std::optional<double> v, std::string text, std::vector<double> samples = {});
CompareCell ScoreCell(std::optional<double> pass, std::optional<double> total, bool with_percent);

std::string TokS(double v);
std::string Ms(double v);

// Raw values of one measured series, from samples.jsonl when the run has it: the records of
// `profile` whose label starts with `label_prefix`, field `field` (numbers only); else the
// "values" of `fallback` (a results.json stats object; may be null).
std::vector<double> RawValues(const CompareRun& run, std::string_view profile,
                              std::string_view label_prefix, std::string_view field,
                              const json* fallback);

// Adds rows, each with one cell per run; a row no run has a value for is left out.
class RowBuilder {
 public:
  explicit RowBuilder(const std::vector<CompareRun>& runs) : runs_(runs) {}

  template <typename F>
  void Add(const RowSpec& spec, F get) {
    CompareRow row;
    row.metric = spec.metric;
    row.key = spec.key;
    row.unit = spec.unit;
    row.better = spec.better;
    row.word = spec.word;
    row.counts = spec.counts;
    row.quantile = spec.quantile;
    bool any = false;
    for (const CompareRun& run : runs_) {
      row.cells.push_back(get(run));
      any = any || row.cells.back().value.has_value();
    }
    if (any) {
      rows_.push_back(std::move(row));
    }
  }

  std::vector<CompareRow> Take() { return std::move(rows_); }

 private:
  const std::vector<CompareRun>& runs_;
  std::vector<CompareRow> rows_;
};

// The "At a glance" rows (quality scores, speed, totals): compare_rows.cpp.
std::vector<CompareRow> GlanceRows(const std::vector<CompareRun>& runs);

// Sections beyond the glance, each only when at least two runs have its data:
// compare_sections.cpp.
std::vector<CompareSection> ExtraSections(const std::vector<CompareRun>& runs,
                                          const std::vector<CompareRow>& glance);

// The "Tails per level" rows: p50/p90/p99 of TTFT, TPOT, E2E and ITL at each concurrency level
// and max-tokens length: compare_tails.cpp.
std::vector<CompareRow> TailRows(const std::vector<CompareRun>& runs);

// The "Resources" rows (peak memory, mean power, J/token, tokens/J for the whole run, the
// decode runs together and each concurrency level, context size and rate point), each only
// where at least two runs have the figure: compare_resources.cpp.
std::vector<CompareRow> ResourceCompareRows(const std::vector<CompareRun>& runs);

// Adds a warning when some runs sampled resources and others did not, and one when peak memory
// is GPU memory in one run and server RSS in another.
void ResourceWarnings(const std::vector<CompareRun>& runs, const std::vector<std::string>& labels,
                      std::vector<std::string>& out);

// The Advantage of a row (bootstrap interval when both runs have >= 2 samples).
// A difference whose interval lies inside +-equivalence_pct is "same (within PCT%)".
Judgement Judge(const CompareRow& row, const std::vector<std::string>& labels,
                double equivalence_pct = kDefaultEquivalencePct);

// The paired McNemar test and the per-test changes of each run against the first.
void CompareQuality(const std::vector<CompareRun>& runs, const std::vector<std::string>& labels,
                    Comparison& out);

// One line per condition the runs did not share.
std::vector<std::string> Warnings(const std::vector<CompareRun>& runs,
                                  const std::vector<std::string>& labels);

// The method paragraph printed under the tables.
extern const char* const kMethod;

}  // namespace sb::report::compare_detail
