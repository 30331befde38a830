// End-to-end tests of the servebench binary: real processes, real HTTP on loopback, real files.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sim/raw_http.h"
#include "support/sim_child.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Child;
using testing::ProcessResult;
using testing::RunProcess;

const std::string kBin = SB_BINARY;

using ::sb::testing::ReadFile;

std::vector<json> ReadJsonl(const fs::path& p) {
  std::vector<json> out;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    out.push_back(json::parse(line));
  }
  return out;
}

int CountLines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

using ::sb::testing::TempDir;

// A `servebench sim` child process (--ttft-ms 10, --itl-ms 1 unless a test sets it).
class SimProcess : public testing::SimChild {
 public:
  explicit SimProcess(std::vector<std::string> extra = {})
      : SimChild({"--ttft-ms", "10"}, WithItl(std::move(extra))) {}

 private:
  static std::vector<std::string> WithItl(std::vector<std::string> extra) {
    if (std::find(extra.begin(), extra.end(), "--itl-ms") == extra.end()) {
      extra.insert(extra.end(), {"--itl-ms", "1"});
    }
    return extra;
  }
};

TEST(CliTest, HelpListsTheCommands) {
  ProcessResult r = RunProcess({kBin, "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* cmd : {"run", "perf", "compare", "sim"}) {
    EXPECT_NE(r.out.find(cmd), std::string::npos) << cmd;
  }
}

TEST(CliTest, UnknownFlagIsAUsageError) {
  ProcessResult r = RunProcess({kBin, "perf", "--profile", "decode", "--no-such-flag"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;  // nothing close to it
}

// `run` takes --profiles; --profile (perf's spelling) got only CLI11's "not expected".
TEST(CliTest, AFlagCloseToOneTheCommandTakesGetsADidYouMean) {
  ProcessResult r = RunProcess({kBin, "run", "--profile", "decode"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("servebench run: --profile is not a flag of this command; did you mean "
                       "--profiles?"),
            std::string::npos)
      << r.err;
  ProcessResult typo = RunProcess({kBin, "perf", "--profile", "decode", "--request-timout-s", "4"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("did you mean --request-timeout-s?"), std::string::npos) << typo.err;
}

// A bad value of a known flag: its own message, and no "did you mean" of the flag itself (CLI11
// writes "--levels: ...", which read as an unknown flag one character from --levels).
TEST(CliTest, ABadValueOfAKnownFlagIsNotTakenForATypo) {
  ProcessResult r = RunProcess({kBin, "perf", "--endpoint", "http://127.0.0.1:9/v1", "--profile",
                                "concurrency", "--levels", "1,0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--levels: must be whole numbers in [1, 1000000], got '0'"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
  r = RunProcess({kBin, "run", "--depth", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--depth: must be a number in [0, 1], got '2'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
}

// A list option of the profile table takes "1,2", "1 2", or the flag given again, as CLI11's
// list flags always did (a plan recorded with "--rates 5 10" resumes).
TEST(CliTest, AListOptionTakesCommasSpacesOrTheFlagAgain) {
  SimProcess sim;
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r = RunProcess({kBin,         "perf",        "--endpoint",
                                sim.url(),    "--profile",   "concurrency,rate",
                                "--levels",   "1",           "--levels",
                                "2",          "--tokens",    "4",
                                "--rates",    "4",           "8",
                                "--requests", "2",           "--rate-tokens",
                                "4",          "--slo",       "ttft_ms=5000",
                                "--slo",      "e2e_ms=9000", "--out",
                                out.string()},
                               std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json res = json::parse(ReadFile(out / "results.json"));
  ASSERT_EQ(res["perf"]["concurrency"]["levels"].size(), 2U);
  EXPECT_EQ(res["perf"]["concurrency"]["levels"][1]["concurrency"], 2);
  ASSERT_EQ(res["perf"]["rate"]["rates"].size(), 2U);
  EXPECT_EQ(res["perf"]["rate"]["rates"][1]["rate_rps"], 8);
  EXPECT_EQ(res["perf"]["rate"]["slo"]["ttft_ms"], 5000);
  EXPECT_EQ(res["perf"]["rate"]["slo"]["e2e_ms"], 9000);
  EXPECT_EQ(res["config"]["profile_options"]["--rates"], "4,8");
  EXPECT_EQ(res["config"]["profile_options"]["--slo"], "ttft_ms=5000,e2e_ms=9000");
}

// The table's text, choice and flag options: a bad choice or grammar is named, exit 2.
TEST(CliTest, ABadChoiceOrGrammarOfATableOptionIsNamed) {
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };

  for (const Case& c :
       {Case{{"--arrival", "bursty"}, "--arrival: bursty not in {constant,poisson,gamma}"},
        Case{{"--trace-format", "csv"}, "--trace-format: csv not in"},
        Case{{"--slo", "ttft=5"}, "--slo: 'ttft=5' is not KEY=MS"},
        Case{{"--rates", "0"}, "--rates: must be numbers in (0, 1000000], got '0'"},
        Case{{"--turns", "0"}, "--turns: must be a whole number in [1, 10000], got '0'"},
        Case{{"--think-ms", "uniform:9"}, "--think-ms: "},
        Case{{"--shared-prefix", "4"}, "--shared-prefix must be GROUPS:TOKENS"}}) {
    std::vector<std::string> argv = {kBin,        "perf", "--endpoint", "http://127.0.0.1:9/v1",
                                     "--profile", "rate", "--rates",    "1"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    ProcessResult r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 2) << c.args[0] << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
  }
}

TEST(CliTest, UnknownProfileIsAUsageErrorNamingTheChoices) {
  ProcessResult r = RunProcess({kBin, "perf", "--profile", "warp"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown profile 'warp'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("max-tokens"), std::string::npos);
}

TEST(CliTest, UnreachableEndpointIsOneClearLineAndExit3) {
  TempDir dir;
  ProcessResult r = RunProcess({kBin, "perf", "--endpoint", "http://127.0.0.1:1/v1", "--profile",
                                "decode", "--out", (dir.path() / "run").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("cannot reach http://127.0.0.1:1"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "run" / "results.json"));  // no partial garbage
}

TEST(CliTest, EmptyEndpointIsAUsageErrorNotTheSimulator) {
  ProcessResult r = RunProcess({kBin, "perf", "--endpoint", "", "--profile", "ttft"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out.find("simulator"), std::string::npos) << r.out;
}

TEST(CliTest, BadUrlIsAUsageError) {
  ProcessResult r = RunProcess({kBin, "perf", "--endpoint", "ftp//nowhere", "--profile", "ttft"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("bad endpoint URL"), std::string::npos) << r.err;
}

TEST(CliTest, UnknownModelNamesTheServedOnes) {
  SimProcess sim;
  ASSERT_FALSE(sim.url().empty());
  ProcessResult r = RunProcess(
      {kBin, "perf", "--endpoint", sim.url(), "--model", "gpt-9", "--profile", "decode"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("gpt-9"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sim-model"), std::string::npos) << r.err;
}

TEST(CliTest, UnreadableApiKeyFileIsASetupError) {
  ProcessResult r =
      RunProcess({kBin, "perf", "--profile", "decode", "--api-key-file", "/nonexistent/key"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("/nonexistent/key"), std::string::npos) << r.err;
}

TEST(CliTest, CompareOfUnreadableRunIsASetupError) {
  TempDir dir;
  ProcessResult r =
      RunProcess({kBin, "compare", (dir.path() / "a").string(), (dir.path() / "b").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
}

TEST(CliTest, PerfAgainstSimWritesTheRunDirectory) {
  SimProcess sim;
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  fs::path out = dir.path() / "run";
  ProcessResult r = RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "decode",
                                "--tokens", "32", "--runs", "2", "--out", out.string()},
                               std::chrono::seconds(60), {"OPENAI_API_KEY=sk-secret-123"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json res = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(res["schema"], "servebench.results/1");
  EXPECT_EQ(res["status"], "complete");
  EXPECT_EQ(res["target"]["server"]["kind"], "sim");
  EXPECT_EQ(res["target"]["model"], "sim-model");
  EXPECT_EQ(res["target"]["endpoint"], sim.url());
  EXPECT_EQ(res["perf"]["decode"]["runs"].size(), 2u);
  EXPECT_EQ(res["summary"]["requests"], 2);
  EXPECT_EQ(res["summary"]["completion_tokens"], 64);
  auto samples = ReadJsonl(out / "samples.jsonl");
  EXPECT_EQ(samples.size(), 3u);  // warm-up + 2 runs
  std::string report = ReadFile(out / "report.md");
  EXPECT_NE(report.find("Decode"), std::string::npos);
  // The API key is never written anywhere.
  for (const char* f : {"results.json", "samples.jsonl", "report.md"}) {
    EXPECT_EQ(ReadFile(out / f).find("sk-secret-123"), std::string::npos) << f;
  }
  EXPECT_EQ(r.out.find("sk-secret-123"), std::string::npos);
  EXPECT_EQ(r.err.find("sk-secret-123"), std::string::npos);
}

// --io-threads: a batch over two client I/O threads (the rate point counts them in its
// self-check), a concurrency level over two; out of range is a usage error.
TEST(CliTest, PerfIoThreadsSpreadsABatchOverThreads) {
  TempDir dir;
  fs::path out = dir.path() / "run";
  ProcessResult r = RunProcess({kBin,
                                "perf",
                                "--profile",
                                "rate,concurrency",
                                "--rates",
                                "200",
                                "--requests",
                                "20",
                                "--rate-tokens",
                                "4",
                                "--levels",
                                "6",
                                "--tokens",
                                "4",
                                "--warmup",
                                "0",
                                "--io-threads",
                                "2",
                                "--out",
                                out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json res = json::parse(ReadFile(out / "results.json"));
  const json& point = res["perf"]["rate"]["rates"][0];
  EXPECT_EQ(point["ok"], 20);
  EXPECT_EQ(point["self_check"]["threads"], 2);
  EXPECT_GT(point["self_check"]["client_cpu_s"].get<double>(), 0);
  EXPECT_EQ(res["perf"]["concurrency"]["levels"].size(), 1u);
  EXPECT_EQ(res["summary"]["failed_requests"], 0);

  ProcessResult bad = RunProcess({kBin, "perf", "--profile", "decode", "--io-threads", "65"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--io-threads must be between 0 (automatic) and 64"), std::string::npos)
      << bad.err;
}

TEST(CliTest, RunWithoutEndpointUsesTheBuiltInSimulatorAndSaysSo) {
  TempDir dir;
  fs::path out = dir.path() / "run";
  ProcessResult r = RunProcess({kBin, "run", "--tokens", "16", "--runs", "1", "--levels", "1,2",
                                "--lengths", "8,16", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string first_line = r.out.substr(0, r.out.find('\n'));
  EXPECT_NE(first_line.find("built-in simulator"), std::string::npos) << first_line;
  json res = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(res["target"]["simulated"], true);
  EXPECT_EQ(res["target"]["server"]["kind"], "sim");
  for (const char* p : {"decode", "concurrency", "max_tokens", "ttft"}) {
    EXPECT_TRUE(res["perf"].contains(p)) << p;
  }
  EXPECT_EQ(res["perf"]["concurrency"]["levels"].size(), 2u);
  EXPECT_NE(ReadFile(out / "report.md").find("simulator"), std::string::npos);
}

TEST(CliTest, ServerFaultsAreRecordedAndTheRunGoesOn) {
  SimProcess sim({"--fault-rate", "1", "--fault-kinds", "500"});
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  fs::path out = dir.path() / "run";
  ProcessResult r = RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "decode,ttft",
                                "--tokens", "16", "--runs", "2", "--out", out.string()});
  // Every request failed: the run is `failed` (exit 3), never `complete` with exit 0.
  ASSERT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "RUN FAILED: every request failed (8 of 8) "
            "(partial results below)");
  json res = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(res["status"], "failed");
  EXPECT_EQ(res["perf"]["decode"]["errors"], 2);
  EXPECT_EQ(res["perf"]["decode"]["runs"][0]["status"], "http_error");
  EXPECT_EQ(res["perf"]["decode"]["runs"][0]["http_status"], 500);
  EXPECT_EQ(res["perf"]["ttft"]["prompts"].size(), 3u);  // the run went on
  EXPECT_EQ(res["summary"]["failed_requests"], 2 + 3 * 2);
}

TEST(CliTest, CtrlCWritesWhatWasMeasuredAndExits130) {
  SimProcess sim;
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  fs::path out = dir.path() / "run";
  Child run({kBin, "perf", "--endpoint", sim.url(), "--profile", "decode", "--tokens", "64",
             "--runs", "1000", "--out", out.string()});
  // Wait (bounded) until a few requests have finished, then interrupt.
  for (int i = 0; i < 500; ++i) {
    if (fs::exists(out / "samples.jsonl") && CountLines(ReadFile(out / "samples.jsonl")) >= 4) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  run.Signal(SIGINT);
  int code = run.Wait();
  EXPECT_EQ(code, 130) << run.Stderr();
  json res = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(res["status"], "interrupted");
  auto samples = ReadJsonl(out / "samples.jsonl");
  EXPECT_GE(samples.size(), 4u);
  EXPECT_LT(samples.size(), 1000u);
  // Every measured request in samples.jsonl is in results.json too.
  std::size_t measured = 0;
  for (const auto& s : samples) {
    measured += s.value("warmup", false) ? 0 : 1;
  }
  EXPECT_EQ(res["perf"]["decode"]["runs"].size(), measured);
  EXPECT_TRUE(fs::exists(out / "report.md"));
  // Issue 24 item 26: the request cut short by the stop is interrupted, not failed.
  EXPECT_EQ(res["summary"]["failed_requests"], 0) << res["summary"].dump();
  EXPECT_TRUE(res["summary"].contains("interrupted_requests")) << res["summary"].dump();
  for (const auto& w : res["warnings"]) {
    EXPECT_EQ(w.get<std::string>().find("requests failed"), std::string::npos) << w;
  }
}

TEST(CliTest, CompareTwoRunsPrintsAHeadToHeadTable) {
  TempDir dir;
  std::vector<std::string> runs;
  for (const char* itl : {"2", "6"}) {
    SimProcess sim({"--itl-ms", itl});
    ASSERT_FALSE(sim.url().empty());
    fs::path out = dir.path() / (std::string("itl") + itl);
    ProcessResult r = RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "decode",
                                  "--tokens", "32", "--runs", "2", "--out", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    runs.push_back(out.string());
  }
  ProcessResult r = RunProcess({kBin, "compare", runs[0], runs[1]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| Metric |"), std::string::npos) << r.out;
  // 2 ms vs 6 ms per token: the first run decodes about 3x faster.
  std::smatch m;
  std::string row = r.out.substr(r.out.find("| Decode speed"));
  row = row.substr(0, row.find('\n'));
  ASSERT_TRUE(std::regex_search(row, m, std::regex(R"(itl2\) ([0-9.]+)× faster)"))) << row;
  EXPECT_NEAR(std::stod(m[1]), 3.0, 0.4) << row;
}

TEST(CliTest, SimPrintsItsAddressFirstAndStopsOnSigterm) {
  SimProcess sim;
  ASSERT_EQ(sim.url().rfind("http://127.0.0.1:", 0), 0u) << sim.url();
  EXPECT_EQ(sim.url().substr(sim.url().size() - 3), "/v1");
  sim.child().Signal(SIGTERM);
  EXPECT_EQ(sim.child().Wait(), 0);
}

TEST(CliTest, SimThreadsZeroStartsOneLoopPerCore) {
  SimProcess sim({"--threads", "0"});
  ASSERT_FALSE(sim.url().empty());
  const int port = std::stoi(sim.url().substr(sim.url().rfind(':') + 1));
  const std::string metrics =
      sim::testing::Roundtrip(port, sim::testing::GetRequest("/metrics")).body;
  const auto cores = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1U, 256U));
  int loops = 0;
  for (std::size_t at = 0;
       (at = metrics.find("\nsim_loop_connections_total{", at)) != std::string::npos; ++at) {
    ++loops;
  }
  EXPECT_EQ(loops, cores) << metrics;
  // And it serves: a decode run through whichever loops the connections land on.
  TempDir dir;
  ProcessResult r =
      RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "decode", "--tokens", "8",
                  "--runs", "2", "--out", (dir.path() / "run").string(), "--no-store"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ProcessResult bad = RunProcess({kBin, "sim", "--threads", "300"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("threads must be in [1, 256], got 300"), std::string::npos) << bad.err;
}

TEST(CliTest, SimRejectsInconsistentSpeculativeSettings) {
  ProcessResult r = RunProcess({kBin, "sim", "--spec-tokens", "3", "--spec-accept", "0.9,0.5"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
}

// report.html is written beside report.md, and `servebench report DIR` writes the same page
// again from results.json alone.
TEST(CliTest, ReportRewritesReportHtmlFromResults) {
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r = RunProcess({kBin, "perf", "--profile", "decode", "--tokens", "16", "--runs",
                                "2", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string written = ReadFile(out / "report.html");
  ASSERT_NE(written.find("data-chart=\"decode\""), std::string::npos);
  fs::remove(out / "report.html");
  ProcessResult again = RunProcess({kBin, "report", out.string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(ReadFile(out / "report.html"), written);
  EXPECT_NE(again.err.find("wrote " + (out / "report.html").string()), std::string::npos);
  ProcessResult to_stdout =
      RunProcess({kBin, "report", (out / "results.json").string(), "--out", "-"});
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.err;
  EXPECT_EQ(to_stdout.out, written);
  ProcessResult missing = RunProcess({kBin, "report", (dir.path() / "nothing").string()});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("cannot read"), std::string::npos) << missing.err;
}

// ---- Issue 24 item 26: the console ----------------------------------------------------------

// The line of `text` that starts with `prefix` ("" when none).
std::string LineStarting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) {
      return line;
    }
  }
  return "";
}

// Progress (stderr) and summary (stdout) print a figure the same way: "8,123.4", not "8123.4".
TEST(ConsoleTest, ProgressAndSummaryShareOneNumberFormat) {
  SimProcess sim;
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  ProcessResult r =
      RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "concurrency", "--levels",
                  "16", "--tokens", "64", "--out", (dir.path() / "run").string()},
                 std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string progress = LineStarting(r.err, "  concurrency 16: ");
  const std::string summary = LineStarting(r.out, "throughput by concurrency: ");
  ASSERT_FALSE(progress.empty()) << r.err;
  ASSERT_FALSE(summary.empty()) << r.out;
  std::smatch p, q;
  ASSERT_TRUE(std::regex_search(progress, p, std::regex(R"(([0-9,]+\.[0-9]) tok/s combined)")))
      << progress;
  ASSERT_TRUE(std::regex_search(summary, q, std::regex(R"(16: ([0-9,]+\.[0-9]) tok/s)")))
      << summary;
  EXPECT_EQ(p[1], q[1]);
  if (std::stod(std::regex_replace(p[1].str(), std::regex(","), "")) >= 1000) {
    EXPECT_NE(p[1].str().find(','), std::string::npos) << progress;  // thousands grouped
  }
  // One "target:" line (the summary's); the start names the server.
  EXPECT_EQ(LineStarting(r.err, "target:"), "") << r.err;
  EXPECT_NE(LineStarting(r.err, "server: sim "), "") << r.err;
  EXPECT_NE(LineStarting(r.out, "target: "), "") << r.out;
  // The summary says which time the tokens took.
  EXPECT_NE(LineStarting(r.out, "requests: ").find(" with requests in flight, "), std::string::npos)
      << r.out;
}

// A rate run: the progress line and the summary round the rate the same way ("2.83 req/s", not
// "2.82843 req/s"), and the summary has a line for the rate with goodput.
TEST(ConsoleTest, RateRunRoundsTheRateAlikeAndSummarisesIt) {
  SimProcess sim;
  ASSERT_FALSE(sim.url().empty());
  TempDir dir;
  ProcessResult r = RunProcess({kBin, "perf", "--endpoint", sim.url(), "--profile", "rate",
                                "--rates", "2.828427", "--requests", "4", "--rate-tokens", "4",
                                "--slo", "ttft_ms=5000", "--out", (dir.path() / "run").string()},
                               std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(LineStarting(r.err, "  2.83 req/s: 4/4 ok"), "") << r.err;
  const std::string line = LineStarting(r.out, "rate 2.83 req/s (offered ");
  EXPECT_NE(line, "") << r.out;
  EXPECT_NE(line.find(", goodput "), std::string::npos) << line;
  EXPECT_EQ(r.out.find("2.82843"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("2.82843 req/s:"), std::string::npos) << r.err;
}

// With 2>&1 the summary comes before the store's "stored run" line.
TEST(ConsoleTest, SummaryBeforeTheStoredRunLineInOneStream) {
  TempDir dir;
  const std::string cmd = "'" + kBin + "' perf --profile decode --tokens 8 --runs 1 --out '" +
                          (dir.path() / "run").string() + "' 2>&1";
  ProcessResult r = RunProcess({"/bin/sh", "-c", cmd}, std::chrono::seconds(120),
                               {"SERVEBENCH_STORE=" + (dir.path() / "runs.sqlite").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto summary = r.out.find("\nrequests: ");
  const auto results = r.out.find("\nresults: ");
  const auto stored = r.out.find("\nstored run ");
  ASSERT_NE(summary, std::string::npos) << r.out;
  ASSERT_NE(stored, std::string::npos) << r.out;
  EXPECT_LT(summary, stored) << r.out;
  EXPECT_LT(results, stored) << r.out;
}

}  // namespace
}  // namespace sb
