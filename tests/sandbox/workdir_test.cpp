// The working directory: files in, files back, always removed (chmod 000, deep trees,
// symlinks pointing outside).
#include "sandbox/workdir.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "sandbox/sandbox_test_util.h"

namespace sb::sandbox {
namespace {

namespace fs = std::filesystem;
using testutil::MustRun;
using testutil::Py;
using testutil::Small;
using testutil::TempDir;

TEST(SandboxWorkDir, ValidRelativeName) {
  EXPECT_TRUE(ValidRelativeName("main.py"));
  EXPECT_TRUE(ValidRelativeName("data/in.txt"));
  EXPECT_TRUE(ValidRelativeName("..hidden"));
  EXPECT_FALSE(ValidRelativeName(""));
  EXPECT_FALSE(ValidRelativeName("/etc/passwd"));
  EXPECT_FALSE(ValidRelativeName(".."));
  EXPECT_FALSE(ValidRelativeName("a/../b"));
  EXPECT_FALSE(ValidRelativeName("./a"));
  EXPECT_FALSE(ValidRelativeName("a/"));
  EXPECT_FALSE(ValidRelativeName("a//b"));
  EXPECT_FALSE(ValidRelativeName(std::string("a\0b", 3)));
}

TEST(SandboxWorkDir, FilesInAndCollectedBack) {
  Program p =
      Py("import subprocess\n"
         "data = open('data/in.txt').read()\n"
         "tool = subprocess.run(['./tool.sh'], capture_output=True, text=True).stdout\n"
         "import os\n"
         "os.makedirs('out', exist_ok=True)\n"
         "open('out/result.txt', 'w').write(data.upper() + tool)\n");
  p.files.push_back(File{"data/in.txt", "payload", false});
  p.files.push_back(File{"tool.sh", "#!/bin/sh\necho tool-ran\n", true});
  p.collect = {"out/result.txt", "missing.txt", "data/in.txt"};
  RunResult r = MustRun(p, Small());
  ASSERT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  ASSERT_EQ(r.collected.size(), 2u);
  EXPECT_EQ(r.collected[0].first, "out/result.txt");
  EXPECT_EQ(r.collected[0].second, "PAYLOADtool-ran\n");
  EXPECT_EQ(r.collected[1].first, "data/in.txt");
  EXPECT_EQ(r.collected[1].second, "payload");
}

TEST(SandboxWorkDir, CollectDoesNotFollowSymlinks) {
  Program p =
      Py("import os\n"
         "os.symlink('/etc/passwd', 'leak')\n"
         "os.symlink('/etc', 'etc')\n"
         "os.mkfifo('fifo')\n");
  p.collect = {"leak", "etc/passwd", "fifo"};
  RunResult r = MustRun(p, Small());
  ASSERT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  EXPECT_TRUE(r.collected.empty());
}

// The program prints its working directory; after the run it is gone.
void ExpectRemoved(const RunResult& r) {
  ASSERT_FALSE(r.stdout_data.empty()) << testutil::Describe(r);
  std::string cwd = r.stdout_data.substr(0, r.stdout_data.find('\n'));
  ASSERT_EQ(cwd.rfind("/", 0), 0u) << cwd;
  EXPECT_FALSE(fs::exists(cwd)) << cwd;
  EXPECT_FALSE(fs::exists(fs::path(cwd).parent_path())) << cwd;
}

TEST(SandboxWorkDir, RemovedAfterTheRun) {
  RunResult r = MustRun(Py("import os\nprint(os.getcwd())\nopen('x', 'w').write('x')\n"), Small());
  EXPECT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  ExpectRemoved(r);
}

TEST(SandboxWorkDir, RemovedAfterChmod) {
  RunResult r = MustRun(Py("import os\nprint(os.getcwd(), flush=True)\n"
                           "os.makedirs('sub/deeper')\n"
                           "open('sub/deeper/f', 'w').write('x')\n"
                           "os.chmod('sub/deeper', 0)\n"
                           "os.chmod('sub', 0)\n"
                           "os.makedirs('ro/inner')\n"
                           "os.chmod('ro', 0o555)\n"
                           "os.chmod('.', 0)\n"),
                        Small());
  EXPECT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  ExpectRemoved(r);
}

TEST(SandboxWorkDir, RemovedAfterADeepTree) {
  // Deeper than PATH_MAX: removal may not depend on path length or recursion.
  RunResult r = MustRun(Py("import os\nprint(os.getcwd(), flush=True)\n"
                           "for i in range(3000):\n"
                           "    os.mkdir('d')\n"
                           "    os.chdir('d')\n"
                           "    if i % 500 == 0:\n"
                           "        open('f', 'w').write('x')\n"),
                        Small());
  EXPECT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  ExpectRemoved(r);
}

TEST(SandboxWorkDir, RemovedAfterATimeout) {
  Limits l = Small();
  l.wall_s = 1;
  RunResult r = MustRun(Py("import os, time\nprint(os.getcwd(), flush=True)\n"
                           "open('partial', 'w').write('x')\ntime.sleep(100)\n"),
                        l);
  EXPECT_EQ(r.verdict, Verdict::kWallTimeout) << testutil::Describe(r);
  ExpectRemoved(r);
}

TEST(SandboxWorkDir, UnderTmpdir) {
  TempDir base;
  ASSERT_EQ(chmod(base.path().string().c_str(), 0755), 0);
  const char* old = std::getenv("TMPDIR");
  std::string saved = old != nullptr ? old : "";
  setenv("TMPDIR", base.path().string().c_str(), 1);
  RunResult r = MustRun(Py("import os\nprint(os.getcwd())\n"), Small());
  if (old != nullptr) {
    setenv("TMPDIR", saved.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
  ASSERT_EQ(r.verdict, Verdict::kExited) << testutil::Describe(r);
  EXPECT_EQ(r.stdout_data.rfind(base.path().string() + "/servebench-sandbox-", 0), 0u)
      << r.stdout_data;
  ExpectRemoved(r);
}

TEST(SandboxWorkDir, RemoveTreeKeepsWhatSymlinksPointTo) {
  TempDir t;
  const std::string keep = t.path().string() + "/keep";
  const std::string tree = t.path().string() + "/tree";
  fs::create_directories(keep + "/inner");
  std::ofstream(keep + "/inner/file") << "precious";
  fs::create_directories(tree + "/a/b");
  fs::create_directory_symlink(keep, tree + "/a/link");
  fs::create_symlink(keep + "/inner/file", tree + "/a/b/filelink");
  ASSERT_EQ(chmod((tree + "/a/b").c_str(), 0), 0);
  ASSERT_TRUE(RemoveTree(tree));
  EXPECT_FALSE(fs::exists(tree));
  std::ifstream in(keep + "/inner/file");
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
  EXPECT_TRUE(RemoveTree(tree));  // missing: fine
}

}  // namespace
}  // namespace sb::sandbox
