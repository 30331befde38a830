#include "cli/export_command.h"

#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/write_out.h"
#include "core/result.h"
#include "export/export.h"
#include "run/exit_codes.h"

namespace sb::cli {

using run::Fail;

CLI::App* AddExportCommand(CLI::App& app, ExportCommand& cmd) {
  CLI::App* sub = app.add_subcommand(
      "export",
      "A run's results as CSV (speed tables), JUnit XML (quality tests), JSON lines, or as "
      "report.md, report.html or results.json would hold them");
  sub->add_option("run", cmd.run, "Run directory (or its results.json)")->required();
  sub->add_option("--format", cmd.format,
                  "csv: every speed figure in long format; junit: the quality tests; jsonl: one "
                  "line per measured request and per test; md, html: the reports; json: "
                  "results.json")
      ->required()
      ->check(CLI::IsMember({"csv", "junit", "jsonl", "md", "html", "json"}));
  sub->add_option("--out", cmd.out, "Write to this file instead of stdout");
  return sub;
}

int RunExportCommand(const ExportCommand& cmd) {
  auto format = ParseOutputFormat(
      cmd.format, {OutputFormat::kCsv, OutputFormat::kJunit, OutputFormat::kJsonl,
                   OutputFormat::kMarkdown, OutputFormat::kHtml, OutputFormat::kJson});
  if (!format) {
    return Fail(format.error());
  }
  auto text = exporter::ExportRun(cmd.run, *format);
  if (!text) {
    return Fail(text.error());
  }
  return WriteOut(cmd.out, *text);
}

}  // namespace sb::cli
