// `--resume` for real (docs/resume.md): a run, a perf sweep and a launch matrix are killed with
// SIGKILL at seeded random moments, then resumed; the resumed result must equal an uninterrupted
// run's in statuses and counts, and the simulator -- which logs every chat request it accepts --
// must have seen no finished unit's requests again (at most the one unit that was cut off).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
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

// `servebench sim` answering the quick suite, logging every chat request to `log`.
class Sim : public testing::SimChild {
 public:
  explicit Sim(const fs::path& log)
      : SimChild({"--ttft-ms", "2", "--itl-ms", "0.5", "--answers", "quick", "--request-log",
                  log.string()}) {}
};

// Requests the simulator accepted, by the hash of their messages. quality_only: leave out the
// speed profiles' requests (their prompts start with a per-run nonce, "[request ...").
std::map<std::string, int> RequestCounts(const fs::path& log, bool quality_only = false) {
  std::map<std::string, int> counts;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    const std::size_t tab = line.find('\t');
    if (quality_only && line.compare(tab + 1, 9, "[request ") == 0) {
      continue;
    }
    ++counts[line.substr(0, tab)];
  }
  return counts;
}

int Total(const std::map<std::string, int>& counts) {
  int n = 0;
  for (const auto& [hash, c] : counts) {
    n += c;
  }
  return n;
}

std::map<std::string, std::string> TestStatuses(const json& res) {
  std::map<std::string, std::string> out;
  for (const auto& t : res["tests"]) {
    out[t["id"].get<std::string>()] = t["status"].get<std::string>();
  }
  return out;
}

// Measured requests in samples.jsonl that were not superseded by a resume.
int CountedSamples(const fs::path& dir) {
  int n = 0;
  for (const auto& s : ReadJsonl(dir / "samples.jsonl")) {
    n += s.value("superseded", false) ? 0 : 1;
  }
  return n;
}

// What a run looks like, to compare an uninterrupted and a resumed one.
struct Shape {
  std::map<std::string, std::string> tests;
  std::vector<int> level_oks;  // concurrency: ok streams per level
  int decode_runs = 0;
  int samples = 0;
};

Shape ShapeOf(const fs::path& dir) {
  const json res = json::parse(ReadFile(dir / "results.json"));
  Shape s;
  s.tests = TestStatuses(res);
  if (res["perf"].contains("concurrency")) {
    for (const auto& l : res["perf"]["concurrency"]["levels"]) {
      s.level_oks.push_back(l["ok"].get<int>());
    }
  }
  if (res["perf"].contains("decode")) {
    s.decode_runs = static_cast<int>(res["perf"]["decode"]["runs"].size());
  }
  s.samples = CountedSamples(dir);
  return s;
}

void ExpectSameShape(const Shape& a, const Shape& b, const std::string& where) {
  EXPECT_EQ(a.tests, b.tests) << where;
  EXPECT_EQ(a.level_oks, b.level_oks) << where;
  EXPECT_EQ(a.decode_runs, b.decode_runs) << where;
  EXPECT_EQ(a.samples, b.samples) << where;
}

bool WaitForFile(const fs::path& p) {
  for (int i = 0; i < 2000 && !fs::exists(p); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return fs::exists(p);
}

// Kills `args` (a command writing into `out`) at `delay` after its plan.json appears, then resumes
// it until it completes. Returns false when the run finished before the kill (no kill point).
bool KillAndResume(const std::vector<std::string>& args, const fs::path& out,
                   std::chrono::milliseconds delay, const std::string& resume_command) {
  {
    Child run(args);
    EXPECT_TRUE(WaitForFile(out / "plan.json"));
    std::this_thread::sleep_for(delay);
    run.Signal(SIGKILL);
    run.Wait();
  }
  if (fs::exists(out / "results.json") &&
      json::parse(ReadFile(out / "results.json")).value("status", "") == "complete") {
    return false;
  }
  ProcessResult r =
      RunProcess({kBin, resume_command, "--resume", out.string()}, std::chrono::seconds(120));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return true;
}

// SIGKILL to every process whose command line holds `marker` (a killed launch's servers).
void KillProcessesWith(const std::string& marker) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::string cmdline = ReadFile(e.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(marker) != std::string::npos) {
      ::kill(std::stoi(name), SIGKILL);
    }
  }
}

const std::vector<std::string> kRunArgs = {"--suite",  "quick", "--profiles", "decode,concurrency",
                                           "--runs",   "2",     "--levels",   "1,2,3",
                                           "--tokens", "24"};

