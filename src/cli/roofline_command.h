// `servebench roofline`: the memory-bandwidth ceiling of single-stream decode for a model's
// config.json, a weight format and a hardware entry (docs/roofline.md), printed as a small table
// (or JSON). The same inputs can be added to `perf`/`run`, so a decode result gets its roofline
// in results.json ("roofline") and report.md. This file wires the flags and prints; the inputs
// and the computation are in roofline/inputs.h. Thread safety: used from main's thread.
#pragma once

#include "roofline/inputs.h"

namespace CLI {
class App;
}  // namespace CLI

namespace sb::cli {

// Which command the inputs are added to. `perf`/`run` take the model and hardware inputs only
// (tokens per step and the measured speed come from the run), and name the context option
// --roofline-context so it can not be mistaken for a prompt size.
enum class RooflineFlags { kRooflineCommand, kSpeedCommand };

// Adds --model-config, --weight-format, --hardware, --hardware-file, --bandwidth-gb-s,
// --bits-per-weight, --attention-bits, --lm-head-bits, --embedding-bits, --router-bits,
// --kv-cache-dtype, --state-dtype, --draft-bytes and the context option to `cmd`.
void AddRooflineInputs(CLI::App* cmd, roofline::RooflineArgs& args, RooflineFlags flags);

// Adds the `roofline` subcommand (the inputs plus --context, --tokens-per-step,
// --verify-tokens, --measured, --list-hardware, --list-formats, --json) and returns it.
CLI::App* AddRooflineCommand(CLI::App& app, roofline::RooflineArgs& args);

// Runs the subcommand: prints roofline::RooflineOutput to stdout, or the error to stderr; returns
// the exit code (0, 2 usage, 3 setup).
int RunRoofline(const roofline::RooflineArgs& args);

}  // namespace sb::cli
