#include "store/import.h"

namespace sb::store {

ImportTally ImportRunDirs(Store& store, const std::vector<std::string>& dirs, const Labels& labels,
                          std::stop_token stop, const ImportReport& report) {
  ImportTally t;
  for (const auto& dir : dirs) {
    if (stop.stop_requested()) {
      break;
    }
    ++t.attempted;
    auto record = ReadRunDir(dir, labels);
    if (!record) {
      ++t.failed;
      report(dir, "", false, record.error().message);
      continue;
    }
    auto outcome = store.Add(record.value());
    if (!outcome) {
      ++t.failed;
      report(dir, record->id, false, dir + ": " + outcome.error().message);
      continue;
    }
    switch (outcome.value()) {
      case AddOutcome::kAdded:
        ++t.added;
        report(dir, record->id, true, "added");
        break;
      case AddOutcome::kUnchanged:
        ++t.unchanged;
        report(dir, record->id, true, "already stored");
        break;
      case AddOutcome::kReplaced:
        ++t.replaced;
        report(dir, record->id, true, "updated");
        break;
    }
  }
  return t;
}

}  // namespace sb::store
