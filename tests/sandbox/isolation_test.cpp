// Isolation: environment, network, filesystem writes, process trees, privileges. Hostile
// programs run only inside the sandbox, with small limits.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/host.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_test_util.h"

namespace sb::sandbox {
namespace {

using testutil::CountProcessesOfUid;
using testutil::MustRun;
using testutil::Py;
using testutil::Small;
using testutil::TempDir;

// Host() without the pid namespace (and the mount namespace that goes with it): the
// supervisor falls back to process groups, the uid and its subreaper children.
HostCaps WithoutPidNamespace() {
  HostCaps h = Host();
  h.clone_flags &= ~static_cast<unsigned long>(CLONE_NEWPID | CLONE_NEWNS);
  h.isolation.pid_namespace = false;
  h.private_mounts = false;
  return h;
}

Result<RunResult> RunOn(const Program& p, const Limits& l, const HostCaps& h) {
  return RunWith(p, l, h);
}

TEST(SandboxIsolation, ProbeReportsWhatThisMachineSupports) {
  Isolation iso = Probe();
  std::string described = iso.Describe();
  std::cout << "sandbox isolation: " << described << "\n";
  // This machine (and CI) allows network isolation of some kind.
  EXPECT_TRUE(iso.network_namespace || iso.landlock_net || iso.seccomp) << described;
  EXPECT_NE(described, "none");
  EXPECT_EQ(described.find("netns") != std::string::npos, iso.network_namespace);
  EXPECT_EQ(described.find("uid") != std::string::npos, iso.uid_drop);
  if (geteuid() == 0) {
    EXPECT_TRUE(iso.uid_drop) << described;
  }
  EXPECT_EQ(Isolation{}.Describe(), "none");
  Isolation all{true, true, true, true, true, true};
  EXPECT_EQ(all.Describe(), "netns, pidns, landlock, landlock-net, seccomp, uid");
}

TEST(SandboxIsolation, EnvironmentIsEmpty) {
  setenv("SERVEBENCH_SANDBOX_CANARY", "leaked", 1);
  RunResult r = MustRun(Py("import os\nfor k in sorted(os.environ):\n"
                           "    print(k + '=' + os.environ[k])\n"
                           "print('cwd=' + os.getcwd())\n"),
                        Small());
  unsetenv("SERVEBENCH_SANDBOX_CANARY");
  ASSERT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  std::istringstream lines(r.stdout_data);
  std::string line;
  std::vector<std::string> keys;
  std::string home, tmpdir, cwd;
  while (std::getline(lines, line)) {
    std::string key = line.substr(0, line.find('='));
    std::string value = line.substr(line.find('=') + 1);
    if (key == "cwd") {
      cwd = value;
      continue;
    }
    keys.push_back(key);
    if (key == "PATH") {
      EXPECT_EQ(value, "/usr/bin:/bin");
    } else if (key == "LANG") {
      EXPECT_EQ(value, "C.UTF-8");
    } else if (key == "HOME") {
      home = value;
    } else if (key == "TMPDIR") {
      tmpdir = value;
    }
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"HOME", "LANG", "PATH", "TMPDIR"})) << r.stdout_data;
  EXPECT_EQ(home, cwd);
  EXPECT_EQ(tmpdir, cwd);
  EXPECT_EQ(r.stdout_data.find("leaked"), std::string::npos);
}

