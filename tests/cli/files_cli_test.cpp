// Output files of the servebench binary (docs/bounds.md, "Disk"; docs/resume.md, "One process per
// run directory"): devices written in place and never replaced, /dev/full and a full disk as
// errors that name the file and leave no empty or partial file, a disk that fills during a run,
// and one process per run directory. Real processes, real HTTP, real files; device nodes are made
// with mknod in a temporary directory (skipped where that is not permitted); a full disk is
// RLIMIT_FSIZE (`ulimit -f`, SIGXFSZ ignored) in the child's shell.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "support/sim_child.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Child;
using testing::ProcessResult;
using testing::ReadFile;
using testing::ReadJsonl;
using testing::RunProcess;
using testing::TempDir;

const std::string kBin = SB_BINARY;

class Sim : public testing::SimChild {
 public:
  explicit Sim(const std::string& itl_ms = "1")
      : SimChild({"--ttft-ms", "2", "--itl-ms", itl_ms}) {}
};

// A small finished run in `out`.
void MakeRun(const std::string& url, const fs::path& out) {
  ProcessResult r = RunProcess({kBin, "perf", "--endpoint", url, "--profile", "decode", "--runs",
                                "2", "--tokens", "8", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// A character device node (c 1 3 = null, c 1 7 = full); "" or why it could not be made.
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

// The commands that write a document to --out, for the runs a and b.
std::vector<std::vector<std::string>> OutCommands(const fs::path& a, const fs::path& b,
                                                  const fs::path& out) {
  return {{kBin, "report", a.string(), "--out", out.string()},
          {kBin, "export", a.string(), "--format", "jsonl", "--out", out.string()},
          {kBin, "compare", a.string(), b.string(), "--out", out.string()}};
}

class FilesCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(sim_.url().empty());
    MakeRun(sim_.url(), a_);
    MakeRun(sim_.url(), b_);
  }

  Sim sim_;
  TempDir dir_;
  fs::path a_ = dir_.path() / "a";
  fs::path b_ = dir_.path() / "b";
};

// `report RUN --out /dev/null` replaced the device with a regular file (as root, for the whole
// machine). Every command writes a device where it is.
TEST_F(FilesCli, ADeviceIsWrittenInPlaceNeverReplaced) {
  const fs::path null = dir_.path() / "null";
  if (std::string why = MakeDevice(null, 3); !why.empty()) {
    GTEST_SKIP() << why;
  }
  for (const auto& argv : OutCommands(a_, b_, null)) {
    ProcessResult r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 0) << argv[1] << ": " << r.err;
    EXPECT_TRUE(IsCharDevice(null)) << argv[1] << " replaced the device node";
  }
}

// `--out /dev/full` printed "wrote" and exited 0: now exit 3, the path and the reason.
TEST_F(FilesCli, AFullDeviceIsAnErrorNamingItAndTheReason) {
  const fs::path full = dir_.path() / "full";
  if (std::string why = MakeDevice(full, 7); !why.empty()) {
    GTEST_SKIP() << why;
  }
  for (const auto& argv : OutCommands(a_, b_, full)) {
    ProcessResult r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 3) << argv[1] << ": " << r.err;
    EXPECT_NE(r.err.find("servebench: error: cannot write " + full.string() +
                         ": No space left on device"),
              std::string::npos)
        << argv[1] << ": " << r.err;
    EXPECT_EQ(r.err.find("wrote"), std::string::npos) << argv[1] << ": " << r.err;
    EXPECT_TRUE(IsCharDevice(full)) << argv[1];
  }
}

// `> /dev/full` exited 0: what was printed must have reached stdout.
TEST_F(FilesCli, AStdoutThatCannotBeWrittenIsAnError) {
  const std::vector<std::string> commands = {
      "compare " + a_.string() + " " + b_.string(),
      "report " + a_.string() + " --out -",
      "export " + a_.string() + " --format csv",
      "suites",
  };
  for (const std::string& cmd : commands) {
    ProcessResult r = RunProcess({"/bin/bash", "-c", kBin + " " + cmd + " > /dev/full"});
    EXPECT_EQ(r.exit_code, 3) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("cannot write standard output: No space left on device"),
              std::string::npos)
        << cmd << ": " << r.err;
  }
}

