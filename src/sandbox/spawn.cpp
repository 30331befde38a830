#include "sandbox/spawn.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace sb::sandbox {

std::string_view StageName(Stage stage) {
  switch (stage) {
    case Stage::kDescriptors:
      return "descriptors";
    case Stage::kSetgroupsDeny:
      return "setgroups deny";
    case Stage::kUidMap:
      return "uid_map";
    case Stage::kGidMap:
      return "gid_map";
    case Stage::kLandlockRuleset:
      return "landlock ruleset";
    case Stage::kLandlockRule:
      return "landlock rule";
    case Stage::kFork:
      return "fork";
    case Stage::kSetUid:
      return "uid drop";
    case Stage::kChdir:
      return "chdir";
    case Stage::kRlimit:
      return "rlimit";
    case Stage::kNoNewPrivs:
      return "no_new_privs";
    case Stage::kLandlockRestrict:
      return "landlock restrict";
    case Stage::kSeccomp:
      return "seccomp";
  }
  return "setup";
}

namespace {

// ---- Async-signal-safe helpers: the only code that runs between the clone and the exec ------

constexpr int kSetupFailedExit = 126;
constexpr int kExecFailedExit = 127;

// fork(2) without glibc's atfork handlers or thread-list bookkeeping; the child runs on a copy
// of this stack, like fork.
pid_t RawClone(unsigned long flags) {
  return static_cast<pid_t>(syscall(SYS_clone, flags, nullptr, nullptr, nullptr, 0L));
}

void Send(int fd, const Message& m) {
  const char* p = reinterpret_cast<const char*>(&m);
  std::size_t left = sizeof m;
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

[[noreturn]] void Fail(int fd, Stage stage, int err) {
  Message m;
  m.kind = MessageKind::kSetupFailed;
  m.stage = stage;
  m.err = err;
  Send(fd, m);
  _exit(kSetupFailedExit);
}

bool WriteText(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  std::size_t n = strlen(text);
  ssize_t w = write(fd, text, n);
  int err = errno;
  close(fd);
  errno = err;
  return w == static_cast<ssize_t>(n);
}

// Closes every descriptor >= first.
void CloseFrom(int first) {
  if (syscall(SYS_close_range, static_cast<unsigned>(first), ~0u, 0u) == 0) {
    return;
  }

  struct rlimit rl {};

  int max = 65536;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 65536) {
    max = static_cast<int>(rl.rlim_cur);
  }
  for (int fd = first; fd < max; ++fd) {
    close(fd);
  }
}

void ResetSignals() {
  struct sigaction sa {};

  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) {
      sigaction(sig, &sa, nullptr);  // glibc refuses its internal signals: harmless
    }
  }
}

bool DropIds(uid_t uid, gid_t gid) {
  // Raw system calls: glibc's wrappers would try to synchronise threads that the child does not
  // have.
  return syscall(SYS_setgroups, 0, nullptr) == 0 && syscall(SYS_setresgid, gid, gid, gid) == 0 &&
         syscall(SYS_setresuid, uid, uid, uid) == 0;
}

bool WriteIdMaps(const char* uid_map, const char* gid_map, Stage* failed) {
  if (!WriteText("/proc/self/setgroups", "deny") && errno != ENOENT) {
    *failed = Stage::kSetgroupsDeny;
    return false;
  }
  if (!WriteText("/proc/self/uid_map", uid_map)) {
    *failed = Stage::kUidMap;
    return false;
  }
  if (!WriteText("/proc/self/gid_map", gid_map)) {
    *failed = Stage::kGidMap;
    return false;
  }
  return true;
}

int AddPathRule(int ruleset, const char* path, std::uint64_t allowed, int open_flags) {
  int fd = open(path, O_PATH | O_CLOEXEC | open_flags);
  if (fd < 0) {
    return -1;
  }
  landlock::PathBeneathAttr rule;
  rule.allowed_access = allowed;
  rule.parent_fd = fd;
  long r = syscall(SYS_landlock_add_rule, ruleset, landlock::kRulePathBeneath, &rule, 0u);
  int err = errno;
  close(fd);
  errno = err;
  return r == 0 ? 0 : -1;
}