// A TCP listener on 127.0.0.1 that the sandboxed program tries to reach.
class Listener {
 public:
  Listener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }

  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  ~Listener() { close(fd_); }

  int port() const { return port_; }

  // A connection is waiting (accept does not block: the socket is non-blocking).
  bool Connected() const {
    int c = accept(fd_, nullptr, nullptr);
    if (c >= 0) {
      close(c);
      return true;
    }
    return false;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

std::string ConnectProgram(int port) {
  return "import socket\n"
         "for family, addr in ((socket.AF_INET, ('127.0.0.1', " +
         std::to_string(port) + ")), (socket.AF_INET6, ('::1', " + std::to_string(port) +
         "))):\n"
         "    try:\n"
         "        s = socket.socket(family, socket.SOCK_STREAM)\n"
         "        s.settimeout(2)\n"
         "        s.connect(addr)\n"
         "        print('connected')\n"
         "    except OSError as e:\n"
         "        print('blocked', e.errno)\n"
         "try:\n"
         "    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
         "    u.sendto(b'x', ('127.0.0.1', " +
         std::to_string(port) +
         "))\n"
         "    print('udp sent')\n"
         "except OSError as e:\n"
         "    print('blocked', e.errno)\n";
}

// UDP is outside Landlock's network rules: only a network namespace or seccomp stops it.
void ExpectNetworkBlocked(const HostCaps& host) {
  const bool udp_blocked = host.isolation.network_namespace || host.isolation.seccomp;
  Listener listener;
  auto r = RunOn(Py(ConnectProgram(listener.port())), Small(), host);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::kExited) << testutil::Describe(*r);
  EXPECT_EQ(r->stdout_data.find("connected"), std::string::npos) << r->stdout_data;
  if (udp_blocked) {
    EXPECT_EQ(r->stdout_data.find("udp sent"), std::string::npos) << r->stdout_data;
  }
  EXPECT_NE(r->stdout_data.find("blocked"), std::string::npos) << testutil::Describe(*r);
  EXPECT_FALSE(listener.Connected());
}

TEST(SandboxIsolation, NetworkConnectFails) {
  ExpectNetworkBlocked(Host());
}

TEST(SandboxIsolation, NetworkConnectFailsWithSeccompAlone) {
  HostCaps h = Host();
  if (!h.isolation.seccomp) {
    GTEST_SKIP() << "no seccomp here";
  }
  h.clone_flags &= ~static_cast<unsigned long>(CLONE_NEWNET);
  h.isolation.network_namespace = false;
  h.isolation.landlock = h.isolation.landlock_net = false;
  h.landlock_abi = 0;
  ExpectNetworkBlocked(h);
}

TEST(SandboxIsolation, NetworkConnectFailsWithLandlockAndNamespaceAlone) {
  HostCaps h = Host();
  h.isolation.seccomp = false;
  h.seccomp.clear();
  if (!h.isolation.network_namespace && !h.isolation.landlock_net) {
    GTEST_SKIP() << "neither a network namespace nor Landlock network rules here";
  }
  ExpectNetworkBlocked(h);
}

TEST(SandboxIsolation, WritesOutsideTheDirectoryFail) {
  if (!Probe().landlock) {
    GTEST_SKIP() << "no Landlock here: writes are confined only by the uid";
  }
  TempDir outside;
  ASSERT_EQ(chmod(outside.path().string().c_str(), 0777), 0);  // only Landlock stands in the way
  const std::string existing = outside.path().string() + "/existing.txt";
  { std::ofstream(existing) << "original"; }
  ASSERT_EQ(chmod(existing.c_str(), 0666), 0);
  const std::string in_tmp =
      "/tmp/sandbox-escape-" + std::to_string(getpid()) + "-" + std::to_string(std::rand());
  const std::string created = outside.path().string() + "/created.txt";
  std::string src =
      "import os\n"
      "for path, mode in (('" +
      in_tmp + "', 'w'), ('" + created + "', 'w'), ('" + existing + "', 'a'), ('" + existing +
      "', 'w')):\n"
      "    try:\n"
      "        with open(path, mode) as f:\n"
      "            f.write('pwned')\n"
      "        print('wrote', path)\n"
      "    except OSError as e:\n"
      "        print('denied', e.errno)\n"
      "for op in (lambda: os.mkdir('" +
      outside.path().string() +
      "/d'),\n"
      "           lambda: os.symlink('/etc', '" +
      outside.path().string() +
      "/l'),\n"
      "           lambda: os.rename('" +
      existing + "', '" + outside.path().string() +
      "/moved'),\n"
      "           lambda: os.unlink('" +
      existing +
      "')):\n"
      "    try:\n"
      "        op()\n"
      "        print('changed')\n"
      "    except OSError as e:\n"
      "        print('denied', e.errno)\n"
      "open('inside.txt', 'w').write('fine')\n"
      "print('inside ok')\n";
  RunResult r = MustRun(Py(src), Small());
  EXPECT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  EXPECT_EQ(r.stdout_data.find("wrote"), std::string::npos) << r.stdout_data;
  EXPECT_EQ(r.stdout_data.find("changed"), std::string::npos) << r.stdout_data;
  EXPECT_NE(r.stdout_data.find("inside ok"), std::string::npos) << testutil::Describe(r);
  EXPECT_FALSE(std::filesystem::exists(in_tmp));
  EXPECT_FALSE(std::filesystem::exists(created));
  EXPECT_FALSE(std::filesystem::exists(outside.path().string() + "/d"));
  EXPECT_FALSE(std::filesystem::is_symlink(outside.path().string() + "/l"));
  std::ifstream in(existing);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "original");
  std::filesystem::remove(in_tmp);
}

