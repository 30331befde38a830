// report.html in a real browser (headless Chromium, networking off): it loads with no console
// error and no request leaving the file, the DOM holds the charts results.json calls for, and
// every mark's values equal the results.json fields they plot (docs/reports.md "report.html").
// The negative controls prove the detectors can fail.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "browser/headless_browser.h"
#include "report/format.h"
#include "report/html.h"
#include "support/sim_child.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sb::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using report::ArrayAt;
using report::NumberAt;

const std::string kBin = SB_BINARY;

// What the page's DOM says, collected in the browser.
constexpr const char* kCollect = R"js(JSON.stringify({
  scripts: document.scripts.length,
  external: [...document.querySelectorAll('[src],[href],link,iframe,object,embed')].length,
  bodyCharts: document.body.dataset.charts,
  charts: [...document.querySelectorAll('svg.chart')].map(s => {
    const fig = s.closest('figure');
    const box = s.getBoundingClientRect();
    return {
      id: s.dataset.chart,
      title: (s.querySelector('.chart-title') || {}).textContent || '',
      axes: [...s.querySelectorAll('.axis-title')].map(t => t.textContent),
      width: box.width, height: box.height,
      rows: fig ? fig.querySelectorAll('table.data tbody tr').length : -1,
      marks: [...s.querySelectorAll('.mark')].map(m => ({
        series: m.dataset.series, x: m.dataset.x, y: m.dataset.y,
        title: (m.querySelector(':scope > title') || {}).textContent || '',
        visible: m.getBoundingClientRect().width > 0 })),
      refs: [...s.querySelectorAll('.ref')].map(r => ({name: r.dataset.ref, y: r.dataset.y})),
      lines: Object.fromEntries([...s.querySelectorAll('g.series')].map(g => [g.dataset.series,
        [...g.querySelectorAll('polyline.line')].reduce((n, l) => n + l.points.numberOfItems, 0)]))
    };
  }),
  tests: [...document.querySelectorAll('tr[data-test]')].map(t => ({
    id: t.dataset.test, status: t.dataset.status,
    color: getComputedStyle(t.querySelector('.status')).backgroundColor }))
}))js";

struct Mark {
  std::string series;
  std::string x;  // a number's text is compared as a number, below
  double y = 0;

  bool operator<(const Mark& o) const {
    return std::tie(series, x, y) < std::tie(o.series, o.x, o.y);
  }
};

