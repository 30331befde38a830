// The run store on a real PostgreSQL server: initdb into a temporary directory (as the
// unprivileged `postgres` user when the tests run as root: initdb refuses root), a free port,
// password authentication (scram-sha-256). Runs recorded there print exactly what SQLite prints
// for the same runs; the password never shows; PGPASSWORD and ~/.pgpass work.
#include <algorithm>
#include <cstdlib>
#include <future>
#include <thread>

#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "store/store_cli_test.h"

namespace sb::store_test {
namespace {

using nlohmann::json;

const std::string kUser = "sbtest";
const std::string kPassword = "Pg-s3cret-4711";

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// The newest PostgreSQL server binaries Debian installed, or "".
std::string PgBinDir() {
  std::string best;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    if (fs::exists(e.path() / "bin" / "initdb") && e.path().string() > best) {
      best = e.path().string();
    }
  }
  return best.empty() ? best : best + "/bin";
}

class PgStore : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string bin = PgBinDir();
    if (bin.empty()) {
      skip_ = "no PostgreSQL server binaries in /usr/lib/postgresql (apt-get install postgresql)";
      return;
    }
    char tmpl[] = "/tmp/servebench-pg-XXXXXX";
    dir_ = mkdtemp(tmpl);
    const passwd* pg = getpwnam("postgres");
    as_postgres_ = geteuid() == 0;
    if (as_postgres_ && (pg == nullptr || !fs::exists("/usr/sbin/runuser"))) {
      skip_ = "running as root, and no `postgres` user or runuser to run initdb as";
      return;
    }
    std::ofstream(dir_ / "pw") << kPassword << "\n";
    if (as_postgres_) {
      for (const fs::path& p : {dir_, dir_ / "pw"}) {
        if (chown(p.c_str(), pg->pw_uid, pg->pw_gid) != 0) {
          skip_ = "cannot hand the temporary directory to the postgres user";
          return;
        }
      }
    }
    auto init = Pg({bin + "/initdb", "-D", (dir_ / "data").string(), "-U", kUser,
                    "--pwfile=" + (dir_ / "pw").string(), "-A", "scram-sha-256", "--no-sync", "-E",
                    "UTF8", "--locale=C"});
    ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
    port_ = FreePort();
    // Through system(3), not a pipe: the server would keep a captured pipe open forever.
    const std::string start =
        Shell(bin + "/pg_ctl -D " + (dir_ / "data").string() + " -l " + (dir_ / "log").string() +
              " -w -t 60 -o '-p " + std::to_string(port_) + " -k " + dir_.string() +
              " -c listen_addresses=127.0.0.1 -c fsync=off' start >/dev/null 2>&1");
    ASSERT_EQ(std::system(start.c_str()), 0) << start << "\n" << ReadFile(dir_ / "log");
    started_ = true;
    bin_ = bin;
  }

  static void TearDownTestSuite() {
    if (started_) {
      const std::string stop = Shell(bin_ + "/pg_ctl -D " + (dir_ / "data").string() +
                                     " -m immediate stop >/dev/null 2>&1");
      (void)std::system(stop.c_str());
    }
    if (!dir_.empty()) {
      fs::remove_all(dir_);
    }
  }

  void SetUp() override {
    if (!skip_.empty()) {
      GTEST_SKIP() << skip_;
    }
    ASSERT_TRUE(started_);
  }

  static testing::ProcessResult Pg(const std::vector<std::string>& argv) {
    std::vector<std::string> full = argv;
    if (as_postgres_) {
      full.insert(full.begin(), {"/usr/sbin/runuser", "-u", "postgres", "--"});
    }
    return testing::RunProcess(full, std::chrono::seconds(120));
  }

  // A command line for system(3), as the postgres user when the tests run as root.
  static std::string Shell(const std::string& command) {
    return as_postgres_ ? "/usr/sbin/runuser -u postgres -- " + command : command;
  }

  static std::string Url(bool with_password, const std::string& db = "postgres") {
    return "postgresql://" + kUser + (with_password ? ":" + kPassword : "") +
           "@127.0.0.1:" + std::to_string(port_) + "/" + db;
  }

  // A fresh database per test, so the tests do not see each other's runs.
  static std::string NewDatabase(const std::string& name) {
    auto r = testing::RunProcess({bin_ + "/psql", "-v", "ON_ERROR_STOP=1", "-q", "-d", Url(true),
                                  "-c", "CREATE DATABASE " + name});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Url(true, name);
  }

  static inline fs::path dir_;
  static inline std::string bin_;
  static inline std::string skip_;
  static inline bool as_postgres_ = false;
  static inline bool started_ = false;
  static inline int port_ = 0;
};

