// The fresh temporary directory of one run: <base>/servebench-sandbox-XXXXXX/work, where base is
// $TMPDIR (when absolute and reachable) or /tmp. The outer directory belongs to us (mode 0711),
// the inner one to the sandbox uid, so the program cannot rename or replace its own directory.
// Every operation goes through directory descriptors without following symlinks, and removal
// restores permissions the program took away (chmod 000) and needs no recursion or path length.
// Thread safety: none (one owner).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <sys/types.h>

#include "core/result.h"
#include "sandbox/sandbox.h"
#include "sandbox/unique_fd.h"

namespace sb::sandbox {

// A relative name without "..", ".", empty components or a leading '/'.
bool ValidRelativeName(std::string_view name);

class WorkDir {
 public:
  // owner: chown the working directory (and the files written into it) to this uid/gid.
  static Result<WorkDir> Create(std::optional<std::pair<uid_t, gid_t>> owner);

  WorkDir(WorkDir&& other) noexcept;
  WorkDir& operator=(WorkDir&&) = delete;
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  ~WorkDir();

  const std::string& path() const { return work_path_; }

  // Writes file (creating its parent directories). REQUIRES: ValidRelativeName(file.name).
  Result<void> Write(const File& file);

  // The regular file name (no symlink anywhere on the way), at most max_bytes of it.
  std::optional<std::string> Read(std::string_view name, std::uint64_t max_bytes) const;

  // True when name is a regular file (no symlinks on the way).
  bool HasRegularFile(std::string_view name) const;

  // Removes everything; also done by the destructor.
  Result<void> Remove();

 private:
  WorkDir() = default;

  std::string outer_path_, work_path_;
  UniqueFd work_fd_;
  std::optional<std::pair<uid_t, gid_t>> owner_;
};

// Removes the directory tree at path without following symlinks, restoring permissions where
// needed. Missing path: success.
Result<void> RemoveTree(const std::string& path);

}  // namespace sb::sandbox
