#include "report/run_dir_lock.h"

#include <cerrno>
#include <string>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

namespace sb::report {

namespace fs = std::filesystem;

namespace {

std::string Reason(int err) {
  return std::error_code(err, std::generic_category()).message();
}

// The holder's pid as its lock file says, or "" (a holder that has not written it yet).
std::string HolderPid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) {
    pid.push_back(buf[i]);
  }
  return pid;
}

}  // namespace

Result<RunDirLock> RunDirLock::Acquire(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return MakeError(ErrorCode::kIo,
                     fmt::format("cannot create run directory {}: {}", dir.string(), ec.message()));
  }
  const fs::path file = dir / std::string(kLockFile);
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    return MakeError(ErrorCode::kIo,
                     fmt::format("cannot open {}: {}", file.string(), Reason(errno)));
  }
  int rc = 0;
  while ((rc = ::flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
  }
  if (rc != 0) {
    const int err = errno;
    const std::string pid = err == EWOULDBLOCK ? HolderPid(fd) : std::string();
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("{} is in use by another servebench ({}): wait for it to end, "
                                   "or choose another directory",
                                   dir.string(), pid.empty() ? "pid unknown" : "pid " + pid));
    }
    return MakeError(ErrorCode::kIo, fmt::format("cannot lock {}: {}", file.string(), Reason(err)));
  }
  // Who holds it, for the next one's message; a failure here costs only that message.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] ssize_t n = ::pwrite(fd, pid.data(), pid.size(), 0);
  }
  return RunDirLock(dir, fd);
}

RunDirLock::RunDirLock(RunDirLock&& other) noexcept
    : dir_(std::move(other.dir_)), fd_(std::exchange(other.fd_, -1)) {}

RunDirLock& RunDirLock::operator=(RunDirLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    dir_ = std::move(other.dir_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

RunDirLock::~RunDirLock() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

}  // namespace sb::report
