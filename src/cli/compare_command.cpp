#include "cli/compare_command.h"

#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/store_command.h"
#include "cli/write_out.h"
#include "core/output_format.h"
#include "core/result.h"
#include "report/compare_charts.h"
#include "report/compare_gates.h"
#include "report/html.h"
#include "report/run_dir.h"
#include "run/exit_codes.h"

namespace sb::cli {

using run::Fail;

int RunCompare(CompareCommand c) {
  if (!c.baseline.empty()) {
    auto base = ResolveBaseline(c.baseline, c.store, c.runs);
    if (!base) {
      return Fail(base.error());
    }
    c.runs.insert(c.runs.begin(), *base);
  }
  if (c.runs.size() < 2) {
    return Fail(MakeError(ErrorCode::kUsage, "compare needs at least two run directories"));
  }
  std::vector<report::CompareRun> runs;
  for (const auto& r : c.runs) {
    auto run = report::LoadCompareRun(r);
    if (!run) {
      return Fail(run.error());
    }
    runs.push_back(std::move(run.value()));
  }
  auto format = ParseOutputFormat(c.format, {OutputFormat::kMarkdown, OutputFormat::kHtml,
                                             OutputFormat::kJson, OutputFormat::kJunit});
  if (!format) {
    return Fail(format.error());
  }
  if (*format == OutputFormat::kJunit && c.max_regression.empty()) {
    return Fail(MakeError(ErrorCode::kUsage,
                          "compare --format junit needs --max-regression (one testcase per "
                          "gated metric)"));
  }
  if (!c.labels.empty() && c.labels.size() != c.runs.size()) {
    return Fail(MakeError(ErrorCode::kUsage, "--label must be given once per run, or not at all"));
  }
  auto built = report::BuildComparison(runs, c.labels, c.equivalence);
  if (!built) {
    return Fail(built.error());
  }
  std::optional<report::GateResult> gate;
  if (!c.max_regression.empty()) {
    auto limits = report::ParseMaxRegression(c.max_regression);
    auto judged = limits ? report::ApplyRegressionGate(*built, *limits)
                         : Result<report::GateResult>(limits.error());
    if (!judged) {
      return Fail(judged.error());
    }
    gate = std::move(judged).value();
  }
  Result<std::string> text =
      report::RenderComparison(runs, *built, *format, gate ? &*gate : nullptr);
  // The bridge check (docs/store.md): after a Markdown table on stdout, else on stderr.
  const bool md_stdout = (c.out.empty() || c.out == "-") && c.format == "md";
  for (const auto& line : CompareBridgeLines(c.runs, c.store)) {
    *text += md_stdout ? line + "\n" : "";
    if (!md_stdout) {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
  const int written = WriteOut(c.out, *text);
  if (written != kExitOk || !gate) {
    return written;
  }
  std::fprintf(stderr, "servebench: %s\n", gate->summary.c_str());
  return gate->failed ? run::kExitGate : kExitOk;
}

int RunReport(const ReportCommand& c) {
  auto w = report::WriteHtmlReport(c.run, c.out);
  if (!w) {
    return Fail(w.error());
  }
  if (w->path.empty()) {
    return WriteOut("-", w->html);
  }
  std::fprintf(stderr, "wrote %s\n", w->path.c_str());
  return kExitOk;
}

CLI::App* AddCompareCommand(CLI::App& app, CompareCommand& c) {
  CLI::App* cmd =
      app.add_subcommand("compare",
                         "Head-to-head table of two or more run directories: each ratio with a "
                         "bootstrap 95% interval (\"same\" inside --equivalence, \"within noise\" "
                         "when it holds 1), quality "
                         "flips, what each result cost (resources), and a warning for each "
                         "condition the runs did not share");
  cmd->add_option("runs", c.runs, "Run directories (or results.json files)")->required();
  cmd->add_option("--out", c.out, "Write to this file instead of stdout");
  cmd->add_option("--format", c.format,
                  "md, html, json, or junit (with --max-regression: one testcase per gated "
                  "metric)")
      ->check(CLI::IsMember({"md", "html", "json", "junit"}))
      ->capture_default_str();
  cmd->add_option("--label", c.labels, "Column label per run (repeat in order)");
  cmd->add_option("--store", c.store, "Run store for the bridge check (docs/store.md)");
  cmd->add_option("--max-regression", c.max_regression,
                  "Exit 1 when a run is worse than the first (the base) by more than PCT and "
                  "outside the noise (95% CI excludes 1): 5% gates every row with an interval; "
                  "decode=3%,ttft_p99=10% gates those rows (docs/compare.md)");
  cmd->add_option("--baseline", c.baseline,
                  "The base run, put before the others: a run directory, or store:QUERY for the "
                  "latest matching run in the store (store:model=M,recipe=R,KEY=VALUE,...; the "
                  "runs compared left out)");
  cmd->add_option("--equivalence", c.equivalence,
                  "Equivalence margin in percent: a difference whose 95% CI lies inside +-PCT "
                  "reads \"same (within PCT%)\" and never fails --max-regression")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  return cmd;
}

CLI::App* AddReportCommand(CLI::App& app, ReportCommand& c) {
  CLI::App* cmd = app.add_subcommand(
      "report", "Write report.html again for a saved run, from its results.json");
  cmd->add_option("run", c.run, "Run directory (or its results.json)")->required();
  cmd->add_option("--out", c.out, "Write here instead of RUN/report.html (- for stdout)");
  return cmd;
}

}  // namespace sb::cli
