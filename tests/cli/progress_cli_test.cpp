// Live progress through the binary (issue 23 item 3): with stderr not a terminal, `servebench
// run 2>log` writes plain "progress:" lines at most every 10 s and nothing on stdout; under a
// pseudo-terminal (util-linux `script`) the status line is redrawn in place.
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sb {
namespace {

namespace fs = std::filesystem;
using testing::ProcessResult;
using testing::RunProcess;
using testing::TempDir;

const std::string kBin = SB_BINARY;

// "m:ss elapsed" of each line, in seconds.
std::vector<int> ElapsedOf(const std::vector<std::string>& lines) {
  std::vector<int> out;
  const std::regex re(R"((\d+):(\d\d) elapsed)");
  for (const std::string& l : lines) {
    std::smatch m;
    if (std::regex_search(l, m, re)) {
      out.push_back(std::stoi(m[1]) * 60 + std::stoi(m[2]));
    }
  }
  return out;
}

TEST(ProgressCliTest, RunWithStderrNotATerminalWritesPlainLinesAtMostEveryTenSeconds) {
  TempDir dir;
  // Five 700-token decode runs against the built-in simulator: about 15 s.
  ProcessResult r = RunProcess({kBin, "run", "--profiles", "decode", "--tokens", "700", "--runs",
                                "5", "--no-store", "--out", (dir.path() / "run").string()},
                               std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < r.err.size()) {
    const std::size_t end = r.err.find('\n', start);
    const std::string line = r.err.substr(start, end - start);
    if (line.starts_with("progress: ")) {
      lines.push_back(line);
    }
    if (end == std::string::npos) {
      break;
    }
    start = end + 1;
  }
  ASSERT_GE(lines.size(), 1u) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << "no in-place redraws off a terminal: " << r.err;
  EXPECT_EQ(r.err.find("\x1b["), std::string::npos);
  EXPECT_EQ(r.out.find("progress: "), std::string::npos) << "progress is never on stdout";
  EXPECT_EQ(r.out.find(" requests · "), std::string::npos);
  EXPECT_NE(lines[0].find("/5 requests"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("decode run"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("tok/s"), std::string::npos) << lines[0];
  const std::vector<int> at = ElapsedOf(lines);
  ASSERT_EQ(at.size(), lines.size());
  EXPECT_GE(at[0], 10);
  for (std::size_t i = 1; i < at.size(); ++i) {
    EXPECT_GE(at[i] - at[i - 1], 10) << lines[i];
  }
}

TEST(ProgressCliTest, OnATerminalTheStatusLineIsRedrawnInPlaceAndOffWritesNone) {
  const std::string script = testing::FindOnPath("script");
  if (script.empty()) {
    GTEST_SKIP() << "util-linux `script` is not installed";
  }
  TempDir dir;
  auto run = [&](const std::string& mode, const std::string& out) {
    // script gives the command a pseudo-terminal; stdout goes to a file, stderr to the terminal.
    const std::string cmd = kBin + " perf --profile concurrency --levels 1,2 --tokens 300 " +
                            "--requests 4 --no-store --progress " + mode + " --out " +
                            (dir.path() / out).string() + " > " +
                            (dir.path() / (out + ".stdout")).string();
    return RunProcess({script, "-qec", cmd, "/dev/null"}, std::chrono::seconds(120));
  };
  ProcessResult tty = run("auto", "tty");
  ASSERT_EQ(tty.exit_code, 0) << tty.out << tty.err;
  // Redraws: a carriage return, the status, erase to the end of the line; several of them.
  const std::regex redraw("\r[0-9]+/8 requests [^\r\n]*\x1b\\[K");
  const auto n = std::distance(std::sregex_iterator(tty.out.begin(), tty.out.end(), redraw),
                               std::sregex_iterator());
  EXPECT_GE(n, 3) << tty.out;
  EXPECT_NE(tty.out.find("concurrency c1"), std::string::npos);
  // The run's own lines are still there, each on a line of its own.
  EXPECT_NE(tty.out.find("\r\x1b[K  concurrency 1: 4/4 requests ok"), std::string::npos) << tty.out;
  ProcessResult off = run("off", "off");
  ASSERT_EQ(off.exit_code, 0) << off.out << off.err;
  EXPECT_EQ(off.out.find("\x1b[K"), std::string::npos) << off.out;
  EXPECT_EQ(off.out.find("requests ·"), std::string::npos);
}

TEST(ProgressCliTest, AnUnknownModeIsAUsageError) {
  ProcessResult r = RunProcess({kBin, "perf", "--profile", "decode", "--progress", "loud"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--progress"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sb
