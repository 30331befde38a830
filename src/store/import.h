// `servebench store import`: run directories into a store, one transaction each.
#pragma once

#include <cstddef>
#include <functional>
#include <stop_token>
#include <string>
#include <vector>

#include "store/record.h"
#include "store/store.h"

namespace sb::store {

// What an import did, run directory by run directory.
struct ImportTally {
  int added = 0;
  int replaced = 0;           // stored before with other content (a resumed run, new labels)
  int unchanged = 0;          // stored before with the same content
  int failed = 0;             // not a run directory, or the store refused it
  std::size_t attempted = 0;  // directories started; fewer than given when stopped
};

// Called once per directory: its path, the run's id ("" when it failed), and either what Add did
// ("added", "updated", "already stored") or the error message (ok false).
using ImportReport =
    std::function<void(const std::string& dir, const std::string& id, bool ok, const std::string&)>;

// Reads each run directory and adds it to `store` with `labels`. A directory that fails is
// reported and counted, and the rest go on. A stop request ends the import between directories:
// the run being written is committed or not at all, the rest are not started.
ImportTally ImportRunDirs(Store& store, const std::vector<std::string>& dirs, const Labels& labels,
                          std::stop_token stop, const ImportReport& report);

}  // namespace sb::store
