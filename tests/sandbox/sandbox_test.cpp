// Limits and verdicts: every limit is proved with a program that breaks it, and the harness
// carries on.
#include "sandbox/sandbox.h"

#include <chrono>
#include <stop_token>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include "sandbox/internal.h"
#include "sandbox/sandbox_test_util.h"

namespace sb::sandbox {
namespace {

using testutil::MustRun;
using testutil::Py;
using testutil::Small;

TEST(SandboxVerdict, Names) {
  EXPECT_EQ(VerdictName(Verdict::kExited), "exited");
  EXPECT_EQ(VerdictName(Verdict::kSignaled), "signaled");
  EXPECT_EQ(VerdictName(Verdict::kCpuLimit), "cpu_limit");
  EXPECT_EQ(VerdictName(Verdict::kWallTimeout), "wall_timeout");
  EXPECT_EQ(VerdictName(Verdict::kOutputLimit), "output_limit");
  EXPECT_EQ(VerdictName(Verdict::kFileSizeLimit), "file_size_limit");
  EXPECT_EQ(VerdictName(Verdict::kMemoryLimit), "memory_limit");
  EXPECT_EQ(VerdictName(Verdict::kCompileError), "compile_error");
  EXPECT_EQ(VerdictName(Verdict::kStopped), "stopped");
}

TEST(SandboxVerdict, FormatBytesAndSignals) {
  EXPECT_EQ(FormatBytes(100), "100 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(1ull << 20), "1 MiB");
  EXPECT_EQ(FormatBytes(16ull << 20), "16 MiB");
  EXPECT_EQ(FormatBytes(1ull << 30), "1 GiB");
  EXPECT_EQ(SignalName(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(SignalName(SIGXCPU), "SIGXCPU");
}

// Wait statuses as the kernel encodes them.
int Exited(int code) {
  return code << 8;
}

int Killed(int sig) {
  return sig;
}

RunResult ClassifyWith(const Ending& e, const std::string& stderr_data = "") {
  RunResult r;
  r.stderr_data = stderr_data;
  Limits l;
  l.cpu_s = 2.5;  // RLIMIT_CPU 3 s
  l.memory_bytes = 1ull << 30;
  Classify(e, l, r);
  return r;
}

TEST(SandboxVerdict, Mapping) {
  Ending e;
  e.program_ended = true;
  e.status = Exited(3);
  RunResult r = ClassifyWith(e);
  EXPECT_EQ(r.verdict, Verdict::kExited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.reason, "exit code 3");

  r = ClassifyWith(e, "Traceback...\nMemoryError\n");
  EXPECT_EQ(r.verdict, Verdict::kMemoryLimit);
  EXPECT_EQ(r.reason, "memory limit (1 GiB): MemoryError");

  e.status = Exited(0);  // a clean exit is never a memory verdict
  EXPECT_EQ(ClassifyWith(e, "MemoryError").verdict, Verdict::kExited);

  e.status = Killed(SIGXCPU);
  r = ClassifyWith(e);
  EXPECT_EQ(r.verdict, Verdict::kCpuLimit);
  EXPECT_EQ(r.reason, "CPU time limit (3 s)");
  EXPECT_EQ(r.signal, SIGXCPU);

  e.status = Killed(SIGKILL);  // the hard limit (SIGXCPU ignored)
  e.program_cpu_s = 3.9;
  EXPECT_EQ(ClassifyWith(e).verdict, Verdict::kCpuLimit);
  e.program_cpu_s = 0.1;
  e.maxrss_kib = 900 << 10;  // the OOM killer
  EXPECT_EQ(ClassifyWith(e).verdict, Verdict::kMemoryLimit);
  e.maxrss_kib = 1000;
  r = ClassifyWith(e);
  EXPECT_EQ(r.verdict, Verdict::kSignaled);
  EXPECT_EQ(r.reason, "SIGKILL");

  e.status = Killed(SIGABRT);
  r = ClassifyWith(e,
                   "terminate called after throwing an instance of 'std::bad_alloc'\n"
                   "  what():  std::bad_alloc\n");
  EXPECT_EQ(r.verdict, Verdict::kMemoryLimit);
  EXPECT_EQ(r.reason, "memory limit (1 GiB): std::bad_alloc");
  EXPECT_EQ(ClassifyWith(e).verdict, Verdict::kSignaled);

  e.status = Killed(SIGXFSZ);
  r = ClassifyWith(e);
  EXPECT_EQ(r.verdict, Verdict::kFileSizeLimit);
  EXPECT_EQ(r.reason, "file size limit (16 MiB)");

  e.status = Exited(1);
  r = ClassifyWith(e, "OSError: [Errno 27] File too large\n");
  EXPECT_EQ(r.verdict, Verdict::kFileSizeLimit);
  EXPECT_EQ(r.exit_code, 1);

  e.status = Killed(SIGSEGV);
  EXPECT_EQ(ClassifyWith(e).reason, "SIGSEGV");

  // Our kill decides, whatever the program's status.
  e.killed = Verdict::kWallTimeout;
  r = ClassifyWith(e);
  EXPECT_EQ(r.verdict, Verdict::kWallTimeout);
  EXPECT_EQ(r.reason, "killed after 20 s wall time");
  e.killed = Verdict::kOutputLimit;
  r = ClassifyWith(e);
  EXPECT_EQ(r.verdict, Verdict::kOutputLimit);
  EXPECT_EQ(r.reason, "wrote over 1 MiB of output");
}

TEST(SandboxRun, ExitCodes) {
  RunResult r = MustRun(Py("print('hello')"), Small());
  EXPECT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.reason, "exit code 0");
  EXPECT_EQ(r.stdout_data, "hello\n");
  EXPECT_GT(r.wall_s, 0);

  r = MustRun(Py("import sys\nsys.stderr.write('bad\\n')\nsys.exit(3)"), Small());
  EXPECT_EQ(r.verdict, Verdict::kExited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.reason, "exit code 3");
  EXPECT_EQ(r.stderr_data, "bad\n");

  r = MustRun(Py("raise ValueError('boom')"), Small());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.stderr_data.find("ValueError: boom"), std::string::npos);
}

TEST(SandboxRun, SignalIsReported) {
  RunResult r = MustRun(Py("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"), Small());
  EXPECT_EQ(r.verdict, Verdict::kSignaled) << testutil::Describe(r);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.reason, "SIGSEGV");
}

TEST(SandboxRun, StdinRoundTrip) {
  std::string data;
  for (int i = 0; data.size() < (1u << 20) + 3; ++i) {
    data += std::to_string(i * 7919 % 1000003) + (i % 17 == 0 ? "\n" : " ");
  }
  Limits l = Small();
  l.output_bytes = 4ull << 20;
  // The program writes while we still write: neither side may block the other.
  RunResult r = MustRun(Py("import sys\nfor line in sys.stdin.buffer:\n"
                           "    sys.stdout.buffer.write(line)\n",
                           data),
                        l);
  EXPECT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  EXPECT_EQ(r.stdout_data.size(), data.size());
  EXPECT_TRUE(r.stdout_data == data);
  EXPECT_FALSE(r.output_truncated);
}

TEST(SandboxRun, UnreadStdinDoesNotHurtTheHarness) {
  // The program exits without reading 4 MiB: our writes fail with EPIPE, never SIGPIPE.
  RunResult r = MustRun(Py("print('done')", std::string(4u << 20, 'x')), Small());
  EXPECT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  EXPECT_EQ(r.stdout_data, "done\n");
}

TEST(SandboxLimits, InfiniteLoopHitsCpuLimit) {
  Limits l = Small();
  l.cpu_s = 1;
  RunResult r = MustRun(Py("while True:\n    pass\n"), l);
  EXPECT_EQ(r.verdict, Verdict::kCpuLimit) << testutil::Describe(r);
  EXPECT_EQ(r.reason, "CPU time limit (1 s)");
  EXPECT_GE(r.cpu_s, 0.9);
  EXPECT_LT(r.wall_s, l.wall_s);
}

TEST(SandboxLimits, IgnoringSigxcpuStillHitsCpuLimit) {
  Limits l = Small();
  l.cpu_s = 1;
  RunResult r = MustRun(Py("import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\n"
                           "while True:\n    pass\n"),
                        l);
  EXPECT_EQ(r.verdict, Verdict::kCpuLimit) << testutil::Describe(r);
  EXPECT_EQ(r.signal, SIGKILL);  // the hard limit, one second later
  EXPECT_GE(r.cpu_s, 1.9);
}

TEST(SandboxLimits, SleepHitsWallTimeout) {
  Limits l = Small();
  l.wall_s = 1;
  RunResult r = MustRun(Py("import time\ntime.sleep(100)\n"), l);
  EXPECT_EQ(r.verdict, Verdict::kWallTimeout) << testutil::Describe(r);
  EXPECT_EQ(r.reason, "killed after 1 s wall time");
  EXPECT_GE(r.wall_s, 1.0);
  EXPECT_LT(r.wall_s, 3.0);
}

// Ctrl-C during a code check: the stop request kills the program (and its children) at once,
// not at the 20 s wall limit.
TEST(SandboxLimits, StopRequestKillsTheProgramAtOnce) {
  Limits l = Small();
  l.cpu_s = 20;
  l.wall_s = 20;
  std::stop_source stop;
  std::jthread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // while it runs
    stop.request_stop();
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto r = sandbox::Run(
      Py("import os, time\nif os.fork() == 0:\n    time.sleep(100)\nwhile True:\n    pass\n"), l,
      stop.get_token());
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::kStopped) << testutil::Describe(*r);
  EXPECT_NE(r->reason.find("stopped"), std::string::npos) << r->reason;
  EXPECT_LT(took, 2.5);  // the stop came at 0.5 s; the wall limit is 20 s
}

TEST(SandboxLimits, StopRequestedBeforeTheStartEndsAtOnce) {
  std::stop_source stop;
  stop.request_stop();
  CodeOptions code;
  code.stop = stop.get_token();
  const auto t0 = std::chrono::steady_clock::now();
  auto r = RunCode(Language::kPython, "while True:\n    pass\n", "", code);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::kStopped) << testutil::Describe(*r);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.5);
}

