#include "cli/export_command.h"

#include <cstdio>
#include <fstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/result.h"
#include "export/export.h"
#include "run/exit_codes.h"

namespace sb::cli {

using run::Fail;

CLI::App* AddExportCommand(CLI::App& app, ExportCommand& cmd) {
  CLI::App* sub = app.add_subcommand(
      "export", "A run's results as CSV (speed tables), JUnit XML (quality tests) or JSON lines");
  sub->add_option("run", cmd.run, "Run directory (or its results.json)")->required();
  sub->add_option("--format", cmd.format,
                  "csv: every speed figure in long format; junit: the quality tests; jsonl: one "
                  "line per measured request and per test")
      ->required()
      ->check(CLI::IsMember({"csv", "junit", "jsonl"}));
  sub->add_option("--out", cmd.out, "Write to this file instead of stdout");
  return sub;
}

int RunExportCommand(const ExportCommand& cmd) {
  auto format = exporter::ParseExportFormat(cmd.format);
  if (!format) {
    return Fail(format.error());
  }
  auto text = exporter::ExportRun(cmd.run, *format);
  if (!text) {
    return Fail(text.error());
  }
  if (cmd.out.empty() || cmd.out == "-") {
    std::fwrite(text->data(), 1, text->size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 3;
  }
  std::ofstream f(cmd.out, std::ios::binary | std::ios::trunc);
  f << *text;
  if (!f.flush()) {
    return Fail(MakeError(ErrorCode::kIo, fmt::format("cannot write '{}'", cmd.out)));
  }
  std::fprintf(stderr, "wrote %s\n", cmd.out.c_str());
  return 0;
}

}  // namespace sb::cli
