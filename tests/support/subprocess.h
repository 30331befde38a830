// Test support: runs the servebench binary (or any program) as a real child process with its
// stdout/stderr captured, for end-to-end tests of the command line.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <sys/types.h>

namespace sb::testing {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  std::string out;
  std::string err;
  long max_rss_kb = 0;  // the child's peak resident set (wait4's ru_maxrss), in KiB
};

// Runs argv to completion (killing it after `limit`), returns its exit code and output: what it
// wrote before it exited (a process it left running that still holds stdout is not waited for).
// extra_env: "NAME=value" sets or replaces NAME in the inherited environment, "NAME" removes it.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         std::chrono::milliseconds limit = std::chrono::seconds(120),
                         const std::vector<std::string>& extra_env = {});

// The path of `name` on PATH (RunProcess does not search it); "" when there is none.
std::string FindOnPath(const std::string& name);

// A child left running (e.g. `servebench sim`): its stdout can be read line by line.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv);
  ~Child();  // SIGKILL + reap if still running
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // The next stdout line, or "" on EOF/timeout.
  std::string ReadLine(std::chrono::milliseconds limit = std::chrono::seconds(20));
  void Signal(int sig);
  // Waits for exit; returns the exit code (128 + signal if signalled), -1 on timeout.
  int Wait(std::chrono::milliseconds limit = std::chrono::seconds(60));
  // Everything the child wrote to stderr (available after Wait).
  std::string Stderr();
  std::string RemainingStdout();

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string out_buf_;
  std::string err_buf_;
  bool exited_ = false;
  int exit_code_ = -1;
};

}  // namespace sb::testing
