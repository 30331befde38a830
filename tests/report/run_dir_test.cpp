#include "report/run_dir.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/run_dir_lock.h"
#include "support/text.h"

namespace sb::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using ::sb::testing::Contains;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Spit(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> Listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

json ValidResults() {
  return json{{"schema", "servebench.results/1"}, {"status", "complete"}, {"tests", json::array()}};
}

class RunDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sb_report_test_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }

  void TearDown() override {
    std::error_code ec;
    fs::permissions(root_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(root_, ec);
  }

  fs::path root_;
};

TEST_F(RunDirTest, CreateMakesParents) {
  fs::path dir = root_ / "runs" / "a" / "b";
  auto run = RunDir::Create(dir);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_EQ(run->path(), dir);
  EXPECT_TRUE(fs::exists(dir / "samples.jsonl"));
}

TEST_F(RunDirTest, AppendedSamplesAreVisibleBeforeClose) {
  auto run = RunDir::Create(root_ / "r");
  ASSERT_TRUE(run.has_value());
  ASSERT_TRUE(run->AppendSample(json{{"id", 1}, {"status", "ok"}}).has_value());
  // Another reader sees the line while the RunDir (and its FILE) is still open.
  std::vector<std::string> lines = Lines(Slurp(root_ / "r" / "samples.jsonl"));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(json::parse(lines[0]), (json{{"id", 1}, {"status", "ok"}}));
  ASSERT_TRUE(run->AppendSample(json{{"id", 2}, {"reason", "line\nbreak"}}).has_value());
  lines = Lines(Slurp(root_ / "r" / "samples.jsonl"));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(json::parse(lines[1])["reason"], "line\nbreak");
}

TEST_F(RunDirTest, AppendNeverThrowsOnInvalidUtf8) {
  auto run = RunDir::Create(root_ / "r");
  ASSERT_TRUE(run.has_value());
  json rec = {{"reason", std::string("bad \xff byte")}};
  Result<void> r;
  EXPECT_NO_THROW(r = run->AppendSample(rec));
  EXPECT_TRUE(r.has_value());
  std::vector<std::string> lines = Lines(Slurp(root_ / "r" / "samples.jsonl"));
  ASSERT_EQ(lines.size(), 1u);
  json parsed;
  EXPECT_NO_THROW(parsed = json::parse(lines[0]));
}

TEST_F(RunDirTest, ConcurrentAppendsNeverInterleave) {
  auto run = RunDir::Create(root_ / "r");
  ASSERT_TRUE(run.has_value());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&run, t] {
      for (int i = 0; i < 100; ++i) {
        (void)run->AppendSample(json{{"thread", t}, {"i", i}, {"pad", std::string(500, 'x')}});
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  std::vector<std::string> lines = Lines(Slurp(root_ / "r" / "samples.jsonl"));
  ASSERT_EQ(lines.size(), 400u);
  for (const std::string& line : lines) {
    json parsed;
    EXPECT_NO_THROW(parsed = json::parse(line)) << line.substr(0, 80);
  }
}

TEST_F(RunDirTest, WriteResultsIsPrettyAndLeavesNoTempFiles) {
  auto run = RunDir::Create(root_ / "r");
  ASSERT_TRUE(run.has_value());
  json first = ValidResults();
  ASSERT_TRUE(run->WriteResults(first).has_value());
  json second = ValidResults();
  second["status"] = "interrupted";
  ASSERT_TRUE(run->WriteResults(second).has_value());
  std::string text = Slurp(root_ / "r" / "results.json");
  EXPECT_EQ(json::parse(text), second);
  EXPECT_TRUE(Contains(text, "\n  \"schema\"")) << "not pretty-printed:\n" << text;
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(Listing(root_ / "r"), (std::vector<std::string>{"results.json", "samples.jsonl"}));
}

TEST_F(RunDirTest, FailedReplaceKeepsNothingHalfWritten) {
  auto run = RunDir::Create(root_ / "r");
  ASSERT_TRUE(run.has_value());
  // A directory in the way makes the rename fail after the temp file was written.
  fs::create_directories(root_ / "r" / "report.md" / "x");
  auto r = run->WriteText("report.md", "# report\n");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kIo);
  EXPECT_TRUE(Contains(r.error().message, (root_ / "r" / "report.md").string()))
      << r.error().message;
  EXPECT_EQ(Listing(root_ / "r"), (std::vector<std::string>{"report.md", "samples.jsonl"}));
  EXPECT_TRUE(fs::is_directory(root_ / "r" / "report.md"));
}

// Caps the size of files this process may write, so that a write fails part-way (EFBIG) the way
// a full disk would; restores the limit when it goes out of scope.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);  // fail the write instead of killing us
    rlimit lim = saved_;
    lim.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &lim);
  }

  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

