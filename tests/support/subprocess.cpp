#include "support/subprocess.h"

#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace sb::testing {

namespace {

using Clock = std::chrono::steady_clock;

pid_t Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
            int* out_fd, int* err_fd) {
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) {
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
  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e) {
    env_store.emplace_back(*e);
  }
  for (const auto& e : extra_env) {
    env_store.push_back(e);
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
  *out_fd = out[0];
  *err_fd = err[0];
  return pid;
}

// Reads what is available from fd into buf; returns false on EOF.
bool Drain(int fd, std::string& buf) {
  char tmp[65536];
  ssize_t n = read(fd, tmp, sizeof tmp);
  if (n > 0) {
    buf.append(tmp, static_cast<std::size_t>(n));
    return true;
  }
  return false;
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
  while (out_open || err_open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      break;
    }
    pollfd fds[2] = {{out_open ? out_fd : -1, POLLIN, 0}, {err_open ? err_fd : -1, POLLIN, 0}};
    poll(fds, 2, static_cast<int>(left.count()));
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP))) {
      out_open = Drain(out_fd, r.out);
    }
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP))) {
      err_open = Drain(err_fd, r.err);
    }
  }
  close(out_fd);
  close(err_fd);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = DecodeStatus(status);
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
    if (!Drain(out_fd_, out_buf_)) {
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
      while (out_open && Drain(out_fd_, out_buf_)) {
      }
      while (err_open && Drain(err_fd_, err_buf_)) {
      }
      return exit_code_;
    }
    pollfd fds[2] = {{out_open ? out_fd_ : -1, POLLIN, 0}, {err_open ? err_fd_ : -1, POLLIN, 0}};
    poll(fds, 2, 20);
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP))) {
      out_open = Drain(out_fd_, out_buf_);
    }
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP))) {
      err_open = Drain(err_fd_, err_buf_);
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

}  // namespace sb::testing
