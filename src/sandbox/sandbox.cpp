#include "sandbox/sandbox.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/host.h"
#include "sandbox/internal.h"
#include "sandbox/spawn.h"
#include "sandbox/unique_fd.h"
#include "sandbox/workdir.h"

namespace sb::sandbox {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kKillGraceS = 1.0;      // after a stop request, the supervisor's time to exit
constexpr long kBackstopGraceMs = 5000;  // the supervisor kills by itself at wall_s + this
constexpr std::size_t kChunk = 65536;

Error SetupError(std::string message) {
  return MakeError(ErrorCode::kSetup, "sandbox: " + std::move(message));
}

Result<void> CheckLimits(const Limits& l) {
  if (!(l.cpu_s > 0) || !std::isfinite(l.cpu_s) || !(l.wall_s > 0) || !std::isfinite(l.wall_s) ||
      l.wall_s > 1e6 || l.memory_bytes == 0 || l.processes < 1 || l.open_files < 3) {
    return MakeError(ErrorCode::kUsage,
                     "sandbox: limits need cpu_s > 0, wall_s > 0, memory_bytes > 0, "
                     "processes >= 1 and open_files >= 3");
  }
  return {};
}

// pipe2 with both ends close-on-exec and moved to kFirstParentFd or above.
Result<std::pair<UniqueFd, UniqueFd>> MakePipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return SetupError(fmt::format("pipe: {}", std::strerror(errno)));
  }
  std::array<UniqueFd, 2> ends{UniqueFd(fds[0]), UniqueFd(fds[1])};
  for (UniqueFd& end : ends) {
    if (end.get() < kFirstParentFd) {
      int high = fcntl(end.get(), F_DUPFD_CLOEXEC, kFirstParentFd);
      if (high < 0) {
        return SetupError(fmt::format("fcntl: {}", std::strerror(errno)));
      }
      end.Reset(high);
    }
  }
  return std::make_pair(std::move(ends[0]), std::move(ends[1]));
}

void SetNonBlocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// write(2) to a pipe whose reader may be gone, without a SIGPIPE reaching this process.
ssize_t WriteNoSigpipe(int fd, const char* data, std::size_t n) {
  sigset_t pipe_set, pending, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  ssize_t r = write(fd, data, n);
  int err = errno;
  if (r < 0 && err == EPIPE && !was_pending) {
    struct timespec zero {};

    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = err;
  return r;
}

// Tasks (processes and threads) whose real uid is uid, from /proc.
long CountTasksOfUid(uid_t uid) {
  long total = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::ifstream in(entry.path() / "status");
    std::string line;
    bool mine = false;
    long threads = 1;
    while (std::getline(in, line)) {
      if (line.rfind("Uid:", 0) == 0) {
        mine = std::strtoul(line.c_str() + 4, nullptr, 10) == uid;
      } else if (line.rfind("Threads:", 0) == 0) {
        threads = std::strtol(line.c_str() + 8, nullptr, 10);
      }
    }
    if (mine) {
      total += threads;
    }
  }
  return total;
}

RlimitSetting Rlimit(int resource, rlim_t soft, rlim_t hard) {
  struct rlimit cur {};

  if (getrlimit(static_cast<__rlimit_resource_t>(resource), &cur) == 0 &&
      cur.rlim_max != RLIM_INFINITY) {
    hard = std::min(hard, cur.rlim_max);  // only root could raise it
    soft = std::min(soft, hard);
  }
  return RlimitSetting{resource, soft, hard};
}

// The supervisor is killed and reaped however Run leaves.
class SupervisorGuard {
 public:
  explicit SupervisorGuard(pid_t pid) : pid_(pid) {}

  SupervisorGuard(const SupervisorGuard&) = delete;
  SupervisorGuard& operator=(const SupervisorGuard&) = delete;

  ~SupervisorGuard() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      while (waitpid(pid_, nullptr, __WALL) < 0 && errno == EINTR) {
      }
    }
  }

  void Reaped() { pid_ = -1; }

 private:
  pid_t pid_;
};

struct Capture {
  std::string data;
  std::uint64_t seen = 0;
};

enum class ReadState { kData, kAgain, kEof };

ReadState ReadChunk(int fd, Capture& c, std::uint64_t cap) {
  char buf[kChunk];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n < 0) {
    return errno == EAGAIN || errno == EINTR ? ReadState::kAgain : ReadState::kEof;
  }
  if (n == 0) {
    return ReadState::kEof;
  }
  if (c.data.size() < cap) {
    c.data.append(buf, std::min<std::uint64_t>(static_cast<std::uint64_t>(n), cap - c.data.size()));
  }
  c.seen += static_cast<std::uint64_t>(n);
  return ReadState::kData;
}

