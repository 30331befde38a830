// Issue 24 item 29: the generated bash completion completes values, not only option names
// (profiles, suites, `store import|ls|rm`, --by, --metric from the user's store), exercised by
// sourcing the script in a real bash; and the man page has EXAMPLES, ENVIRONMENT, FILES and an
// exit status for every command.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
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

const std::string kBin = SB_BINARY;

class CompletionCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ProcessResult r = RunProcess({kBin, "completion", "bash"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ofstream(dir_ / "servebench.bash") << r.out;
  }

  // What bash completes for the words (the last one is the word being completed), with the
  // binary's directory first on PATH (the script asks `servebench` for the store's metrics).
  std::vector<std::string> Complete(const std::vector<std::string>& words,
                                    const std::vector<std::string>& env = {}) {
    std::string array;
    for (const std::string& w : words) {
      array += " '" + w + "'";
    }
    const std::string script = "source '" + (dir_ / "servebench.bash").string() +
                               "'; COMP_WORDS=(servebench" + array +
                               "); COMP_CWORD=" + std::to_string(words.size()) +
                               "; _servebench; printf '%s\\n' \"${COMPREPLY[@]}\"";
    std::vector<std::string> e = env;
    e.push_back("PATH=" + fs::path(kBin).parent_path().string() + ":/usr/bin:/bin");
    ProcessResult r =
        RunProcess({"/bin/bash", "--norc", "-c", script}, std::chrono::seconds(60), e);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) {
        out.push_back(line);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  testing::TempDir tmp_;
  const fs::path dir_ = tmp_.path();
};

using Words = std::vector<std::string>;

TEST_F(CompletionCliTest, ProfileValues) {
  EXPECT_EQ(Complete({"perf", "--profile", ""}),
            (Words{"concurrency", "context", "decode", "max-tokens", "prefix-cache", "rate",
                   "replay", "sessions", "ttft"}));
  EXPECT_EQ(Complete({"perf", "--profile", "c"}), (Words{"concurrency", "context"}));
  // The options a table entry declares complete as the hand-registered ones do.
  EXPECT_EQ(Complete({"perf", "--prefix-"}), (Words{"--prefix-hits", "--prefix-sizes"}));
  Words run = Complete({"run", "--profiles", ""});
  EXPECT_NE(std::find(run.begin(), run.end(), "decode"), run.end());
}

// A number has nothing to complete: not file names (bash's -o default is turned off for it,
// zsh shows the message alone); a file still completes as one.
TEST_F(CompletionCliTest, ANumberCompletesNothingAndAFileCompletesFileNames) {
  EXPECT_TRUE(Complete({"perf", "--levels", ""}).empty());
  std::ifstream in(dir_ / "servebench.bash");
  std::string numbers;
  std::string files;
  for (std::string line; std::getline(in, line);) {
    if (line.find("compopt +o default") != std::string::npos && numbers.empty()) {
      numbers = line;
    }
    if (line.find("# a value: file names") != std::string::npos && files.empty()) {
      files = line;
    }
  }
  for (const char* flag : {"|--levels|", "|--rates|", "|--tokens|", "|--turns|"}) {
    EXPECT_NE(numbers.find(flag), std::string::npos) << flag << " in " << numbers;
  }
  EXPECT_EQ(numbers.find("--trace"), std::string::npos) << numbers;
  EXPECT_NE(files.find("--trace"), std::string::npos) << files;
  ProcessResult zsh = RunProcess({kBin, "completion", "zsh"});
  ASSERT_EQ(zsh.exit_code, 0);
  EXPECT_NE(zsh.out.find("each]:levels: '"), std::string::npos);
  EXPECT_NE(zsh.out.find("servebench JSONL)]:trace:_files'"), std::string::npos);
}

TEST_F(CompletionCliTest, SuiteNamesThenFiles) {
  Words got = Complete({"run", "--suite", "qu"});
  EXPECT_EQ(got, (Words{"quick"}));
  got = Complete({"run", "--suite", ""});
  for (const char* name : {"full", "quick", "standard"}) {
    EXPECT_NE(std::find(got.begin(), got.end(), name), got.end()) << name;
  }
}

TEST_F(CompletionCliTest, StoreSubcommandsAndLeaderboardBy) {
  Words store = Complete({"store", ""});
  for (const char* name : {"import", "ls", "rm"}) {
    EXPECT_NE(std::find(store.begin(), store.end(), name), store.end()) << name;
  }
  EXPECT_EQ(Complete({"leaderboard", "--by", ""}), (Words{"model", "recipe", "tag:"}));
}

TEST_F(CompletionCliTest, MetricNamesComeFromTheStore) {
  // A real run against the simulator, imported into a store of our own.
  const fs::path store = dir_ / "runs.sqlite";
  const fs::path run = dir_ / "run";
  ProcessResult r = RunProcess(
      {kBin, "perf", "--profile", "decode", "--tokens", "8", "--runs", "1", "--out", run.string()},
      std::chrono::seconds(120), {"SERVEBENCH_STORE=off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunProcess({kBin, "store", "import", run.string()}, std::chrono::seconds(60),
                 {"SERVEBENCH_STORE=" + store.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Words got =
      Complete({"leaderboard", "--metric", "decode."}, {"SERVEBENCH_STORE=" + store.string()});
  EXPECT_NE(std::find(got.begin(), got.end(), "decode.decode_tok_s"), got.end())
      << ::testing::PrintToString(got);
  for (const std::string& m : got) {
    EXPECT_TRUE(m.starts_with("decode.")) << m;
  }
  // An empty store completes nothing (and says nothing).
  EXPECT_TRUE(Complete({"history", "--metric", ""}, {"SERVEBENCH_STORE=off"}).empty());
}

TEST_F(CompletionCliTest, ManPageSections) {
  ProcessResult r = RunProcess({kBin, "completion", "man"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& man = r.out;
  for (const char* section : {".SH EXAMPLES", ".SH ENVIRONMENT", ".SH FILES", ".SH EXIT STATUS"}) {
    EXPECT_NE(man.find(section), std::string::npos) << section;
  }
  for (const char* var : {"OPENAI_API_KEY", "SERVEBENCH_STORE", "SERVEBENCH_CACHE_DIR"}) {
    EXPECT_NE(man.find(".B " + std::string(var)), std::string::npos) << var;
  }
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = man.find(needle); at != std::string::npos;
         at = man.find(needle, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_GE(count(".SS \""), 10u);
  EXPECT_EQ(count("\\fBExit status\\fR"), count(".SS \""));  // one per command
  EXPECT_NE(man.find(".B servebench perf \\-\\-profile rate \\-\\-rates 5,20,60"),
            std::string::npos);
  // store's own subcommands are named in its section.
  EXPECT_NE(man.find("\\fBimport\\fR"), std::string::npos);
}

}  // namespace
}  // namespace sb
