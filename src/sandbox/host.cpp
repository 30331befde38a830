#include "sandbox/host.h"

#include <cerrno>
#include <memory>
#include <string>

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/spawn.h"
#include "sandbox/unique_fd.h"

namespace sb::sandbox {

namespace {

struct SeccompDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};

// System calls a test program never needs and that widen the kernel's attack surface or let a
// process step outside the sandbox (ptrace of the supervisor, new namespaces, io_uring's own
// socket path that seccomp cannot see).
constexpr const char* kDenied[] = {
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "add_key",
    "request_key",
    "keyctl",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "setns",
    "unshare",
    "open_by_handle_at",
    "name_to_handle_at",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "fsopen",
    "fsmount",
    "fspick",
    "fsconfig",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "quotactl",
    "lookup_dcookie",
    "iopl",
    "ioperm",
};

constexpr unsigned long kNamespaceFlags = CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS |
                                          CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
                                          CLONE_NEWCGROUP;

HostCaps ProbeHost() {
  HostCaps h;
  h.root = geteuid() == 0;
  h.uid = getuid();
  h.gid = getgid();
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, landlock::kCreateRulesetVersion);
  h.landlock_abi = abi > 0 ? static_cast<int>(abi) : 0;
  h.seccomp = BuildSeccompFilter();
  sock_fprog prog{};
  prog.len = static_cast<unsigned short>(h.seccomp.size());
  prog.filter = h.seccomp.data();

  std::string uid_map = fmt::format("{} {} 1\n", h.uid, h.uid);
  std::string gid_map = fmt::format("{} {} 1\n", h.gid, h.gid);
  ProbeRequest req;
  req.user_namespace = !h.root;
  req.uid_map = uid_map.c_str();
  req.gid_map = gid_map.c_str();
  req.uid_drop = h.root;
  req.uid = kSandboxUidBase + static_cast<uid_t>(gettid());
  req.gid = static_cast<gid_t>(req.uid);
  req.landlock = landlock::MakePolicy(h.landlock_abi);
  req.seccomp = h.seccomp.empty() ? nullptr : &prog;

  const unsigned long user = h.root ? 0 : CLONE_NEWUSER;
  const unsigned long candidates[] = {
      CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS,
      CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS,
      CLONE_NEWPID | CLONE_NEWNS,
  };
  int bits = 0;
  for (unsigned long flags : candidates) {
    req.clone_flags = flags | user;
    bits = ProbeInChild(req);
    if (bits > 0 && (bits & kProbeNamespaces) != 0) {
      h.clone_flags = req.clone_flags;
      break;
    }
  }
  if (h.clone_flags == 0) {
    req.clone_flags = 0;
    req.user_namespace = false;
    bits = ProbeInChild(req);
    if (bits < 0) {
      bits = 0;
    }
  }
  h.user_namespace = (h.clone_flags & CLONE_NEWUSER) != 0;
  h.private_mounts = (h.clone_flags & CLONE_NEWNS) != 0 && (bits & kProbeMounts) != 0;
  Isolation& iso = h.isolation;
  iso.network_namespace = (h.clone_flags & CLONE_NEWNET) != 0;
  iso.pid_namespace = (h.clone_flags & CLONE_NEWPID) != 0;
  iso.landlock = (bits & kProbeLandlock) != 0;
  iso.landlock_net = iso.landlock && h.landlock_abi >= 4;
  iso.seccomp = (bits & kProbeSeccomp) != 0;
  iso.uid_drop = (bits & kProbeUidDrop) != 0;
  if (!iso.landlock) {
    h.landlock_abi = 0;
  }
  if (!iso.seccomp) {
    h.seccomp.clear();
  }
  return h;
}

}  // namespace

std::vector<sock_filter> BuildSeccompFilter() {
  std::unique_ptr<void, SeccompDeleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) {
    return {};
  }
  void* c = ctx.get();
  // System calls of another ABI (i386 through int 0x80, x32) would bypass the rules below.
  bool ok = seccomp_attr_set(c, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS)) == 0 &&
            seccomp_attr_set(c, SCMP_FLTATR_CTL_NNP, 0) == 0;
  ok = ok && seccomp_rule_add(c, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1,
                              SCMP_A0(SCMP_CMP_NE, AF_UNIX)) == 0;
  ok = ok && seccomp_rule_add(c, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) == 0;
  for (unsigned long flag = 1; flag != 0 && ok; flag <<= 1) {
    if ((kNamespaceFlags & flag) != 0) {
      ok = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                            SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)) == 0;
    }
  }
  for (const char* name : kDenied) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr != __NR_SCMP_ERROR && ok) {
      ok = seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), nr, 0) == 0;
    }
  }
  if (!ok) {
    return {};
  }
  UniqueFd mem(memfd_create("servebench-seccomp", MFD_CLOEXEC));
  if (!mem.valid() || seccomp_export_bpf(c, mem.get()) != 0) {
    return {};
  }
  off_t size = lseek(mem.get(), 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0 ||
      size > static_cast<off_t>(sizeof(sock_filter) * 4096)) {
    return {};
  }
  std::vector<sock_filter> prog(static_cast<std::size_t>(size) / sizeof(sock_filter));
  if (pread(mem.get(), prog.data(), static_cast<std::size_t>(size), 0) != size) {
    return {};
  }
  return prog;
}

const HostCaps& Host() {
  static const HostCaps host = ProbeHost();
  return host;
}

std::string Isolation::Describe() const {
  std::string out;
  auto add = [&out](bool on, const char* name) {
    if (on) {
      out += out.empty() ? "" : ", ";
      out += name;
    }
  };
  add(network_namespace, "netns");
  add(pid_namespace, "pidns");
  add(landlock, "landlock");
  add(landlock_net, "landlock-net");
  add(seccomp, "seccomp");
  add(uid_drop, "uid");
  return out.empty() ? "none" : out;
}

Isolation Probe() {
  return Host().isolation;
}

}  // namespace sb::sandbox
