#include "core/output_file.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <system_error>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sb {

namespace fs = std::filesystem;

namespace {

std::string Reason(int err) {
  return std::error_code(err, std::generic_category()).message();
}

Error WriteError(const fs::path& path, int err) {
  return MakeError(ErrorCode::kIo, "cannot write " + OutputName(path) + ": " + Reason(err));
}

// write(2) until all of `bytes` is written; the errno of the failure, else 0.
int WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return errno;
    }
    if (n == 0) {
      return EIO;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

// An existing device or FIFO: written where it is, never replaced.
Result<void> WriteInPlace(const fs::path& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    return WriteError(path, errno);
  }
  int err = WriteAll(fd, bytes);
  if (::close(fd) != 0 && err == 0 && errno != EINTR) {
    err = errno;
  }
  if (err != 0) {
    return WriteError(path, err);
  }
  return {};
}

// A regular file or a new path: temp file in the same directory, fsync, rename, fsync the
// directory. `mode` (the replaced file's permission bits) is kept; -1 = a new file (0666 & umask).
Result<void> ReplaceViaTemp(const fs::path& shown, const fs::path& target, int mode,
                            std::string_view bytes) {
  static std::atomic<unsigned> counter{0};
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  // The temp name stays within NAME_MAX whatever the target's name is.
  const std::string name = target.filename().string().substr(0, 200);
  const fs::path tmp = dir / ("." + name + ".tmp." + std::to_string(::getpid()) + "." +
                              std::to_string(counter.fetch_add(1)));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    return WriteError(shown, errno);
  }
  int err = WriteAll(fd, bytes);
  if (err == 0 && mode >= 0 && ::fchmod(fd, static_cast<mode_t>(mode)) != 0) {
    err = errno;
  }
  if (err == 0 && ::fsync(fd) != 0) {
    err = errno;
  }
  if (::close(fd) != 0 && err == 0 && errno != EINTR) {
    err = errno;
  }
  if (err == 0 && ::rename(tmp.c_str(), target.c_str()) != 0) {
    err = errno;
  }
  if (err != 0) {
    ::unlink(tmp.c_str());
    return WriteError(shown, err);
  }
  // Make the rename itself durable; a failure here does not undo a completed replace.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

}  // namespace

std::string OutputName(const fs::path& path) {
  return path == "-" ? std::string("standard output") : path.string();
}

Result<void> CheckStdout(bool* broken_pipe) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  int err = flushed ? 0 : errno;
  if (flushed && std::ferror(stdout) == 0) {
    return {};
  }
  std::clearerr(stdout);
  if (err == 0) {
    // An earlier write failed and the buffer is empty now: a pipe whose reader is gone still
    // says so (POLLERR).
    pollfd p{::fileno(stdout), POLLOUT, 0};
    if (::poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0) {
      err = EPIPE;
    }
  }
  if (broken_pipe != nullptr) {
    *broken_pipe = err == EPIPE;
  }
  return MakeError(ErrorCode::kIo,
                   "cannot write standard output: " +
                       (err != 0 ? Reason(err) : std::string("an earlier write failed")));
}

Result<void> WriteOutputFile(const fs::path& path, std::string_view bytes) {
  if (path == "-") {
    errno = 0;
    const bool whole = std::fwrite(bytes.data(), 1, bytes.size(), stdout) == bytes.size();
    const int err = whole ? 0 : errno;  // the reason, before a later flush finds nothing left
    auto ok = CheckStdout();
    if (!ok && err != 0) {
      return MakeError(ErrorCode::kIo, "cannot write standard output: " + Reason(err));
    }
    return ok;
  }
  if (path.empty()) {
    return MakeError(ErrorCode::kUsage, "an empty output path");
  }

  struct stat st {};

  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) {
      return WriteError(path, errno);
    }
    return ReplaceViaTemp(path, path, -1, bytes);  // a new file (or a dangling link's place)
  }
  if (S_ISDIR(st.st_mode)) {
    return WriteError(path, EISDIR);
  }
  if (!S_ISREG(st.st_mode)) {
    return WriteInPlace(path, bytes);
  }
  fs::path target = path;

  struct stat lst {};

  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    std::error_code ec;
    if (fs::path resolved = fs::canonical(path, ec); !ec) {
      target = resolved;
    }
  }
  return ReplaceViaTemp(path, target, static_cast<int>(st.st_mode & 07777), bytes);
}

}  // namespace sb
