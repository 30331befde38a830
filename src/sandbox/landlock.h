// Landlock definitions (the Debian 12 uapi header stops at ABI 1) and the policy the sandbox
// applies: reading and executing stay allowed everywhere; writing is allowed only beneath the
// working directory (and /dev/null, and a private /dev/shm); TCP bind/connect are denied from
// ABI 4; abstract UNIX sockets and signals are scoped to the sandbox from ABI 6.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sb::sandbox::landlock {

// Filesystem rights (uapi LANDLOCK_ACCESS_FS_*).
inline constexpr std::uint64_t kFsExecute = 1ull << 0;
inline constexpr std::uint64_t kFsWriteFile = 1ull << 1;
inline constexpr std::uint64_t kFsReadFile = 1ull << 2;
inline constexpr std::uint64_t kFsReadDir = 1ull << 3;
inline constexpr std::uint64_t kFsRemoveDir = 1ull << 4;
inline constexpr std::uint64_t kFsRemoveFile = 1ull << 5;
inline constexpr std::uint64_t kFsMakeChar = 1ull << 6;
inline constexpr std::uint64_t kFsMakeDir = 1ull << 7;
inline constexpr std::uint64_t kFsMakeReg = 1ull << 8;
inline constexpr std::uint64_t kFsMakeSock = 1ull << 9;
inline constexpr std::uint64_t kFsMakeFifo = 1ull << 10;
inline constexpr std::uint64_t kFsMakeBlock = 1ull << 11;
inline constexpr std::uint64_t kFsMakeSym = 1ull << 12;
inline constexpr std::uint64_t kFsRefer = 1ull << 13;     // ABI 2
inline constexpr std::uint64_t kFsTruncate = 1ull << 14;  // ABI 3

// Network rights (ABI 4) and scopes (ABI 6).
inline constexpr std::uint64_t kNetBindTcp = 1ull << 0;
inline constexpr std::uint64_t kNetConnectTcp = 1ull << 1;
inline constexpr std::uint64_t kScopeAbstractUnixSocket = 1ull << 0;
inline constexpr std::uint64_t kScopeSignal = 1ull << 1;

inline constexpr unsigned kCreateRulesetVersion = 1u << 0;
inline constexpr int kRulePathBeneath = 1;

// struct landlock_ruleset_attr as of ABI 6; older kernels get a prefix (attr_size).
struct RulesetAttr {
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;
  std::uint64_t scoped = 0;
};

// struct landlock_path_beneath_attr (packed in the uapi header).
struct __attribute__((packed)) PathBeneathAttr {
  std::uint64_t allowed_access = 0;
  std::int32_t parent_fd = -1;
};

// What a run asks of Landlock, computed in the parent from the kernel's ABI.
struct Policy {
  int abi = 0;                     // 0: Landlock is not applied
  std::uint64_t handled_fs = 0;    // filesystem rights denied unless a rule allows them
  std::uint64_t dir_allowed = 0;   // rights beneath the working directory (and /dev/shm)
  std::uint64_t file_allowed = 0;  // rights on /dev/null
  std::uint64_t handled_net = 0;   // TCP rights denied (no rule allows any port)
  std::uint64_t scoped = 0;
  std::size_t attr_size = 0;  // sizeof the RulesetAttr prefix this ABI knows
};

inline Policy MakePolicy(int abi) {
  Policy p;
  if (abi <= 0) {
    return p;
  }
  p.abi = abi;
  p.handled_fs = kFsWriteFile | kFsRemoveDir | kFsRemoveFile | kFsMakeChar | kFsMakeDir |
                 kFsMakeReg | kFsMakeSock | kFsMakeFifo | kFsMakeBlock | kFsMakeSym;
  if (abi >= 2) {
    p.handled_fs |= kFsRefer;
  }
  if (abi >= 3) {
    p.handled_fs |= kFsTruncate;
  }
  p.dir_allowed = p.handled_fs;
  p.file_allowed = p.handled_fs & (kFsWriteFile | kFsTruncate);
  p.attr_size = sizeof(std::uint64_t);
  if (abi >= 4) {
    p.handled_net = kNetBindTcp | kNetConnectTcp;
    p.attr_size = 2 * sizeof(std::uint64_t);
  }
  if (abi >= 6) {
    p.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    p.attr_size = sizeof(RulesetAttr);
  }
  return p;
}

}  // namespace sb::sandbox::landlock
