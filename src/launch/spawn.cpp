// Addresses and ports, spawning a server and its process group (spawn.h).
#include "launch/spawn.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

extern char** environ;

namespace sb::launch::detail {

std::string ConnectHost(const std::string& host) {
  if (host == "0.0.0.0") {
    return "127.0.0.1";
  }
  if (host == "::" || host == "[::]") {
    return "[::1]";
  }
  if (host.find(':') != std::string::npos && !host.starts_with("[")) {
    return "[" + host + "]";
  }
  return host;
}

BindAddress ProbeAddress(const std::string& host, int port) {
  BindAddress a;
  std::string bare = host;
  if (bare.starts_with("[") && bare.ends_with("]")) {
    bare = bare.substr(1, bare.size() - 2);
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, bare.c_str(), &v6) == 1) {
    auto* s = reinterpret_cast<sockaddr_in6*>(&a.storage);
    s->sin6_family = AF_INET6;
    s->sin6_addr = v6;
    s->sin6_port = htons(static_cast<std::uint16_t>(port));
    a.length = sizeof(sockaddr_in6);
    a.family = AF_INET6;
    return a;
  }
  auto* s = reinterpret_cast<sockaddr_in*>(&a.storage);
  s->sin_family = AF_INET;
  s->sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, bare.c_str(), &s->sin_addr) != 1) {
    s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // a name such as "localhost"
  }
  a.length = sizeof(sockaddr_in);
  return a;
}

int TryBind(const std::string& host, int port) {
  BindAddress a = ProbeAddress(host, port);
  const int fd = socket(a.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return -errno;
  }
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // TIME_WAIT is not "in use"
  int result = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a.storage), a.length) != 0) {
    result = -errno;
  } else {
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    result = a.family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                  : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  }
  close(fd);
  return result;
}

std::optional<std::string> EnvValue(const std::vector<std::string>& env, std::string_view name) {
  for (const auto& e : env) {
    if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=') {
      return e.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

std::vector<std::string> BuildEnv(const Recipe& r) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    env.emplace_back(*e);
  }
  for (const auto& [name, value] : r.env) {
    std::string entry = name + "=" + value;
    auto same = std::find_if(env.begin(), env.end(), [&](const std::string& e) {
      return e.size() > name.size() && e.compare(0, name.size(), name) == 0 &&
             e[name.size()] == '=';
    });
    if (same != env.end()) {
      *same = std::move(entry);
    } else {
      env.push_back(std::move(entry));
    }
  }
  return env;
}

std::optional<std::string> FindProgram(const std::string& name, const std::string& path_value) {
  if (name.find('/') != std::string::npos) {
    return access(name.c_str(), X_OK) == 0 ? std::optional(name) : std::nullopt;
  }
  std::size_t start = 0;
  while (start <= path_value.size()) {
    std::size_t end = path_value.find(':', start);
    if (end == std::string::npos) {
      end = path_value.size();
    }
    std::string dir = path_value.substr(start, end - start);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;

    struct stat st {};

    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return std::nullopt;
}

bool WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

Result<pid_t> Spawn(const std::string& program, const std::vector<std::string>& argv,
                    const std::vector<std::string>& env, const std::string& cwd, int log_fd) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, log_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, log_fd, 2);
  if (!cwd.empty()) {
    posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  }
  // Nothing else of ours leaks in: a listening socket or a pipe held by the server would keep a
  // port busy or a reader waiting after we are done with it.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) {
    envp.push_back(const_cast<char*>(e.c_str()));
  }
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, program.c_str(), &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("cannot start {}: {}", program, std::strerror(rc)));
  }
  return pid;
}

std::vector<pid_t> GroupMembers(pid_t leader, bool outside_group_only) {
  std::vector<pid_t> out;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) {
    return out;
  }
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') {
      continue;
    }
    const std::string path = fmt::format("/proc/{}/stat", e->d_name);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      continue;
    }
    char buf[512];
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) {
      continue;
    }
    buf[n] = '\0';
    // "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses.
    const char* close_paren = std::strrchr(buf, ')');
    if (close_paren == nullptr) {
      continue;
    }
    char state = 0;
    long ppid = 0, pgrp = 0, session = 0;  // NOLINT(runtime/int)
    if (std::sscanf(close_paren + 1, " %c %ld %ld %ld", &state, &ppid, &pgrp, &session) != 4) {
      continue;
    }
    if (outside_group_only && pgrp == leader) {
      continue;
    }
    if (state != 'Z' && state != 'X' && (pgrp == leader || session == leader)) {
      out.push_back(static_cast<pid_t>(std::atol(e->d_name)));
    }
  }
  closedir(dir);
  return out;
}

}  // namespace sb::launch::detail