TEST(ResumeCli, RunKilledAtRandomMomentsResumesWithNothingFinishedSentAgain) {
  TempDir dir;
  // The uninterrupted run.
  const fs::path base_log = dir.path() / "base.log";
  Shape base;
  std::map<std::string, int> base_counts;
  double base_s = 0;
  {
    Sim sim(base_log);
    ASSERT_FALSE(sim.url().empty());
    std::vector<std::string> args = {kBin,      "run",   "--endpoint",
                                     sim.url(), "--out", (dir.path() / "base").string()};
    args.insert(args.end(), kRunArgs.begin(), kRunArgs.end());
    const auto start = std::chrono::steady_clock::now();
    ProcessResult r = RunProcess(args, std::chrono::seconds(120));
    base_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    base = ShapeOf(dir.path() / "base");
    base_counts = RequestCounts(base_log);
  }
  ASSERT_EQ(base.tests.size(), 5u);
  std::mt19937 rng(20261203);
  std::uniform_real_distribution<double> fraction(0.0, 1.0);
  // Kill points are drawn over the first 80% of the uninterrupted run's time. A run that finishes
  // before its kill (the machine got faster than during the base run) shrinks that window, so a
  // busy machine during the base run still yields enough kill points.
  double window_ms = base_s * 1000 * 0.8;
  int kill_points = 0;
  for (int i = 0; i < 60 && kill_points < 22; ++i) {
    const std::string where = "kill point " + std::to_string(i);
    const fs::path out = dir.path() / ("run" + std::to_string(i));
    const fs::path log = dir.path() / ("sim" + std::to_string(i) + ".log");
    Sim sim(log);
    ASSERT_FALSE(sim.url().empty());
    std::vector<std::string> args = {kBin, "run", "--endpoint", sim.url(), "--out", out.string()};
    args.insert(args.end(), kRunArgs.begin(), kRunArgs.end());
    const auto delay = std::chrono::milliseconds(std::lround(fraction(rng) * window_ms));
    if (!KillAndResume(args, out, delay, "run")) {
      window_ms *= 0.8;
      fs::remove_all(out);
      continue;
    }
    ++kill_points;
    const json res = json::parse(ReadFile(out / "results.json"));
    EXPECT_EQ(res["status"], "complete") << where;
    ASSERT_TRUE(res.contains("resumed")) << where;
    ExpectSameShape(ShapeOf(out), base, where);
    // The simulator saw every prompt the uninterrupted run sent, and beyond that at most the
    // one unit that was cut off (a concurrency level of 3 at most).
    const auto counts = RequestCounts(log);
    const int extra = Total(counts) - Total(base_counts);
    EXPECT_GE(extra, 0) << where;
    EXPECT_LE(extra, 3) << where;
    // Quality prompts are the same in every run: each was sent as often as in the uninterrupted
    // run, and at most one (the test cut off) once more.
    const auto quality = RequestCounts(log, true);
    const auto base_quality = RequestCounts(base_log, true);
    ASSERT_FALSE(base_quality.empty());
    int quality_extra = 0;
    for (const auto& [hash, n] : base_quality) {
      const int got = quality.count(hash) ? quality.at(hash) : 0;
      EXPECT_GE(got, n) << where << " " << hash;
      quality_extra += std::max(0, got - n);
    }
    EXPECT_EQ(quality.size(), base_quality.size()) << where;
    EXPECT_LE(quality_extra, 1) << where;
    fs::remove_all(out);
  }
  EXPECT_GE(kill_points, 20);
}

