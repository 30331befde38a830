// One servebench at a time per run directory (docs/resume.md, "One process per run directory"):
// a run, `--resume`, `--overwrite`, `launch` (its base directory) and `merge --out` hold an
// exclusive flock(2) on DIR/.servebench.lock for as long as they write there. The kernel releases
// it when the process ends, however it ends (kill -9 included), so a stale lock never blocks a
// later --resume; the file itself stays.
#pragma once

#include <filesystem>
#include <string_view>
#include <utility>

#include "core/result.h"

namespace sb::report {

inline constexpr std::string_view kLockFile = ".servebench.lock";

class RunDirLock {
 public:
  // Creates `dir` (and its parents) when missing and takes the lock, writing this process's id
  // into the lock file. Errors: kUsage when another process holds it:
  //   "runs/x is in use by another servebench (pid 4242): wait for it to end, or choose another
  //    directory"
  // kIo naming the path and the system's reason when the directory or the file cannot be made.
  static Result<RunDirLock> Acquire(const std::filesystem::path& dir);

  RunDirLock(RunDirLock&& other) noexcept;
  RunDirLock& operator=(RunDirLock&& other) noexcept;
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;
  ~RunDirLock();

  const std::filesystem::path& dir() const { return dir_; }

 private:
  RunDirLock(std::filesystem::path dir, int fd) : dir_(std::move(dir)), fd_(fd) {}

  std::filesystem::path dir_;
  int fd_ = -1;  // the open lock file; closing it releases the lock
};

}  // namespace sb::report
