// The quality-suite side of the command line: `run --suite` options, `servebench suites` and
// `servebench assets` (docs/suites.md). What the options do is in run/suites.h.
// Thread safety: used from main's thread.
#pragma once

#include <string>

#include "run/suites.h"

namespace CLI {
class App;
}  // namespace CLI

namespace sb::cli {

// Adds --suite, --tests, --rerun-empty, --repeat, --test-timeout-s, --video-transport,
// --video-frames, --python, --cxx, --min-pass-rate, --min-effective-pass-rate to `run`.
void AddSuiteOptions(CLI::App* run, run::SuiteArgs& args);

// `servebench suites [NAME]`.
struct SuitesCommand {
  std::string name;
  bool json = false;
};

CLI::App* AddSuitesCommand(CLI::App& app, SuitesCommand& cmd);
int RunSuitesCommand(const SuitesCommand& cmd);

// `servebench assets --out DIR`.
struct AssetsCommand {
  std::string out = "assets";
};

CLI::App* AddAssetsCommand(CLI::App& app, AssetsCommand& cmd);
int RunAssetsCommand(const AssetsCommand& cmd);

}  // namespace sb::cli
