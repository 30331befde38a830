// Runs untrusted programs (model-written code) in a child process with hard limits: CPU time,
// address space, process count, file size, open files, a wall-clock timeout, an empty
// environment (PATH only), a fresh temporary directory removed afterwards, no network, and
// capped output. The parent survives anything the child does; every limit hit is reported as a
// verdict with a reason, never as a harness failure. docs/sandbox.md lists each protection, how
// it is applied (namespaces, Landlock, seccomp, rlimits, uid drop) and the fallbacks when the
// kernel or the privileges do not allow one.
// Thread safety: Run may be called from several threads at once (each child is independent).
#pragma once

#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace sb::sandbox {

struct Limits {
  double cpu_s = 10.0;                      // RLIMIT_CPU of each process
  double wall_s = 20.0;                     // the whole run, then SIGKILL to every process
  std::uint64_t memory_bytes = 1ull << 30;  // RLIMIT_AS of each process
  int processes = 32;                       // processes and threads at once
  std::uint64_t file_bytes = 16ull << 20;   // RLIMIT_FSIZE: largest file it may write
  std::uint64_t output_bytes = 1ull << 20;  // stdout and stderr kept, each; the rest dropped
  int open_files = 64;                      // RLIMIT_NOFILE
};

struct File {
  std::string name;  // relative to the working directory, no ".." (kUsage error otherwise)
  std::string content;
  bool executable = false;  // mode 0755 instead of 0644
};

struct Program {
  // argv[0] is an absolute path to the executable, or "./NAME" for one of files (the working
  // directory's path is not known before the run).
  std::vector<std::string> argv;
  std::string stdin_data;   // written to its stdin, then closed
  std::vector<File> files;  // created in the fresh working directory before the start
  // Files to read back from the working directory after the run (e.g. a compiled binary).
  std::vector<std::string> collect;
};

enum class Verdict {
  kExited,         // exited by itself (see exit_code)
  kSignaled,       // killed by a signal it did not get from us (segfault, abort)
  kCpuLimit,       // CPU time limit (SIGXCPU/SIGKILL from RLIMIT_CPU)
  kWallTimeout,    // wall-clock limit: we killed it
  kOutputLimit,    // wrote more than output_bytes to stdout or stderr: we killed it
  kFileSizeLimit,  // tried to write a file larger than file_bytes (SIGXFSZ; Python: EFBIG)
  kMemoryLimit,    // ran out of address space (detected from the exit: MemoryError, bad_alloc..)
  kCompileError,   // RunCode only: the compiler rejected the source (stderr holds its message)
  kStopped,        // the caller's stop request (Ctrl-C, --deadline): we killed it at once
};

// "exited", "signaled", "cpu_limit", "wall_timeout", "output_limit", "file_size_limit",
// "memory_limit", "compile_error", "stopped".
std::string_view VerdictName(Verdict verdict);

struct RunResult {
  Verdict verdict = Verdict::kExited;
  int exit_code = -1;                    // when it exited by itself (kExited, ...)
  int signal = 0;                        // when killed by a signal
  std::string stdout_data, stderr_data;  // at most output_bytes each
  bool output_truncated = false;
  double wall_s = 0, cpu_s = 0;  // cpu_s: user + system of the whole tree
  // One line for a FAIL reason: "exit code 1", "CPU time limit (10 s)", "killed after 20 s
  // wall time", "wrote over 1 MiB of output", "SIGSEGV" ...
  std::string reason;
  std::vector<std::pair<std::string, std::string>> collected;  // Program::collect, those present
};

// Which protections this process can apply (probed once; cached).
struct Isolation {
  bool network_namespace = false;  // unshare(CLONE_NEWNET): no interface but loopback, down
  bool pid_namespace = false;      // every descendant dies with the sandbox's init
  bool landlock = false;           // writes confined to the working directory
  bool landlock_net = false;       // TCP connect/bind denied (Landlock ABI >= 4)
  bool seccomp = false;            // socket() for anything but AF_UNIX denied
  bool uid_drop = false;           // runs as an unprivileged uid of its own (root only)
  // "netns, pidns, landlock, landlock-net, seccomp, uid" of those applied ("none"), for reports.
  std::string Describe() const;
};

Isolation Probe();

// Runs program under limits in a fresh temporary directory (removed afterwards).
// Errors are harness problems only (kSetup: cannot create the directory, fork failed, the
// executable does not exist); whatever the program does is a RunResult. A stop request on
// `stop` kills the program's whole tree at once and returns verdict kStopped (within about a
// second however the program behaves), so Ctrl-C never waits for the wall limit.
Result<RunResult> Run(const Program& program, const Limits& limits, std::stop_token stop = {});

// ---- Model-written source code ------------------------------------------------------------

enum class Language { kPython, kCpp };

struct CodeOptions {
  std::string python;  // interpreter; "" = /usr/bin/python3, else python3 on PATH
  std::string cxx;     // C++ compiler; "" = /usr/bin/g++, else g++ on PATH
  Limits run;          // the program's run
  // The compile step (C++ only): more time and memory, same other protections.
  Limits compile{30.0, 60.0, 2ull << 30, 32, 256ull << 20, 1ull << 20, 256};
  std::stop_token stop;  // a stop request ends the compile or the run at once (kStopped)
};

// Runs source as a program: Python as main.py under the interpreter; C++ compiled with
// `-std=c++17 -O1 -pipe` in one sandboxed run, the binary run in a second. stdin_data goes to
// the program's stdin. A compiler rejection is verdict kCompileError with the compiler's
// message in stderr_data and reason "compile error: <first error line>".
// kSetup error when the interpreter or compiler is not installed (message names it).
Result<RunResult> RunCode(Language language, std::string_view source, std::string_view stdin_data,
                          const CodeOptions& options);

}  // namespace sb::sandbox