// The ruleset: created here (after the mounts) so that /dev/shm names the private tmpfs.
int CreateRuleset(const ChildPlan& p, bool shm_private) {
  landlock::RulesetAttr attr;
  attr.handled_access_fs = p.landlock.handled_fs;
  attr.handled_access_net = p.landlock.handled_net;
  attr.scoped = p.landlock.scoped;
  long fd = syscall(SYS_landlock_create_ruleset, &attr, p.landlock.attr_size, 0u);
  if (fd < 0) {
    Fail(kReportFd, Stage::kLandlockRuleset, errno);
  }
  int ruleset = static_cast<int>(fd);
  if (AddPathRule(ruleset, p.workdir, p.landlock.dir_allowed, O_DIRECTORY) != 0) {
    Fail(kReportFd, Stage::kLandlockRule, errno);
  }
  // /dev/null may be missing in odd containers; then nothing is writable there, which is fine.
  AddPathRule(ruleset, "/dev/null", p.landlock.file_allowed, 0);
  if (shm_private) {
    AddPathRule(ruleset, "/dev/shm", p.landlock.dir_allowed, O_DIRECTORY);
  }
  return ruleset;
}

// ---- The program (grandchild of the parent) ----------------------------------------------

[[noreturn]] void ProgramMain(const ChildPlan& p, int ruleset) {
  setsid();  // its own session and process group: no controlling terminal, killable as a group
  if (p.drop_uid && !DropIds(p.uid, p.gid)) {
    Fail(kReportFd, Stage::kSetUid, errno);
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // after the uid change, which clears it
  if (chdir(p.workdir) != 0) {
    Fail(kReportFd, Stage::kChdir, errno);
  }
  for (int i = 0; i < p.rlimit_count; ++i) {
    struct rlimit rl {};

    rl.rlim_cur = p.rlimits[i].soft;
    rl.rlim_max = p.rlimits[i].hard;
    if (setrlimit(static_cast<__rlimit_resource_t>(p.rlimits[i].resource), &rl) != 0) {
      Fail(kReportFd, Stage::kRlimit, errno);
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    Fail(kReportFd, Stage::kNoNewPrivs, errno);
  }
  if (ruleset >= 0) {
    if (syscall(SYS_landlock_restrict_self, ruleset, 0u) != 0) {
      Fail(kReportFd, Stage::kLandlockRestrict, errno);
    }
    close(ruleset);
  }
  if (p.seccomp != nullptr && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, p.seccomp, 0, 0) != 0) {
    Fail(kReportFd, Stage::kSeccomp, errno);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);

  struct rlimit as {};

  as.rlim_cur = as.rlim_max = p.address_space;
  if (setrlimit(RLIMIT_AS, &as) != 0) {
    Fail(kReportFd, Stage::kRlimit, errno);
  }
  execve(p.exe, p.argv, p.envp);
  Message m;
  m.kind = MessageKind::kExecFailed;
  m.err = errno;
  Send(kReportFd, m);
  _exit(kExecFailedExit);
}

// ---- Killing and reaping the sandbox's processes ------------------------------------------

// SIGKILLs every child listed in /proc/thread-self/children; false when there was none.
bool KillListedChildren() {
  int fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  bool any = false;
  long pid = 0;
  bool in_number = false;
  for (ssize_t i = 0; i < n; ++i) {
    char c = buf[i];
    if (c >= '0' && c <= '9') {
      pid = pid * 10 + (c - '0');
      in_number = true;
    } else if (in_number) {
      kill(static_cast<pid_t>(pid), SIGKILL);
      any = true;
      pid = 0;
      in_number = false;
    }
  }
  if (in_number && n < static_cast<ssize_t>(sizeof buf)) {
    kill(static_cast<pid_t>(pid), SIGKILL);
    any = true;
  }
  return any;
}

// kill(-1, SIGKILL) until nothing is left to signal: as the init of a pid namespace it reaches
// every other process in it; as the sandbox uid, every process of that uid.
void KillEverythingVisible() {
  for (int i = 0; i < 1000; ++i) {
    if (kill(-1, SIGKILL) != 0 && errno == ESRCH) {
      return;
    }
  }
}

void KillUid(uid_t uid, gid_t gid) {
  pid_t helper = RawClone(SIGCHLD);
  if (helper == 0) {
    if (DropIds(uid, gid)) {
      KillEverythingVisible();
    }
    _exit(0);
  }
  if (helper > 0) {
    while (wait4(helper, nullptr, __WALL, nullptr) < 0 && errno == EINTR) {
    }
  }
}

struct timespec Millis(long ms) {
  struct timespec ts {};

  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1'000'000L;
  return ts;
}

long ElapsedMs(const struct timespec& start) {
  struct timespec now {};

  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - start.tv_sec) * 1000L + (now.tv_nsec - start.tv_nsec) / 1'000'000L;
}