// Reads the report pipe into messages; false at end of file.
bool ReadReport(int fd, std::string& pending, std::vector<Message>& out) {
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
    return false;
  }
  if (n > 0) {
    pending.append(buf, static_cast<std::size_t>(n));
    while (pending.size() >= sizeof(Message)) {
      Message m;
      std::memcpy(&m, pending.data(), sizeof m);
      out.push_back(m);
      pending.erase(0, sizeof m);
    }
  }
  return true;
}

}  // namespace

// The program's argv, file names and argv[0] (an absolute path or ./NAME of its files).
Result<void> ValidateProgram(const Program& program) {
  if (program.argv.empty() || program.argv[0].empty()) {
    return MakeError(ErrorCode::kUsage, "sandbox: empty argv");
  }
  for (const std::string& arg : program.argv) {
    if (arg.find('\0') != std::string::npos) {
      return MakeError(ErrorCode::kUsage, "sandbox: NUL in an argument");
    }
  }
  for (const File& f : program.files) {
    if (!ValidRelativeName(f.name)) {
      return MakeError(ErrorCode::kUsage, fmt::format("sandbox: bad file name '{}'", f.name));
    }
  }
  for (const std::string& name : program.collect) {
    if (!ValidRelativeName(name)) {
      return MakeError(ErrorCode::kUsage, fmt::format("sandbox: bad file name '{}'", name));
    }
  }
  const std::string& arg0 = program.argv[0];
  const bool in_workdir = arg0.rfind("./", 0) == 0;
  if (in_workdir ? !ValidRelativeName(arg0.substr(2)) : arg0[0] != '/') {
    return MakeError(
        ErrorCode::kUsage,
        fmt::format("sandbox: argv[0] must be an absolute path or ./NAME: '{}'", arg0));
  }
  return {};
}

// What the parent holds of the pipes to the sandbox, and the supervisor's pidfd.
struct ParentEnds {
  UniqueFd in_w, out_r, err_r, report_r, pidfd;
};

// What came out of a run: output, the supervisor's reports and its exit.
struct Pumped {
  Capture out, err;
  std::vector<Message> messages;
  Ending ending;
  pid_t program_pid = 0;
  int sup_status = 0;

  struct rusage sup_usage {};

  Clock::time_point ended;
};

// Writes the next piece of the program's stdin; closes it when all is written (EOF for the
// program) or the program closed its end.
void FeedStdin(UniqueFd& in_w, const std::string& data, std::size_t& done) {
  const std::size_t len = std::min(kChunk, data.size() - done);
  const ssize_t w = WriteNoSigpipe(in_w.get(), data.data() + done, len);
  if (w > 0) {
    done += static_cast<std::size_t>(w);
  }
  if ((w < 0 && errno != EAGAIN && errno != EINTR) || done == data.size()) {
    in_w.Reset();
  }
}

// The resource limits the supervisor sets on the program.
void SetLimits(ChildPlan& plan, const Limits& limits, const HostCaps& host) {
  const Isolation& iso = host.isolation;
  // RLIMIT_NPROC counts the tasks of the uid: our own uid when we drop to it (the supervisor
  // stays root and does not count); inside a user namespace, the supervisor and the program's
  // tree; with neither, every task of this user, so the limit is what exists now plus ours.
  long nproc = limits.processes;
  if (!iso.uid_drop && host.user_namespace) {
    nproc += 1;
  } else if (!iso.uid_drop && !host.root) {
    nproc += 1 + CountTasksOfUid(host.uid);
  }
  const long cpu = CpuLimitSeconds(limits);
  const RlimitSetting rlimits[] = {
      Rlimit(RLIMIT_CPU, static_cast<rlim_t>(cpu), static_cast<rlim_t>(cpu + 1)),
      Rlimit(RLIMIT_NPROC, static_cast<rlim_t>(nproc), static_cast<rlim_t>(nproc)),
      Rlimit(RLIMIT_FSIZE, limits.file_bytes, limits.file_bytes),
      Rlimit(RLIMIT_NOFILE, static_cast<rlim_t>(limits.open_files),
             static_cast<rlim_t>(limits.open_files)),
      Rlimit(RLIMIT_CORE, 0, 0),
  };
  for (const RlimitSetting& r : rlimits) {
    plan.rlimits[plan.rlimit_count++] = r;
  }
  plan.address_space = Rlimit(RLIMIT_AS, limits.memory_bytes, limits.memory_bytes).hard;
}

