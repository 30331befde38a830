#include "support/subprocess.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace sb::testing {

namespace {

using Clock = std::chrono::steady_clock;

pid_t Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
            int* out_fd, int* err_fd) {
  // Close-on-exec, so a child spawned at the same time on another thread never inherits these
  // (dup2 onto 1 and 2 clears the flag for the child's own copies).
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  posix_spawn_file_actions_addclose(&fa, err[0]);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);  // the child starts with no blocked signals
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> args;
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  // extra_env: "NAME=value" replaces an inherited NAME, a bare "NAME" removes it.
  auto name_of = [](std::string_view e) { return e.substr(0, e.find('=')); };
  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view inherited(*e);
    const bool replaced = std::any_of(extra_env.begin(), extra_env.end(), [&](const auto& x) {
      return name_of(x) == name_of(inherited);
    });
    if (!replaced) {
      env_store.emplace_back(inherited);
    }
  }
  for (const auto& e : extra_env) {
    if (e.find('=') != std::string::npos) {
      env_store.push_back(e);
    }
  }
  std::vector<char*> env;
  for (auto& e : env_store) {
    env.push_back(e.data());
  }
  env.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &fa, &attr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(out[0]);
    close(err[0]);
    throw std::runtime_error(std::string("posix_spawn failed: ") + std::strerror(rc));
  }
  // Non-blocking: a grandchild that keeps the pipe open (a daemon the child started) must not
  // make a read after the child's exit wait for it.
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
  *out_fd = out[0];
  *err_fd = err[0];
  return pid;
}

enum class Read { kData, kEof, kNothingNow };

// Reads what is available from fd (non-blocking) into buf.
Read Drain(int fd, std::string& buf) {
  char tmp[65536];
  const ssize_t n = read(fd, tmp, sizeof tmp);
  if (n > 0) {
    buf.append(tmp, static_cast<std::size_t>(n));
    return Read::kData;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
    return Read::kNothingNow;
  }
  return Read::kEof;
}

// Everything already in fd's pipe; returns false when the pipe reached EOF.
bool DrainAll(int fd, std::string& buf) {
  for (;;) {
    const Read r = Drain(fd, buf);
    if (r != Read::kData) {
      return r == Read::kNothingNow;
    }
  }
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  if (WIFSIGNALED(status)) {
    return 128 + WTERMSIG(status);
  }
  return -1;
}

}  // namespace

ProcessResult RunProcess(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                         const std::vector<std::string>& extra_env) {
  ProcessResult r;
  int out_fd = -1, err_fd = -1;
  pid_t pid = Spawn(argv, extra_env, &out_fd, &err_fd);
  auto deadline = Clock::now() + limit;
  bool out_open = true, err_open = true;
  int status = 0;
  rusage usage{};
  bool reaped = false;
  // Until the child exits (or the limit): its output, as it comes. Once it has exited, what is
  // left in the pipes is read and nothing more is awaited, even if a process it started still
  // holds them open.
  while (!reaped) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      break;
    }
    pollfd fds[2] = {{out_open ? out_fd : -1, POLLIN, 0}, {err_open ? err_fd : -1, POLLIN, 0}};
    poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 20)));
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP))) {
      out_open = Drain(out_fd, r.out) != Read::kEof;
    }
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP))) {
      err_open = Drain(err_fd, r.err) != Read::kEof;
    }
    reaped = wait4(pid, &status, WNOHANG, &usage) == pid;
  }
  if (out_open) {
    DrainAll(out_fd, r.out);
  }
  if (err_open) {
    DrainAll(err_fd, r.err);
  }
  close(out_fd);
  close(err_fd);
  if (!reaped) {
    wait4(pid, &status, 0, &usage);
  }
  r.exit_code = DecodeStatus(status);
  r.max_rss_kb = usage.ru_maxrss;
  return r;
}

Child::Child(const std::vector<std::string>& argv) {
  pid_ = Spawn(argv, {}, &out_fd_, &err_fd_);
}

Child::~Child() {
  if (!exited_) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  close(out_fd_);
  close(err_fd_);
}

std::string Child::ReadLine(std::chrono::milliseconds limit) {
  auto deadline = Clock::now() + limit;
  while (true) {
    auto nl = out_buf_.find('\n');
    if (nl != std::string::npos) {
      std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      return "";
    }
    pollfd fd = {out_fd_, POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) {
      return "";
    }
    if (Drain(out_fd_, out_buf_) == Read::kEof) {
      return "";
    }
  }
}

void Child::Signal(int sig) {
  kill(pid_, sig);
}

int Child::Wait(std::chrono::milliseconds limit) {
  auto deadline = Clock::now() + limit;
  bool out_open = true, err_open = true;
  // Keep draining both pipes so the child never blocks on a full pipe.
  while (Clock::now() < deadline) {
    int status = 0;
    pid_t w = waitpid(pid_, &status, WNOHANG);
    if (w == pid_) {
      exited_ = true;
      exit_code_ = DecodeStatus(status);
      if (out_open) {
        DrainAll(out_fd_, out_buf_);
      }
      if (err_open) {
        DrainAll(err_fd_, err_buf_);
      }
      return exit_code_;
    }
    pollfd fds[2] = {{out_open ? out_fd_ : -1, POLLIN, 0}, {err_open ? err_fd_ : -1, POLLIN, 0}};
    poll(fds, 2, 20);
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP))) {
      out_open = Drain(out_fd_, out_buf_) != Read::kEof;
    }
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP))) {
      err_open = Drain(err_fd_, err_buf_) != Read::kEof;
    }
  }
  return -1;
}

std::string Child::Stderr() {
  return err_buf_;
}

std::string Child::RemainingStdout() {
  return out_buf_;
}

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path == nullptr ? "/usr/bin:/bin" : path);
  for (std::string d; std::getline(dirs, d, ':');) {
    const std::filesystem::path candidate = std::filesystem::path(d) / name;
    if (!d.empty() && access(candidate.c_str(), X_OK) == 0) {
      return candidate.string();
    }
  }
  return "";
}

}  // namespace sb::testing