std::string Key(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

// The marks each chart must hold, computed here from results.json by the definitions of
// docs/reports.md (independently of the page's code).
std::map<std::string, std::vector<Mark>> Expected(const json& r) {
  std::map<std::string, std::vector<Mark>> e;
  auto add = [&](const std::string& chart, const std::string& series, const std::string& x,
                 std::optional<double> y) {
    if (y) {
      e[chart].push_back(Mark{series, x, *y});
    }
  };
  const json& perf = r.value("perf", json::object());
  if (perf.contains("decode")) {
    int i = 0;
    for (const json* run : ArrayAt(perf["decode"], {"runs"})) {
      ++i;
      add("decode", "run", Key(i), NumberAt(*run, {"decode_tok_s"}));
    }
  }
  if (perf.contains("concurrency")) {
    for (const json* l : ArrayAt(perf["concurrency"], {"levels"})) {
      const std::string x = Key(*NumberAt(*l, {"concurrency"}));
      add("concurrency", "combined", x, NumberAt(*l, {"throughput_tok_s"}));
      add("concurrency", "per request (median)", x,
          NumberAt(*l, {"per_stream_decode_tok_s", "median"}));
    }
  }
  if (perf.contains("max_tokens")) {
    for (const json* l : ArrayAt(perf["max_tokens"], {"lengths"})) {
      const std::string x = Key(*NumberAt(*l, {"max_tokens"}));
      add("max-tokens", "tok/s (incl. TTFT)", x, NumberAt(*l, {"tok_s", "median"}));
      add("max-tokens", "decode tok/s", x, NumberAt(*l, {"decode_tok_s", "median"}));
    }
  }
  if (perf.contains("ttft")) {
    for (const json* p : ArrayAt(perf["ttft"], {"prompts"})) {
      add("ttft", "TTFT median", (*p)["name"].get<std::string>(),
          NumberAt(*p, {"ttft_ms", "median"}));
    }
  }
  if (perf.contains("context")) {
    for (const json* row : ArrayAt(perf["context"], {"rows"})) {
      if (row->contains("skipped") || !NumberAt(*row, {"prompt_tokens"})) {
        continue;
      }
      const std::string x = Key(*NumberAt(*row, {"prompt_tokens"}));
      add("context-ttft", "TTFT", x, NumberAt(*row, {"ttft_ms"}));
      add("context-prefill", "prefill", x, NumberAt(*row, {"prefill_tok_s"}));
    }
  }
  if (perf.contains("rate")) {
    auto points = ArrayAt(perf["rate"], {"rates"});
    for (const json* p : ArrayAt(perf["rate"], {"search", "points"})) {
      points.push_back(p);
    }
    for (const json* p : points) {
      const std::string x = Key(*NumberAt(*p, {"offered_rate_rps"}));
      for (const char* pct : {"p50", "p90", "p99"}) {
        add("rate-ttft", pct, x, NumberAt(*p, {"from_scheduled", "ttft_ms", pct}));
        add("rate-itl", pct, x, NumberAt(*p, {"itl_ms", pct}));
        add("rate-tpot", pct, x, NumberAt(*p, {"tpot_ms", pct}));
        add("rate-e2e", pct, x, NumberAt(*p, {"from_scheduled", "e2e_ms", pct}));
      }
      add("rate-goodput", "throughput", x, NumberAt(*p, {"throughput_rps"}));
      add("rate-goodput", "goodput", x, NumberAt(*p, {"goodput", "goodput_rps"}));
    }
  }
  // The frontier (docs/reports.md): a mark per stored point of each sweep, x = tok_s_per_user,
  // y = total_tok_s (total_tok_s_per_gpu when every point has it).
  bool per_gpu = true;
  for (const char* sweep : {"concurrency", "rate"}) {
    for (const json* p : ArrayAt(perf, {sweep, "frontier"})) {
      per_gpu = per_gpu && NumberAt(*p, {"total_tok_s_per_gpu"}).has_value();
    }
  }
  for (const char* sweep : {"concurrency", "rate"}) {
    for (const json* p : ArrayAt(perf, {sweep, "frontier"})) {
      add("frontier", sweep, Key(*NumberAt(*p, {"tok_s_per_user"})),
          NumberAt(*p, {per_gpu ? "total_tok_s_per_gpu" : "total_tok_s"}));
    }
  }
  int pos = 0;
  for (const json* v : ArrayAt(r, {"spec_decode", "per_position"})) {
    add("spec-acceptance", "acceptance", Key(++pos), v->get<double>());
  }
  if (r.contains("spec_decode") && r["spec_decode"].is_object() && perf.contains("concurrency")) {
    for (const json* l : ArrayAt(perf["concurrency"], {"levels"})) {
      add("spec-length", "mean acceptance length", Key(*NumberAt(*l, {"concurrency"})),
          NumberAt(*l, {"spec_decode", "mean_acceptance_length"}));
    }
  }
  std::map<std::pair<std::string, std::string>, int> counts;
  for (const json* t : ArrayAt(r, {"tests"})) {
    ++counts[{report::CategoryName((*t)["category"].get<std::string>()),
              (*t)["status"].get<std::string>()}];
  }
  for (const auto& [k, n] : counts) {
    add("quality", k.second, k.first, n);
  }
  return e;
}

// The resource charts (time series, lines without marks): per chart, the vertices each series
// must have, one per sample of its results.json column that is not null (docs/reports.md
// "Resources over the run"). Output tok/s is derived from the requests: a value at every sample
// but the first (and but one read at the same time as the one before), when some successful
// speed request has its times.
std::map<std::string, std::map<std::string, int>> ExpectedLines(const json& r) {
  std::map<std::string, std::map<std::string, int>> e;
  const json* series = report::Find(r, {"resources", "series"});
  if (series == nullptr || !series->is_object()) {
    return e;
  }
  const std::size_t n = ArrayAt(*series, {"t_s"}).size();
  auto column = [&](const char* chart, const char* name, const char* field) {
    int count = 0;
    for (const json* v : ArrayAt(*series, {field})) {
      count += v->is_number() ? 1 : 0;
    }
    if (count > 0) {
      e[chart][name] = count;
    }
  };
  column("res-gpu-memory", "GPU memory used", "gpu_memory_used_bytes");
  column("res-server-memory", "server RSS", "server_rss_bytes");
  column("res-power", "GPU power", "gpu_power_w");
  column("res-power", "--power-cmd", "power_cmd_w");
  column("res-kv", "KV-cache usage", "kv_cache_usage");
  column("res-requests", "running", "requests_running");
  column("res-requests", "waiting", "requests_waiting");
  bool timed = false;
  auto check = [&](const json* q) {
    timed = timed || (NumberAt(*q, {"sent_at_ms"}) && (*q)["status"] == "ok");
  };
  for (const json* q : ArrayAt(r, {"perf", "decode", "runs"})) {
    check(q);
  }
  for (const auto& [list, field] : {std::pair{"concurrency", "levels"},
                                    {"max_tokens", "lengths"},
                                    {"ttft", "prompts"},
                                    {"rate", "rates"}}) {
    for (const json* l : ArrayAt(r, {"perf", list, field})) {
      for (const json* q : ArrayAt(*l, {"requests"})) {
        check(q);
      }
      for (const json* q : ArrayAt(*l, {"runs"})) {
        check(q);
      }
    }
  }
  for (const json* row : ArrayAt(r, {"perf", "context", "rows"})) {
    if (row->contains("request")) {
      check(&(*row)["request"]);
    }
  }
  if (timed && n >= 2) {
    // A value per interval (t_s[i-1], t_s[i]] that has a length: two samples read at the same
    // (rounded) time have none.
    const auto t = ArrayAt(*series, {"t_s"});
    int intervals = 0;
    for (std::size_t i = 1; i < n; ++i) {
      intervals += t[i]->get<double>() > t[i - 1]->get<double>() ? 1 : 0;
    }
    e["res-tok-s"]["output tok/s"] = intervals;
  }
  return e;
}

// A mark's x as the page wrote it, normalised like Key() when it is a number.
std::string NormaliseX(const std::string& x) {
  char* end = nullptr;
  const double v = std::strtod(x.c_str(), &end);
  return end != x.c_str() && *end == '\0' ? Key(v) : x;
}

// Loads `page` and checks everything a reader's browser would see; returns the DOM summary.
json CheckPage(const fs::path& page, const json& results) {
  PageLoad load = LoadPage(page, kCollect);
  EXPECT_TRUE(load.ok) << load.failure;
  if (!load.ok) {
    return json();
  }
  EXPECT_TRUE(load.errors.empty()) << ::testing::PrintToString(load.errors);
  EXPECT_TRUE(load.requests.empty()) << ::testing::PrintToString(load.requests);
  const json dom = json::parse(load.value.get<std::string>());
  EXPECT_EQ(dom["scripts"], 0) << "the charts must not need JavaScript";
  EXPECT_EQ(dom["external"], 0) << "nothing may reference another resource";

  const auto expected = Expected(results);
  std::set<std::string> want_ids, got_ids;
  for (const auto& [id, marks] : expected) {
    want_ids.insert(id);
  }
  const auto lines = ExpectedLines(results);
  for (const auto& [id, series] : lines) {
    want_ids.insert(id);
  }
  for (const json& c : dom["charts"]) {
    got_ids.insert(c["id"].get<std::string>());
  }
  // rate-goodput etc. appear with their figure even when one series is empty; every chart with
  // data must be there, and no chart may be there without data.
  EXPECT_EQ(got_ids, want_ids);
  EXPECT_EQ(dom["bodyCharts"], std::to_string(dom["charts"].size()));
  for (const json& c : dom["charts"]) {
    const std::string id = c["id"];
    SCOPED_TRACE("chart " + id);
    EXPECT_FALSE(c["title"].get<std::string>().empty());
    EXPECT_GE(c["axes"].size(), 2u);
    for (const json& a : c["axes"]) {
      EXPECT_FALSE(a.get<std::string>().empty());
    }
    EXPECT_GT(c["width"].get<double>(), 100);  // rendered, not collapsed
    EXPECT_GT(c["height"].get<double>(), 50);
    EXPECT_GT(c["rows"].get<int>(), 0) << "a data table beside the chart";
    std::vector<Mark> got;
    for (const json& m : c["marks"]) {
      EXPECT_FALSE(m["title"].get<std::string>().empty()) << "every mark has a hover value";
      EXPECT_TRUE(m["visible"].get<bool>());
      got.push_back(Mark{m["series"], NormaliseX(m["x"]),
                         std::strtod(m["y"].get<std::string>().c_str(), nullptr)});
    }
    if (lines.count(id)) {
      // A time series: every non-null sample is a vertex of its series' line.
      std::map<std::string, int> got_lines;
      for (const auto& [name, vertices] : c["lines"].items()) {
        got_lines[name] = vertices.get<int>();
      }
      EXPECT_EQ(got_lines, lines.at(id));
    }
    std::vector<Mark> want = expected.count(id) ? expected.at(id) : std::vector<Mark>{};
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got.size(), want.size());
    if (got.size() != want.size()) {
      continue;
    }
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].series, want[i].series);
      EXPECT_EQ(got[i].x, want[i].x);
      EXPECT_EQ(got[i].y, want[i].y) << got[i].series << " at " << got[i].x;  // exact
    }
  }
  // The per-test table: one row per test, each status coloured (a background is set).
  EXPECT_EQ(dom["tests"].size(), ArrayAt(results, {"tests"}).size());
  for (const json& t : dom["tests"]) {
    EXPECT_NE(t["color"], "rgba(0, 0, 0, 0)") << t["id"];
  }
  return dom;
}