TEST_F(RunDirTest, InterruptedWriteKeepsThePreviousFile) {
  auto run = RunDir::Create(root_ / "r");
  ASSERT_TRUE(run.has_value());
  ASSERT_TRUE(run->WriteResults(ValidResults()).has_value());
  std::string before = Slurp(root_ / "r" / "results.json");
  json big = ValidResults();
  big["pad"] = std::string(64 * 1024, 'x');
  Result<void> r;
  {
    FileSizeLimit limit(4096);
    r = run->WriteResults(big);
  }
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kIo);
  EXPECT_TRUE(Contains(r.error().message, "File too large")) << r.error().message;
  // The old results.json is whole, and the half-written temp file is gone.
  EXPECT_EQ(Slurp(root_ / "r" / "results.json"), before);
  EXPECT_EQ(Listing(root_ / "r"), (std::vector<std::string>{"results.json", "samples.jsonl"}));
}

// The final results.json no longer fits: the last one written gets the final status, so it never
// stays "running".
TEST_F(RunDirTest, RestatusResultsMarksTheLastWrittenResults) {
  auto run = RunDir::Create(root_ / "r");
  ASSERT_TRUE(run.has_value());
  json running = ValidResults();
  running["status"] = "running";
  running["warnings"] = json::array({"earlier"});
  ASSERT_TRUE(run->WriteResults(running).has_value());
  json big = running;
  big["pad"] = std::string(64 * 1024, 'x');
  Result<void> whole, restatus;
  {
    FileSizeLimit limit(4096);
    whole = run->WriteResults(big);
    restatus = run->RestatusResults("failed", "cannot append to x: File too large",
                                    "2026-12-04T00:00:00Z", "results.json could not be written");
  }
  ASSERT_FALSE(whole.has_value());
  ASSERT_TRUE(restatus.has_value()) << restatus.error().message;
  const json now = json::parse(Slurp(root_ / "r" / "results.json"));
  EXPECT_EQ(now["status"], "failed");
  EXPECT_EQ(now["stop_reason"], "cannot append to x: File too large");
  EXPECT_EQ(now["finished_at"], "2026-12-04T00:00:00Z");
  EXPECT_EQ(now["warnings"], json::array({"earlier", "results.json could not be written"}));
  EXPECT_FALSE(now.contains("pad"));
}

// One process per run directory: a second lock on it is refused, naming the holder's pid; the
// lock goes with its holder.
TEST_F(RunDirTest, ARunDirectoryIsLockedByOneHolderAtATime) {
  const fs::path dir = root_ / "runs" / "x";
  auto first = RunDirLock::Acquire(dir);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  EXPECT_TRUE(fs::is_directory(dir));
  auto second = RunDirLock::Acquire(dir);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kUsage);
  EXPECT_EQ(second.error().message, dir.string() + " is in use by another servebench (pid " +
                                        std::to_string(::getpid()) +
                                        "): wait for it to end, or choose another directory");
  { RunDirLock gone = std::move(first.value()); }
  EXPECT_TRUE(RunDirLock::Acquire(dir).has_value());
}

TEST_F(RunDirTest, FailedAppendIsReported) {
  auto run = RunDir::Create(root_ / "r");
  ASSERT_TRUE(run.has_value());
  Result<void> r;
  {
    FileSizeLimit limit(1024);
    r = run->AppendSample(json{{"pad", std::string(8 * 1024, 'x')}});
  }
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kIo);
  EXPECT_TRUE(
      Contains(r.error().message, "cannot append to " + (root_ / "r" / "samples.jsonl").string()))
      << r.error().message;
}

TEST_F(RunDirTest, DiskFullMidRunLeavesOnlyWholeLines) {
  auto run = RunDir::Create(root_ / "r");
  ASSERT_TRUE(run.has_value());
  const json record = {{"id", 1}, {"pad", std::string(300, 'y')}};
  int written = 0;
  Result<void> r;
  {
    // Room for a few lines: the append that crosses the limit is written only in part.
    FileSizeLimit limit(2000);
    for (int i = 0; i < 100; ++i) {
      r = run->AppendSample(record);
      if (!r) {
        break;
      }
      ++written;
    }
  }
  ASSERT_FALSE(r.has_value());
  ASSERT_GT(written, 0);
  const std::string text = Slurp(root_ / "r" / "samples.jsonl");
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');  // no cut line
  const auto lines = Lines(text);
  EXPECT_EQ(static_cast<int>(lines.size()), written);
  for (const auto& line : lines) {
    EXPECT_TRUE(json::accept(line)) << line;
  }
  // With room again, nothing is appended after the gap: the same error, named once more.
  auto again = run->AppendSample(record);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().message, r.error().message);
  EXPECT_EQ(Slurp(root_ / "r" / "samples.jsonl"), text);
}

