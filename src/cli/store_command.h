// The run store's commands (docs/store.md): `store import|ls|rm`, `history`, `leaderboard`; the
// recording flags of run/perf/launch (--store, --no-store, --label, --tag); and the bridge lines
// `compare` prints after its table. Flags only: the work is in store/. Thread safety: main's
// thread.
#pragma once

#include <string>
#include <vector>

#include "store/store.h"

namespace CLI {
class App;
}  // namespace CLI

namespace sb::cli {

struct StoreCommands {
  // Shared by every store command.
  std::string store;
  // store import
  std::vector<std::string> dirs;
  std::string label;
  std::vector<std::string> tags;
  // store rm
  std::string run;
  // history / leaderboard
  std::string model, metric = "decode.decode_tok_s", since, format = "md", by = "model", out;
  bool list_metrics = false;
  CLI::App *store_app = nullptr, *import_app = nullptr, *ls_app = nullptr, *rm_app = nullptr,
           *history_app = nullptr, *leaderboard_app = nullptr;
};

// Adds `store` (import, ls, rm), `history` and `leaderboard`.
void AddStoreCommands(CLI::App& app, StoreCommands& c);

// Whether one of them was parsed; then RunStoreCommand runs it and returns the exit code.
bool StoreCommandParsed(const StoreCommands& c);
int RunStoreCommand(StoreCommands& c);

// --store, --no-store, --label, --tag on run/perf/launch.
void AddRecordOptions(CLI::App* cmd, store::StoreOptions& o);

// Registers the store URL's password (from --store or SERVEBENCH_STORE) as a secret, so no
// output (plan.json, results.json, messages) shows it.
void RegisterStoreSecrets(const std::string& store_flag);

// The bridge check for `compare`: the compared run directories, with the runs of the store
// (`store_flag`, SERVEBENCH_STORE or the default, when it exists) of the same models and
// configurations. The lines, one per version change (empty when none applies).
std::vector<std::string> CompareBridgeLines(const std::vector<std::string>& run_dirs,
                                            const std::string& store_flag);

// `compare --baseline`: "store:QUERY" (store/baseline.h) is the run directory of the latest
// matching run in the store (`store_flag` as for the bridge check), the runs in `new_dirs` left
// out; any other value is a run directory itself. Errors: kUsage for a bad query or no match;
// kSetup when there is no store, or the matching run's directory is gone.
Result<std::string> ResolveBaseline(const std::string& baseline, const std::string& store_flag,
                                    const std::vector<std::string>& new_dirs);

}  // namespace sb::cli
