// The launched server's process tree from /proc: RSS and CPU time per process.
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "core/clock.h"
#include "resources/sources.h"

namespace sb::resources {

namespace {

// A small /proc file in one read (no iostream: this runs for every process at every sample).
bool ReadSmall(const std::string& path, std::string& out) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  char buf[1024];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) {
    return false;
  }
  out.assign(buf, static_cast<std::size_t>(n));
  return true;
}

struct ProcStat {
  pid_t ppid = 0, pgrp = 0, session = 0;
  double cpu_ticks = 0;  // utime + stime
};

bool ReadStat(const std::string& proc_root, pid_t pid, ProcStat& st) {
  std::string line;
  if (!ReadSmall(fmt::format("{}/{}/stat", proc_root, pid), line)) {
    return false;
  }
  // "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
  // stime ...": comm may hold spaces and parentheses, so parse after the last ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos) {
    return false;
  }
  char state = 0;
  long ppid = 0, pgrp = 0, session = 0;     // NOLINT(runtime/int)
  unsigned long long utime = 0, stime = 0;  // NOLINT(runtime/int)
  // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
  if (std::sscanf(line.c_str() + close + 1, " %c %ld %ld %ld %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                  &state, &ppid, &pgrp, &session, &utime, &stime) != 6) {
    return false;
  }
  st.ppid = static_cast<pid_t>(ppid);
  st.pgrp = static_cast<pid_t>(pgrp);
  st.session = static_cast<pid_t>(session);
  st.cpu_ticks = static_cast<double>(utime + stime);
  return true;
}

// Resident pages (second field of /proc/PID/statm); -1 when unreadable.
long long ReadRssPages(const std::string& proc_root, pid_t pid) {  // NOLINT(runtime/int)
  std::string text;
  long long size = 0, resident = -1;  // NOLINT(runtime/int)
  if (!ReadSmall(fmt::format("{}/{}/statm", proc_root, pid), text) ||
      std::sscanf(text.c_str(), "%lld %lld", &size, &resident) != 2) {
    return -1;
  }
  return resident;
}

std::map<pid_t, ProcStat> AllStats(const std::string& proc_root) {
  std::map<pid_t, ProcStat> out;
  DIR* dir = opendir(proc_root.c_str());
  if (dir == nullptr) {
    return out;
  }
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);  // NOLINT(runtime/int)
    if (end == e->d_name || *end != '\0' || pid <= 0) {
      continue;
    }
    ProcStat st;
    if (ReadStat(proc_root, static_cast<pid_t>(pid), st)) {
      out[static_cast<pid_t>(pid)] = st;
    }
  }
  closedir(dir);
  return out;
}

std::vector<pid_t> Tree(pid_t leader, const std::map<pid_t, ProcStat>& all) {
  std::set<pid_t> in;
  for (const auto& [pid, st] : all) {
    if (pid == leader || st.session == leader || st.pgrp == leader) {
      in.insert(pid);
    }
  }
  // Descendants that left the session (setsid) still belong to the server.
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, st] : all) {
      if (!in.contains(pid) && in.contains(st.ppid)) {
        in.insert(pid);
        grew = true;
      }
    }
  }
  return {in.begin(), in.end()};
}

class ProcessTreeSource final : public Source {
 public:
  ProcessTreeSource(pid_t leader, std::string proc_root)
      : leader_(leader),
        proc_root_(std::move(proc_root)),
        page_bytes_(static_cast<double>(sysconf(_SC_PAGESIZE))),
        ticks_per_s_(static_cast<double>(sysconf(_SC_CLK_TCK))) {}

  std::string name() const override { return "process"; }

  std::string detail() const override {
    return fmt::format("the server's process tree (session {}) from {}", leader_, proc_root_);
  }

  Result<void> Read(Fields& out) override {
    const std::int64_t now_ns = ToNanos(std::chrono::steady_clock::now());
    // Scanning all of /proc is most of a read's cost: the tree is found again every
    // kRescanEvery reads (and whenever one of its processes is gone); in between only its
    // known processes are read.
    std::map<pid_t, ProcStat> all;
    bool lost = tree_.empty() || ++reads_since_scan_ >= kRescanEvery;
    if (!lost) {
      for (pid_t pid : tree_) {
        ProcStat st;
        if (!ReadStat(proc_root_, pid, st)) {
          lost = true;
          break;
        }
        all[pid] = st;
      }
    }
    if (lost) {
      all = AllStats(proc_root_);
      tree_ = Tree(leader_, all);
      reads_since_scan_ = 0;
    }
    const std::vector<pid_t>& tree = tree_;
    if (tree.empty()) {
      return MakeError(ErrorCode::kSetup,
                       fmt::format("no process of the server's session {} is left", leader_));
    }
    double rss = 0;
    std::map<pid_t, double> ticks;
    for (pid_t pid : tree) {
      const long long pages = ReadRssPages(proc_root_, pid);  // NOLINT(runtime/int)
      if (pages >= 0) {
        rss += static_cast<double>(pages) * page_bytes_;
      }
      ticks[pid] = all.at(pid).cpu_ticks;
    }
    out[kServerRss] = rss;
    out[kServerProcesses] = static_cast<double>(tree.size());
    // CPU as a rate since the latest read at least kMinCpuIntervalNs old, over the processes
    // present in both (one that exited took its time with it; one that appeared counts from its
    // next read). /proc counts whole clock ticks (10 ms): over 5 ms one tick reads as 200% of a
    // core, so a shorter interval gives no figure (null), never a wrong one.
    while (history_.size() >= 2 && history_[1].first <= now_ns - kMinCpuIntervalNs) {
      history_.pop_front();
    }
    if (!history_.empty() && history_.front().first <= now_ns - kMinCpuIntervalNs) {
      const auto& [base_ns, base_ticks] = history_.front();
      double delta = 0;
      for (const auto& [pid, t] : ticks) {
        if (auto it = base_ticks.find(pid); it != base_ticks.end() && t >= it->second) {
          delta += t - it->second;
        }
      }
      out[kServerCpu] =
          100.0 * (delta / ticks_per_s_) / (static_cast<double>(now_ns - base_ns) / 1e9);
    }
    history_.emplace_back(now_ns, std::move(ticks));
    return {};
  }

 private:
  pid_t leader_;
  std::string proc_root_;
  double page_bytes_, ticks_per_s_;
  // Earlier reads (time, CPU ticks per process), oldest first; the front is the base of the
  // next CPU figure once it is kMinCpuIntervalNs old.
  std::deque<std::pair<std::int64_t, std::map<pid_t, double>>> history_;
  static constexpr std::int64_t kMinCpuIntervalNs = 200'000'000;
  static constexpr int kRescanEvery = 8;
  std::vector<pid_t> tree_;  // as found by the latest scan
  int reads_since_scan_ = 0;
};

}  // namespace

std::vector<pid_t> ProcessTree(pid_t leader, const std::string& proc_root) {
  return Tree(leader, AllStats(proc_root));
}

Result<std::unique_ptr<Source>> OpenProcessTree(pid_t leader, std::string proc_root) {
  if (leader <= 0) {
    return MakeError(ErrorCode::kSetup, "no server process");
  }
  auto source = std::make_unique<ProcessTreeSource>(leader, std::move(proc_root));
  Fields probe;
  if (auto ok = source->Read(probe); !ok) {
    return ok.error();
  }
  return std::unique_ptr<Source>(std::move(source));
}

}  // namespace sb::resources