// The program's wait status and usage, once reaped.
struct ProgramEnd {
  pid_t pid = 0;
  bool ended = false;
  int status = 0;

  struct rusage usage {};
};

// One wait4 for any child; records the program's end. Returns wait4's result.
pid_t Reap(ProgramEnd& end, int flags) {
  int st = 0;

  struct rusage ru {};

  pid_t w = wait4(-1, &st, flags | __WALL, &ru);
  if (w > 0 && w == end.pid) {
    end.ended = true;
    end.status = st;
    end.usage = ru;
  }
  return w;
}

// Kills every process of the sandbox but us and reaps them all, so that their CPU time is
// accounted to us (and so to the parent's wait4). With a pid namespace that is everything else
// in it; without one, the program's process group, the sandbox uid and the orphans reparented
// to us (a child subreaper), in rounds, for at most about a second.
void KillAndReapAll(const ChildPlan& p, ProgramEnd& end) {
  if ((p.clone_flags & CLONE_NEWPID) != 0) {
    KillEverythingVisible();
    for (;;) {
      if (Reap(end, 0) < 0 && errno != EINTR) {
        return;  // ECHILD: nothing left
      }
    }
  }
  kill(-end.pid, SIGKILL);
  if (!end.ended) {
    kill(end.pid, SIGKILL);
  }
  if (p.drop_uid) {
    KillUid(p.uid, p.gid);
  }

  struct timespec start {};

  clock_gettime(CLOCK_MONOTONIC, &start);
  while (ElapsedMs(start) < 1000) {
    KillListedChildren();
    pid_t w = 0;
    while ((w = Reap(end, WNOHANG)) > 0) {
    }
    if (w < 0 && errno == ECHILD) {
      return;
    }
    struct timespec ts = Millis(1);
    nanosleep(&ts, nullptr);
  }
}

// ---- The supervisor (child of the parent; pid 1 of the sandbox's pid namespace) ------------

