// Prompt datasets for the concurrency and rate profiles (`--dataset FILE`, docs/workloads.md
// "Datasets"), read exactly as published:
//   sharegpt  a JSON array of {"id": ..., "conversations": [{"from": "human", "value": ...},
//             {"from": "gpt", "value": ...}, ...]} (ShareGPT_V3_unfiltered_cleaned_split.json,
//             the file vllm bench serve reads): the first human turn is the prompt, the turn
//             after it the reply (its length in tokens is the output length unless
//             --output-tokens is given). Entries without a human turn followed by a reply are
//             skipped and counted (as vllm bench serve skips conversations of fewer than 2 turns).
//   jsonl     one object per line: "prompt" (a string) or "messages" (an OpenAI chat array),
//             optional "output_tokens" (a whole number >= 1), optional "images" (file paths,
//             relative to the dataset's folder, or data: URLs; with "prompt" only).
// Every error names FILE:LINE (a ShareGPT entry's line is where its object starts); with
// skip_bad a bad line or entry is skipped and counted instead (a ShareGPT file that is not
// valid JSON at all still stops). Nothing is read from the network. Thread safety: pure
// functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace sb::workload {

enum class DatasetFormat { kShareGpt, kJsonl };

// "sharegpt", "jsonl".
std::string_view DatasetFormatName(DatasetFormat format);
std::optional<DatasetFormat> ParseDatasetFormat(std::string_view name);

struct DatasetEntry {
  std::string prompt;                   // the user message, when given as text
  std::string messages_json;            // jsonl "messages": the chat array as JSON text
  std::vector<std::string> image_urls;  // jsonl "images", each as a data: URL
  int output_tokens = 0;                // jsonl "output_tokens"; 0 = not given
  std::string reply;                    // sharegpt: the reply's text (its length is the output's)
  int line = 0;                         // where it came from (1-based)
};

struct Dataset {
  DatasetFormat format = DatasetFormat::kJsonl;
  std::vector<DatasetEntry> entries;
  long long skipped_bad = 0;       // bad lines or entries skipped (skip_bad)
  long long skipped_no_reply = 0;  // sharegpt entries without a human turn and a reply
};

// The format told by the first non-blank character ('[': sharegpt, '{': jsonl).
std::optional<DatasetFormat> DetectDatasetFormat(std::string_view text);

// Parses dataset text; `name` is the file name errors start with, `dir` the folder image paths
// are relative to. kUsage error "NAME:LINE: what" for a bad line (unless skip_bad) or an
// empty dataset.
Result<Dataset> ParseDataset(std::string_view text, const std::string& name,
                             std::optional<DatasetFormat> format, bool skip_bad,
                             const std::string& dir = ".");

// Reads and parses a dataset file (kSetup error when it or an image cannot be read).
Result<Dataset> ReadDataset(const std::string& path, std::optional<DatasetFormat> format,
                            bool skip_bad);

// The order requests draw entries in: the file's, or a seeded shuffle (the same seed gives the
// same order everywhere); max_requests > 0 keeps the first that many of that order.
std::vector<std::size_t> DatasetOrder(std::size_t size, bool shuffle, std::uint64_t seed,
                                      std::size_t max_requests);

}  // namespace sb::workload