// A full disk (each file limited to 1 KiB) while writing an export, a report or a comparison:
// exit 3 naming the file, and no 0-byte or partial file; an existing file is left as it was.
TEST_F(FilesCli, AFullDiskLeavesNoEmptyOrPartialFile) {
  for (const bool existing : {false, true}) {
    const fs::path out = dir_.path() / (existing ? "old.out" : "new.out");
    if (existing) {
      std::ofstream(out) << "the previous file\n";
    }
    for (const auto& argv : OutCommands(a_, b_, out)) {
      std::string cmd = "trap '' XFSZ; ulimit -f 1; exec";
      for (const auto& arg : argv) {
        cmd += " '" + arg + "'";
      }
      ProcessResult r = RunProcess({"/bin/bash", "-c", cmd});
      EXPECT_EQ(r.exit_code, 3) << argv[1] << ": " << r.err;
      EXPECT_NE(r.err.find("cannot write " + out.string() + ": File too large"), std::string::npos)
          << argv[1] << ": " << r.err;
      if (existing) {
        EXPECT_EQ(ReadFile(out), "the previous file\n") << argv[1];
      } else {
        EXPECT_FALSE(fs::exists(out)) << argv[1] << " left " << fs::file_size(out) << " bytes";
      }
    }
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(dir_.path())) {
      if (e.path().filename().string().find(".tmp.") != std::string::npos) {
        left.push_back(e.path().filename().string());
      }
    }
    EXPECT_TRUE(left.empty()) << left.front();
  }
}

// The disk fills up during a run (every file limited to 256 KiB): the run stops and ends
// `failed`, exit 3, with a RUN FAILED line naming the file and the reason; results.json is not
// left `running`; samples.jsonl holds whole lines only, each request once.
TEST(FilesCliRun, ADiskThatFillsDuringARunEndsItFailed) {
  Sim sim;
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const fs::path out = dir.path() / "run";
  const std::string cmd = "trap '' XFSZ; ulimit -f 256; exec " + kBin + " perf --endpoint " +
                          sim.url() + " --profile decode --runs 100000 --tokens 16 --out " +
                          out.string();
  ProcessResult r = RunProcess({"/bin/bash", "-c", cmd}, std::chrono::seconds(120));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("RUN FAILED: "), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("File too large"), std::string::npos) << r.out;
  const json res = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(res["status"], "failed");
  ASSERT_TRUE(res["stop_reason"].is_string());
  EXPECT_NE(res["stop_reason"].get<std::string>().find(out.string()), std::string::npos)
      << res["stop_reason"];
  EXPECT_NE(res["stop_reason"].get<std::string>().find("File too large"), std::string::npos);
  std::vector<json> samples;
  ASSERT_NO_THROW(samples = ReadJsonl(out / "samples.jsonl"));
  EXPECT_GT(samples.size(), 10u);
}

// Two processes on one run directory: the second (--overwrite, --resume) is refused with exit 2
// naming the first's pid, and the first's samples are untouched; once the first is gone (even by
// SIGKILL), --resume goes ahead.
TEST(FilesCliRun, ASecondServebenchOnARunDirectoryIsRefused) {
  Sim sim("5");
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const fs::path out = dir.path() / "run";
  // A shard of a load, for `merge --out` into the busy directory.
  ProcessResult shard = RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "rate",
                                    "--rates", "20", "--requests", "2", "--tokens", "4", "--shard",
                                    "0/1", "--out", (dir.path() / "load").string()});
  ASSERT_EQ(shard.exit_code, 0) << shard.err;
  Child first({kBin, "perf", "--endpoint", sim.url(), "--profile", "decode", "--runs", "100000",
               "--tokens", "8", "--out", out.string()});
  bool started = false;
  for (int i = 0; i < 1000 && !started; ++i) {
    started = fs::exists(out / "samples.jsonl") && fs::file_size(out / "samples.jsonl") > 0;
    if (!started) {
      ::usleep(10000);
    }
  }
  ASSERT_TRUE(started);
  const std::string in_use =
      out.string() + " is in use by another servebench (pid " + std::to_string(first.pid()) + ")";
  const std::vector<std::vector<std::string>> seconds = {
      {kBin, "perf", "--endpoint", sim.url(), "--profile", "decode", "--runs", "1", "--tokens", "8",
       "--overwrite", "--out", out.string()},
      {kBin, "perf", "--resume", out.string()},
      {kBin, "merge", (dir.path() / "load" / "shard-0").string(), "--out", out.string()},
  };
  for (const auto& argv : seconds) {
    ProcessResult r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 2) << argv[1] << " " << argv[2] << ": " << r.err;
    EXPECT_NE(r.err.find(in_use), std::string::npos) << r.err;
  }
  // The first run is still the only writer: every line of its journal is whole and its own.
  ASSERT_NO_THROW(ReadJsonl(out / "samples.jsonl"));
  EXPECT_EQ(ReadJsonl(out / "samples.jsonl").front().value("superseded", false), false);
  first.Signal(SIGKILL);
  first.Wait();
  ProcessResult resumed = RunProcess({kBin, "perf", "--resume", out.string(), "--deadline", "1s"});
  EXPECT_EQ(resumed.exit_code, 3) << resumed.err;  // the deadline, not the lock
  EXPECT_EQ(resumed.err.find("in use"), std::string::npos) << resumed.err;
  EXPECT_EQ(json::parse(ReadFile(out / "results.json"))["status"], "interrupted");
}

}  // namespace
}  // namespace sb
