// The run directory (docs/architecture.md, docs/results-schema.md): results.json, samples.jsonl,
// report.md. samples.jsonl is appended one line per finished request and flushed at once, so a
// crash or Ctrl-C loses nothing already appended. results.json and the text reports are replaced
// atomically (temp file in the same directory, fsync, rename), so an interrupted write leaves
// the previous complete file, never half a file.
// Thread safety: AppendSample may be called from several threads (lines never interleave);
// WriteResults/WriteText may run concurrently with it (each write uses its own temp file; the
// last rename wins).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"

namespace sb::report {

inline constexpr std::string_view kResultsFile = "results.json";
inline constexpr std::string_view kSamplesFile = "samples.jsonl";
inline constexpr std::string_view kReportFile = "report.md";

// Prefix of results.json's "schema" value that LoadResults accepts.
inline constexpr std::string_view kResultsSchemaPrefix = "servebench.results/";

// What RunDir::Create does with a directory that already holds a run.
enum class RunDirMode {
  kNew,        // refuse a directory holding results.json or a non-empty samples.jsonl
  kOverwrite,  // start afresh: truncate samples.jsonl, delete results.json/report.md/report.html
  kResume,     // continue a run (--resume): keep everything, append to samples.jsonl;
               // the directory must hold results.json, samples.jsonl or plan.json
};

class RunDir {
 public:
  // Creates `dir` (and its parents) and opens samples.jsonl for appending.
  // Errors: kIo with the path and the system's reason when the directory or samples.jsonl cannot
  // be created; kSetup when `mode` forbids what the directory holds.
  static Result<RunDir> Create(const std::filesystem::path& dir,
                               RunDirMode mode = RunDirMode::kNew);

  RunDir(RunDir&&) noexcept;
  RunDir& operator=(RunDir&&) noexcept;
  RunDir(const RunDir&) = delete;
  RunDir& operator=(const RunDir&) = delete;
  ~RunDir();

  // Appends `record` as one line of samples.jsonl and flushes it to the kernel before
  // returning. Invalid UTF-8 in strings is replaced (U+FFFD), never thrown on. A failed append
  // (disk full, I/O error) takes back any part of the line that was written, so the file always
  // ends in a whole line, and every later append fails with the same error (kIo, naming the
  // file and the system's reason). Every write of the run directory passes through Redact()
  // (core/redact.h): no registered secret reaches a file.
  Result<void> AppendSample(const nlohmann::json& record);

  // Bytes in samples.jsonl now (every whole line appended so far).
  std::uint64_t samples_bytes() const;

  // Replaces results.json atomically with `results`, pretty-printed (2-space indent).
  Result<void> WriteResults(const nlohmann::json& results);

  // For a results.json that no longer fits on the disk: the last one written gets `status`,
  // `stop_reason`, `finished_at` and one more warning, `note`, and replaces itself. Errors: kIo
  // (cannot read or write it), kSetup (not a results file).
  Result<void> RestatusResults(const std::string& status, const std::string& stop_reason,
                               const std::string& finished_at, const std::string& note);

  // Replaces the file `name` (a plain file name such as "report.md"; no directories) atomically.
  Result<void> WriteText(std::string_view name, std::string_view text);

  const std::filesystem::path& path() const { return dir_; }

 private:
  struct Samples;
  RunDir(std::filesystem::path dir, std::unique_ptr<Samples> samples);

  std::filesystem::path dir_;
  std::unique_ptr<Samples> samples_;
};

// Reads a results.json, given its path or the run directory holding it.
// Errors (kIo: cannot read; kSetup: not JSON, or not a servebench results file):
//   "cannot read runs/x/results.json: No such file or directory"
//   "runs/x/results.json is not valid JSON: <parser message>"
//   "runs/x/results.json is not a servebench results file (\"schema\" is \"foo/1\")"
Result<nlohmann::json> LoadResults(const std::filesystem::path& run_dir_or_file);

// The default run directory name: "<utc_compact>-<model>", e.g.
// ("20261202T090000Z", "Qwen/Qwen3 8B") -> "20261202T090000Z-Qwen_Qwen3_8B".
// In the model name '/' and ' ' become '_', and anything but ASCII letters, digits, '.', '_' and
// '-' is removed, leading dots are dropped (never "." or ".."), and the model part is cut to 100
// characters. An empty model part drops the "-".
std::string DefaultRunDirName(const std::string& utc_compact, const std::string& model);

}  // namespace sb::report
