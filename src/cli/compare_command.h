// `servebench compare RUN...` (docs/compare.md) and `servebench report RUN` (docs/reports.md):
// flags only; the comparison is report/compare.h, the gates report/compare_gates.h, the base from
// the store cli/store_command.h. Thread safety: used from main's thread.
#pragma once

#include <string>
#include <vector>

#include "report/compare.h"

namespace CLI {
class App;
}  // namespace CLI

namespace sb::cli {

struct CompareCommand {
  std::vector<std::string> runs;
  std::vector<std::string> labels;
  std::string out;
  std::string format = "md";
  std::string store;           // the run store the bridge check reads
  std::string max_regression;  // --max-regression (report/compare_gates.h)
  std::string baseline;        // --baseline DIR|store:QUERY (store/baseline.h)
  double equivalence = report::kDefaultEquivalencePct;  // --equivalence PCT
};

// Adds the `compare` subcommand and returns it.
CLI::App* AddCompareCommand(CLI::App& app, CompareCommand& c);

// Writes the comparison; returns 0, 1 (a --max-regression gate failed, everything written),
// 2 (usage) or 3 (unreadable run, unwritable --out) with one line on stderr.
int RunCompare(CompareCommand c);

struct ReportCommand {
  std::string run;
  std::string out;
};

// Adds the `report` subcommand and returns it.
CLI::App* AddReportCommand(CLI::App& app, ReportCommand& c);

// Writes report.html again from a run's results.json; 0, or 3 with one line on stderr.
int RunReport(const ReportCommand& c);

}  // namespace sb::cli
