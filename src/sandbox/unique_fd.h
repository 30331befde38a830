// An owning file descriptor: closed when the owner goes away. Internal to the sandbox module.
// Thread safety: none (one owner).
#pragma once

#include <utility>

#include <unistd.h>

namespace sb::sandbox {

class UniqueFd {
 public:
  UniqueFd() = default;

  explicit UniqueFd(int fd) : fd_(fd) {}

  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      Reset(std::exchange(other.fd_, -1));
    }
    return *this;
  }

  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }

  bool valid() const { return fd_ >= 0; }

  void Reset(int fd = -1) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace sb::sandbox
