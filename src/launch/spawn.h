// Private to the launch module: addresses and ports, spawning a server (posix_spawn in a new
// session) and finding the members of its process group.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "core/result.h"
#include "launch/launch.h"

namespace sb::launch::detail {

// ---- Addresses and ports ---------------------------------------------------------------------

// The host to connect to for a listening address: a wildcard is reached on loopback, and an IPv6
// literal is bracketed for a URL.
std::string ConnectHost(const std::string& host);

// An address to bind for probing `host`: the literal when it is one, else loopback IPv4.
struct BindAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family = AF_INET;
};

BindAddress ProbeAddress(const std::string& host, int port);

// Binds host:port; returns the bound port, or -errno.
int TryBind(const std::string& host, int port);

// ---- Spawning --------------------------------------------------------------------------------

std::optional<std::string> EnvValue(const std::vector<std::string>& env, std::string_view name);

std::vector<std::string> BuildEnv(const Recipe& r);

// argv[0] as a path: as given when it has a '/', else the first executable on PATH.
std::optional<std::string> FindProgram(const std::string& name, const std::string& path_value);

bool WriteAll(int fd, std::string_view text);

// posix_spawn with the child in a new session, stdin /dev/null, stdout and stderr on log_fd, no
// other descriptor inherited. Returns the pid or an errno.
Result<pid_t> Spawn(const std::string& program, const std::vector<std::string>& argv,
                    const std::vector<std::string>& env, const std::string& cwd, int log_fd);

// ---- The process group -----------------------------------------------------------------------

// Live (non-zombie) processes whose process group or session is `leader`, from /proc. Zombies
// are left out: an orphan that init has not reaped yet is gone for our purpose.
// outside_group_only: only those of the session that moved to another process group.
std::vector<pid_t> GroupMembers(pid_t leader, bool outside_group_only = false);

}  // namespace sb::launch::detail