// After the supervisor's exit: whatever is still buffered in the pipes and the last reports.
void DrainPipes(ParentEnds& ends, Pumped& r, const Limits& limits, std::string& report_pending) {
  // What is still buffered in the pipes (every writer is gone in a pid namespace; without
  // one a leaked process could keep writing, so this is bounded in time).
  const auto drain_end = r.ended + std::chrono::milliseconds(100);
  for (UniqueFd* fd : {&ends.out_r, &ends.err_r}) {
    Capture& c = fd == &ends.out_r ? r.out : r.err;
    while (fd->valid() && Clock::now() < drain_end) {
      if (ReadChunk(fd->get(), c, limits.output_bytes) != ReadState::kData) {
        break;
      }
    }
  }
  // Too much output seen only now: the verdict, with no signal (the supervisor is reaped and
  // its pid may already be another process's).
  if (!r.ending.killed && (r.out.seen > limits.output_bytes || r.err.seen > limits.output_bytes)) {
    r.ending.killed = Verdict::kOutputLimit;
  }
  while (ends.report_r.valid()) {
    pollfd p{ends.report_r.get(), POLLIN, 0};
    if (poll(&p, 1, 0) <= 0 || !ReadReport(ends.report_r.get(), report_pending, r.messages)) {
      break;
    }
  }
}

