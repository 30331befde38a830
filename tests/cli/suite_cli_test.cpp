// End-to-end tests of the quality suites through the servebench binary: the embedded demo with
// its exact status counts (standard and full), a suite against `servebench sim --answers`,
// reruns, gates, Ctrl-C, broken suite files, and the suites/assets commands.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>

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

std::map<std::string, std::string> Statuses(const json& results) {
  std::map<std::string, std::string> out;
  for (const json& t : results["tests"]) {
    out[t["id"].get<std::string>()] = t["status"].get<std::string>();
  }
  return out;
}

// `servebench sim` with extra flags; its base URL.
class Sim : public testing::SimChild {
 public:
  explicit Sim(const std::vector<std::string>& extra)
      : SimChild({"--ttft-ms", "2", "--itl-ms", "0.2"}, extra) {}
};

TEST(SuiteCli, StandardDemoShowsEveryStatusWithExactCounts) {
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r = RunProcess({kBin, "run", "--suite", "standard", "--out", out.string()},
                               std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("built-in simulator"), std::string::npos);
  const json res = json::parse(ReadFile(out / "results.json"));
  const json& s = res["summary"];
  EXPECT_EQ(s["total"], 33);
  EXPECT_EQ(s["pass"], 25);
  EXPECT_EQ(s["fail"], 1);
  EXPECT_EQ(s["empty"], 1);
  EXPECT_EQ(s["loop"], 1);
  EXPECT_EQ(s["unsupported"], 3);
  EXPECT_EQ(s["error"], 1);
  EXPECT_EQ(s["timeout"], 1);
  EXPECT_DOUBLE_EQ(s["effective_pass_rate"].get<double>(), 25.0 / 30.0);
  const auto st = Statuses(res);
  EXPECT_EQ(st.at("image.bar_chart"), "FAIL");
  EXPECT_EQ(st.at("video.reasoning"), "EMPTY");
  EXPECT_EQ(st.at("reasoning.constraint_scheduling"), "LOOP");
  EXPECT_EQ(st.at("audio.transcription"), "UNSUPPORTED");
  EXPECT_EQ(st.at("writing.email"), "ERROR");
  EXPECT_EQ(st.at("coding.sql"), "TIMEOUT");
  EXPECT_EQ(st.at("coding.lru_cache"), "PASS");  // its code really ran in the sandbox
  EXPECT_EQ(res["target"]["server"]["kind"], "sim");
  EXPECT_FALSE(res["demo"].empty());
  EXPECT_TRUE(res["perf"].empty());  // --suite without --profiles runs no profile
  // The demo simulator drafts 3 tokens with per-position acceptance 0.86/0.67/0.55: the
  // acceptance rate (mean of the three) holds for text and for image requests alike.
  const json& by_input = res["suite"]["spec_decode_by_input"];
  for (const char* kind : {"text", "image", "video"}) {
    ASSERT_TRUE(by_input.contains(kind)) << kind;
    EXPECT_NEAR(by_input[kind]["acceptance_rate"].get<double>(), (0.86 + 0.67 + 0.55) / 3, 0.08)
        << kind;
  }
  // Audio cost one probe request, and no test request.
  int audio_requests = 0;
  for (const json& rec : ReadJsonl(out / "samples.jsonl")) {
    if (rec.value("probe", "") == "audio" || rec.value("test", "").rfind("audio.", 0) == 0) {
      ++audio_requests;
    }
  }
  EXPECT_EQ(audio_requests, 1);
  const std::string md = ReadFile(out / "report.md");
  for (const char* want : {"**Demo scenario.**", "## Results by category", "### Image: 9/10 passed",
                           "| Audio | 0/3 ❌ | 3 UNSUPPORTED |",
                           "1 FAIL, 1 EMPTY, 1 LOOP, 3 UNSUPPORTED, 1 ERROR, 1 TIMEOUT",
                           "field 'highest' is \"Q2\", expected \"Q3\""}) {
    EXPECT_NE(md.find(want), std::string::npos) << want;
  }
}