TEST(ResumeCli, PerfSweepKilledMidLevelMeasuresThatLevelAgainFromItsStart) {
  TempDir dir;
  const std::vector<std::string> sweep = {"--profile", "concurrency", "--levels", "1,2,4,8",
                                          "--tokens",  "48",          "--warmup", "0"};
  Shape base;
  {
    Sim sim(dir.path() / "base.log");
    std::vector<std::string> args = {kBin,      "perf",  "--endpoint",
                                     sim.url(), "--out", (dir.path() / "base").string()};
    args.insert(args.end(), sweep.begin(), sweep.end());
    ASSERT_EQ(RunProcess(args).exit_code, 0);
    base = ShapeOf(dir.path() / "base");
  }
  std::mt19937 rng(7);
  int kill_points = 0;
  for (int i = 0; i < 8 && kill_points < 5; ++i) {
    const fs::path out = dir.path() / ("perf" + std::to_string(i));
    const fs::path log = dir.path() / ("sim" + std::to_string(i) + ".log");
    Sim sim(log);
    std::vector<std::string> args = {kBin, "perf", "--endpoint", sim.url(), "--out", out.string()};
    args.insert(args.end(), sweep.begin(), sweep.end());
    if (!KillAndResume(args, out, std::chrono::milliseconds(rng() % 150), "perf")) {
      continue;
    }
    ++kill_points;
    ExpectSameShape(ShapeOf(out), base, "perf kill point " + std::to_string(i));
    // 1 + 2 + 4 + 8 requests, plus at most one level sent again.
    const int total = Total(RequestCounts(log));
    EXPECT_GE(total, 15);
    EXPECT_LE(total, 15 + 8);
    // Superseded samples belong to one level only, and are never in results.json.
    int superseded = 0;
    for (const auto& s : ReadJsonl(out / "samples.jsonl")) {
      superseded += s.value("superseded", false) ? 1 : 0;
    }
    EXPECT_LE(superseded, 8);
    EXPECT_LE(superseded, total - 15);  // each superseded sample was a request sent again
  }
  EXPECT_GE(kill_points, 3);
}

TEST(ResumeCli, OptionsThatContradictThePlanAreRefusedWithTheDifference) {
  TempDir dir;
  Sim sim(dir.path() / "sim.log");
  const fs::path out = dir.path() / "run";
  ASSERT_EQ(RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "concurrency",
                        "--levels", "1,2", "--tokens", "16", "--out", out.string()})
                .exit_code,
            0);
  // A complete run has nothing to resume.
  ProcessResult done = RunProcess({kBin, "perf", "--resume", out.string()});
  EXPECT_EQ(done.exit_code, 2);
  EXPECT_NE(done.err.find("holds a complete run"), std::string::npos) << done.err;
  // Pretend it was cut off, then ask for other levels.
  json res = json::parse(ReadFile(out / "results.json"));
  res["status"] = "running";
  std::ofstream(out / "results.json") << res.dump();
  ProcessResult r = RunProcess({kBin, "perf", "--resume", out.string(), "--levels", "1,2,4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--levels 1,2,4 contradicts the plan of " + out.string() + " (1,2)"),
            std::string::npos)
      << r.err;
  ProcessResult wrong = RunProcess({kBin, "run", "--resume", out.string()});
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("holds a `servebench perf` run"), std::string::npos) << wrong.err;
  ProcessResult none = RunProcess({kBin, "run", "--resume", (dir.path() / "nothing").string()});
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_NE(none.err.find("holds no run to resume"), std::string::npos) << none.err;
  // The same options as planned are fine: the run resumes (every unit replayed) and completes.
  // --deadline and --store may be given anew: the resumed run is recorded in the store named.
  const fs::path db = dir.path() / "resumed.sqlite";
  ProcessResult same = RunProcess({kBin, "perf", "--resume", out.string(), "--levels", "1,2",
                                   "--deadline", "5m", "--store", db.string()});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.err.find("stored run "), std::string::npos) << same.err;
  ProcessResult stored = RunProcess({"/usr/bin/sqlite3", db.string(), "SELECT count(*) FROM runs"});
  EXPECT_EQ(stored.out, "1\n") << stored.err;
  const json after = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(after["status"], "complete");
  EXPECT_EQ(after["resumed"][0]["units_replayed"].get<int>(), 3);      // warm-up + 2 levels
  EXPECT_EQ(Total(RequestCounts(dir.path() / "sim.log")), 1 + 1 + 2);  // nothing sent again
  EXPECT_NE(ReadFile(out / "report.md").find("Resumed"), std::string::npos);
}