bool BrowserRequired() {
  const char* v = std::getenv("SERVEBENCH_REQUIRE_BROWSER");
  return v != nullptr && std::string(v) == "1";
}

#define SKIP_WITHOUT_BROWSER()                                                                \
  do {                                                                                        \
    if (FindChromium().empty()) {                                                             \
      if (BrowserRequired()) {                                                                \
        FAIL() << "chromium is not installed (apt-get install chromium)";                     \
      }                                                                                       \
      GTEST_SKIP() << "chromium is not installed (apt-get install chromium); CI requires it"; \
    }                                                                                         \
  } while (0)

// The issue's "done when": `servebench run` (the embedded simulator, the standard suite and
// every default profile) writes a report.html with at least 6 charts matching results.json.
TEST(ReportHtmlBrowserTest, DefaultRunWritesASelfContainedReportWhoseChartsMatchResults) {
  SKIP_WITHOUT_BROWSER();
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r = RunProcess({kBin, "run", "--out", out.string()}, std::chrono::seconds(240));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(out / "report.html"));
  EXPECT_LT(fs::file_size(out / "report.html"), 1u << 20);
  const json results = json::parse(ReadFile(out / "results.json"));
  const json dom = CheckPage(out / "report.html", results);
  ASSERT_FALSE(dom.is_null());
  EXPECT_GE(dom["charts"].size(), 6u);
  EXPECT_EQ(dom["tests"].size(), 33u);
}