TEST(SuiteCli, FullDemoRunsTheSpeedDimensionsInTheSameReport) {
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r = RunProcess({kBin, "run", "--suite", "full", "--out", out.string()},
                               std::chrono::seconds(180));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json res = json::parse(ReadFile(out / "results.json"));
  const json& s = res["summary"];
  EXPECT_EQ(s["total"], 65);
  EXPECT_EQ(s["pass"], 61);
  EXPECT_EQ(s["fail"], 1);
  EXPECT_EQ(s["loop"], 1);
  EXPECT_EQ(s["error"], 1);
  EXPECT_EQ(s["timeout"], 1);
  EXPECT_EQ(s["empty"], 0);
  EXPECT_EQ(s["unsupported"], 0);
  const auto st = Statuses(res);
  EXPECT_EQ(st.at("vision.chart.highest"), "FAIL");
  EXPECT_EQ(st.at("reasoning.syllogism"), "LOOP");
  EXPECT_EQ(st.at("tools.calculate"), "ERROR");
  EXPECT_EQ(st.at("reasoning.capital"), "TIMEOUT");
  EXPECT_EQ(st.at("tools.weather"), "PASS");
  EXPECT_EQ(st.at("speed.concurrency.c8"), "PASS");
  EXPECT_EQ(st.at("speed.context.128000"), "PASS");
  EXPECT_EQ(st.at("speed.max_tokens.1024"), "PASS");
  EXPECT_EQ(st.at("speed.ttft.long"), "PASS");
  for (const char* p : {"max_tokens", "ttft", "concurrency", "context"}) {
    EXPECT_TRUE(res["perf"].contains(p)) << p;
  }
  const std::string md = ReadFile(out / "report.md");
  for (const char* want : {"### Vision: 19/20 passed", "| Multi-image | 2 | 2/2 ✅ |",
                           "### Context scaling: 6/6 passed", "### Throughput vs concurrency",
                           "### Context length scaling"}) {
    EXPECT_NE(md.find(want), std::string::npos) << want;
  }
}