// Feeds stdin and reads stdout, stderr and the supervisor's reports until the supervisor exits;
// kills the tree at the wall limit, on a stop request or on too much output.
class Pumper {
 public:
  Pumper(pid_t pid, SupervisorGuard& guard, ParentEnds& ends, const Program& program,
         const Limits& limits, const Isolation& iso, Clock::time_point start, std::stop_token stop)
      : pid_(pid),
        guard_(guard),
        ends_(ends),
        program_(program),
        limits_(limits),
        iso_(iso),
        stop_(std::move(stop)),
        deadline_(start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(limits.wall_s))),
        stop_fd_(stop_.stop_possible() ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) : -1) {
    if (program.stdin_data.empty()) {
      ends_.in_w.Reset();
    }
  }

  Pumped Run() {
    // A stop request wakes the poll through stop_fd_ and kills the tree at once.
    std::stop_callback on_stop(stop_, [this] {
      if (stop_fd_.valid()) {
        const std::uint64_t one = 1;
        [[maybe_unused]] const ssize_t w = write(stop_fd_.get(), &one, sizeof one);
      }
    });
    while (!reaped_) {
      Escalate();
      PollOnce();
    }
    r_.ended = Clock::now();
    DrainPipes(ends_, r_, limits_, report_pending_);
    return std::move(r_);
  }

 private:
  static constexpr auto kKillGrace =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kKillGraceS));

  void KillTree(Verdict why) {
    if (r_.ending.killed) {
      return;
    }
    r_.ending.killed = why;
    killed_at_ = Clock::now();
    // The supervisor kills and reaps everything (so their CPU time is counted) and reports;
    // SIGKILL after kKillGraceS if it does not.
    kill(pid_, kStopSignal);
  }

  // A stop request or the wall limit kills the tree; SIGKILL when the supervisor has not
  // finished it within the grace.
  void Escalate() {
    const auto now = Clock::now();
    if (!r_.ending.killed && stop_.stop_requested()) {
      KillTree(Verdict::kStopped);
    }
    if (!r_.ending.killed && now >= deadline_) {
      KillTree(Verdict::kWallTimeout);
    }
    if (r_.ending.killed && !hard_killed_ && now >= killed_at_ + kKillGrace) {
      kill(pid_, SIGKILL);
      hard_killed_ = true;
    }
  }

  // How long the next poll may wait: until the deadline, the end of the grace, or briefly
  // after SIGKILL; 10 ms at most without a pidfd (the supervisor's exit is then polled).
  int PollTimeoutMs() const {
    const auto until = !r_.ending.killed ? deadline_
                       : hard_killed_    ? Clock::now() + std::chrono::milliseconds(50)
                                         : killed_at_ + kKillGrace;
    long timeout_ms = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
    timeout_ms = std::clamp(timeout_ms, 1L, 1000L);
    if (!ends_.pidfd.valid()) {
      timeout_ms = std::min(timeout_ms, 10L);
    }
    return static_cast<int>(timeout_ms);
  }

  // One poll over the open ends, then what each ready one asks for.
  void PollOnce() {
    pollfd fds[6];
    nfds_t n = 0;
    int i_out = -1, i_err = -1, i_in = -1, i_rep = -1, i_pid = -1, i_stop = -1;
    auto add = [&](const UniqueFd& fd, short events, int& index) {
      if (fd.valid()) {
        index = static_cast<int>(n);
        fds[n++] = pollfd{fd.get(), events, 0};
      }
    };
    add(ends_.out_r, POLLIN, i_out);
    add(ends_.err_r, POLLIN, i_err);
    add(ends_.report_r, POLLIN, i_rep);
    add(ends_.in_w, POLLOUT, i_in);
    add(ends_.pidfd, POLLIN, i_pid);
    if (!r_.ending.killed) {
      add(stop_fd_, POLLIN, i_stop);
    }
    const int ready = poll(fds, n, PollTimeoutMs());
    if (ready < 0 && errno != EINTR) {
      KillTree(Verdict::kWallTimeout);  // cannot watch it: stop it
    }
    auto readable = [&](int index) {
      return ready > 0 && index >= 0 && (fds[index].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
    };
    if (readable(i_stop)) {
      KillTree(Verdict::kStopped);
    }
    if (readable(i_out) &&
        ReadChunk(ends_.out_r.get(), r_.out, limits_.output_bytes) == ReadState::kEof) {
      ends_.out_r.Reset();
    }
    if (readable(i_err) &&
        ReadChunk(ends_.err_r.get(), r_.err, limits_.output_bytes) == ReadState::kEof) {
      ends_.err_r.Reset();
    }
    if (r_.out.seen > limits_.output_bytes || r_.err.seen > limits_.output_bytes) {
      KillTree(Verdict::kOutputLimit);
    }
    if (readable(i_rep)) {
      if (!ReadReport(ends_.report_r.get(), report_pending_, r_.messages)) {
        ends_.report_r.Reset();
      }
      TakeMessages();
    }
    if (ready > 0 && i_in >= 0 && (fds[i_in].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
      FeedStdin(ends_.in_w, program_.stdin_data, stdin_done_);
    }
    if (!ends_.pidfd.valid() || readable(i_pid)) {
      const pid_t w = wait4(pid_, &r_.sup_status, WNOHANG | __WALL, &r_.sup_usage);
      if (w == pid_ || (w < 0 && errno == ECHILD)) {
        reaped_ = true;
        guard_.Reaped();
      }
    }
  }

  void TakeMessages() {
    for (const Message& m : r_.messages) {
      if (m.kind == MessageKind::kProgramPid && !iso_.pid_namespace) {
        r_.program_pid = static_cast<pid_t>(m.pid);
      }
    }
  }

  const pid_t pid_;
  SupervisorGuard& guard_;
  ParentEnds& ends_;
  const Program& program_;
  const Limits& limits_;
  const Isolation& iso_;
  std::stop_token stop_;
  const Clock::time_point deadline_;
  UniqueFd stop_fd_;
  Pumped r_;
  std::string report_pending_;
  std::size_t stdin_done_ = 0;
  Clock::time_point killed_at_{};
  bool hard_killed_ = false;
  bool reaped_ = false;
};

// The result of a run from what came out of it: the verdict, the program's CPU time and memory,
// or a set-up error the supervisor reported.
Result<RunResult> Conclude(Pumped& p, const Limits& limits, Clock::time_point start,
                           const std::string& exe, const Isolation& iso, uid_t sb_uid) {
  RunResult result;
  result.stdout_data = std::move(p.out.data);
  result.stderr_data = std::move(p.err.data);
  result.output_truncated = p.out.seen > limits.output_bytes || p.err.seen > limits.output_bytes;
  result.wall_s = std::chrono::duration<double>(p.ended - start).count();
  result.cpu_s =
      static_cast<double>(p.sup_usage.ru_utime.tv_sec + p.sup_usage.ru_stime.tv_sec) +
      static_cast<double>(p.sup_usage.ru_utime.tv_usec + p.sup_usage.ru_stime.tv_usec) / 1e6;

  for (const Message& m : p.messages) {
    switch (m.kind) {
      case MessageKind::kSetupFailed:
        return SetupError(
            fmt::format("setup failed at {}: {}", StageName(m.stage), std::strerror(m.err)));
      case MessageKind::kExecFailed:
        return SetupError(fmt::format("cannot execute {}{}: {}", exe,
                                      iso.uid_drop ? fmt::format(" as uid {}", sb_uid) : "",
                                      std::strerror(m.err)));
      case MessageKind::kProgramEnded:
        p.ending.program_ended = true;
        p.ending.status = m.status;
        p.ending.program_cpu_s = static_cast<double>(m.cpu_us) / 1e6;
        p.ending.maxrss_kib = m.maxrss_kib;
        break;
      case MessageKind::kBackstop:
        if (!p.ending.killed) {
          p.ending.killed = Verdict::kWallTimeout;
        }
        break;
      case MessageKind::kProgramPid:
        break;
    }
  }
  if (!p.ending.program_ended && !p.ending.killed) {
    // The supervisor died without a word: only possible when the program could reach it (no
    // pid namespace, no Landlock signal scope). Whatever is left of its tree goes too.
    if (p.program_pid > 0) {
      kill(-p.program_pid, SIGKILL);
    }
    result.verdict = Verdict::kSignaled;
    result.signal = WIFSIGNALED(p.sup_status) ? WTERMSIG(p.sup_status) : 0;
    result.reason = fmt::format("the sandbox supervisor was killed ({})",
                                WIFSIGNALED(p.sup_status) ? SignalName(WTERMSIG(p.sup_status))
                                                          : fmt::format("status {}", p.sup_status));
  } else {
    Classify(p.ending, limits, result);
  }
  return result;
}

// What the child reads, prepared before the clone: the plan points into it, so it stays put.
struct ChildStrings {
  ChildStrings(const Program& program, const std::string& workdir, const HostCaps& host,
               const Limits& limits)
      : args(program.argv),
        env{"PATH=/usr/bin:/bin", "HOME=" + workdir, "TMPDIR=" + workdir, "LANG=C.UTF-8"},
        uid_map(fmt::format("{} {} 1\n", host.uid, host.uid)),
        gid_map(fmt::format("{} {} 1\n", host.gid, host.gid)),
        shm_options(fmt::format("size={},mode=1777", limits.file_bytes)) {
    for (std::string& a : args) {
      argv_ptrs.push_back(a.data());
    }
    argv_ptrs.push_back(nullptr);
    for (std::string& e : env) {
      env_ptrs.push_back(e.data());
    }
    env_ptrs.push_back(nullptr);
  }

  ChildStrings(const ChildStrings&) = delete;
  ChildStrings& operator=(const ChildStrings&) = delete;

  std::vector<std::string> args, env;
  std::vector<char*> argv_ptrs, env_ptrs;
  std::string uid_map, gid_map, shm_options;
};

// The four pipes between us and the child: {read end, write end} each, ours non-blocking.
struct Pipes {
  std::pair<UniqueFd, UniqueFd> in, out, err, report;
};

Result<Pipes> OpenPipes(const Isolation& iso, uid_t sb_uid, gid_t sb_gid) {
  auto in_pipe = MakePipe();
  auto out_pipe = MakePipe();
  auto err_pipe = MakePipe();
  auto report_pipe = MakePipe();
  for (auto* p : {&in_pipe, &out_pipe, &err_pipe, &report_pipe}) {
    if (!*p) {
      return p->error();
    }
  }
  Pipes pipes{std::move(*in_pipe), std::move(*out_pipe), std::move(*err_pipe),
              std::move(*report_pipe)};
  for (const UniqueFd* fd :
       {&pipes.in.second, &pipes.out.first, &pipes.err.first, &pipes.report.first}) {
    SetNonBlocking(fd->get());
  }
  if (iso.uid_drop) {
    // The program may reopen its stdio by name (/dev/stdout is /proc/self/fd/1): a pipe created
    // by root is mode 0600 root, so it has to belong to the sandbox uid.
    for (const UniqueFd* fd : {&pipes.in.first, &pipes.out.second, &pipes.err.second}) {
      if (fchown(fd->get(), sb_uid, sb_gid) != 0) {
        return SetupError(fmt::format("fchown: {}", std::strerror(errno)));
      }
    }
  }
  return pipes;
}

// Checks the limits and the program, and that its executable can run.
Result<void> CheckRun(const Program& program, const Limits& limits, bool in_workdir) {
  if (auto ok = CheckLimits(limits); !ok) {
    return ok.error();
  }
  if (auto ok = ValidateProgram(program); !ok) {
    return ok.error();
  }
  const std::string& arg0 = program.argv[0];
  if (!in_workdir && access(arg0.c_str(), X_OK) != 0) {
    return SetupError(fmt::format("cannot execute {}: {}", arg0, std::strerror(errno)));
  }
  return {};
}

Result<RunResult> RunWith(const Program& program, const Limits& limits, const HostCaps& host,
                          std::stop_token stop) {
  const bool in_workdir = !program.argv.empty() && program.argv[0].rfind("./", 0) == 0;
  if (auto ok = CheckRun(program, limits, in_workdir); !ok) {
    return ok.error();
  }
  const std::string& arg0 = program.argv[0];
  const Isolation& iso = host.isolation;
  const uid_t sb_uid = iso.uid_drop ? kSandboxUidBase + static_cast<uid_t>(gettid()) : host.uid;
  const gid_t sb_gid = iso.uid_drop ? static_cast<gid_t>(sb_uid) : host.gid;
  auto dir =
      WorkDir::Create(iso.uid_drop ? std::optional(std::make_pair(sb_uid, sb_gid)) : std::nullopt);
  if (!dir) {
    return dir.error().WithContext("sandbox");
  }
  for (const File& f : program.files) {
    if (auto w = dir->Write(f); !w) {
      return w.error().WithContext("sandbox");
    }
  }
  const std::string exe = in_workdir ? dir->path() + "/" + arg0.substr(2) : arg0;
  if (in_workdir && !dir->HasRegularFile(arg0.substr(2))) {
    return SetupError(fmt::format("cannot execute {}: not a file of the program", arg0));
  }
  const ChildStrings strings(program, dir->path(), host, limits);
  auto pipes = OpenPipes(iso, sb_uid, sb_gid);
  if (!pipes) {
    return pipes.error();
  }

  ChildPlan plan;
  plan.stdin_fd = pipes->in.first.get();
  plan.stdout_fd = pipes->out.second.get();
  plan.stderr_fd = pipes->err.second.get();
  plan.report_fd = pipes->report.second.get();
  plan.clone_flags = host.clone_flags;
  plan.user_namespace = host.user_namespace;
  plan.uid_map = strings.uid_map.c_str();
  plan.gid_map = strings.gid_map.c_str();
  plan.private_mounts = host.private_mounts;
  plan.shm_options = strings.shm_options.c_str();
  plan.drop_uid = iso.uid_drop;
  plan.uid = sb_uid;
  plan.gid = sb_gid;
  plan.workdir = dir->path().c_str();
  plan.exe = exe.c_str();
  plan.argv = strings.argv_ptrs.data();
  plan.envp = strings.env_ptrs.data();
  SetLimits(plan, limits, host);
  plan.landlock = iso.landlock ? landlock::MakePolicy(host.landlock_abi) : landlock::Policy{};
  sock_fprog seccomp_prog{};
  seccomp_prog.len = static_cast<unsigned short>(host.seccomp.size());
  seccomp_prog.filter = const_cast<sock_filter*>(host.seccomp.data());
  plan.seccomp = iso.seccomp && !host.seccomp.empty() ? &seccomp_prog : nullptr;
  plan.backstop_ms = static_cast<long>(limits.wall_s * 1000) + kBackstopGraceMs;

  // ---- Start ----
  const auto start = Clock::now();
  const pid_t pid = SpawnSupervisor(plan);
  if (pid < 0) {
    return SetupError(fmt::format("cannot start the sandbox: {}", std::strerror(errno)));
  }
  SupervisorGuard guard(pid);
  pipes->in.first.Reset();
  pipes->out.second.Reset();
  pipes->err.second.Reset();
  pipes->report.second.Reset();
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0u)));

  ParentEnds ends{std::move(pipes->in.second), std::move(pipes->out.first),
                  std::move(pipes->err.first), std::move(pipes->report.first), std::move(pidfd)};
  Pumped pumped = Pumper(pid, guard, ends, program, limits, iso, start, stop).Run();
  auto concluded = Conclude(pumped, limits, start, exe, iso, sb_uid);
  if (!concluded) {
    return concluded.error();
  }
  RunResult result = std::move(*concluded);
  for (const std::string& name : program.collect) {
    if (auto content = dir->Read(name, limits.file_bytes)) {
      result.collected.emplace_back(name, std::move(*content));
    }
  }
  if (auto removed = dir->Remove(); !removed) {
    return removed.error().WithContext("sandbox");
  }
  return result;
}

Result<RunResult> Run(const Program& program, const Limits& limits, std::stop_token stop) {
  return RunWith(program, limits, Host(), std::move(stop));
}

}  // namespace sb::sandbox
