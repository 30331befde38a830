// The run store (docs/store.md): every finished run, indexed, in one SQLite file (the default)
// or a team's PostgreSQL database, with one versioned schema for both. The run directory stays
// the source of truth: a run is recorded by importing its directory, and `store import` can
// rebuild a store from directories. Each run is written in one transaction, so a crash or a
// signal mid-write leaves the store as it was; concurrent writers queue (SQLite WAL + busy
// timeout; a PostgreSQL advisory lock). Thread safety: one Store per thread.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "store/record.h"

namespace sb::store {

// The schema version this build writes; older stores are migrated when opened.
inline constexpr int kSchemaVersion = 2;

// What `--store`, `--no-store` and SERVEBENCH_STORE say (the run/perf/launch flags, and the
// store-reading commands'), with the run's labels.
struct StoreOptions {
  std::string store;  // --store PATH | postgresql://... ("" = SERVEBENCH_STORE, else the default)
  bool no_store = false;
  std::string label;
  std::vector<std::string> tags;  // "k=v"
};

// Where the store is: --store, else $SERVEBENCH_STORE ("off" = none), else
// $XDG_DATA_HOME/servebench/runs.sqlite, else ~/.local/share/servebench/runs.sqlite.
// nullopt: no store (--no-store, SERVEBENCH_STORE=off, or no HOME to put it in).
std::optional<std::string> ResolveLocation(const StoreOptions& options);

// Whether `location` is a PostgreSQL URL: postgresql:// or postgres://, the scheme in any case.
bool IsPostgresUrl(std::string_view location);

// kUsage error unless `location` is a store this servebench can open: a PostgreSQL URL, or a
// SQLite file path whose directory exists. An empty value, another scheme (sqlite://,
// mysql://, file://) and a missing directory are refused (the default location's own folder is
// created by Open, no other).
Result<void> CheckLocation(const std::string& location);

// A location as it may be printed (a PostgreSQL URL's password redacted).
std::string DisplayLocation(const std::string& location);

// One stored run, as `store ls` lists it.
struct RunListing {
  std::string id, started_at, status, model, server, tool_version, config, label, run_dir;
};

// What Add did.
enum class AddOutcome { kAdded, kUnchanged, kReplaced };

class Store {
 public:
  virtual ~Store() = default;
  // Records one run in one transaction. A run already stored with the same content is left
  // alone (kUnchanged); with other content (a resumed run, new labels) it is replaced.
  virtual Result<AddOutcome> Add(const RunRecord& run) = 0;
  // Every run, oldest first.
  virtual Result<std::vector<RunListing>> List() = 0;
  // Removes the runs whose id starts with `id_prefix` (kUsage error when it names none or,
  // unless it is a whole id, several): returns the ids removed.
  virtual Result<std::vector<std::string>> Remove(const std::string& id_prefix) = 0;
  // Every run with its metric rows (not its tests), oldest first (ties by id).
  virtual Result<std::vector<RunRecord>> LoadAll() = 0;
  // The run's tests, in their recorded order.
  virtual Result<std::vector<TestRow>> Tests(const std::string& id) = 0;
  virtual std::string Describe() const = 0;
  virtual int SchemaVersion() const = 0;
};

// Opens (creating or migrating) the store at `location`: a postgresql:// or postgres:// URL, or
// a SQLite file path. Errors name the store (password redacted) and the reason.
Result<std::unique_ptr<Store>> Open(const std::string& location);

// Records the complete run directory `dir` in the store `options` name, after a run: prints one
// line to stderr ("stored run ID in STORE", or "run not stored in STORE: REASON; add it later
// with `servebench store import DIR`"). Never fails the run.
void RecordRun(const StoreOptions& options, const std::filesystem::path& dir);

}  // namespace sb::store