// The profiles a default run leaves out: context (log x) and rate (percentiles, SLO lines,
// goodput), with speculative decoding from the simulator's counters.
TEST(ReportHtmlBrowserTest, ContextRateAndSpecDecodingChartsMatchResults) {
  SKIP_WITHOUT_BROWSER();
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r = RunProcess({kBin, "perf", "--profile", "context,rate", "--sizes",
                                "100,1000,4000", "--rates", "4,8", "--requests", "12", "--tokens",
                                "16", "--slo", "ttft_ms=200,tpot_ms=20", "--out", out.string()},
                               std::chrono::seconds(240));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json results = json::parse(ReadFile(out / "results.json"));
  const json dom = CheckPage(out / "report.html", results);
  ASSERT_FALSE(dom.is_null());
  std::set<std::string> ids;
  for (const json& c : dom["charts"]) {
    ids.insert(c["id"].get<std::string>());
  }
  for (const char* id : {"context-ttft", "context-prefill", "rate-ttft", "rate-e2e", "rate-itl",
                         "rate-tpot", "rate-goodput"}) {
    EXPECT_TRUE(ids.count(id)) << id;
  }
  for (const json& c : dom["charts"]) {
    if (c["id"] == "rate-ttft") {
      ASSERT_EQ(c["refs"].size(), 1u);
      EXPECT_EQ(c["refs"][0]["y"], "200");  // the SLO line
    }
    if (c["id"] == "rate-tpot") {
      ASSERT_EQ(c["refs"].size(), 1u);
      EXPECT_EQ(c["refs"][0]["y"], "20");  // the TPOT objective, on the TPOT chart
    }
    if (c["id"] == "rate-itl") {
      EXPECT_EQ(c["refs"].size(), 0u);  // ITL is not TPOT
    }
  }
}

