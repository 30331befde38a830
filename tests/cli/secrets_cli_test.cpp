// Secrets and server-given names through the servebench binary (docs/bounds.md): an API key file
// is read with a limit, a key that would forge HTTP headers is refused without being printed, a
// model id with terminal escapes reaches no terminal and no report raw, and an endpoint's query
// or password (even without a scheme) is never shown. Real processes, real HTTP, real files.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/sim_child.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ProcessResult;
using testing::ReadFile;
using testing::RunProcess;
using testing::TempDir;

const std::string kBin = SB_BINARY;

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// `perf --profile decode` of one short run against `url`, with extra flags and environment.
ProcessResult Perf(const std::string& url, const fs::path& out,
                   const std::vector<std::string>& extra = {},
                   const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv = {kBin,       "perf",   "--endpoint", url,         "--profile",
                                   "decode",   "--runs", "1",          "--tokens",  "8",
                                   "--warmup", "0",      "--out",      out.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return RunProcess(argv, std::chrono::seconds(60), env);
}

bool HasRawControl(const std::string& text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7F) {
      return true;
    }
  }
  return false;
}

TEST(Secrets, AnApiKeyFileOfDevZeroStopsAt64KiB) {
  testing::SimChild sim({});
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r = Perf(sim.url(), dir.path() / "run", {"--api-key-file", "/dev/zero"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_LT(SecondsSince(start), 20);
  EXPECT_NE(r.err.find("--api-key-file /dev/zero: over 64 KiB; is it a secret file?"),
            std::string::npos)
      << r.err;
}

TEST(Secrets, AnApiKeyFileOrPipeOver64KiBIsRefused) {
  testing::SimChild sim({});
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const fs::path big = dir.path() / "big.log";
  std::ofstream(big) << std::string(70 * 1024, 'k');
  ProcessResult r = Perf(sim.url(), dir.path() / "run", {"--api-key-file", big.string()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("--api-key-file " + big.string() + ": over 64 KiB"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("kkkkkkkk"), std::string::npos);  // its contents are never shown

  // A FIFO whose writer never stops (`yes`), as with a process substitution gone wrong.
  const fs::path fifo = dir.path() / "key.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  signal(SIGPIPE, SIG_IGN);  // the writer learns of the closed reader by EPIPE
  std::thread writer([&] {
    const int fd = open(fifo.c_str(), O_WRONLY);
    const std::string chunk(4096, 'y');
    while (fd >= 0 && write(fd, chunk.data(), chunk.size()) > 0) {
    }
    if (fd >= 0) {
      close(fd);
    }
  });
  const auto start = std::chrono::steady_clock::now();
  ProcessResult p = Perf(sim.url(), dir.path() / "run2", {"--api-key-file", fifo.string()});
  writer.join();  // the reader closed: the writer's write fails with EPIPE
  EXPECT_EQ(p.exit_code, 3) << p.err;
  EXPECT_LT(SecondsSince(start), 20);
  EXPECT_NE(p.err.find("over 64 KiB; is it a secret file?"), std::string::npos) << p.err;
}

TEST(Secrets, AKeyWithControlCharactersIsRefusedAndNeverPrinted) {
  testing::SimChild sim({});
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const fs::path injected = dir.path() / "injected.key";
  std::ofstream(injected) << "sk-Part0ne\r\nX-Injected: yes\n";
  ProcessResult f = Perf(sim.url(), dir.path() / "a", {"--api-key-file", injected.string()});
  EXPECT_EQ(f.exit_code, 3) << f.err;
  EXPECT_NE(
      f.err.find("--api-key-file " + injected.string() + ": the API key holds a control character"),
      std::string::npos)
      << f.err;
  EXPECT_FALSE(fs::exists(dir.path() / "a" / "samples.jsonl"));  // nothing was sent

  ProcessResult e =
      Perf(sim.url(), dir.path() / "b", {}, {"OPENAI_API_KEY=sk-Part0ne\nX-Injected: yes"});
  EXPECT_EQ(e.exit_code, 3) << e.err;
  EXPECT_NE(e.err.find("$OPENAI_API_KEY: the API key holds a control character"), std::string::npos)
      << e.err;
  ProcessResult v =
      Perf(sim.url(), dir.path() / "c", {"--api-key-env", "SB_KEY"}, {"SB_KEY=sk-Part0ne\x7f"});
  EXPECT_EQ(v.exit_code, 3) << v.err;
  EXPECT_NE(v.err.find("--api-key-env SB_KEY: the API key holds a control character"),
            std::string::npos)
      << v.err;
  for (const auto* r : {&f, &e, &v}) {
    EXPECT_EQ((r->out + r->err).find("sk-Part0ne"), std::string::npos) << r->err;
    EXPECT_EQ((r->out + r->err).find("X-Injected"), std::string::npos) << r->err;
  }

  // One trailing line break is the file's, not the key's.
  const fs::path good = dir.path() / "good.key";
  std::ofstream(good) << "sk-G00d-key\n";
  ProcessResult ok = Perf(sim.url(), dir.path() / "d", {"--api-key-file", good.string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST(Secrets, AModelIdWithEscapesReachesNoTerminalOrReportRaw) {
  const std::string evil = "evil\x1b[2J\x1b]0;pwned\x07model\r\nFAKE: all tests passed";
  testing::SimChild sim({"--model", evil});
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r = Perf(sim.url(), out, {"--store", (dir.path() / "runs.sqlite").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(HasRawControl(r.out)) << r.out;
  EXPECT_FALSE(HasRawControl(r.err)) << r.err;
  EXPECT_NE(r.out.find("evil [2J ]0;pwned model  FAKE: all tests passed"), std::string::npos)
      << r.out;
  for (const char* file : {"report.md", "report.html"}) {
    const std::string text = ReadFile(out / file);
    EXPECT_FALSE(HasRawControl(text)) << file;
    EXPECT_NE(text.find("pwned"), std::string::npos) << file;
  }
  // results.json keeps the id as the server gave it (escaped as JSON).
  const json res = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(res["target"]["model"], evil);
  ProcessResult ls =
      RunProcess({kBin, "store", "ls", "--store", (dir.path() / "runs.sqlite").string()});
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_FALSE(HasRawControl(ls.out)) << ls.out;
  EXPECT_NE(ls.out.find("pwned"), std::string::npos) << ls.out;
  // Asked for another model, the error lists the served ids printably.
  ProcessResult other = Perf(sim.url(), dir.path() / "other", {"--model", "nope"});
  EXPECT_EQ(other.exit_code, 3);
  EXPECT_FALSE(HasRawControl(other.err)) << other.err;
  EXPECT_NE(other.err.find("pwned"), std::string::npos) << other.err;
}

TEST(Secrets, AnEndpointQueryGoesAtTheEndAndIsNeverShown) {
  testing::SimChild sim({});
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const fs::path out = dir.path() / "run";
  const std::string secret = "qS3cret-in-query";
  ProcessResult r = Perf(sim.url() + "?key=" + secret, out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ((r.out + r.err).find(secret), std::string::npos) << r.out << r.err;
  for (const auto& e : fs::directory_iterator(out)) {
    EXPECT_EQ(ReadFile(e.path()).find(secret), std::string::npos) << e.path();
  }
}

TEST(Secrets, AnEndpointWithoutSchemeDoesNotEchoItsPassword) {
  TempDir dir;
  const std::string secret = "pw-NoScheme-4711";
  ProcessResult r = Perf("alice:" + secret + "@127.0.0.1:1/v1", dir.path() / "run");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("bad endpoint URL '***@127.0.0.1:1/v1'"), std::string::npos) << r.err;
  EXPECT_EQ((r.out + r.err).find(secret), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sb
