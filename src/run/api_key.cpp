// The API key (--api-key-file, --api-key-env, $OPENAI_API_KEY): read with a limit on its size and
// on the wait for it, and refused when it would change the HTTP request it goes into.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include "core/printable.h"
#include "run/target.h"

namespace sb::run {

namespace {

// A key of more than this is not a key: /dev/zero, a log file or a disk image given by mistake
// would otherwise be read into memory without end.
constexpr std::size_t kMaxSecretBytes = 64 * 1024;
// How long a pipe (`--api-key-file <(pass show key)`, a FIFO) may take to deliver the key.
constexpr int kSecretWaitMs = 30'000;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}

  ~Fd() {
    if (fd_ >= 0) {
      close(fd_);
    }
  }

  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Result<std::string> ReadSecretFile(const std::string& flag, const std::string& path) {
  const auto fail = [&](const std::string& why) {
    return MakeError(ErrorCode::kSetup, fmt::format("{} {}: {}", flag, path, why));
  };
  // Non-blocking, so a FIFO nobody writes to does not block the open itself; poll() below bounds
  // the wait for its data.
  Fd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    return fail(fmt::format("cannot read it: {}", std::strerror(errno)));
  }
  std::string data;
  char buf[8192];
  int waited_ms = 0;
  for (;;) {
    pollfd p{fd.get(), POLLIN, 0};
    const int ready = poll(&p, 1, 100);
    if (ready < 0 && errno != EINTR) {
      return fail(fmt::format("cannot read it: {}", std::strerror(errno)));
    }
    if (ready <= 0) {
      // Linux reports nothing on a FIFO that has never had a writer: keep waiting, bounded.
      waited_ms += 100;
      if (waited_ms >= kSecretWaitMs) {
        return fail(fmt::format("nothing to read after {} s (a pipe nobody writes to?)",
                                kSecretWaitMs / 1000));
      }
      continue;
    }
    const ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) {
        continue;
      }
      return fail(fmt::format("cannot read it: {}", std::strerror(errno)));
    }
    if (n == 0) {
      break;
    }
    data.append(buf, static_cast<std::size_t>(n));
    if (data.size() > kMaxSecretBytes) {
      return fail("over 64 KiB; is it a secret file?");
    }
  }
  return data;
}

Result<std::string> ResolveApiKey(const TargetOptions& o) {
  const auto checked = [](std::string key, const std::string& source) -> Result<std::string> {
    // A CR or LF would end the Authorization header and start one of the key's choosing; the
    // key itself is never printed.
    if (HasControlChar(key)) {
      return MakeError(ErrorCode::kSetup,
                       fmt::format("{}: the API key holds a control character (CR, LF, NUL, tab or "
                                   "the like); it must be the key alone, on one line",
                                   source));
    }
    return key;
  };
  if (!o.api_key_file.empty()) {
    auto data = ReadSecretFile("--api-key-file", o.api_key_file);
    if (!data) {
      return data.error();
    }
    std::string key = std::move(data.value());
    // One trailing line break (the file's last line), "\n" or "\r\n".
    if (key.ends_with('\n')) {
      key.pop_back();
      if (key.ends_with('\r')) {
        key.pop_back();
      }
    }
    // Spaces around the key are not part of it.
    const std::size_t begin = key.find_first_not_of(' ');
    key = begin == std::string::npos ? std::string()
                                     : key.substr(begin, key.find_last_not_of(' ') - begin + 1);
    return checked(std::move(key), "--api-key-file " + o.api_key_file);
  }
  const std::string var = o.api_key_env.empty() ? "OPENAI_API_KEY" : o.api_key_env;
  const char* v = std::getenv(var.c_str());
  if (v == nullptr || *v == '\0') {
    if (!o.api_key_env.empty()) {
      return MakeError(ErrorCode::kSetup,
                       fmt::format("--api-key-env {}: that environment variable is not set", var));
    }
    return std::string();
  }
  return checked(std::string(v),
                 o.api_key_env.empty() ? "$OPENAI_API_KEY" : "--api-key-env " + var);
}

}  // namespace sb::run