// A run whose server servebench launched (--serve) has the server's process tree sampled: the
// "Resources over the run" charts are in the page, and each line has one vertex per sample of
// results.json "resources.series" that read its value.
TEST(ReportHtmlBrowserTest, ServedRunsResourceChartsHaveAVertexPerNonNullSample) {
  SKIP_WITHOUT_BROWSER();
  TempDir dir;
  const fs::path out = dir.path() / "run";
  ProcessResult r =
      RunProcess({kBin, "perf", "--profile", "decode,concurrency", "--runs", "2", "--levels", "1,2",
                  "--tokens", "64", "--serve", kBin + " sim --port {port} --itl-ms 2",
                  "--sample-period-ms", "50", "--out", out.string()},
                 std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json results = json::parse(ReadFile(out / "results.json"));
  const json dom = CheckPage(out / "report.html", results);
  ASSERT_FALSE(dom.is_null());
  int rss = 0;
  for (const json* v : ArrayAt(results, {"resources", "series", "server_rss_bytes"})) {
    rss += v->is_number() ? 1 : 0;
  }
  ASSERT_GT(rss, 2) << "the launched simulator's RSS was sampled";
  bool found = false;
  for (const json& c : dom["charts"]) {
    if (c["id"] == "res-server-memory") {
      found = true;
      EXPECT_EQ(c["lines"]["server RSS"], rss);
      EXPECT_EQ(c["rows"], ArrayAt(results, {"resources", "series", "t_s"}).size());
    }
  }
  EXPECT_TRUE(found);
}

// compare --format html of a bare run and a speculative-decoding run: the grouped bars hold
// every run's value of each tok/s row of `compare --format json`, and the stacked chart the
// bare value and the speculative run's gain over it.
TEST(ReportHtmlBrowserTest, CompareHtmlChartsMatchTheCompareDocument) {
  SKIP_WITHOUT_BROWSER();
  SimChild spec({"--spec-tokens", "3", "--spec-accept", "0.8,0.6,0.4"});
  ASSERT_FALSE(spec.url().empty());
  TempDir dir;
  const std::vector<std::string> profile = {
      "--profile", "decode,concurrency", "--levels", "1,2", "--tokens", "32", "--runs", "2"};
  auto perf = [&](const std::vector<std::string>& target, const fs::path& out) {
    std::vector<std::string> argv = {kBin, "perf"};
    argv.insert(argv.end(), target.begin(), target.end());
    argv.insert(argv.end(), profile.begin(), profile.end());
    argv.insert(argv.end(), {"--out", out.string()});
    return RunProcess(argv, std::chrono::seconds(120));
  };
  ASSERT_EQ(perf({}, dir.path() / "bare").exit_code, 0);
  ASSERT_EQ(perf({"--endpoint", spec.url()}, dir.path() / "spec").exit_code, 0);
  const fs::path page = dir.path() / "compare.html";
  ProcessResult html =
      RunProcess({kBin, "compare", (dir.path() / "bare").string(), (dir.path() / "spec").string(),
                  "--label", "bare", "--label", "mtp", "--format", "html", "--out", page.string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  ProcessResult js =
      RunProcess({kBin, "compare", (dir.path() / "bare").string(), (dir.path() / "spec").string(),
                  "--label", "bare", "--label", "mtp", "--format", "json"});
  ASSERT_EQ(js.exit_code, 0) << js.err;
  const json doc = json::parse(js.out);

  // Expected marks from the compare document.
  std::map<std::string, std::vector<Mark>> want;
  std::vector<json> rows;
  for (const json& section : doc["sections"]) {
    for (const json& row : section["rows"]) {
      rows.push_back(row);
    }
  }
  for (const json& row : rows) {
    const std::string key = row["key"];
    std::string x;
    std::string panel;  // one panel per kind of figure
    if (key == "decode_tok_s") {
      x = "decode";
      panel = "compare-decode";
    } else if (key.rfind("throughput_tok_s.c", 0) == 0) {
      x = "c" + key.substr(18);
      panel = "compare-concurrency";
    } else if (key == "summary.avg_tok_s") {
      x = "average";
      panel = "compare-decode";
    } else {
      continue;
    }
    const std::vector<std::string> labels = {"bare", "mtp"};
    for (std::size_t i = 0; i < 2; ++i) {
      ASSERT_TRUE(row["values"][i].is_number()) << key;
      want[panel].push_back(Mark{labels[i], x, row["values"][i].get<double>()});
    }
    const double bare = row["values"][0], mtp = row["values"][1];
    want["compare-spec"].push_back(Mark{"bare (bare)", x, bare});
    if (mtp > bare) {
      want["compare-spec"].push_back(Mark{"speculative uplift (mtp)", x, mtp - bare});
    }
  }
  ASSERT_GE(want["compare-decode"].size(), 4u);       // decode, average × 2 runs
  ASSERT_GE(want["compare-concurrency"].size(), 4u);  // c1, c2 × 2 runs

  PageLoad load = LoadPage(page, kCollect);
  ASSERT_TRUE(load.ok) << load.failure;
  EXPECT_TRUE(load.errors.empty()) << ::testing::PrintToString(load.errors);
  EXPECT_TRUE(load.requests.empty()) << ::testing::PrintToString(load.requests);
  const json dom = json::parse(load.value.get<std::string>());
  EXPECT_EQ(dom["scripts"], 0);
  EXPECT_EQ(dom["external"], 0);
  std::set<std::string> ids;
  json frontier;
  for (const json& c : dom["charts"]) {
    ids.insert(c["id"].get<std::string>());
    if (c["id"] == "compare-frontier") {
      frontier = c;  // checked below, against the runs' results.json
      continue;
    }
    std::vector<Mark> got;
    for (const json& m : c["marks"]) {
      EXPECT_FALSE(m["title"].get<std::string>().empty());
      got.push_back(
          Mark{m["series"], m["x"], std::strtod(m["y"].get<std::string>().c_str(), nullptr)});
    }
    std::vector<Mark> expect = want[c["id"].get<std::string>()];
    std::sort(got.begin(), got.end());
    std::sort(expect.begin(), expect.end());
    EXPECT_EQ(got.size(), expect.size()) << c["id"];
    for (std::size_t i = 0; i < std::min(got.size(), expect.size()); ++i) {
      EXPECT_EQ(got[i].series, expect[i].series) << c["id"];
      EXPECT_EQ(got[i].x, expect[i].x) << c["id"];
      EXPECT_EQ(got[i].y, expect[i].y) << c["id"] << " " << got[i].series << " " << got[i].x;
    }
  }
  EXPECT_EQ(ids, (std::set<std::string>{"compare-decode", "compare-concurrency", "compare-spec",
                                        "compare-frontier"}));
  // The frontier overlay (issue 23): both runs' concurrency points in one chart, x = tok/s per
  // user and y = total tok/s as each results.json's perf.concurrency.frontier has them, each
  // labelled with its level, and a Pareto line per run.
  std::vector<Mark> want_frontier, got_frontier;
  for (const auto& [dirname, label] : {std::pair{"bare", "bare"}, {"spec", "mtp"}}) {
    const json results = json::parse(ReadFile(dir.path() / dirname / "results.json"));
    ASSERT_EQ(ArrayAt(results, {"perf", "concurrency", "frontier"}).size(), 2u) << dirname;
    for (const json* p : ArrayAt(results, {"perf", "concurrency", "frontier"})) {
      want_frontier.push_back(Mark{std::string(label) + " · concurrency",
                                   Key(*NumberAt(*p, {"tok_s_per_user"})),
                                   *NumberAt(*p, {"total_tok_s"})});
    }
  }
  ASSERT_TRUE(frontier.is_object()) << "compare --format html has a frontier chart";
  for (const json& m : frontier["marks"]) {
    got_frontier.push_back(Mark{m["series"], NormaliseX(m["x"]),
                                std::strtod(m["y"].get<std::string>().c_str(), nullptr)});
  }
  std::sort(want_frontier.begin(), want_frontier.end());
  std::sort(got_frontier.begin(), got_frontier.end());
  ASSERT_EQ(got_frontier.size(), want_frontier.size());
  for (std::size_t i = 0; i < got_frontier.size(); ++i) {
    EXPECT_EQ(got_frontier[i].series, want_frontier[i].series);
    EXPECT_EQ(got_frontier[i].x, want_frontier[i].x);
    EXPECT_EQ(got_frontier[i].y, want_frontier[i].y);
  }
}

// Dark mode follows prefers-color-scheme: the same page (from a data fixture) gets a dark
// background and light text, and the marks change colour with it.
TEST(ReportHtmlBrowserTest, DarkModeFollowsTheReadersColourScheme) {
  SKIP_WITHOUT_BROWSER();
  TempDir dir;
  const json results =
      json::parse(ReadFile(fs::path(SB_SOURCE_DIR) / "tests/report/data/perf_sim.json"));
  std::ofstream(dir.path() / "report.html") << report::RenderHtml(results);
  const std::string probe = R"js(JSON.stringify({
    bg: getComputedStyle(document.body).backgroundColor,
    fg: getComputedStyle(document.body).color,
    mark: getComputedStyle(document.querySelector('svg.chart .mark')).fill }))js";
  PageLoad light = LoadPage(dir.path() / "report.html", probe, std::chrono::seconds(60), "light");
  PageLoad dark = LoadPage(dir.path() / "report.html", probe, std::chrono::seconds(60), "dark");
  ASSERT_TRUE(light.ok) << light.failure;
  ASSERT_TRUE(dark.ok) << dark.failure;
  EXPECT_TRUE(light.errors.empty() && dark.errors.empty());
  const json l = json::parse(light.value.get<std::string>());
  const json d = json::parse(dark.value.get<std::string>());
  EXPECT_EQ(l["bg"], "rgb(255, 255, 255)");
  EXPECT_EQ(d["bg"], "rgb(20, 23, 29)");
  EXPECT_NE(l["fg"], d["fg"]);
  EXPECT_NE(l["mark"], d["mark"]);
}