void ExpectNoPassword(const std::string& text, const std::string& where) {
  EXPECT_EQ(text.find(kPassword), std::string::npos) << where << ": " << text;
}

TEST_F(PgStore, SameOutputAsSqliteAndThePasswordNeverShows) {
  TempDir tmp;
  const std::string pg = NewDatabase("same_output");
  const std::string lite = (tmp.path() / "runs.sqlite").string();
  Sim fast("fast-model", "4");
  Sim slow("slow-model", "12");
  std::vector<fs::path> dirs = {tmp.path() / "slow", tmp.path() / "fast"};
  auto s = DecodeRun(slow, dirs[0], pg, {"--tag", "hw=box"});
  auto f = DecodeRun(fast, dirs[1], pg, {"--label", "fast one"});
  for (const auto* r : {&s, &f}) {
    ASSERT_EQ(r->exit_code, 0) << r->err;
    EXPECT_NE(r->err.find("stored run "), std::string::npos) << r->err;
    EXPECT_NE(r->err.find("postgresql://***@127.0.0.1:"), std::string::npos) << r->err;
    ExpectNoPassword(r->out + r->err, "perf output");
  }
  for (const auto& d : dirs) {
    for (const auto& e : fs::directory_iterator(d)) {
      ExpectNoPassword(ReadFile(e.path()), e.path().string());
    }
  }
  auto imported = Sb({"store", "import", "--store", lite, dirs[0].string(), dirs[1].string()});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  auto again = Sb({"store", "import", "--store", pg, dirs[0].string(), dirs[1].string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("0 added, 0 updated, 2 already stored"), std::string::npos) << again.out;
  ExpectNoPassword(again.out + again.err, "store import");

  const std::vector<std::vector<std::string>> commands = {
      {"history"},
      {"history", "--format", "csv"},
      {"history", "--format", "json"},
      {"history", "--metric", "decode.ttft_ms", "--tag", "hw=box"},
      {"leaderboard"},
      {"leaderboard", "--format", "csv"},
      {"leaderboard", "--format", "json"},
      {"leaderboard", "--format", "html"},
      {"leaderboard", "--by", "tag:hw"},
  };
  for (const auto& cmd : commands) {
    auto from_pg = cmd;
    auto from_lite = cmd;
    from_pg.insert(from_pg.end(), {"--store", pg});
    from_lite.insert(from_lite.end(), {"--store", lite});
    auto a = Sb(from_pg);
    auto b = Sb(from_lite);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(a.out, b.out) << cmd[0] << " " << (cmd.size() > 1 ? cmd[1] + " " + cmd[2] : "");
    ExpectNoPassword(a.out + a.err, cmd[0]);
  }
  const json board = json::parse(Sb({"leaderboard", "--store", pg, "--format", "json"}).out);
  ASSERT_EQ(board["entries"].size(), 2u);
  EXPECT_EQ(board["entries"][0]["model"], "fast-model");
  const json hist = json::parse(Sb({"history", "--store", pg, "--format", "json"}).out);
  EXPECT_EQ(hist["runs"].size(), 2u);
  auto ls = Sb({"store", "ls", "--store", pg});
  EXPECT_NE(ls.out.find("2 runs in postgresql://***@127.0.0.1:"), std::string::npos) << ls.out;
  ExpectNoPassword(ls.out + ls.err, "store ls");
}

// The resource rows (profile "resources") and the leaderboard's peak memory and J/token columns
// read back from PostgreSQL exactly as from SQLite: a run whose launched server had GPU figures
// (tests/resources/fake_nvml.cpp) beside one without any.
TEST_F(PgStore, ResourceColumnsAreTheSameAsFromSqlite) {
  TempDir tmp;
  const std::string pg = NewDatabase("resources");
  const std::string lite = (tmp.path() / "runs.sqlite").string();
  Sim plain("plain-model", "4");
  ASSERT_FALSE(plain.url().empty());
  const fs::path plain_dir = tmp.path() / "plain", served_dir = tmp.path() / "served";
  auto p = DecodeRun(plain, plain_dir, pg, {}, {"SERVEBENCH_NVML_LIB=/nonexistent.so"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto s =
      Sb({"perf", "--profile", "decode", "--runs", "2", "--tokens", "32", "--warmup", "0",
          "--serve", kBin + " sim --model served-model --port {port} --itl-ms 2",
          "--sample-period-ms", "50", "--out", served_dir.string(), "--store", pg},
         {"SERVEBENCH_NVML_LIB=" SB_FAKE_NVML, "FAKE_NVML_DEVICES=2", "FAKE_NVML_POWER_MW=100000"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto imported = Sb({"store", "import", "--store", lite, plain_dir.string(), served_dir.string()});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  for (const auto& cmd : std::vector<std::vector<std::string>>{
           {"leaderboard"},
           {"leaderboard", "--format", "csv"},
           {"leaderboard", "--format", "json"},
           {"leaderboard", "--format", "html"},
           {"leaderboard", "--metric", "resources.j_per_token"},
           {"history", "--metric", "resources.peak_memory_bytes", "--format", "json"}}) {
    auto from_pg = cmd;
    auto from_lite = cmd;
    from_pg.insert(from_pg.end(), {"--store", pg});
    from_lite.insert(from_lite.end(), {"--store", lite});
    auto a = Sb(from_pg);
    auto b = Sb(from_lite);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(a.out, b.out) << cmd[0] << " " << (cmd.size() > 1 ? cmd[1] + " " + cmd[2] : "");
  }
  const std::string md = Sb({"leaderboard", "--store", pg}).out;
  EXPECT_NE(md.find("| peak memory | J/token | run |"), std::string::npos) << md;
}

TEST_F(PgStore, PgpassAndPGPASSWORDSupplyThePasswordAndAWrongOneIsRedacted) {
  TempDir tmp;
  const std::string with_pw = NewDatabase("credentials");
  const std::string no_pw = Url(false, "credentials");
  auto from_env = Sb({"store", "ls", "--store", no_pw}, {"PGPASSWORD=" + kPassword});
  EXPECT_EQ(from_env.exit_code, 0) << from_env.err;
  EXPECT_NE(from_env.out.find("0 runs in postgresql://***@127.0.0.1:" + std::to_string(port_) +
                              "/credentials"),
            std::string::npos)
      << from_env.out;

  const fs::path home = tmp.path() / "home";
  fs::create_directories(home);
  std::ofstream(home / ".pgpass") << "127.0.0.1:" << port_ << ":*:" << kUser << ":" << kPassword
                                  << "\n";
  fs::permissions(home / ".pgpass", fs::perms::owner_read | fs::perms::owner_write);
  auto from_file = Sb({"store", "ls", "--store", no_pw},
                      {"-u PGPASSWORD", "-u PGPASSFILE", "HOME=" + home.string()});
  EXPECT_EQ(from_file.exit_code, 0) << from_file.err;

  auto without = Sb({"store", "ls", "--store", no_pw},
                    {"-u PGPASSWORD", "-u PGPASSFILE", "HOME=" + (tmp.path() / "empty").string()});
  EXPECT_EQ(without.exit_code, 3);
  const std::string wrong = "Wr0ng-pass-99";
  const std::string bad_url = "postgresql://" + kUser + ":" + wrong +
                              "@127.0.0.1:" + std::to_string(port_) + "/credentials";
  auto bad = Sb({"history", "--store", bad_url});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("store postgresql://***@127.0.0.1:"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("password authentication failed"), std::string::npos) << bad.err;
  EXPECT_EQ((bad.out + bad.err).find(wrong), std::string::npos) << bad.err;

  // A run whose store refuses it is measured and written in full all the same.
  Sim sim("m", "1");
  auto run = DecodeRun(sim, tmp.path() / "run", bad_url);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("run not stored in postgresql://***@"), std::string::npos) << run.err;
  EXPECT_EQ((run.out + run.err).find(wrong), std::string::npos);
  EXPECT_EQ(ReadFile(tmp.path() / "run" / "plan.json").find(wrong), std::string::npos);
  EXPECT_TRUE(fs::exists(tmp.path() / "run" / "report.md"));
}

TEST_F(PgStore, EightRunsWritingAtOnceLoseNothing) {
  TempDir tmp;
  const std::string pg = NewDatabase("eight_writers");
  Sim sim("m", "1");
  std::vector<std::future<testing::ProcessResult>> runs;
  for (int i = 0; i < 8; ++i) {
    runs.push_back(std::async(std::launch::async, [&, i] {
      return DecodeRun(sim, tmp.path() / ("run" + std::to_string(i)), pg,
                       {"--tag", "writer=" + std::to_string(i)});
    }));
  }
  for (auto& f : runs) {
    auto r = f.get();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("stored run "), std::string::npos) << r.err;
  }
  const json h = json::parse(Sb({"history", "--store", pg, "--format", "json"}).out);
  EXPECT_EQ(h["runs"].size(), 8u);
}

TEST_F(PgStore, MigratesAVersion1StoreWithNothingLost) {
  const std::string pg = NewDatabase("from_v1");
  auto load = testing::RunProcess({bin_ + "/psql", "-v", "ON_ERROR_STOP=1", "-q", "-d", pg, "-f",
                                   std::string(SB_FIXTURES_DIR) + "/store/store_v1.sql"});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  auto ls = Sb({"store", "ls", "--store", pg});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_NE(ls.out.find("2 runs in postgresql://***@"), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find("(schema version 2)"), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find("| a1b2c3d4e5f6 | 2026-11-30T10:00:00Z | complete | fast-model |"),
            std::string::npos)
      << ls.out;
  EXPECT_NE(ls.out.find("hw=dgx-spark,spec=3 | baseline |"), std::string::npos) << ls.out;
  const json h = json::parse(Sb({"history", "--store", pg, "--format", "json"}).out);
  ASSERT_EQ(h["runs"].size(), 2u);
  EXPECT_EQ(h["runs"][0]["value"], 198.7);
  EXPECT_EQ(h["runs"][1]["value"], 99.9);
  auto tags = testing::RunProcess(
      {bin_ + "/psql", "-At", "-d", pg, "-c", "SELECT key || '=' || value FROM tags ORDER BY key"});
  EXPECT_EQ(tags.out, "hw=dgx-spark\nspec=3\n");
}

// An unresponsive store costs seconds and one line, never the run (docs/store.md, "Safe writes"):
// another session holds the store's write lock (the server's lock_timeout ends the wait), and
// the writer's own backend is stopped while it waits (no server-side limit can fire: servebench
// gives the statement up). The run's files and exit code are kept.
TEST_F(PgStore, ALockedOrStoppedStoreCostsSecondsNotTheRun) {
  TempDir tmp;
  const std::string pg = NewDatabase("locked");
  // The lock every writer takes (pg_db.cpp kWriteLock), held by hand for two minutes.
  testing::Child holder({bin_ + "/psql", "-q", "-d", pg, "-c",
                         "SELECT pg_advisory_lock(32477870335947365); SELECT pg_sleep(120)"});
  Sim sim("m", "1");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto start = std::chrono::steady_clock::now();
  auto r = DecodeRun(sim, tmp.path() / "run", pg);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(took, 40);
  EXPECT_NE(r.err.find("run not stored in postgresql://***@"), std::string::npos) << r.err;
  // lock_timeout or statement_timeout (both 10 s): whichever the server fires first.
  EXPECT_NE(r.err.find("canceling statement due to"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(tmp.path() / "run" / "report.md"));

  // Now the writer's backend is stopped (SIGSTOP) while it waits for the lock.
  std::future<testing::ProcessResult> run =
      std::async(std::launch::async, [&] { return DecodeRun(sim, tmp.path() / "run2", pg); });
  int stopped = 0;
  for (int i = 0; i < 200 && stopped == 0; ++i) {
    auto q = testing::RunProcess(
        {bin_ + "/psql", "-At", "-d", pg, "-c",
         "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE "
         "'%pg_advisory_xact_lock%' AND pid <> pg_backend_pid()"});
    if (!q.out.empty()) {
      stopped = std::stoi(q.out);
      kill(stopped, SIGSTOP);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ASSERT_NE(stopped, 0) << "the writer never waited for the lock";
  start = std::chrono::steady_clock::now();
  auto r2 = run.get();
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  kill(stopped, SIGCONT);
  EXPECT_EQ(r2.exit_code, 0) << r2.err;
  EXPECT_LT(waited, 30);
  EXPECT_NE(r2.err.find("run not stored in postgresql://***@"), std::string::npos) << r2.err;
  EXPECT_NE(r2.err.find("no answer within"), std::string::npos) << r2.err;
  EXPECT_TRUE(fs::exists(tmp.path() / "run2" / "report.md"));
  holder.Signal(SIGKILL);
}

// The whole server stopped (SIGSTOP to the postmaster): connecting ends at libpq's
// connect_timeout with one line.
TEST_F(PgStore, AStoppedServerCostsSecondsNotTheRun) {
  TempDir tmp;
  const std::string pg = NewDatabase("stopped");
  const int postmaster = std::stoi(ReadFile(dir_ / "data" / "postmaster.pid"));
  Sim sim("m", "1");
  ASSERT_EQ(kill(postmaster, SIGSTOP), 0);
  const auto start = std::chrono::steady_clock::now();
  auto r = DecodeRun(sim, tmp.path() / "run", pg);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  kill(postmaster, SIGCONT);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(took, 30);
  EXPECT_NE(r.err.find("run not stored in postgresql://***@"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(tmp.path() / "run" / "report.md"));
}

}  // namespace
}  // namespace sb::store_test
