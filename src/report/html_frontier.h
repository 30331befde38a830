// The throughput-vs-interactivity frontier chart (issue 23 item 1, docs/reports.md): x = tok/s per
// user (median per-stream decode), y = total output tok/s, per GPU when every run drawn has a GPU
// count (--gpus); log axes; each point labelled with its level ("c8", "4 req/s"); the
// Pareto-optimal points of each sweep joined by a line. Read from results.json's
// perf.concurrency.frontier and perf.rate.frontier; a run written before those arrays has its
// concurrency points derived from its levels (core/frontier.h), the same figures.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/frontier.h"

namespace sb::report::html {

// One sweep's points ("concurrency", "rate", "sessions") and the runs they belong to.
struct FrontierSweep {
  std::string name;
  std::vector<FrontierPoint> points;
};

struct FrontierRun {
  std::string label;  // "" for report.html's one run; a legend name otherwise
  std::vector<FrontierSweep> sweeps;
};

// The frontier <figure> (chart and table) of `runs` (at least one with a point), with `id`
// (the chart's id) and `note` (its caption, HTML). The leaderboard draws stored runs with it.
std::string FrontierFigure(const std::vector<FrontierRun>& runs, const std::string& id,
                           const std::string& note);

// The caption every frontier figure shares: what a point, the axes and the line mean.
extern const char* const kFrontierNote;

// report.html's frontier section for one run; "" when the run has no sweep with a point.
std::string FrontierSection(const nlohmann::json& results, int& charts);

// One chart overlaying the frontiers of two or more runs (`labels`: one per run), as compare
// --format html's <section class="compare-frontier">; "" when fewer than two runs have points.
std::string CompareFrontierSection(const std::vector<const nlohmann::json*>& runs,
                                   const std::vector<std::string>& labels);

}  // namespace sb::report::html

namespace sb::report {

struct CompareRun;
struct Comparison;

// `page` (compare --format html) with the frontier overlay of `runs`, labelled as in `c`, before
// </body>; unchanged when fewer than two runs have a frontier.
std::string AddCompareFrontier(std::string page, const std::vector<CompareRun>& runs,
                               const Comparison& c);

}  // namespace sb::report