// Issue 24 item 12: the decode chart's median label never covers a dot, measured on the boxes
// the browser lays out (getBBox of the label's text and of every circle). Runs at and just above
// the median at the right end sit where the label used to be drawn.
TEST(ReportHtmlBrowserTest, TheDecodeMedianLabelCoversNoDot) {
  SKIP_WITHOUT_BROWSER();
  TempDir dir;
  json results = json::parse(R"({"schema": "servebench.results/1", "status": "complete",
    "target": {"model": "m"}, "perf": {"decode": {"tokens": 256, "runs": [
      {"status": "ok", "decode_tok_s": 100.2}, {"status": "ok", "decode_tok_s": 100.6},
      {"status": "ok", "decode_tok_s": 100.4}, {"status": "ok", "decode_tok_s": 101.5},
      {"status": "ok", "decode_tok_s": 100.4}, {"status": "ok", "decode_tok_s": 102.0}],
      "decode_tok_s": {"n": 6, "median": 100.4}}}})");
  std::ofstream(dir.path() / "report.html") << report::RenderHtml(results);
  const std::string probe = R"js(JSON.stringify((() => {
    const svg = document.querySelector('svg[data-chart="decode"]');
    const box = e => { const b = e.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height]; };
    return {label: box(svg.querySelector('g.ref text')),
            text: svg.querySelector('g.ref text').textContent,
            marks: [...svg.querySelectorAll('circle.mark')].map(box)};
  })()))js";
  PageLoad load = LoadPage(dir.path() / "report.html", probe);
  ASSERT_TRUE(load.ok) << load.failure;
  EXPECT_TRUE(load.errors.empty()) << ::testing::PrintToString(load.errors);
  const json got = json::parse(load.value.get<std::string>());
  EXPECT_EQ(got["text"], "median 100.4 tok/s");
  ASSERT_EQ(got["marks"].size(), 6u);
  const json& l = got["label"];
  ASSERT_GT(l[2].get<double>() - l[0].get<double>(), 50);  // the text was laid out
  for (const json& m : got["marks"]) {
    // The circle's box, widened by its 1px outline.
    const bool overlap = m[2].get<double>() + 0.5 > l[0].get<double>() &&
                         m[0].get<double>() - 0.5 < l[2].get<double>() &&
                         m[3].get<double>() + 0.5 > l[1].get<double>() &&
                         m[1].get<double>() - 0.5 < l[3].get<double>();
    EXPECT_FALSE(overlap) << "label " << l.dump() << " covers the dot " << m.dump();
  }
}

