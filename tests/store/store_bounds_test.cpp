// The store's bounds (docs/store.md, docs/bounds.md): --store values that name no store are
// refused before anything runs, an unresponsive PostgreSQL costs seconds and one line (never the
// run), and `store` commands stop at a signal. Real processes, real sockets, real files.
#include <chrono>
#include <thread>

#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "store/store_cli_test.h"

namespace sb::store_test {
namespace {

using nlohmann::json;

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A TCP listener on 127.0.0.1 that never accepts or answers: the kernel completes connections
// into its backlog, so a client connects and then waits for an answer that never comes.
class SilentListener {
 public:
  SilentListener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    listen(fd_, 64);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }

  ~SilentListener() { close(fd_); }

  std::string Url() const {
    return "postgresql://nobody@127.0.0.1:" + std::to_string(port_) + "/servebench";
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(StoreBounds, StoreValuesThatNameNoStoreAreUsageErrors) {
  TempDir tmp;
  const fs::path missing = tmp.path() / "no" / "such" / "dir";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "--store: '': empty: give a SQLite file path or postgresql://USER@HOST/DB"},
      {"sqlite:///tmp/x.sqlite", "unknown scheme 'sqlite://'"},
      {"mysql://u:pw-Mysql-1@h/db", "unknown scheme 'mysql://'"},
      {(missing / "runs.sqlite").string(),
       "directory " + missing.string() + " does not exist (create it first)"},
      {tmp.path().string(), "is a directory"},
  };
  for (const auto& [store, why] : cases) {
    for (const std::vector<std::string>& cmd :
         std::vector<std::vector<std::string>>{{"store", "ls", "--store", store},
                                               {"store", "import", "--store", store, "x"},
                                               {"perf", "--profile", "decode", "--out",
                                                (tmp.path() / "run").string(), "--store", store}}) {
      auto r = Sb(cmd, {}, std::chrono::seconds(30));
      EXPECT_EQ(r.exit_code, 2) << cmd[0] << " " << store << ": " << r.err;
      EXPECT_NE(r.err.find(why), std::string::npos) << store << ": " << r.err;
      EXPECT_EQ(r.err.find("pw-Mysql-1"), std::string::npos) << r.err;
    }
    EXPECT_FALSE(fs::exists(tmp.path() / "run")) << store;  // refused before the run
  }
  EXPECT_FALSE(fs::exists(tmp.path() / "no"));  // never created
  // SERVEBENCH_STORE with an unknown scheme: the run is kept, one line says why.
  Sim sim("m", "1");
  auto r = DecodeRun(sim, tmp.path() / "env", "", {}, {"SERVEBENCH_STORE=sqlite://runs.db"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("run not stored in sqlite://runs.db: unknown scheme 'sqlite://'"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists("sqlite:"));
}

TEST(StoreBounds, ThePostgresSchemeIsCaseInsensitiveAndTheDefaultStoreMakesItsFolder) {
  TempDir tmp;
  SilentListener pg;  // nothing answers: what matters is that it is tried as PostgreSQL
  std::string upper = pg.Url();
  upper.replace(0, 10, "POSTGRESQL");
  auto r = Sb({"store", "ls", "--store", upper}, {}, std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("cannot connect"), std::string::npos) << r.err;

  Sim sim("m", "1");
  const fs::path out = tmp.path() / "run";
  ASSERT_EQ(DecodeRun(sim, out, "", {"--no-store"}).exit_code, 0);
  const fs::path home = tmp.path() / "home";
  fs::create_directories(home);
  auto imported =
      Sb({"store", "import", out.string()}, {"-u XDG_DATA_HOME", "HOME=" + home.string()});
  EXPECT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_TRUE(fs::exists(home / ".local" / "share" / "servebench" / "runs.sqlite"));
}

// A PostgreSQL store that accepts connections and never answers: the store commands end in
// seconds with one line, and a run keeps its files and its own exit code.
TEST(StoreBounds, AnUnresponsivePostgresCostsSecondsNotTheRun) {
  TempDir tmp;
  SilentListener pg;
  auto start = std::chrono::steady_clock::now();
  auto ls = Sb({"store", "ls", "--store", pg.Url()}, {}, std::chrono::seconds(60));
  EXPECT_EQ(ls.exit_code, 3) << ls.err;
  EXPECT_LT(SecondsSince(start), 15);
  EXPECT_NE(ls.err.find("store postgresql://***@127.0.0.1:"), std::string::npos) << ls.err;

  Sim sim("m", "1");
  const fs::path out = tmp.path() / "run";
  start = std::chrono::steady_clock::now();
  auto r = DecodeRun(sim, out, pg.Url());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(SecondsSince(start), 30);
  EXPECT_NE(r.err.find("run not stored in postgresql://***@127.0.0.1:"), std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::exists(out / "report.md"));
  EXPECT_NE(ReadFile(out / "results.json").find("\"status\": \"complete\""), std::string::npos);
}

// `store ls` waiting on a store quits at the first Ctrl-C (it had ignored three).
TEST(StoreBounds, AStoreCommandQuitsAtTheFirstSignal) {
  SilentListener pg;
  testing::Child ls({"/usr/bin/env", "-u", "SERVEBENCH_STORE", kBin, "store", "ls", "--store",
                     pg.Url() + "?connect_timeout=60"});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // connecting by now
  const auto start = std::chrono::steady_clock::now();
  ls.Signal(SIGINT);
  EXPECT_EQ(ls.Wait(std::chrono::seconds(10)), 130);
  EXPECT_LT(SecondsSince(start), 5);
}

// `store import` stops between run directories at the first SIGINT or SIGTERM: what was
// imported stays, the rest is not started, and it says so.
TEST(StoreBounds, StoreImportStopsBetweenRunsAtTheFirstSignal) {
  TempDir tmp;
  Sim sim("m", "1");
  const fs::path first = tmp.path() / "first";
  ASSERT_EQ(DecodeRun(sim, first, "", {"--no-store"}).exit_code, 0);
  const json results = json::parse(ReadFile(first / "results.json"));
  std::vector<std::string> dirs;
  for (int i = 0; i < 400; ++i) {  // distinct runs: another start time each
    const fs::path d = tmp.path() / "copies" / std::to_string(i);
    fs::create_directories(d);
    json r = results;
    r["started_at"] = "2026-01-01T00:00:" + std::to_string(10000 + i) + "Z";
    std::ofstream(d / "results.json") << r.dump();
    fs::copy_file(first / "plan.json", d / "plan.json");
    dirs.push_back(d.string());
  }
  int n = 0;
  for (int sig : {SIGINT, SIGTERM}) {
    const std::string store = (tmp.path() / ("runs" + std::to_string(n++) + ".sqlite")).string();
    std::vector<std::string> argv = {kBin, "store", "import", "--store", store};
    argv.insert(argv.end(), dirs.begin(), dirs.end());
    testing::Child import(argv);
    ASSERT_NE(import.ReadLine().find(" added: "), std::string::npos);
    import.Signal(sig);
    EXPECT_EQ(import.Wait(std::chrono::seconds(30)), 130) << import.Stderr();
    const std::string err = import.Stderr();
    EXPECT_NE(err.find("run directories not imported"), std::string::npos) << err;
    auto ls = Sb({"store", "ls", "--store", store});
    ASSERT_EQ(ls.exit_code, 0) << ls.err;
    // Its last line: "N runs in STORE (schema version 2)".
    const std::string out = ls.out.substr(0, ls.out.find_last_not_of('\n') + 1);
    const int stored = std::stoi(out.substr(out.rfind('\n') + 1));
    EXPECT_GE(stored, 1);
    EXPECT_LT(stored, 400);
  }
}

}  // namespace
}  // namespace sb::store_test
