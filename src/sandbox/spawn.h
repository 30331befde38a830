// The child side of a sandboxed run. SpawnSupervisor clones the supervisor (the sandbox's init
// when a pid namespace is available) with everything the parent prepared in a ChildPlan; the
// supervisor enters the namespaces' setup, forks the program, which drops its privileges,
// applies the limits, Landlock and seccomp, and execs. The supervisor reaps every process and
// reports through the report pipe (a stream of fixed-size Messages).
// The parent may be multithreaded, so between the clone and the exec only async-signal-safe
// system calls run: no allocation, no locks, no glibc thread bookkeeping (set*id go through
// syscall()).
#pragma once

#include <cstdint>
#include <string_view>

#include <linux/filter.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "sandbox/landlock.h"

namespace sb::sandbox {

// Descriptor numbers inside the supervisor and the program: 0-2 are the program's stdio.
inline constexpr int kReportFd = 3;  // close-on-exec: the program never holds it
// The parent moves every descriptor it hands to the child to this number or above, so that the
// child's dup2 onto 0..3 never overwrites one it still has to move.
inline constexpr int kFirstParentFd = 10;

// The parent's request to the supervisor: kill everything, reap it, report, exit.
inline constexpr int kStopSignal = SIGUSR1;

// Where a setup step failed (reported with errno).
enum class Stage : std::int32_t {
  kDescriptors = 1,
  kSetgroupsDeny,
  kUidMap,
  kGidMap,
  kLandlockRuleset,
  kLandlockRule,
  kFork,
  kSetUid,
  kChdir,
  kRlimit,
  kNoNewPrivs,
  kLandlockRestrict,
  kSeccomp,
};

std::string_view StageName(Stage stage);

enum class MessageKind : std::int32_t {
  kSetupFailed = 1,  // stage, err
  kExecFailed,       // err
  kProgramPid,       // pid (in the supervisor's pid namespace)
  kProgramEnded,     // status (wait status), cpu_us and maxrss_kib of the program
  kBackstop,         // the supervisor's own deadline passed: it killed everything
};

struct Message {
  MessageKind kind = MessageKind::kSetupFailed;
  Stage stage = Stage::kDescriptors;
  std::int32_t err = 0;
  std::int32_t status = 0;
  std::int64_t pid = 0;
  std::int64_t cpu_us = 0;
  std::int64_t maxrss_kib = 0;
};

struct RlimitSetting {
  int resource = 0;
  rlim_t soft = 0, hard = 0;
};

// Everything the child needs, prepared before the clone. Pointers stay valid until the
// supervisor has been reaped.
struct ChildPlan {
  // Child ends of the pipes (>= kFirstParentFd).
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1, report_fd = -1;

  unsigned long clone_flags = 0;  // CLONE_NEW* for the supervisor
  bool user_namespace = false;    // write uid_map / gid_map (not root)
  const char* uid_map = nullptr;
  const char* gid_map = nullptr;
  bool private_mounts = false;  // make / private, mount /proc (pid namespace) and /dev/shm
  const char* shm_options = nullptr;

  bool drop_uid = false;  // the program runs as uid/gid (root only)
  uid_t uid = 0;
  gid_t gid = 0;

  const char* workdir = nullptr;
  const char* exe = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;

  RlimitSetting rlimits[8];
  int rlimit_count = 0;
  rlim_t address_space = RLIM_INFINITY;  // RLIMIT_AS, set last (just before the exec)

  landlock::Policy landlock;
  const sock_fprog* seccomp = nullptr;  // nullptr: no filter

  long backstop_ms = 0;  // the supervisor kills everything itself after this long
};

// Clones the supervisor. Returns its pid, or -1 with errno set. The supervisor never returns.
pid_t SpawnSupervisor(const ChildPlan& plan);

// ---- Probing (once per process) -----------------------------------------------------------

struct ProbeRequest {
  unsigned long clone_flags = 0;
  bool user_namespace = false;
  const char* uid_map = nullptr;
  const char* gid_map = nullptr;
  bool uid_drop = false;
  uid_t uid = 0;
  gid_t gid = 0;
  landlock::Policy landlock;
  const sock_fprog* seccomp = nullptr;
};

inline constexpr int kProbeNamespaces = 1;  // the clone and the id maps worked
inline constexpr int kProbeMounts = 2;      // / made private and /proc mounted (pid namespace)
inline constexpr int kProbeUidDrop = 4;
inline constexpr int kProbeLandlock = 8;
inline constexpr int kProbeSeccomp = 16;

// Runs the setup steps of request in a throwaway child; returns the kProbe* bits that worked,
// or -1 when the clone itself failed.
int ProbeInChild(const ProbeRequest& request);

}  // namespace sb::sandbox