TEST_F(RunDirTest, WriteTextReplacesAtomically) {
  auto run = RunDir::Create(root_ / "r");
  ASSERT_TRUE(run.has_value());
  ASSERT_TRUE(run->WriteText("report.md", "old\n").has_value());
  ASSERT_TRUE(run->WriteText("report.md", "new\n").has_value());
  EXPECT_EQ(Slurp(root_ / "r" / "report.md"), "new\n");
  EXPECT_EQ(Listing(root_ / "r"), (std::vector<std::string>{"report.md", "samples.jsonl"}));
}

TEST_F(RunDirTest, WriteTextRejectsPaths) {
  auto run = RunDir::Create(root_ / "r");
  ASSERT_TRUE(run.has_value());
  for (const char* name : {"../escape.md", "sub/x.md", "", ".", ".."}) {
    EXPECT_FALSE(run->WriteText(name, "x").has_value()) << name;
  }
  EXPECT_FALSE(fs::exists(root_ / "escape.md"));
}

TEST_F(RunDirTest, RefusesDirectoryHoldingResults) {
  fs::create_directories(root_ / "r");
  Spit(root_ / "r" / "results.json", ValidResults().dump());
  auto run = RunDir::Create(root_ / "r");
  ASSERT_FALSE(run.has_value());
  EXPECT_EQ(run.error().code, ErrorCode::kSetup);
  EXPECT_TRUE(Contains(run.error().message, "already holds a run (results.json)"))
      << run.error().message;
  EXPECT_TRUE(Contains(run.error().message, "--overwrite")) << run.error().message;
  // --resume exists (docs/resume.md): the message names it with the directory to give it.
  EXPECT_TRUE(Contains(run.error().message, "--resume " + (root_ / "r").string()))
      << run.error().message;
  EXPECT_EQ(Slurp(root_ / "r" / "results.json"), ValidResults().dump());  // untouched
}

TEST_F(RunDirTest, RefusesDirectoryHoldingSamples) {
  fs::create_directories(root_ / "r");
  Spit(root_ / "r" / "samples.jsonl", "{\"id\":1}\n");
  auto run = RunDir::Create(root_ / "r");
  ASSERT_FALSE(run.has_value());
  EXPECT_TRUE(Contains(run.error().message, "samples.jsonl")) << run.error().message;
}

TEST_F(RunDirTest, AcceptsExistingEmptyDirectory) {
  fs::create_directories(root_ / "r");
  Spit(root_ / "r" / "notes.txt", "mine");
  EXPECT_TRUE(RunDir::Create(root_ / "r").has_value());
  EXPECT_EQ(Slurp(root_ / "r" / "notes.txt"), "mine");
}

TEST_F(RunDirTest, OverwriteStartsAfresh) {
  fs::create_directories(root_ / "r");
  Spit(root_ / "r" / "results.json", ValidResults().dump());
  Spit(root_ / "r" / "report.md", "old report");
  Spit(root_ / "r" / "samples.jsonl", "{\"id\":1}\n");
  auto run = RunDir::Create(root_ / "r", RunDirMode::kOverwrite);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  EXPECT_FALSE(fs::exists(root_ / "r" / "results.json"));
  EXPECT_FALSE(fs::exists(root_ / "r" / "report.md"));
  EXPECT_EQ(Slurp(root_ / "r" / "samples.jsonl"), "");
  ASSERT_TRUE(run->AppendSample(json{{"id", 9}}).has_value());
  EXPECT_EQ(Slurp(root_ / "r" / "samples.jsonl"), "{\"id\":9}\n");
}

TEST_F(RunDirTest, ResumeAppendsToExistingSamples) {
  fs::create_directories(root_ / "r");
  Spit(root_ / "r" / "samples.jsonl", "{\"id\":1}\n");
  auto run = RunDir::Create(root_ / "r", RunDirMode::kResume);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  ASSERT_TRUE(run->AppendSample(json{{"id", 2}}).has_value());
  EXPECT_EQ(Slurp(root_ / "r" / "samples.jsonl"), "{\"id\":1}\n{\"id\":2}\n");
}

TEST_F(RunDirTest, ResumeNeedsARun) {
  auto run = RunDir::Create(root_ / "empty", RunDirMode::kResume);
  ASSERT_FALSE(run.has_value());
  EXPECT_EQ(run.error().code, ErrorCode::kSetup);
  EXPECT_TRUE(Contains(run.error().message, "no run to resume")) << run.error().message;
}

TEST_F(RunDirTest, UnwritablePathNamesPathAndReason) {
  Spit(root_ / "file", "x");
  fs::path dir = root_ / "file" / "run";
  auto run = RunDir::Create(dir);
  ASSERT_FALSE(run.has_value());
  EXPECT_EQ(run.error().code, ErrorCode::kIo);
  EXPECT_TRUE(Contains(run.error().message, dir.string())) << run.error().message;
  EXPECT_TRUE(Contains(run.error().message, "Not a directory")) << run.error().message;
}