TEST(ResumeCli, LaunchMatrixKilledMidwayKeepsTheFinishedRecipe) {
  TempDir dir;
  const fs::path matrix = dir.path() / "m.yaml";
  const std::string marker = "resume-test-" + std::to_string(::getpid());
  {
    std::ofstream f(matrix);
    f << "defaults:\n  ready_timeout_s: 30\n  stop_timeout_s: 5\nrecipes:\n";
    for (const char* name : {"fast", "slow"}) {
      f << "  - name: " << name << "\n    argv: [" << kBin << ", sim, --port, '{port}', --model, "
        << marker << ", --itl-ms, '" << (std::string(name) == "fast" ? "0.5" : "3")
        << "', --request-log, '" << (dir.path() / (std::string(name) + ".log")).string() << "']\n";
    }
  }
  const fs::path out = dir.path() / "matrix";
  Child launch({kBin, "launch", matrix.string(), "--profiles", "concurrency", "--levels", "1,2,4",
                "--tokens", "64", "--out", out.string()});
  // Kill it once the second recipe has measured something.
  ASSERT_TRUE(WaitForFile(out / "slow" / "journal.jsonl"));
  for (int i = 0;
       i < 2000 && ReadFile(out / "slow" / "journal.jsonl").find("\"end\"") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  launch.Signal(SIGKILL);
  launch.Wait();
  // The killed launch left its server running: end it (the next servers get new ports).
  KillProcessesWith(marker);
  const int fast_before = Total(RequestCounts(dir.path() / "fast.log"));
  ProcessResult r =
      RunProcess({kBin, "launch", "--resume", out.string()}, std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("recipe 'fast' (1/2): complete, kept"), std::string::npos) << r.err;
  EXPECT_EQ(Total(RequestCounts(dir.path() / "fast.log")), fast_before);  // not measured again
  const json slow = json::parse(ReadFile(out / "slow" / "results.json"));
  EXPECT_EQ(slow["status"], "complete");
  EXPECT_TRUE(slow.contains("resumed"));
  EXPECT_EQ(slow["perf"]["concurrency"]["levels"].size(), 3u);
  EXPECT_TRUE(fs::exists(out / "compare.md"));
  // Every level of `slow` is in the simulator's log once, plus at most the level cut off.
  const int slow_total = Total(RequestCounts(dir.path() / "slow.log"));
  EXPECT_GE(slow_total, 1 + 1 + 2 + 4);  // warm-up + levels
  EXPECT_LE(slow_total, 1 + 1 + 2 + 4 + 4);
}

// Ctrl-C in the middle of a rate point: the run ends interrupted with what it measured, and the
// point, being partial, is not journaled as finished: --resume measures it again whole (every
// request sent, none left unsent), and the replayed units' self-checks stay those of the process
// that read their events (no event "delayed" by the time between the two processes).
TEST(ResumeCli, RatePointStoppedByCtrlCIsMeasuredAgainWhole) {
  TempDir dir;
  Sim sim(dir.path() / "sim.log");
  ASSERT_FALSE(sim.url().empty());
  const fs::path out = dir.path() / "rate";
  Child perf({kBin, "perf", "--endpoint", sim.url(), "--profile", "rate", "--rates", "8,4",
              "--requests", "12", "--rate-tokens", "8", "--warmup", "1", "--out", out.string()});
  // Stop once the second point (4 req/s, 3 s of arrivals) has begun: the first is finished.
  ASSERT_TRUE(WaitForFile(out / "journal.jsonl"));
  bool second = false;
  for (int i = 0; i < 5000 && !second; ++i) {
    const std::string j = ReadFile(out / "journal.jsonl");
    second = j.find("\"begin\":\"rate sweep 4\"") != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(second) << "the second rate point never began";
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  perf.Signal(SIGINT);
  EXPECT_EQ(perf.Wait(), 130) << perf.Stderr();
  const json cut = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(cut["status"], "interrupted");

  ProcessResult r = RunProcess({kBin, "perf", "--resume", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json res = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(res["status"], "complete");
  ASSERT_TRUE(res.contains("resumed"));
  EXPECT_FALSE(res["resumed"][0]["unfinished_unit"].get<std::string>().empty())
      << res["resumed"].dump();
  const json& points = res["perf"]["rate"]["rates"];
  ASSERT_EQ(points.size(), 2u);
  for (const json& p : points) {
    EXPECT_EQ(p["sent"], 12) << p.dump();
    EXPECT_EQ(p["unsent"], 0) << p.dump();
    // The bug this guards against: a replayed event's delay measured from the resumed process.
    const json& d = p["self_check"]["event_delay_us"];
    if (d.contains("p99")) {
      EXPECT_LT(d["p99"].get<double>(), 500'000) << p.dump();
    }
  }
  // The first point and the warm-up were not sent again: 1 + 12 + 12, plus the cut point's
  // requests sent before the stop.
  const int total = Total(RequestCounts(dir.path() / "sim.log"));
  EXPECT_GE(total, 1 + 12 + 12);
  EXPECT_LE(total, 1 + 12 + 12 + 12);
}

// Lines of `journal` that record a finished session (a committed part of the sessions unit).
int PartLines(const fs::path& journal) {
  int n = 0;
  std::ifstream in(journal);
  for (std::string line; std::getline(in, line);) {
    n += line.find("\"part\"") != std::string::npos ? 1 : 0;
  }
  return n;
}

// Sessions are units of the journal (issue 22 item 5): a sessions run killed after some sessions
// finished resumes with those sessions replayed from the journal, not sent again, and only the
// others sent; the results have every session.
TEST(ResumeCli, SessionsRunKilledAfterSomeSessionsResumesWithTheUnfinishedOnes) {
  TempDir dir;
  constexpr int kSessions = 10, kTurns = 3;
  const std::vector<std::string> sessions = {"--profile",
                                             "sessions",
                                             "--turns",
                                             std::to_string(kTurns),
                                             "--max-sessions",
                                             std::to_string(kSessions),
                                             "--session-concurrency",
                                             "2",
                                             "--turn-input-tokens",
                                             "16",
                                             "--output-tokens",
                                             "16",
                                             "--think-ms",
                                             "30",
                                             "--warmup",
                                             "0"};
  std::mt19937 rng(22);
  int kill_points = 0;
  for (int i = 0; i < 6 && kill_points < 3; ++i) {
    const std::string where = "sessions kill point " + std::to_string(i);
    const fs::path out = dir.path() / ("sessions" + std::to_string(i));
    const fs::path log = dir.path() / ("sim" + std::to_string(i) + ".log");
    Sim sim(log);
    ASSERT_FALSE(sim.url().empty());
    std::vector<std::string> args = {kBin, "perf", "--endpoint", sim.url(), "--out", out.string()};
    args.insert(args.end(), sessions.begin(), sessions.end());
    const int wait_parts = 1 + static_cast<int>(rng() % 4);
    {
      Child run(args);
      // Killed as soon as the journal holds `wait_parts` finished sessions.
      for (int k = 0; k < 20000 && PartLines(out / "journal.jsonl") < wait_parts; ++k) {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      }
      run.Signal(SIGKILL);
      run.Wait();
    }
    if (fs::exists(out / "results.json") &&
        json::parse(ReadFile(out / "results.json")).value("status", "") == "complete") {
      continue;  // it finished before the kill
    }
    const int parts = PartLines(out / "journal.jsonl");
    ASSERT_GE(parts, wait_parts) << where;
    ASSERT_LT(parts, kSessions) << where;
    const int sent_before = Total(RequestCounts(log));
    ProcessResult r =
        RunProcess({kBin, "perf", "--resume", out.string()}, std::chrono::seconds(120));
    ASSERT_EQ(r.exit_code, 0) << where << r.err;
    ++kill_points;
    const json res = json::parse(ReadFile(out / "results.json"));
    EXPECT_EQ(res["status"], "complete") << where;
    // The banner and results.json count the finished sessions replayed.
    EXPECT_EQ(res["resumed"][0]["parts_replayed"], parts) << where;
    const std::string banner = "its " + std::to_string(parts) + " finished part" +
                               (parts == 1 ? " (sessions) is" : "s (sessions) are") + " replayed";
    EXPECT_NE(r.err.find(banner), std::string::npos) << where << r.err;
    const json& ps = res["perf"]["sessions"];
    EXPECT_EQ(ps["finished"], kSessions) << where;
    ASSERT_EQ(ps["per_session"].size(), static_cast<std::size_t>(kSessions)) << where;
    for (const json& s : ps["per_session"]) {
      EXPECT_EQ(s["status"], "finished") << where;
      EXPECT_EQ(s["turns"], kTurns) << where;
    }
    // The resumed process sent each unfinished session's requests, and none of a finished one
    // (a request of the killed process may reach the log after the count above: 2 at most).
    const int sent_after = Total(RequestCounts(log)) - sent_before;
    EXPECT_GE(sent_after, (kSessions - parts) * kTurns) << where;
    EXPECT_LE(sent_after, (kSessions - parts) * kTurns + 2) << where;
    // samples.jsonl: every (session, turn) once outside the superseded lines; the finished
    // sessions' requests are marked replayed.
    std::map<std::pair<int, int>, int> seen;
    int replayed = 0;
    for (const json& s : ReadJsonl(out / "samples.jsonl")) {
      if (s.value("superseded", false) || !s.contains("session") || !s.contains("turn")) {
        continue;
      }
      ++seen[{s["session"].get<int>(), s["turn"].get<int>()}];
      replayed += s.value("replayed", false) ? 1 : 0;
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(kSessions * kTurns)) << where;
    for (const auto& [key, n] : seen) {
      EXPECT_EQ(n, 1) << where << " session " << key.first << " turn " << key.second;
    }
    EXPECT_EQ(replayed, parts * kTurns) << where;
  }
  EXPECT_GE(kill_points, 2);
}

}  // namespace
}  // namespace sb
