// The store's HTML pages in a real browser (headless Chromium, networking off): `leaderboard
// --format html` and `history --format html` of a store filled by real runs of the built-in
// simulator load with no console error and no request, look like report.html (its stylesheet:
// the same background and number alignment), right-align their numbers, and history's chart has a
// dot per run at the value `history --format json` gives (issue 24 item 24).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "browser/headless_browser.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sb::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kBin = SB_BINARY;

bool BrowserRequired() {
  const char* v = std::getenv("SERVEBENCH_REQUIRE_BROWSER");
  return v != nullptr && std::string(v) == "1";
}

constexpr const char* kProbe = R"js(JSON.stringify({
  bg: getComputedStyle(document.body).backgroundColor,
  font: getComputedStyle(document.body).fontFamily,
  scripts: document.scripts.length,
  headers: [...document.querySelectorAll('table thead th')].map(t => t.textContent),
  cells: [...document.querySelectorAll('table tbody tr')].map(tr =>
    [...tr.querySelectorAll('td')].map(td => ({text: td.textContent,
      align: getComputedStyle(td).textAlign,
      border: getComputedStyle(td).borderTopStyle}))),
  marks: [...document.querySelectorAll('svg[data-chart="history"] .mark')].map(m =>
    ({series: m.dataset.series, x: Number(m.dataset.x), y: Number(m.dataset.y),
      visible: m.getBoundingClientRect().width > 0}))
}))js";

TEST(StoreHtmlBrowserTest, LeaderboardAndHistoryPagesAreStyledAndChartTheRuns) {
  if (FindChromium().empty()) {
    if (BrowserRequired()) {
      FAIL() << "chromium is not installed (apt-get install chromium)";
    }
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium); CI requires it";
  }
  TempDir dir;
  const std::string db = (dir.path() / "runs.sqlite").string();
  // Two runs of the simulator at two paces, recorded in the store.
  for (const char* itl : {"8", "2"}) {
    ProcessResult r =
        RunProcess({kBin, "perf", "--profile", "decode", "--runs", "3", "--tokens", "32", "--serve",
                    kBin + " sim --port {port} --itl-ms " + itl, "--tag", std::string("itl=") + itl,
                    "--store", db, "--out", (dir.path() / (std::string("run-") + itl)).string()},
                   std::chrono::seconds(120));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  ProcessResult board = RunProcess({kBin, "leaderboard", "--store", db, "--format", "html", "--out",
                                    (dir.path() / "board.html").string()},
                                   std::chrono::seconds(60));
  ASSERT_EQ(board.exit_code, 0) << board.err;
  PageLoad page = LoadPage(dir.path() / "board.html", kProbe, std::chrono::seconds(60), "light");
  ASSERT_TRUE(page.ok) << page.failure;
  EXPECT_TRUE(page.errors.empty()) << ::testing::PrintToString(page.errors);
  EXPECT_TRUE(page.requests.empty()) << ::testing::PrintToString(page.requests);
  json dom = json::parse(page.value.get<std::string>());
  EXPECT_EQ(dom["bg"], "rgb(255, 255, 255)");  // report.html's light background
  EXPECT_EQ(dom["scripts"], 0);
  ASSERT_EQ(dom["cells"].size(), 2u) << dom.dump(1);  // one entry per tag value
  const json& headers = dom["headers"];
  for (const char* empty : {"effective pass rate", "pass rate"}) {
    EXPECT_EQ(std::find(headers.begin(), headers.end(), empty), headers.end()) << empty;
  }
  std::size_t ci = 0, value = 0;
  for (std::size_t i = 0; i < headers.size(); ++i) {
    ci = headers[i] == "95% CI" ? i : ci;
    value = headers[i] == "decode tok/s" ? i : value;
  }
  ASSERT_GT(ci, 0u) << headers.dump();
  ASSERT_EQ(ci, value + 1) << "the interval sits beside the ranked value";
  for (const json& row : dom["cells"]) {
    EXPECT_EQ(row[value]["align"], "right") << row.dump();
    EXPECT_EQ(row[ci]["align"], "right");
    EXPECT_NE(row[ci]["text"], "—") << "three runs give an interval";
    EXPECT_NE(row[1]["align"], "right");  // the model is text
    EXPECT_EQ(row[1]["border"], "solid");
  }

  ProcessResult hist = RunProcess({kBin, "history", "--store", db, "--format", "html", "--out",
                                   (dir.path() / "history.html").string()},
                                  std::chrono::seconds(60));
  ASSERT_EQ(hist.exit_code, 0) << hist.err;
  ProcessResult hist_json =
      RunProcess({kBin, "history", "--store", db, "--format", "json"}, std::chrono::seconds(60));
  ASSERT_EQ(hist_json.exit_code, 0) << hist_json.err;
  const json want = json::parse(hist_json.out);
  page = LoadPage(dir.path() / "history.html", kProbe, std::chrono::seconds(60), "light");
  ASSERT_TRUE(page.ok) << page.failure;
  EXPECT_TRUE(page.errors.empty()) << ::testing::PrintToString(page.errors);
  EXPECT_TRUE(page.requests.empty());
  dom = json::parse(page.value.get<std::string>());
  ASSERT_EQ(dom["marks"].size(), want["runs"].size()) << dom.dump(1);
  for (std::size_t i = 0; i < want["runs"].size(); ++i) {
    EXPECT_EQ(dom["marks"][i]["y"], want["runs"][i]["value"]);
    EXPECT_TRUE(dom["marks"][i]["visible"].get<bool>());
  }
  EXPECT_EQ(dom["cells"].size(), want["runs"].size());
}

}  // namespace
}  // namespace sb::testing
