#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "cli/signals.h"
#include "core/output_file.h"

namespace {

// What was printed must have reached stdout: `servebench ... > /dev/full` is an error (exit 3
// unless the command already failed). A reader that went away (`| head`, `| true`) is not: the
// run directory holds everything, and the command's own exit code stands.
int CheckedStdout(int code) {
  bool broken_pipe = false;
  if (auto ok = sb::CheckStdout(&broken_pipe); !ok && !broken_pipe) {
    std::fprintf(stderr, "servebench: error: %s\n", ok.error().message.c_str());
    return code == sb::cli::kExitOk ? sb::cli::kExitSetup : code;
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  sb::cli::BlockStopSignals();  // before any thread exists
  sb::cli::RaiseOpenFileLimit();
  int code = sb::cli::kExitSetup;
  try {
    code = sb::cli::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "servebench: error: %s\n", e.what());
  }
  return CheckedStdout(code);
}