// Negative controls: a console error, a request to the network and a request for a local file
// must each be caught, or the clean results above would prove nothing.
TEST(ReportHtmlBrowserTest, TheDetectorsCatchConsoleErrorsAndRequestsLeavingTheFile) {
  SKIP_WITHOUT_BROWSER();
  TempDir dir;
  std::ofstream(dir.path() / "side.css") << "p { color: red; }\n";
  std::ofstream(dir.path() / "bad.html")
      << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>x</title>"
         "<link rel=\"stylesheet\" href=\"side.css\"></head><body><p>x</p>"
         "<img src=\"https://cdn.example.com/logo.png\" alt=\"\">"
         "<script>console.error('deliberate')</script></body></html>\n";
  PageLoad load = LoadPage(dir.path() / "bad.html", "document.title");
  ASSERT_TRUE(load.ok) << load.failure;
  EXPECT_EQ(load.value, "x");
  auto has = [](const std::vector<std::string>& v, const std::string& part) {
    return std::any_of(v.begin(), v.end(),
                       [&](const std::string& s) { return s.find(part) != std::string::npos; });
  };
  EXPECT_TRUE(has(load.errors, "deliberate")) << ::testing::PrintToString(load.errors);
  EXPECT_TRUE(has(load.requests, "https://cdn.example.com/logo.png"))
      << ::testing::PrintToString(load.requests);
  EXPECT_TRUE(has(load.requests, "side.css")) << ::testing::PrintToString(load.requests);
  // The network request failed: networking is off.
  EXPECT_TRUE(has(load.errors, "Failed to load resource")) << ::testing::PrintToString(load.errors);
}

}  // namespace
}  // namespace sb::testing