[[noreturn]] void SupervisorMain(const ChildPlan& p) {
  if (dup2(p.stdin_fd, 0) < 0 || dup2(p.stdout_fd, 1) < 0 || dup2(p.stderr_fd, 2) < 0 ||
      dup3(p.report_fd, kReportFd, O_CLOEXEC) < 0) {
    Fail(p.report_fd, Stage::kDescriptors, errno);
  }
  // Everything else the (multithreaded) parent had open, other runs' pipes included.
  CloseFrom(kReportFd + 1);
  setsid();
  ResetSignals();
  // SIGCHLD (a child ended) and kStopSignal (the parent's stop request) are taken with
  // sigtimedwait; the program unblocks everything before its exec.
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGCHLD);
  sigaddset(&waited, kStopSignal);
  sigprocmask(SIG_SETMASK, &waited, nullptr);

  if (p.user_namespace) {
    Stage failed = Stage::kUidMap;
    if (!WriteIdMaps(p.uid_map, p.gid_map, &failed)) {
      Fail(kReportFd, failed, errno);
    }
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // the parent thread is gone: so is the sandbox
  prctl(PR_SET_DUMPABLE, 0);         // no ptrace or /proc/<pid>/fd from the program's uid
  const bool pid_namespace = (p.clone_flags & CLONE_NEWPID) != 0;
  if (!pid_namespace) {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
  }

  bool shm_private = false;
  // Mounts only ever happen in our own mount namespace, after making it private, so nothing
  // propagates to the host.
  if (p.private_mounts && (p.clone_flags & CLONE_NEWNS) != 0 &&
      mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0) {
    if (pid_namespace) {
      mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
    }
    shm_private = mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, p.shm_options) == 0;
  }
  int ruleset = p.landlock.abi > 0 ? CreateRuleset(p, shm_private) : -1;

  struct timespec start {};

  clock_gettime(CLOCK_MONOTONIC, &start);
  ProgramEnd end;
  end.pid = RawClone(SIGCHLD);
  if (end.pid < 0) {
    Fail(kReportFd, Stage::kFork, errno);
  }
  if (end.pid == 0) {
    ProgramMain(p, ruleset);
  }
  close(0);
  close(1);
  close(2);
  if (ruleset >= 0) {
    close(ruleset);
  }
  Message started;
  started.kind = MessageKind::kProgramPid;
  started.pid = end.pid;
  Send(kReportFd, started);

  bool stopping = false;
  while (!end.ended) {
    while (Reap(end, WNOHANG) > 0) {  // the program, and orphans reparented to us
    }
    if (end.ended) {
      break;
    }
    long left = p.backstop_ms - ElapsedMs(start);
    if (!stopping && left <= 0) {
      Message m;
      m.kind = MessageKind::kBackstop;
      Send(kReportFd, m);
      stopping = true;
    }
    if (stopping) {
      KillAndReapAll(p, end);
      continue;
    }
    struct timespec ts = Millis(left < 1000 ? left : 1000);
    if (sigtimedwait(&waited, nullptr, &ts) == kStopSignal) {
      stopping = true;
    }
  }
  // The program has ended: nothing it started may outlive it.
  KillAndReapAll(p, end);
  Message ended;
  ended.kind = MessageKind::kProgramEnded;
  ended.status = end.status;
  ended.cpu_us = (end.usage.ru_utime.tv_sec + end.usage.ru_stime.tv_sec) * 1'000'000L +
                 end.usage.ru_utime.tv_usec + end.usage.ru_stime.tv_usec;
  ended.maxrss_kib = end.usage.ru_maxrss;
  Send(kReportFd, ended);
  _exit(0);
}

}  // namespace

pid_t SpawnSupervisor(const ChildPlan& plan) {
  pid_t pid = RawClone(plan.clone_flags | SIGCHLD);
  if (pid == 0) {
    SupervisorMain(plan);
  }
  return pid;
}

int ProbeInChild(const ProbeRequest& r) {
  pid_t pid = RawClone(r.clone_flags | SIGCHLD);
  if (pid < 0) {
    return -1;
  }
  if (pid == 0) {
    CloseFrom(3);
    int bits = 0;
    Stage failed = Stage::kUidMap;
    if (r.user_namespace && !WriteIdMaps(r.uid_map, r.gid_map, &failed)) {
      _exit(0);
    }
    bits |= kProbeNamespaces;
    if ((r.clone_flags & CLONE_NEWNS) != 0 &&
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
        ((r.clone_flags & CLONE_NEWPID) == 0 ||
         mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0)) {
      bits |= kProbeMounts;
    }
    if (r.uid_drop && DropIds(r.uid, r.gid)) {
      bits |= kProbeUidDrop;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) {
      if (r.landlock.abi > 0) {
        landlock::RulesetAttr attr;
        attr.handled_access_fs = r.landlock.handled_fs;
        attr.handled_access_net = r.landlock.handled_net;
        attr.scoped = r.landlock.scoped;
        long fd = syscall(SYS_landlock_create_ruleset, &attr, r.landlock.attr_size, 0u);
        if (fd >= 0 && syscall(SYS_landlock_restrict_self, static_cast<int>(fd), 0u) == 0) {
          bits |= kProbeLandlock;
        }
      }
      if (r.seccomp != nullptr &&
          prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, r.seccomp, 0, 0) == 0) {
        bits |= kProbeSeccomp;
      }
    }
    _exit(bits);
  }
  int status = 0;
  while (waitpid(pid, &status, __WALL) < 0) {
    if (errno != EINTR) {
      return 0;
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}

}  // namespace sb::sandbox