TEST(SandboxIsolation, RunsUnprivileged) {
  RunResult r = MustRun(Py("import os\n"
                           "print(os.getuid(), os.geteuid(), os.getgid(), os.getgroups())\n"
                           "st = open('/proc/self/status').read()\n"
                           "print([l for l in st.splitlines() if l.startswith(('NoNewPrivs', "
                           "'Seccomp:', 'CapEff'))])\n"
                           "try:\n"
                           "    open('/etc/shadow').read()\n"
                           "    print('read shadow')\n"
                           "except OSError as e:\n"
                           "    print('shadow denied', e.errno)\n"
                           "try:\n"
                           "    os.kill(1, 9)\n"
                           "    print('killed init')\n"
                           "except OSError as e:\n"
                           "    print('kill denied', e.errno)\n"),
                        Small());
  ASSERT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  EXPECT_NE(r.stdout_data.find("NoNewPrivs:\\t1"), std::string::npos) << r.stdout_data;
  EXPECT_NE(r.stdout_data.find("CapEff:\\t0000000000000000"), std::string::npos) << r.stdout_data;
  if (Probe().seccomp) {
    EXPECT_NE(r.stdout_data.find("Seccomp:\\t2"), std::string::npos) << r.stdout_data;
  }
  EXPECT_EQ(r.stdout_data.find("killed init"), std::string::npos) << r.stdout_data;
  if (Probe().uid_drop) {
    unsigned long uid = std::stoul(r.stdout_data);
    EXPECT_GE(uid, kSandboxUidBase);
    EXPECT_NE(r.stdout_data.find(" []"), std::string::npos) << r.stdout_data;  // no groups
    EXPECT_NE(r.stdout_data.find("shadow denied"), std::string::npos) << r.stdout_data;
  }
}

// A fork bomb ends with a verdict within its limits, and leaves no process behind.
void ExpectForkBombContained(const HostCaps& host) {
  Limits l = Small();
  l.processes = 6;
  l.cpu_s = 1;
  l.wall_s = 2;
  auto r = RunOn(Py("import os\nprint(os.getuid(), flush=True)\n"
                    "while True:\n"
                    "    try:\n"
                    "        os.fork()\n"
                    "    except OSError:\n"
                    "        pass\n"),
                 l, host);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->verdict == Verdict::kWallTimeout || r->verdict == Verdict::kCpuLimit)
      << testutil::Describe(*r);
  EXPECT_LT(r->wall_s, 6.0);
  ASSERT_FALSE(r->stdout_data.empty()) << testutil::Describe(*r);
  const uid_t uid = static_cast<uid_t>(std::stoul(r->stdout_data));
  if (uid != getuid()) {
    EXPECT_EQ(CountProcessesOfUid(uid), 0);
  }
}

TEST(SandboxProcesses, ForkBombIsContained) {
  ExpectForkBombContained(Host());
}

