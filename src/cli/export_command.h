// `servebench export RUN --format csv|junit|jsonl|md|html|json [--out PATH]` (docs/reports.md, "Exports"):
// flags only; the formats are in export/export.h. Thread safety: used from main's thread.
#pragma once

#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace sb::cli {

struct ExportCommand {
  std::string run;
  std::string format;
  std::string out;  // empty or "-": stdout
};

// Adds the `export` subcommand and returns it.
CLI::App* AddExportCommand(CLI::App& app, ExportCommand& cmd);

// Writes the export; returns 0, or 2 (usage) / 3 (unreadable run, unwritable --out) with one
// line on stderr.
int RunExportCommand(const ExportCommand& cmd);

}  // namespace sb::cli
