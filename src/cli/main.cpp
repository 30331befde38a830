#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "cli/signals.h"

int main(int argc, char** argv) {
  sb::cli::BlockStopSignals();  // before any thread exists
  sb::cli::RaiseOpenFileLimit();
  try {
    return sb::cli::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "servebench: error: %s\n", e.what());
    return sb::cli::kExitSetup;
  }
}
