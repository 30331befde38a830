// What this process can apply, probed once (the first Probe() or Run()) and cached: namespaces,
// Landlock ABI, the seccomp filter, the uid drop. Run reads it; tests may pass a weakened copy
// to RunWith to exercise the fallbacks.
// Thread safety: Host() is safe from any thread (a function-local static).
#pragma once

#include <string>
#include <vector>

#include <linux/filter.h>
#include <sys/types.h>

#include "sandbox/landlock.h"
#include "sandbox/sandbox.h"

namespace sb::sandbox {

// The sandbox uids: kSandboxUidBase + the calling thread's id, so that concurrent runs (in this
// process or another) never share one.
inline constexpr uid_t kSandboxUidBase = 2'000'000'000;

struct HostCaps {
  Isolation isolation;            // what Run applies (Probe() returns it)
  unsigned long clone_flags = 0;  // CLONE_NEW* for the supervisor, CLONE_NEWUSER included
  bool user_namespace = false;    // clone_flags has CLONE_NEWUSER (not root)
  bool private_mounts = false;    // the mount namespace can be made private (/proc, /dev/shm)
  int landlock_abi = 0;           // the kernel's, 0 when unavailable
  bool root = false;              // effective uid 0
  uid_t uid = 0;                  // this process's real ids
  gid_t gid = 0;
  std::vector<sock_filter> seccomp;  // the compiled filter; empty when unavailable
};

const HostCaps& Host();

// The seccomp filter (libseccomp, exported as BPF): socket() for anything but AF_UNIX fails with
// EACCES; ptrace, process_vm_*, namespaces, mounts, keyrings, bpf, perf, io_uring, kexec and
// modules fail with EPERM; clone3 with ENOSYS (so that glibc falls back to clone, whose flags
// the filter can read). Empty on failure.
std::vector<sock_filter> BuildSeccompFilter();

// Run with an explicit (possibly weakened) HostCaps; Run(p, l) is RunWith(p, l, Host()).
Result<RunResult> RunWith(const Program& program, const Limits& limits, const HostCaps& host,
                          std::stop_token stop = {});

}  // namespace sb::sandbox