TEST(SandboxLimits, MemoryHogHitsMemoryLimit) {
  Limits l = Small();
  l.memory_bytes = 256ull << 20;
  RunResult r = MustRun(Py("x = bytearray(1 << 30)\n"), l);
  EXPECT_EQ(r.verdict, Verdict::kMemoryLimit) << testutil::Describe(r);
  EXPECT_EQ(r.reason, "memory limit (256 MiB): MemoryError");

  // Growing step by step, as a leak does.
  r = MustRun(Py("chunks = []\nwhile True:\n    chunks.append(bytearray(8 << 20))\n"), l);
  EXPECT_EQ(r.verdict, Verdict::kMemoryLimit) << testutil::Describe(r);
}

TEST(SandboxLimits, HugeOutputIsCappedAndKilled) {
  Limits l = Small();
  l.output_bytes = 64ull << 10;
  RunResult r = MustRun(Py("import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n"), l);
  EXPECT_EQ(r.verdict, Verdict::kOutputLimit) << testutil::Describe(r);
  EXPECT_EQ(r.reason, "wrote over 64 KiB of output");
  EXPECT_EQ(r.stdout_data.size(), 64u << 10);
  EXPECT_TRUE(r.output_truncated);
  EXPECT_LT(r.wall_s, 5.0);

  r = MustRun(Py("import os\nwhile True:\n    os.write(2, b'e' * 4096)\n"), l);
  EXPECT_EQ(r.verdict, Verdict::kOutputLimit) << testutil::Describe(r);
  EXPECT_EQ(r.stderr_data.size(), 64u << 10);
}