TEST_F(RunDirTest, PathThatIsAFileIsRefused) {
  Spit(root_ / "file", "x");
  auto run = RunDir::Create(root_ / "file");
  ASSERT_FALSE(run.has_value());
  EXPECT_EQ(run.error().code, ErrorCode::kIo);
  EXPECT_TRUE(Contains(run.error().message, (root_ / "file").string())) << run.error().message;
}

TEST_F(RunDirTest, PermissionDeniedNamesPathAndReason) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "root ignores directory permissions";
  }
  fs::create_directories(root_ / "ro");
  fs::permissions(root_ / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  auto run = RunDir::Create(root_ / "ro" / "run");
  ASSERT_FALSE(run.has_value());
  EXPECT_TRUE(Contains(run.error().message, (root_ / "ro" / "run").string()));
  EXPECT_TRUE(Contains(run.error().message, "Permission denied")) << run.error().message;
}

// ---- LoadResults -------------------------------------------------------------------------------

TEST_F(RunDirTest, LoadResultsFromDirectoryOrFile) {
  auto run = RunDir::Create(root_ / "r");
  ASSERT_TRUE(run.has_value());
  ASSERT_TRUE(run->WriteResults(ValidResults()).has_value());
  auto from_dir = LoadResults(root_ / "r");
  ASSERT_TRUE(from_dir.has_value()) << from_dir.error().message;
  EXPECT_EQ(*from_dir, ValidResults());
  auto from_file = LoadResults(root_ / "r" / "results.json");
  ASSERT_TRUE(from_file.has_value()) << from_file.error().message;
  EXPECT_EQ(*from_file, ValidResults());
}

TEST_F(RunDirTest, LoadResultsMissingFile) {
  fs::create_directories(root_ / "r");
  auto r = LoadResults(root_ / "r");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kIo);
  EXPECT_TRUE(Contains(r.error().message, (root_ / "r" / "results.json").string()))
      << r.error().message;
  EXPECT_TRUE(Contains(r.error().message, "No such file or directory")) << r.error().message;
}

TEST_F(RunDirTest, LoadResultsNotJson) {
  Spit(root_ / "results.json", "{\"schema\": \"servebench.results/1\",");
  auto r = LoadResults(root_ / "results.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kSetup);
  EXPECT_TRUE(Contains(r.error().message, "results.json is not valid JSON: ")) << r.error().message;
  EXPECT_TRUE(Contains(r.error().message, "parse error")) << r.error().message;
}

TEST_F(RunDirTest, LoadResultsWrongSchema) {
  Spit(root_ / "a.json", R"({"schema": "other.tool/1"})");
  auto r = LoadResults(root_ / "a.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kSetup);
  EXPECT_EQ(r.error().message, (root_ / "a.json").string() +
                                   " is not a servebench results file (\"schema\" is "
                                   "\"other.tool/1\")");
  Spit(root_ / "b.json", R"({"tests": []})");
  r = LoadResults(root_ / "b.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(Contains(r.error().message, "is not a servebench results file (no \"schema\" field)"))
      << r.error().message;
  Spit(root_ / "c.json", R"([1, 2])");
  EXPECT_FALSE(LoadResults(root_ / "c.json").has_value());
  Spit(root_ / "d.json", R"({"schema": 1})");
  EXPECT_FALSE(LoadResults(root_ / "d.json").has_value());
}

// ---- DefaultRunDirName -------------------------------------------------------------------------

TEST(DefaultRunDirNameTest, SanitizesModel) {
  EXPECT_EQ(DefaultRunDirName("20261202T090000Z", "Qwen/Qwen3-8B"),
            "20261202T090000Z-Qwen_Qwen3-8B");
  EXPECT_EQ(DefaultRunDirName("20261202T090000Z", "my model:q4_K_M?"),
            "20261202T090000Z-my_modelq4_K_M");
  EXPECT_EQ(DefaultRunDirName("20261202T090000Z", "/models/x.gguf"),
            "20261202T090000Z-_models_x.gguf");
  EXPECT_EQ(DefaultRunDirName("20261202T090000Z", ""), "20261202T090000Z");
  EXPECT_EQ(DefaultRunDirName("20261202T090000Z", "??"), "20261202T090000Z");
  EXPECT_EQ(DefaultRunDirName("", ".."), "");
  EXPECT_EQ(DefaultRunDirName("T", "..x"), "T-x");
  EXPECT_EQ(DefaultRunDirName("T", std::string(300, 'a')).size(), 2u + 100u);
}

}  // namespace
}  // namespace sb::report