TEST(SandboxProcesses, ForkBombIsContainedWithoutPidNamespace) {
  if (!Host().isolation.uid_drop) {
    GTEST_SKIP() << "without a pid namespace and a uid of its own, a fork bomb would count "
                    "against this user's processes";
  }
  ExpectForkBombContained(WithoutPidNamespace());
}

// Background processes (a new session, a double fork) die with the run.
void ExpectNoSurvivors(const HostCaps& host) {
  Limits l = Small();
  auto r = RunOn(Py("import os, subprocess\nprint(os.getuid(), flush=True)\n"
                    "subprocess.Popen(['/bin/sleep', '100'], start_new_session=True)\n"
                    "if os.fork() == 0:\n"
                    "    os.setsid()\n"
                    "    if os.fork() == 0:\n"
                    "        os.execv('/bin/sleep', ['sleep', '100'])\n"
                    "    os._exit(0)\n"
                    "os.wait()\n"),
                 l, host);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::kExited) << testutil::Describe(*r);
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_LT(r->wall_s, 3.0);
  ASSERT_FALSE(r->stdout_data.empty());
  const uid_t uid = static_cast<uid_t>(std::stoul(r->stdout_data));
  if (uid != getuid()) {
    EXPECT_EQ(CountProcessesOfUid(uid), 0);
  }
}

TEST(SandboxProcesses, BackgroundProcessesDieWithTheRun) {
  ExpectNoSurvivors(Host());
}

TEST(SandboxProcesses, BackgroundProcessesDieWithoutPidNamespace) {
  ExpectNoSurvivors(WithoutPidNamespace());
}

TEST(SandboxProcesses, WallTimeoutWithoutPidNamespace) {
  Limits l = Small();
  l.wall_s = 1;
  auto r = RunOn(Py("import subprocess, time\n"
                    "subprocess.Popen(['/bin/sleep', '100'], start_new_session=True)\n"
                    "time.sleep(100)\n"),
                 l, WithoutPidNamespace());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict, Verdict::kWallTimeout) << testutil::Describe(*r);
  EXPECT_LT(r->wall_s, 3.0);
}

TEST(SandboxProcesses, ProcessLimitCountsOnlyTheSandbox) {
  Limits l = Small();
  l.processes = 4;
  RunResult r = MustRun(Py("import subprocess\nok, failed = 0, 0\nps = []\n"
                           "for _ in range(8):\n"
                           "    try:\n"
                           "        ps.append(subprocess.Popen(['/bin/sleep', '0.3']))\n"
                           "        ok += 1\n"
                           "    except OSError:\n"
                           "        failed += 1\n"
                           "for p in ps:\n"
                           "    p.wait()\n"
                           "print(ok, failed)\n"),
                        l);
  EXPECT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  EXPECT_EQ(r.stdout_data, "3 5\n");  // the program itself and three children
}

TEST(SandboxProcesses, ConcurrentRunsStayApart) {
  constexpr int kRuns = 4;
  std::vector<RunResult> results(kRuns);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRuns; ++i) {
    threads.emplace_back([i, &results] {
      auto r =
          sandbox::Run(Py("import os, sys\nprint(os.getuid(), sys.stdin.read(), os.getcwd())\n",
                          "run" + std::to_string(i)),
                       Small());
      if (r) {
        results[i] = std::move(r).value();
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  std::set<std::string> uids, dirs;
  for (int i = 0; i < kRuns; ++i) {
    ASSERT_EQ(results[i].verdict, Verdict::kExited) << testutil::Describe(results[i]);
    std::istringstream words(results[i].stdout_data);
    std::string uid, input, dir;
    words >> uid >> input >> dir;
    EXPECT_EQ(input, "run" + std::to_string(i));
    uids.insert(uid);
    dirs.insert(dir);
  }
  EXPECT_EQ(dirs.size(), static_cast<std::size_t>(kRuns));
  if (Probe().uid_drop) {
    EXPECT_EQ(uids.size(), static_cast<std::size_t>(kRuns));
  }
}

}  // namespace
}  // namespace sb::sandbox