TEST(SandboxLimits, OutputAtTheCapIsKept) {
  Limits l = Small();
  l.output_bytes = 64ull << 10;
  RunResult r = MustRun(Py("import sys\nsys.stdout.write('y' * 65536)\n"), l);
  EXPECT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  EXPECT_EQ(r.stdout_data.size(), 64u << 10);
  EXPECT_FALSE(r.output_truncated);
}

TEST(SandboxLimits, LargeFileHitsFileSizeLimit) {
  Limits l = Small();
  l.file_bytes = 1ull << 20;
  RunResult r = MustRun(Py("with open('big.bin', 'wb') as f:\n"
                           "    for _ in range(4):\n"
                           "        f.write(b'z' * (512 << 10))\n"),
                        l);
  // Python ignores SIGXFSZ: the write fails with EFBIG ("File too large") and it exits 1.
  EXPECT_EQ(r.verdict, Verdict::kFileSizeLimit) << testutil::Describe(r);
  EXPECT_EQ(r.reason, "file size limit (1 MiB)");
  EXPECT_EQ(r.exit_code, 1);

  // A program that keeps the default action dies of SIGXFSZ.
  Program p;
  p.argv = {"/bin/sh", "-c", "exec /usr/bin/head -c 2000000 /dev/zero > big"};
  r = MustRun(p, l);
  EXPECT_EQ(r.verdict, Verdict::kFileSizeLimit) << testutil::Describe(r);
  EXPECT_EQ(r.signal, SIGXFSZ);
  EXPECT_EQ(r.reason, "file size limit (1 MiB)");
}

TEST(SandboxLimits, OpenFilesLimit) {
  Limits l = Small();
  l.open_files = 16;
  RunResult r = MustRun(Py("fs = []\ntry:\n    while True:\n        fs.append(open('main.py'))\n"
                           "except OSError as e:\n    print(len(fs), e.errno)\n"),
                        l);
  EXPECT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  ASSERT_FALSE(r.stdout_data.empty());
  EXPECT_LE(std::stoi(r.stdout_data), 16);
  EXPECT_NE(r.stdout_data.find(" 24"), std::string::npos);  // EMFILE
}

TEST(SandboxErrors, UsageAndSetup) {
  Program p;
  auto r = sandbox::Run(p, Small());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUsage);

  p.argv = {"python3", "-c", "pass"};  // not absolute
  r = sandbox::Run(p, Small());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUsage);

  for (const char* bad : {"../escape.py", "/tmp/abs.py", "a/../../b", "", "a//b"}) {
    Program q = Py("pass");
    q.files.push_back(File{bad, "x", false});
    r = sandbox::Run(q, Small());
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kUsage) << bad;
  }

  Limits bad = Small();
  bad.processes = 0;
  r = sandbox::Run(Py("pass"), bad);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUsage);

  p.argv = {"/nonexistent/python3", "main.py"};
  r = sandbox::Run(p, Small());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kSetup);
  EXPECT_NE(r.error().message.find("/nonexistent/python3"), std::string::npos);

  p.argv = {"./missing"};
  r = sandbox::Run(p, Small());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kSetup);
}

TEST(SandboxErrors, ExecFailureIsASetupError) {
  Program p;
  p.argv = {"./notes.txt"};
  p.files.push_back(File{"notes.txt", "not a program", true});
  auto r = sandbox::Run(p, Small());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kSetup);
  EXPECT_NE(r.error().message.find("Exec format error"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace sb::sandbox
