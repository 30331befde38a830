// `servebench sim` (docs/simulator.md): the flags and the command that serves the simulator
// until SIGINT/SIGTERM. The simulator itself is src/sim. Thread safety: main's thread.
#pragma once

#include <string>
#include <vector>

#include "sim/sim_server.h"

namespace CLI {
class App;
}  // namespace CLI

namespace sb::cli {

struct SimCommand {
  sim::SimOptions options;
  std::vector<double> spec_accept;
  std::vector<std::string> reject;
  std::vector<std::string> fault_kinds;
  std::vector<std::string> answers;  // suites whose reference answers it gives
  std::vector<std::string> answer_loop, answer_bad, answer_fault, answer_reasoning;
  bool demo = false;
};

// Adds the `sim` subcommand and its flags, bound to `c`, and returns it.
CLI::App* AddSimCommand(CLI::App& app, SimCommand& c);

// Starts the simulator, prints "listening on URL", serves until a stop signal; returns the exit
// code (run/exit_codes.h).
int RunSimCommand(SimCommand& c);

}  // namespace sb::cli
