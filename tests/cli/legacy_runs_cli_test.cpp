// Run directories written by earlier servebench versions (tests/fixtures/runs/, README there):
// today's binary must still read every one of them - report.md re-rendered from its results.json
// (byte for byte where no change to the report was intended since), report.html, the CSV export,
// `store import` with the figures intact, and `compare` across versions. Each run is copied into
// a temporary directory first: nothing is ever written into the fixtures.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/fixture.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::FixturePath;
using testing::ProcessResult;
using testing::ReadFile;
using testing::RunProcess;
using testing::TempDir;

const std::string kBin = SB_BINARY;

// Every saved run: the commit that wrote it, and what it ran.
const std::vector<std::string> kRuns = {"d1b248f-run", "d1b248f-rate", "f1b7e34-run",
                                        "f1b7e34-rate", "c23d56c-workloads"};

class LegacyRun : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = tmp_.path() / GetParam();
    fs::copy(FixturePath("runs/" + GetParam()), dir_, fs::copy_options::recursive);
    results_ = json::parse(ReadFile(dir_ / "results.json"));
  }

  TempDir tmp_;
  fs::path dir_;
  json results_;
};

TEST_P(LegacyRun, ReportMdRendersAsThatVersionWroteIt) {
  ProcessResult r = RunProcess({kBin, "export", dir_.string(), "--format", "md"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // expected.md where the report changed on purpose since (README), else what the version wrote.
  const fs::path expected =
      fs::exists(dir_ / "expected.md") ? dir_ / "expected.md" : dir_ / "report.md";
  EXPECT_EQ(r.out, ReadFile(expected)) << "compare with " << expected;
}

TEST_P(LegacyRun, ReportHtmlIsWrittenAgain) {
  const fs::path html = tmp_.path() / "report.html";
  ProcessResult r = RunProcess({kBin, "report", dir_.string(), "--out", html.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = ReadFile(html);
  EXPECT_NE(text.find("<html"), std::string::npos);
  EXPECT_NE(text.find(results_["target"].value("model", std::string("?"))), std::string::npos);
  EXPECT_NE(text.find("<svg"), std::string::npos);  // its charts
}

TEST_P(LegacyRun, CsvExportHasItsFigures) {
  ProcessResult r = RunProcess({kBin, "export", dir_.string(), "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("profile,level,level_unit,metric,stat,value,unit\n", 0), 0u);
  const json& perf = results_["perf"];
  for (auto it = perf.begin(); it != perf.end(); ++it) {  // a row from every profile it ran
    std::string name = it.key();  // the results.json key, as users name the profile
    std::replace(name.begin(), name.end(), '_', '-');  // max_tokens, prefix_cache
    EXPECT_NE(r.out.find("\n" + name + ","), std::string::npos) << name;
  }
  if (perf.contains("decode")) {
    const double v = perf["decode"]["decode_tok_s"]["median"].get<double>();
    EXPECT_NE(r.out.find(fmt::format("decode,,,decode_tok_s,median,{},tok/s\n", v)),
              std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Saved, LegacyRun, ::testing::ValuesIn(kRuns), [](const auto& param_info) {
  std::string n = param_info.param;
  for (char& c : n) {
    c = c == '-' ? '_' : c;
  }
  return n;
});

// Every saved run goes into one store; each keeps its headline figure exactly, and history
// shows them side by side.
TEST(LegacyRuns, StoreImportKeepsEveryRunsFigures) {
  TempDir tmp;
  std::vector<std::string> argv = {kBin, "store", "import", "--store",
                                   (tmp.path() / "runs.sqlite").string()};
  for (const std::string& name : kRuns) {
    fs::copy(FixturePath("runs/" + name), tmp.path() / name, fs::copy_options::recursive);
    argv.push_back((tmp.path() / name).string());
  }
  ProcessResult r = RunProcess(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find(fmt::format("{} added, 0 updated, 0 already stored, 0 failed", kRuns.size())),
      std::string::npos)
      << r.out;

  for (const std::string& name : kRuns) {
    const json results = json::parse(ReadFile(tmp.path() / name / "results.json"));
    const json& perf = results["perf"];
    std::string metric;
    double want = 0;
    if (perf.contains("decode")) {
      metric = "decode.decode_tok_s";
      want = perf["decode"]["decode_tok_s"]["median"].get<double>();
    } else if (perf.contains("replay")) {
      metric = "replay.achieved_rate_rps";
      want = perf["replay"]["achieved_rate_rps"].get<double>();
    } else {
      const json& level = perf["rate"]["rates"][0];
      metric = fmt::format("rate.achieved_rate_rps@{}", level["rate_rps"].get<double>());
      want = level["achieved_rate_rps"].get<double>();
    }
    ProcessResult h = RunProcess({kBin, "history", "--store", (tmp.path() / "runs.sqlite").string(),
                                  "--metric", metric, "--format", "json"});
    ASSERT_EQ(h.exit_code, 0) << h.err;
    const json doc = json::parse(h.out);
    bool found = false;
    for (const json& run : doc["runs"]) {
      if (run["started_at"] == results["started_at"]) {
        found = true;
        EXPECT_EQ(run["value"].get<double>(), want) << name << " " << metric;  // exact
      }
    }
    EXPECT_TRUE(found) << name << ": " << h.out;
  }
}

// Two versions' full runs compare: the decode speeds of both, and which is faster.
TEST(LegacyRuns, CompareAcrossVersions) {
  TempDir tmp;
  for (const char* name : {"d1b248f-run", "f1b7e34-run"}) {
    fs::copy(FixturePath(std::string("runs/") + name), tmp.path() / name,
             fs::copy_options::recursive);
  }
  ProcessResult r = RunProcess({kBin, "compare", (tmp.path() / "d1b248f-run").string(),
                                (tmp.path() / "f1b7e34-run").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Decode"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace sb
