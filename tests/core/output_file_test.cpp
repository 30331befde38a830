// core/output_file.h on real files: device nodes made with mknod (skipped where that is not
// permitted), a FIFO, symbolic links, a full "disk" (RLIMIT_FSIZE in a child process).
#include "core/output_file.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/temp_dir.h"

namespace sb {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::TempDir;

void Spit(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

// A character device node at `p` (c 1 3 = null, c 1 7 = full); "" or why it could not be made.
std::string MakeDevice(const fs::path& p, unsigned minor) {
  if (::mknod(p.c_str(), S_IFCHR | 0666, makedev(1, minor)) != 0) {
    return std::string("mknod is not permitted here: ") + std::strerror(errno);
  }
  return "";
}

bool IsCharDevice(const fs::path& p) {
  struct stat st {};

  return ::lstat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// Everything in `dir` whose name holds ".tmp." (a temporary file left behind).
int Temporaries(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    n += e.path().filename().string().find(".tmp.") != std::string::npos ? 1 : 0;
  }
  return n;
}

TEST(OutputFile, ANewFileIsWrittenWhole) {
  TempDir dir;
  const fs::path p = dir.path() / "out.csv";
  ASSERT_TRUE(WriteOutputFile(p, "a,b\n1,2\n"));
  EXPECT_EQ(ReadFile(p), "a,b\n1,2\n");
  EXPECT_EQ(Temporaries(dir.path()), 0);
}

TEST(OutputFile, AnExistingFileIsReplacedAndKeepsItsPermissions) {
  TempDir dir;
  const fs::path p = dir.path() / "out.md";
  Spit(p, "an old and longer text\n");
  fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_TRUE(WriteOutputFile(p, "new\n"));
  EXPECT_EQ(ReadFile(p), "new\n");
  EXPECT_EQ(fs::status(p).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(Temporaries(dir.path()), 0);
}

TEST(OutputFile, ADeviceNodeIsWrittenInPlaceNeverReplaced) {
  TempDir dir;
  const fs::path null = dir.path() / "null";
  if (std::string why = MakeDevice(null, 3); !why.empty()) {
    GTEST_SKIP() << why;
  }
  ASSERT_TRUE(WriteOutputFile(null, std::string(100000, 'x')));
  EXPECT_TRUE(IsCharDevice(null)) << "the device node was replaced by a regular file";
  EXPECT_EQ(Temporaries(dir.path()), 0);
}

TEST(OutputFile, AFullDeviceIsAnErrorNamingThePathAndTheReason) {
  TempDir dir;
  const fs::path full = dir.path() / "full";
  if (std::string why = MakeDevice(full, 7); !why.empty()) {
    GTEST_SKIP() << why;
  }
  auto r = WriteOutputFile(full, "anything\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kIo);
  EXPECT_EQ(r.error().message, "cannot write " + full.string() + ": No space left on device");
  EXPECT_TRUE(IsCharDevice(full));
}

TEST(OutputFile, AFifoIsWrittenInPlace) {
  TempDir dir;
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  std::string got;
  std::thread reader([&] { got = ReadFile(fifo); });
  auto r = WriteOutputFile(fifo, "through the pipe\n");
  reader.join();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(got, "through the pipe\n");

  struct stat st {};

  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(OutputFile, ASymbolicLinkKeepsPointingAtTheReplacedFile) {
  TempDir dir;
  fs::create_directories(dir.path() / "real");
  const fs::path file = dir.path() / "real" / "report.html";
  const fs::path link = dir.path() / "latest.html";
  Spit(file, "old");
  fs::create_symlink(file, link);
  ASSERT_TRUE(WriteOutputFile(link, "new"));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(ReadFile(file), "new");
  EXPECT_EQ(Temporaries(dir.path()), 0);
}

TEST(OutputFile, ADirectoryIsAnError) {
  TempDir dir;
  auto r = WriteOutputFile(dir.path(), "x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "cannot write " + dir.path().string() + ": Is a directory");
}

TEST(OutputFile, AMissingDirectoryIsAnErrorNamingThePath) {
  TempDir dir;
  const fs::path p = dir.path() / "no" / "such" / "out.csv";
  auto r = WriteOutputFile(p, "x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "cannot write " + p.string() + ": No such file or directory");
}

// A "full disk": RLIMIT_FSIZE in a child (SIGXFSZ ignored, so writes fail with EFBIG). The write
// fails naming the path, and the old file is left whole with no temporary beside it.
TEST(OutputFile, AFullDiskLeavesTheOldFileAndNoTemporary) {
  TempDir dir;
  const fs::path p = dir.path() / "results.json";
  Spit(p, "the old complete file\n");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit lim{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    auto r = WriteOutputFile(p, std::string(10000, 'y'));
    const bool named = !r && r.error().message == "cannot write " + p.string() + ": File too large";
    ::_exit(named ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the write did not fail with the path and EFBIG";
  EXPECT_EQ(ReadFile(p), "the old complete file\n");
  EXPECT_EQ(Temporaries(dir.path()), 0);
}

}  // namespace
}  // namespace sb
