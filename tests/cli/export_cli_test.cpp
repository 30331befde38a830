// End-to-end tests of `servebench compare` (the bootstrap verdicts, warnings) and `servebench
// export` (CSV, JUnit, JSON lines) on real run directories written by real runs against real
// simulator processes; the exports are read back by python3's csv module, sqlite3 and xmllint.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "support/sim_child.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace sb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Child;
using testing::ProcessResult;
using testing::RunProcess;

const std::string kBin = SB_BINARY;
const std::string kSchema = std::string(SB_SOURCE_DIR) + "/tests/fixtures/junit/junit-ant.xsd";

using ::sb::testing::ReadFile;

// A program on PATH; the bare name when not found, so the failure names it.
std::string Which(const std::string& name) {
  const std::string found = testing::FindOnPath(name);
  return found.empty() ? name : found;
}

void WriteFile(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

using ::sb::testing::Count;

using ::sb::testing::TempDir;

// A `servebench sim` child and its base URL.
class Sim : public testing::SimChild {
 public:
  explicit Sim(const std::vector<std::string>& extra) : SimChild({"--ttft-ms", "10"}, extra) {}
};

// A decode-profile run against `url` into `out` (plus any extra flags).
void Perf(const std::string& url, const fs::path& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {kBin,        "perf",   "--endpoint", url,
                                   "--profile", "decode", "--tokens",   "64",
                                   "--runs",    "7",      "--out",      out.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  ProcessResult r = RunProcess(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

json CompareJson(const std::vector<std::string>& runs) {
  std::vector<std::string> argv = {kBin, "compare", "--format", "json"};
  argv.insert(argv.end(), runs.begin(), runs.end());
  ProcessResult r = RunProcess(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json();
}

json Row(const json& doc, const std::string& key) {
  for (const json& s : doc["sections"]) {
    for (const json& row : s["rows"]) {
      if (row["key"] == key) {
        return row;
      }
    }
  }
  return nullptr;
}

// ---- compare -----------------------------------------------------------------------------------

TEST(CompareCliTest, TwoRunsOfTheSameSimulatorAreWithinNoise) {
  TempDir dir;
  Sim sim({"--itl-ms", "5", "--jitter-ms", "2", "--seed", "3"});
  ASSERT_FALSE(sim.url().empty());
  Perf(sim.url(), dir.path() / "a");
  Perf(sim.url(), dir.path() / "b");
  // No equivalence margin: the row judges the interval alone (the margin: gates_cli_test).
  json doc =
      CompareJson({"--equivalence", "0", (dir.path() / "a").string(), (dir.path() / "b").string()});
  json row = Row(doc, "decode_tok_s");
  ASSERT_FALSE(row.is_null()) << doc.dump(2);
  EXPECT_EQ(row["samples"], json({7, 7}));  // from samples.jsonl
  EXPECT_EQ(row["advantage"]["verdict"], "within_noise") << row.dump(2);
  EXPECT_LE(row["advantage"]["ci95"][0].get<double>(), 1.0);
  EXPECT_GE(row["advantage"]["ci95"][1].get<double>(), 1.0);
  // The Markdown says so, and names the method.
  ProcessResult md = RunProcess({kBin, "compare", "--equivalence", "0", (dir.path() / "a").string(),
                                 (dir.path() / "b").string()});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  std::string line = md.out.substr(md.out.find("| Decode speed (median)"));
  line = line.substr(0, line.find('\n'));
  EXPECT_NE(line.find("≈ within noise (95% CI "), std::string::npos) << line;
  EXPECT_NE(md.out.find("percentile bootstrap"), std::string::npos);
  // Deterministic: the same runs give the same bytes.
  ProcessResult again = RunProcess({kBin, "compare", "--equivalence", "0",
                                    (dir.path() / "a").string(), (dir.path() / "b").string()});
  EXPECT_EQ(again.out, md.out);
}

TEST(CompareCliTest, TwiceTheSpeedIsAboutTwoWithAnIntervalThatExcludesOne) {
  TempDir dir;
  {
    Sim fast({"--itl-ms", "5", "--jitter-ms", "1"});  // 200 tok/s
    ASSERT_FALSE(fast.url().empty());
    Perf(fast.url(), dir.path() / "fast");
  }
  {
    Sim slow({"--itl-ms", "10", "--jitter-ms", "1"});  // 100 tok/s
    ASSERT_FALSE(slow.url().empty());
    Perf(slow.url(), dir.path() / "slow", {"--profile", "ttft"});
  }
  std::vector<std::string> runs = {(dir.path() / "slow").string(), (dir.path() / "fast").string()};
  json doc = CompareJson(runs);
  json row = Row(doc, "decode_tok_s");
  ASSERT_FALSE(row.is_null()) << doc.dump(2);
  EXPECT_EQ(row["advantage"]["verdict"], "better");
  EXPECT_EQ(row["advantage"]["winner_index"], 1);
  double ratio = row["advantage"]["ratio"];
  double lo = row["advantage"]["ci95"][0];
  double hi = row["advantage"]["ci95"][1];
  EXPECT_NEAR(ratio, 2.0, 0.25);
  EXPECT_GT(lo, 1.0);
  EXPECT_LE(lo, ratio);
  EXPECT_GE(hi, ratio);
  std::string text = row["advantage"]["text"];
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(fast\) [12]\.[0-9]{2}× faster \(95% CI )")))
      << text;
  // Different profile sets (decode vs decode + ttft): one warning naming both.
  std::string warnings = doc["warnings"].dump();
  EXPECT_NE(warnings.find("Profile sets differ:"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("decode, ttft"), std::string::npos) << warnings;
  // Only the slow run has TTFT: no verdict on it.
  EXPECT_EQ(Row(doc, "ttft_ms.short")["advantage"]["verdict"], "missing");
}

// ---- export ------------------------------------------------------------------------------------

// One `servebench run` (standard suite and the default speed profiles, embedded simulator),
// shared by the export tests.
class ExportCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    ProcessResult r = RunProcess({kBin, "run", "--out", (dir_->path() / "std").string()},
                                 std::chrono::seconds(240));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static fs::path Run() { return dir_->path() / "std"; }

  static json Results() { return json::parse(ReadFile(Run() / "results.json")); }

  static TempDir* dir_;
};

TempDir* ExportCliTest::dir_ = nullptr;

TEST_F(ExportCliTest, JunitOfTheStandardRunValidatesWithOneCasePerTest) {
  fs::path xml = dir_->path() / "junit.xml";
  ProcessResult r =
      RunProcess({kBin, "export", Run().string(), "--format", "junit", "--out", xml.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ProcessResult lint = RunProcess({Which("xmllint"), "--noout", "--schema", kSchema, xml.string()});
  EXPECT_EQ(lint.exit_code, 0) << lint.err;
  std::string text = ReadFile(xml);
  json results = Results();
  ASSERT_EQ(results["tests"].size(), 33u);
  EXPECT_EQ(Count(text, "<testcase "), 33);
  int fail = 0;
  int error = 0;
  int skipped = 0;
  for (const json& t : results["tests"]) {
    std::string s = t["status"];
    fail += s == "FAIL" || s == "LOOP";
    error += s == "ERROR" || s == "TIMEOUT";
    skipped += s == "UNSUPPORTED" || s == "EMPTY";
  }
  ASSERT_GT(fail, 0);  // the demo scenario shows every status
  ASSERT_GT(error, 0);
  ASSERT_GT(skipped, 0);
  EXPECT_EQ(Count(text, "<failure "), fail);
  EXPECT_EQ(Count(text, "<error "), error);
  EXPECT_EQ(Count(text, "<skipped "), skipped);
  // Each reason is in its element.
  for (const json& t : results["tests"]) {
    if (t["status"] == "FAIL") {
      std::string id = t["id"];
      auto at = text.find("(" + id + ")");
      ASSERT_NE(at, std::string::npos) << id;
      EXPECT_NE(text.find("<failure type=\"FAIL\"", at), std::string::npos);
    }
  }
  // The schema bites: a suite without its <properties> does not validate.
  std::string broken = text;
  broken.erase(broken.find("<properties>"),
               broken.find("</properties>") + 13 - broken.find("<properties>"));
  WriteFile(dir_->path() / "broken.xml", broken);
  EXPECT_NE(RunProcess({Which("xmllint"), "--noout", "--schema", kSchema,
                        (dir_->path() / "broken.xml").string()})
                .exit_code,
            0);
}

TEST_F(ExportCliTest, CsvLoadsInPythonAndSqlite) {
  fs::path csv = dir_->path() / "speed.csv";
  ProcessResult r =
      RunProcess({kBin, "export", Run().string(), "--format", "csv", "--out", csv.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string text = ReadFile(csv);
  int rows = Count(text, "\n") - 1;  // less the header
  ASSERT_GT(rows, 50);
  EXPECT_EQ(text.substr(0, text.find('\n')), "profile,level,level_unit,metric,stat,value,unit");
  // python3's csv module: every row has 7 fields and a numeric value.
  ProcessResult py = RunProcess({Which("python3"), "-c",
                                 "import csv,sys\n"
                                 "rows=list(csv.DictReader(open(sys.argv[1],newline='')))\n"
                                 "assert all(len(r)==7 for r in rows)\n"
                                 "[float(r['value']) for r in rows]\n"
                                 "print(len(rows))\n"
                                 "print(sorted({r['profile'] for r in rows}))\n",
                                 csv.string()});
  ASSERT_EQ(py.exit_code, 0) << py.err;
  EXPECT_EQ(py.out.substr(0, py.out.find('\n')), std::to_string(rows));
  EXPECT_NE(py.out.find("'concurrency'"), std::string::npos) << py.out;
  // sqlite3 .import --csv: the header names the columns, one row per line.
  fs::path db = dir_->path() / "speed.db";
  ProcessResult sq =
      RunProcess({Which("sqlite3"), db.string(), ".import --csv " + csv.string() + " speed",
                  "SELECT count(*) FROM speed;"});
  ASSERT_EQ(sq.exit_code, 0) << sq.err;
  EXPECT_EQ(sq.out, std::to_string(rows) + "\n");
  // One throughput row per concurrency level measured, with results.json's value.
  json results = Results();
  for (const json& level : results["perf"]["concurrency"]["levels"]) {
    std::string c = std::to_string(level["concurrency"].get<int>());
    ProcessResult q = RunProcess(
        {Which("sqlite3"), db.string(),
         "SELECT value FROM speed WHERE profile='concurrency' AND metric='throughput_tok_s' AND "
         "level='" +
             c + "';"});
    ASSERT_EQ(q.exit_code, 0) << q.err;
    EXPECT_NEAR(std::stod(q.out), level["throughput_tok_s"].get<double>(), 1e-6) << c;
  }
}

TEST_F(ExportCliTest, JsonlHasOneRecordPerSampleAndTest) {
  ProcessResult r = RunProcess({kBin, "export", Run().string(), "--format", "jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int measured = 0;
  std::istringstream samples(ReadFile(Run() / "samples.jsonl"));
  for (std::string line; std::getline(samples, line);) {
    json s = json::parse(line);
    measured += !s.value("warmup", false) && !s.value("superseded", false);
  }
  int sample_records = 0;
  int test_records = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    json rec = json::parse(line);
    ASSERT_TRUE(line.starts_with("{\"record\":")) << line.substr(0, 80);
    sample_records += rec["record"] == "sample";
    test_records += rec["record"] == "test";
  }
  EXPECT_EQ(sample_records, measured);
  EXPECT_EQ(test_records, 33);
}

TEST(ExportCliErrorsTest, BadInputIsOneClearLine) {
  TempDir dir;
  ProcessResult missing =
      RunProcess({kBin, "export", (dir.path() / "nope").string(), "--format", "csv"});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_EQ(Count(missing.err, "\n"), 1) << missing.err;
  ProcessResult format = RunProcess({kBin, "export", dir.path().string(), "--format", "xml"});
  EXPECT_EQ(format.exit_code, 2) << format.err;
}

}  // namespace
}  // namespace sb
