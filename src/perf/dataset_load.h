// Dataset prompts for the concurrency and rate profiles (`--dataset FILE`, docs/workloads.md
// "Datasets"): the file is read by the plan check (PrepareDataset), so a bad line stops the run
// before anything is sent; each request then takes the next entry of the dataset's order (the
// file's, or seeded-shuffled by --seed), from the start again at each profile and each rate
// point, wrapping around (counted) when a profile needs more requests than the dataset has.
// The runner side is Session::DatasetParams (dataset_load.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "client/chat.h"
#include "core/result.h"
#include "workload/dataset.h"

namespace sb::perf {

struct DatasetOptions {
  std::string path;            // --dataset FILE; "" = none
  std::string format;          // --dataset-format: sharegpt, jsonl; "" = detect
  std::string order = "file";  // --dataset-order: file, shuffle (seeded by --seed)
  bool skip_bad = false;       // --skip-bad-lines
  int max_requests = 0;        // --max-requests: only the first N of the order; 0 = all
  // Read by PrepareDataset (the plan check).
  std::shared_ptr<const workload::Dataset> loaded;
};

// Checks the options and reads the dataset into o.loaded; kUsage error naming the flag or
// FILE:LINE, kSetup when the file cannot be read.
Result<void> PrepareDataset(DatasetOptions& o);

// A chat array as JSON text -> messages; a content part list stays JSON (content_json).
std::vector<client::ChatMessage> ChatMessagesFromJson(const std::string& text);

}  // namespace sb::perf