TEST(SuiteCli, SuiteAgainstTheStandaloneSimulatorWithReruns) {
  Sim sim({"--answers", "quick,standard", "--thinking-tokens", "10", "--answer-reasoning",
           "video.reasoning=9000"});
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r =
      RunProcess({kBin, "run", "--endpoint", sim.url(), "--suite", "standard", "--tests",
                  "video.reasoning,reasoning", "--rerun-empty", "--out", out.string()},
                 std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json res = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(res["summary"]["total"], 7);
  EXPECT_EQ(res["summary"]["pass"], 7);
  for (const json& t : res["tests"]) {
    if (t["id"] == "video.reasoning") {
      ASSERT_EQ(t["attempts"].size(), 2u) << t.dump();
      EXPECT_EQ(t["attempts"][0]["status"], "EMPTY");
      EXPECT_EQ(t["attempts"][0]["max_tokens"], 8192);
      EXPECT_EQ(t["attempts"][1]["max_tokens"], 16384);
      EXPECT_EQ(t["status"], "PASS");
    }
  }
  EXPECT_NE(ReadFile(out / "report.md").find("after 2 attempts"), std::string::npos);
}

TEST(SuiteCli, QuickSuitePassesAgainstItsOwnAnswersAndGatesExitOne) {
  Sim sim({"--answers", "quick"});
  TempDir dir;
  ProcessResult ok = RunProcess({kBin, "run", "--endpoint", sim.url(), "--suite", "quick",
                                 "--min-pass-rate", "1", "--out", (dir.path() / "a").string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("tests: 5/5 passed (100%)"), std::string::npos) << ok.out;
  Sim bad({"--answers", "quick", "--answer-bad", "quick.arithmetic"});
  ProcessResult gated =
      RunProcess({kBin, "run", "--endpoint", bad.url(), "--suite", "quick", "--min-pass-rate",
                  "0.9", "--out", (dir.path() / "b").string()});
  EXPECT_EQ(gated.exit_code, 1);
  EXPECT_NE(gated.err.find("gate failed: pass rate 0.8 is below --min-pass-rate 0.9"),
            std::string::npos)
      << gated.err;
  EXPECT_TRUE(fs::exists(dir.path() / "b" / "report.md"));  // the results are written anyway
}

TEST(SuiteCli, CtrlCKeepsTheTestsAlreadyRun) {
  Sim sim({"--answers", "standard", "--answer-fault", "coding.bst=stall", "--stall-ms", "30000"});
  TempDir dir;
  const fs::path out = dir.path() / "run";
  Child run({kBin, "run", "--endpoint", sim.url(), "--suite", "standard", "--video-transport",
             "frames", "--out", out.string()});
  // Wait until the stalled test is in flight (the test before it has been written).
  bool reached = false;
  for (int i = 0; i < 600 && !reached; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (fs::exists(out / "samples.jsonl")) {
      for (const json& rec : ReadJsonl(out / "samples.jsonl")) {
        reached = reached || rec.value("test", "") == "reasoning.quick_math";
      }
    }
  }
  ASSERT_TRUE(reached);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  run.Signal(SIGINT);
  EXPECT_EQ(run.Wait(std::chrono::seconds(30)), 130);
  const json res = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(res["status"], "interrupted");
  EXPECT_EQ(res["summary"]["total"], 23);  // image 10, video 4, audio 3, reasoning 6
  const json& not_run = res["suite"]["not_run"];
  ASSERT_EQ(not_run.size(), 10u);
  EXPECT_EQ(not_run[0], "coding.bst");
  EXPECT_NE(ReadFile(out / "report.md").find("**Interrupted: partial results.**"),
            std::string::npos);
}

// Hostile answers against regex checks, through real HTTP: answers that overflowed std::regex's
// stack (exit 139, results.json left "running") and patterns that backtracked for ever (no
// limit or Ctrl-C stopped them) now end the run normally, each test with its verdict.
TEST(SuiteCli, HostileAnswersAgainstRegexChecksEndTheRun) {
  TempDir dir;
  const fs::path file = dir.path() / "hostile.yaml";
  {
    std::ofstream f(file);
    f << "suite: hostile\ndefaults: {max_tokens: 16384, loop: off}\ntests:\n";
    auto test = [&](const std::string& id, const std::string& pattern, const std::string& answer) {
      f << "  - id: " << id << "\n    category: text\n    prompt: '" << id << "'\n"
        << "    check: {regex: {pattern: '" << pattern << "'}}\n"
        << "    reference_answer: \"" << answer << "\"\n";
    };
    std::string ab;
    for (int i = 0; i < 10000; ++i) {
      ab += "ab";
    }
    std::string words;
    for (int i = 0; i < 18; ++i) {
      words += "word ";
    }
    test("stack.ab", "^(a|b)*$", ab);
    test("stack.dotnl", "(.|\\n)*end", ab + "\\nend");
    test("backtrack.words", "^(\\w+\\s?)+$", words + "!");
    test("backtrack.nested", "(a+)+$", std::string(5000, 'a') + "b");
  }
  Sim sim({"--answers", file.string()});
  ASSERT_FALSE(sim.url().empty());
  const fs::path out = dir.path() / "run";
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r =
      RunProcess({kBin, "run", "--endpoint", sim.url(), "--suite", file.string(),
                  "--test-timeout-s", "5", "--deadline", "60s", "--out", out.string()},
                 std::chrono::seconds(90));
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took, 30.0);  // a hang guard: the checks take milliseconds
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json res = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(res["status"], "complete");
  const auto st = Statuses(res);
  EXPECT_EQ(st.at("stack.ab"), "PASS");
  EXPECT_EQ(st.at("stack.dotnl"), "PASS");
  EXPECT_EQ(st.at("backtrack.words"), "FAIL");
  EXPECT_EQ(st.at("backtrack.nested"), "FAIL");
}

// Ctrl-C while a test's code runs in the sandbox (an endless loop, 21 s wall limit): the program
// is killed at once, the run ends interrupted within about a second, and the test is listed as
// not run (no verdict: --resume runs it again).
TEST(SuiteCli, CtrlCDuringACodeCheckEndsAtOnce) {
  TempDir dir;
  const fs::path file = dir.path() / "loop.yaml";
  {
    std::ofstream(file) << "suite: loop\ntests:\n  - id: coding.spin\n    category: coding\n"
                           "    prompt: Spin.\n    check: {code: {language: python, timeout_s: "
                           "10, tests: 'assert True'}}\n    reference_answer: |\n      ```python\n "
                           "     while True:\n"
                           "          pass\n      ```\n";
  }
  Sim sim({"--answers", file.string()});
  ASSERT_FALSE(sim.url().empty());
  const fs::path out = dir.path() / "run";
  Child run(
      {kBin, "run", "--endpoint", sim.url(), "--suite", file.string(), "--out", out.string()});
  // Wait until the sandboxed program runs: a descendant process running main.py.
  auto descendant_runs_main_py = [](pid_t root) {
    std::vector<pid_t> todo = {root};
    while (!todo.empty()) {
      const pid_t p = todo.back();
      todo.pop_back();
      std::error_code ec;
      for (const auto& task :
           fs::directory_iterator(fs::path("/proc") / std::to_string(p) / "task", ec)) {
        std::ifstream children(task.path() / "children");
        for (pid_t c; children >> c;) {
          std::ifstream cmdline(fs::path("/proc") / std::to_string(c) / "cmdline");
          const std::string cmd((std::istreambuf_iterator<char>(cmdline)),
                                std::istreambuf_iterator<char>());
          if (cmd.find("main.py") != std::string::npos) {
            return true;
          }
          todo.push_back(c);
        }
      }
    }
    return false;
  };
  bool running = false;
  for (int i = 0; i < 400 && !running; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    running = descendant_runs_main_py(run.pid());
  }
  ASSERT_TRUE(running) << "the code check never started";
  const auto signalled = std::chrono::steady_clock::now();
  run.Signal(SIGINT);
  EXPECT_EQ(run.Wait(std::chrono::seconds(30)), 130) << run.Stderr();
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  EXPECT_LT(took, 3.0);  // the sandbox's wall limit is 21 s
  const json res = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(res["status"], "interrupted");
  ASSERT_EQ(res["suite"]["not_run"].size(), 1u) << res["suite"].dump();
  EXPECT_EQ(res["suite"]["not_run"][0], "coding.spin");
}

TEST(SuiteCli, BrokenSuiteFileIsAUsageErrorNamingTheLine) {
  TempDir dir;
  const fs::path file = dir.path() / "mine.yaml";
  {
    std::ofstream(file) << "suite: mine\ntests:\n  - id: a\n    category: c\n    prompt: hi\n"
                           "    check: {contanis: x}\n";
  }
  ProcessResult r =
      RunProcess({kBin, "run", "--suite", file.string(), "--out", (dir.path() / "run").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(file.string() + ":6: test 'a': unknown checker 'contanis'"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "run"));
  ProcessResult missing = RunProcess({kBin, "run", "--suite", "nonesuch"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no suite named 'nonesuch'"), std::string::npos) << missing.err;
}

TEST(SuiteCli, SuitesAndAssetsCommands) {
  ProcessResult list = RunProcess({kBin, "suites"});
  EXPECT_EQ(list.exit_code, 0);
  // Speed-profile entries count one test per row, as in the report: full is 65.
  for (const char* want :
       {"quick        5 tests", "standard    33 tests", "full        65 tests"}) {
    EXPECT_NE(list.out.find(want), std::string::npos) << want << "\n" << list.out;
  }
  ProcessResult std_list = RunProcess({kBin, "suites", "standard"});
  EXPECT_EQ(std_list.exit_code, 0);
  EXPECT_NE(std_list.out.find("coding.lru_cache"), std::string::npos);
  ProcessResult js = RunProcess({kBin, "suites", "quick", "--json"});
  ASSERT_EQ(js.exit_code, 0);
  EXPECT_EQ(json::parse(js.out)["tests"].size(), 5u);
  TempDir dir;
  ProcessResult assets = RunProcess({kBin, "assets", "--out", (dir.path() / "media").string()});
  ASSERT_EQ(assets.exit_code, 0) << assets.err;
  const json manifest = json::parse(ReadFile(dir.path() / "media" / "manifest.json"));
  EXPECT_EQ(manifest["schema"], "servebench.assets/1");
  bool found = false;
  for (const json& a : manifest["assets"]) {
    if (a["name"] == "bouncing_ball") {
      found = true;
      EXPECT_EQ(a["truth"]["bounces"], 3);
      EXPECT_TRUE(fs::exists(dir.path() / "media" / a["file"].get<std::string>()));
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace sb
