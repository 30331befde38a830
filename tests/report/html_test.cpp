#include "report/html.h"

#include <charconv>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/compare_charts.h"
#include "report/failed_requests.h"
#include "report/golden.h"
#include "support/text.h"

namespace sb::report {
namespace {

using nlohmann::json;
using testing::LoadData;

using ::sb::testing::Contains;

using ::sb::testing::Count;

// Every way an HTML page can pull in something outside itself, looked for in the tags (text
// such as an escaped "&lt;img src=x&gt;" is harmless).
void ExpectSelfContained(const std::string& html) {
  for (const char* ref :
       {"<script", "<link", "<iframe", "<object", "<embed", "<img", "<image", "@import", "url("}) {
    EXPECT_FALSE(Contains(html, ref)) << ref;
  }
  const std::regex tag("<[^>]*>");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tag); it != std::sregex_iterator();
       ++it) {
    const std::string t = it->str();
    for (const char* attr : {" src=", " href=", "xlink:href=", " srcset=", " poster=", " data="}) {
      EXPECT_FALSE(Contains(t, attr)) << t;
    }
  }
}

class HtmlReport : public ::testing::TestWithParam<std::string> {};

TEST_P(HtmlReport, IsOneSelfContainedPage) {
  const std::string html = RenderHtml(LoadData(GetParam() + ".json"));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_TRUE(Contains(html, "</html>\n"));
  EXPECT_TRUE(Contains(html, "Content-Security-Policy\" content=\"default-src 'none'"));
  EXPECT_TRUE(Contains(html, "prefers-color-scheme: dark"));
  EXPECT_TRUE(Contains(html, "@media print"));
  ExpectSelfContained(html);
  EXPECT_EQ(html, RenderHtml(LoadData(GetParam() + ".json")));  // deterministic
}

INSTANTIATE_TEST_SUITE_P(Runs, HtmlReport,
                         ::testing::Values("perf_sim", "suite_statuses", "interrupted",
                                           "failed_requests", "h2h_a"));

TEST(HtmlReportTest, ChartsAppearOnlyWithTheirData) {
  const std::string html = RenderHtml(LoadData("perf_sim.json"));
  for (const char* id :
       {"decode", "concurrency", "frontier", "max-tokens", "ttft", "spec-acceptance"}) {
    EXPECT_TRUE(Contains(html, std::string("data-chart=\"") + id + "\"")) << id;
  }
  // perf_sim has no tests, no context and no rate profile.
  for (const char* id : {"quality", "context-ttft", "rate-ttft"}) {
    EXPECT_FALSE(Contains(html, std::string("data-chart=\"") + id + "\"")) << id;
  }
  EXPECT_TRUE(Contains(html, "<body data-charts=\"6\">"));
  // Each chart has a data table beside it in the same figure.
  EXPECT_EQ(Count(html, "<svg "), Count(html, "<table class=\"data\">"));
}

TEST(HtmlReportTest, DecodeDotsAreTheRunsAndTheMedianIsMarked) {
  const json doc = LoadData("perf_sim.json");
  const std::string html = RenderHtml(doc);
  const auto& runs = doc["perf"]["decode"]["runs"];
  int i = 0;
  for (const auto& r : runs) {
    ++i;
    std::ostringstream want;
    want << "data-series=\"run\" data-x=\"" << i << "\" data-y=\""
         << r["decode_tok_s"].get<double>() << "\"";
    EXPECT_TRUE(Contains(html, want.str())) << want.str();
  }
  std::ostringstream median;
  median << "data-ref=\"median\" data-y=\""
         << doc["perf"]["decode"]["decode_tok_s"]["median"].get<double>() << "\"";
  EXPECT_TRUE(Contains(html, median.str())) << median.str();
}

TEST(HtmlReportTest, AFailedRunHasNoDotAndIsCounted) {
  json doc = LoadData("perf_sim.json");
  doc["perf"]["decode"]["runs"][1]["decode_tok_s"] = nullptr;
  doc["perf"]["decode"]["runs"][1]["status"] = "http_error";
  const std::string html = RenderHtml(doc);
  EXPECT_FALSE(Contains(html, "data-series=\"run\" data-x=\"2\""));
  EXPECT_TRUE(Contains(html, "data-series=\"run\" data-x=\"3\""));
  EXPECT_TRUE(Contains(html, "1 of 3 runs failed and have no dot."));
}

TEST(HtmlReportTest, QualityIsStackedByStatusAndEveryTestIsListedWithItsColour) {
  const json doc = LoadData("suite_statuses.json");
  const std::string html = RenderHtml(doc);
  EXPECT_TRUE(Contains(html, "data-chart=\"quality\""));
  EXPECT_EQ(Count(html, "<tr data-test="), static_cast<int>(doc["tests"].size()));
  for (const auto& t : doc["tests"]) {
    const std::string st = t["status"];
    std::string cls = "st-";
    for (char c : st) {
      cls += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    EXPECT_TRUE(Contains(html, "<span class=\"status " + cls + "\">" + st + "</span>")) << st;
  }
  // One segment per (category, status) present; the FAIL segment of image is 1 test.
  EXPECT_TRUE(Contains(html, "data-series=\"FAIL\" data-x=\"Image\" data-y=\"1\""));
  EXPECT_FALSE(Contains(html, "data-series=\"LOOP\" data-x=\"Image\""));
}

TEST(HtmlReportTest, TextFromTheServerIsEscaped) {
  json doc = LoadData("suite_statuses.json");
  doc["tests"][0]["name"] = "<script>alert(1)</script>";
  doc["tests"][0]["reason"] = "<img src=x onerror=alert(2)>";
  doc["warnings"] = json::array({"<b>bold</b> & \"quoted\""});
  doc["tests"][0]["category"] = "</svg><script>";
  const std::string html = RenderHtml(doc);
  EXPECT_FALSE(Contains(html, "<script>"));
  EXPECT_FALSE(Contains(html, "<img"));
  EXPECT_TRUE(Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_TRUE(Contains(html, "&lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot;"));
  ExpectSelfContained(html);
}

TEST(HtmlReportTest, AnIncompleteRunSaysSoFirst) {
  const std::string html = RenderHtml(LoadData("interrupted.json"));
  EXPECT_TRUE(Contains(html, "data-status=\"interrupted\">Interrupted: partial results."));
}

TEST(HtmlReportTest, ContextAndRateChartsUseLogSizeAndTheSloLine) {
  json doc = LoadData("perf_sim.json");
  doc["perf"]["context"] = json::parse(R"({"rows": [
      {"size": 100, "prompt_tokens": 104, "ttft_ms": 30.5, "prefill_tok_s": 3409.8},
      {"size": 10000, "prompt_tokens": 10012, "ttft_ms": 61.25, "prefill_tok_s": 163461.2},
      {"size": 128000, "skipped": "over the server's max model length"}]})");
  doc["perf"]["rate"] = json::parse(R"({"slo": {"ttft_ms": 500}, "rates": [
      {"offered_rate_rps": 3.96, "throughput_rps": 3.87,
       "from_scheduled": {"ttft_ms": {"p50": 40.1, "p90": 55.2, "p99": 90.7}},
       "itl_ms": {"p50": 5.0, "p90": 5.5, "p99": 7.25},
       "goodput": {"goodput_rps": 3.79}}]})");
  const std::string html = RenderHtml(doc);
  EXPECT_TRUE(Contains(html, "data-series=\"TTFT\" data-x=\"10012\" data-y=\"61.25\""));
  EXPECT_TRUE(Contains(html, "data-series=\"prefill\" data-x=\"104\" data-y=\"3409.8\""));
  EXPECT_TRUE(Contains(html, "1 size(s) over the server's max model length were skipped."));
  EXPECT_TRUE(Contains(html, ">10k</text>"));  // a log axis' compact tick
  EXPECT_TRUE(Contains(html, "data-series=\"p99\" data-x=\"3.96\" data-y=\"90.7\""));
  EXPECT_TRUE(Contains(html, "data-series=\"p99\" data-x=\"3.96\" data-y=\"7.25\""));
  EXPECT_TRUE(Contains(html, "data-ref=\"slo\" data-y=\"500\""));
  EXPECT_TRUE(Contains(html, "data-series=\"goodput\" data-x=\"3.96\" data-y=\"3.79\""));
  EXPECT_TRUE(Contains(html, "TTFT objective 500 ms"));
  // Goodput was plotted, so the caption says what it is (it said "No --slo was given").
  EXPECT_TRUE(Contains(html, "Goodput: requests per second that met every objective."));
  EXPECT_FALSE(Contains(html, "No --slo was given"));
}

// A TPOT objective was drawn on the ITL chart (a per-gap figure), and an E2E objective nowhere.
TEST(HtmlReportTest, EachObjectiveIsDrawnOnTheChartOfItsOwnFigure) {
  json doc = LoadData("perf_sim.json");
  doc["perf"]["rate"] = json::parse(R"({"slo": {"tpot_ms": 20, "e2e_ms": 900}, "rates": [
      {"offered_rate_rps": 4, "throughput_rps": 3.9,
       "from_scheduled": {"ttft_ms": {"p50": 40.1, "p90": 55.2, "p99": 90.7},
                          "e2e_ms": {"p50": 400, "p90": 500, "p99": 800}},
       "itl_ms": {"p50": 5.0, "p90": 5.5, "p99": 7.25},
       "tpot_ms": {"p50": 6.5, "p90": 7.5, "p99": 9.5}}]})");
  const std::string html = RenderHtml(doc);
  auto chart = [&](const std::string& id) {
    auto at = html.find("data-chart=\"" + id + "\"");
    EXPECT_NE(at, std::string::npos) << id;
    auto end = html.find("</svg>", at);
    return at == std::string::npos ? std::string() : html.substr(at, end - at);
  };
  const std::string itl = chart("rate-itl");
  const std::string tpot = chart("rate-tpot");
  const std::string e2e = chart("rate-e2e");
  EXPECT_FALSE(Contains(itl, "data-ref=\"slo\"")) << itl;
  EXPECT_TRUE(Contains(tpot, "data-ref=\"slo\" data-y=\"20\"")) << tpot;
  EXPECT_TRUE(Contains(tpot, "data-series=\"p99\" data-x=\"4\" data-y=\"9.5\"")) << tpot;
  EXPECT_TRUE(Contains(e2e, "data-ref=\"slo\" data-y=\"900\"")) << e2e;
  EXPECT_TRUE(Contains(e2e, "data-series=\"p50\" data-x=\"4\" data-y=\"400\"")) << e2e;
  EXPECT_TRUE(Contains(html, "No --slo was given: no goodput."));  // no goodput in this doc
}

// Short rate points offer above their nominal rate (6.01 req/s for 5): the page said only the
// achieved rate (the x axis), never which rate was asked for.
TEST(HtmlReportTest, EachRatePointShowsTheRateAskedBesideTheRateOffered) {
  json doc = LoadData("perf_sim.json");
  doc["perf"]["rate"] = json::parse(R"({"rates": [
      {"rate_rps": 20, "offered_rate_rps": 24.031, "throughput_rps": 23.1},
      {"rate_rps": 5, "offered_rate_rps": 6.0139, "throughput_rps": 5.84}]})");
  const std::string html = RenderHtml(doc);
  const auto five =
      html.find("data-nominal-rps=\"5\" data-offered-rps=\"6.0139\">5.00 &rarr; 6.01<");
  const auto twenty =
      html.find("data-nominal-rps=\"20\" data-offered-rps=\"24.031\">20.00 &rarr; 24.03<");
  ASSERT_NE(five, std::string::npos) << html;
  ASSERT_NE(twenty, std::string::npos);
  EXPECT_LT(five, twenty);  // in the order of the x axis
  EXPECT_TRUE(Contains(html, "Offered rate on the x axes is the rate each point achieved"));
}

// report.md said which rate the search found; report.html did not.
TEST(HtmlReportTest, TheRateSearchsAnswerIsInThePage) {
  json doc = LoadData("perf_sim.json");
  doc["perf"]["rate"] = json::parse(R"({"slo": {"ttft_ms": 500}, "rates": [],
      "search": {"result": "found", "best_rps": 11.3, "points": [
        {"offered_rate_rps": 11.3, "throughput_rps": 11.1,
         "from_scheduled": {"ttft_ms": {"p50": 40.1, "p90": 55.2, "p99": 90.7}}}]}})");
  const std::string html = RenderHtml(doc);
  EXPECT_TRUE(Contains(html, "Highest rate meeting the SLOs: <strong>11.3</strong> req/s (found)."))
      << html.substr(0, 200);
}

// The first screen says the run's key figures (the hand-written reports' "At a glance").
TEST(HtmlReportTest, TheFirstScreenHasTheKeyFiguresAsCards) {
  const std::string html = RenderHtml(LoadData("perf_sim.json"));
  const auto glance = html.find("<section class=\"glance\"");
  ASSERT_NE(glance, std::string::npos);
  EXPECT_LT(glance, html.find("<h2>Results summary</h2>"));  // before any table
  EXPECT_TRUE(Contains(html,
                       "data-key=\"decode\"><span class=\"label\">Decode speed</span><span "
                       "class=\"value\">198.7 tok/s</span>"));
  EXPECT_TRUE(Contains(html,
                       "data-key=\"ttft\"><span class=\"label\">TTFT</span><span "
                       "class=\"value\">41 ms</span>"));
  EXPECT_TRUE(Contains(html,
                       "<span class=\"value\">1,119.8 tok/s</span><span "
                       "class=\"detail\">8 streams</span>"));
  EXPECT_FALSE(Contains(html, "data-key=\"pass_rate\""));  // no tests in this run
  json suite = LoadData("suite_statuses.json");
  EXPECT_TRUE(Contains(RenderHtml(suite), "data-key=\"pass_rate\""));
}

// A warning pointed to an Errors section that only report.md had.
TEST(HtmlReportTest, FailedRequestsAreListedUnderErrors) {
  const json doc = LoadData("failed_requests.json");
  const std::string html = RenderHtml(doc);
  ASSERT_TRUE(Contains(html, "<h2 id=\"errors\">Errors</h2>"));
  std::size_t rows = 0;
  for (auto at = html.find("<tr data-profile="); at != std::string::npos;
       at = html.find("<tr data-profile=", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, FailedRequests(doc).size());
  EXPECT_GT(rows, 0u);
  EXPECT_FALSE(Contains(RenderHtml(LoadData("perf_sim.json")), "<h2 id=\"errors\">"));
}

TEST(ReportHtmlTest, LabelAndTagsUnderTheTitleEscaped) {
  json doc = json::parse(R"({"target": {"model": "m"}, "status": "complete",
      "labels": {"label": "mtp <3>", "tags": {"hw": "spark", "spec": "3"}}})");
  const std::string html = RenderHtml(doc);
  EXPECT_TRUE(Contains(html,
                       "Label: <strong>mtp &lt;3&gt;</strong> · <code>hw=spark</code> · "
                       "<code>spec=3</code>"))
      << html;
  doc["labels"] = nullptr;
  EXPECT_FALSE(Contains(RenderHtml(doc), "Label:"));
}

json CompareDoc() {
  std::ifstream in(std::string(SB_SOURCE_DIR) + "/tests/report/golden/compare_h2h.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

TEST(CompareChartsTest, GroupedBarsHoldEveryRunsValuePerMetric) {
  const json doc = CompareDoc();
  int charts = 0;
  const std::string html = CompareCharts(doc, charts);
  // decode, concurrency, max-tokens (a panel each: "Speed per metric" put them on one axis), TTFT,
  // score; both runs measured spec decoding: no uplift chart.
  EXPECT_EQ(charts, 5);
  EXPECT_FALSE(Contains(html, "data-chart=\"compare-speed\""));
  for (const char* id : {"compare-decode", "compare-concurrency", "compare-max-tokens"}) {
    EXPECT_TRUE(Contains(html, std::string("data-chart=\"") + id + "\"")) << id;
  }
  EXPECT_TRUE(Contains(html, "data-chart=\"compare-ttft\""));
  EXPECT_TRUE(Contains(html, "data-chart=\"compare-score\""));
  EXPECT_FALSE(Contains(html, "data-chart=\"compare-spec\""));
  EXPECT_TRUE(Contains(html, "data-series=\"35B-A3B-NVFP4\" data-x=\"decode\" data-y=\"92.8\""));
  EXPECT_TRUE(Contains(html, "data-series=\"27B-NVFP4\" data-x=\"c8\" data-y=\"154.1\""));
  EXPECT_TRUE(Contains(html, "data-series=\"27B-NVFP4\" data-x=\"len 256\" data-y=\"25.5173\""));
  EXPECT_TRUE(Contains(html, "data-series=\"27B-NVFP4\" data-x=\"long\" data-y=\"234\""));
  EXPECT_TRUE(Contains(html, "data-series=\"27B-NVFP4\" data-x=\"Reasoning\""));
  ExpectSelfContained(html);
}

TEST(CompareChartsTest, BareAndSpeculativeUpliftWhenOnlyOneRunSpeculates) {
  json doc = CompareDoc();
  for (auto& section : doc["sections"]) {
    for (auto& row : section["rows"]) {
      if (row["key"].get<std::string>().rfind("spec_decode.", 0) == 0) {
        row["values"][1] = nullptr;  // the second run (27B) is the bare one
      }
    }
  }
  int charts = 0;
  const std::string html = CompareCharts(doc, charts);
  EXPECT_EQ(charts, 6);
  // decode: bare 23.6, speculative 92.8: the uplift segment is 92.8 - 23.6.
  char shortest[64];
  const auto end = std::to_chars(shortest, shortest + sizeof shortest, 92.8 - 23.6).ptr;
  const std::string uplift =
      "data-series=\"speculative uplift (35B-A3B-NVFP4)\" data-x=\"decode\" data-y=\"" +
      std::string(shortest, end) + "\"";
  EXPECT_TRUE(Contains(html, "data-series=\"bare (27B-NVFP4)\" data-x=\"decode\" data-y=\"23.6\""));
  EXPECT_TRUE(Contains(html, uplift)) << uplift;
  // Two different models: the chart says the gap is not only speculative decoding.
  EXPECT_TRUE(Contains(html, "Caution: the two runs differ in more than speculative decoding"))
      << html;
  for (auto& run : doc["runs"]) {
    run["model"] = "same";
    run["server_kind"] = "vllm";
    run["server_version"] = "0.11.0";
    run["endpoint"] = "http://h:8000/v1";
  }
  EXPECT_FALSE(Contains(CompareCharts(doc, charts), "Caution:"));
}

// Two rate runs got no rate chart, and a caption about decode, cN and len.
TEST(CompareChartsTest, RateRunsGetRateChartsAndNoOtherCaption) {
  json doc = json::parse(R"({"runs": [{"label": "a"}, {"label": "b"}], "sections": [
      {"id": "rate", "rows": [
        {"key": "rate.2.00.output_tok_s", "values": [120.5, 98.0]},
        {"key": "rate.4.00.output_tok_s", "values": [230.0, 150.25]},
        {"key": "rate.2.00.ttft_ms.p99", "values": [90.0, 140.0]}]}]})");
  int charts = 0;
  const std::string html = CompareCharts(doc, charts);
  EXPECT_EQ(charts, 2);
  EXPECT_TRUE(Contains(html, "data-series=\"b\" data-x=\"4.00 req/s\" data-y=\"150.25\""));
  EXPECT_TRUE(Contains(html, "data-chart=\"compare-rate-ttft\""));
  EXPECT_TRUE(Contains(html, "data-series=\"a\" data-x=\"2.00 req/s\" data-y=\"90\""));
  EXPECT_FALSE(Contains(html, "cN:"));
}

// A profile compared from its table entry's metrics gets a chart of its first metric per place;
// its other metrics stay in the tables.
TEST(CompareChartsTest, AProfileComparedFromItsRowsGetsItsFirstMetricPerPlace) {
  json doc = json::parse(R"({"runs": [{"label": "a"}, {"label": "b"}], "sections": [
      {"id": "sessions", "rows": [
        {"key": "sessions.1.ttft_ms", "metric": "TTFT, turn 1", "values": [200, 210]},
        {"key": "sessions.2.ttft_ms", "metric": "TTFT, turn 2", "values": [40, 160.5]},
        {"key": "sessions.2.tpot_ms", "metric": "TPOT, turn 2", "values": [10, 11]}]}]})");
  int charts = 0;
  const std::string html = CompareCharts(doc, charts);
  EXPECT_EQ(charts, 1);
  EXPECT_TRUE(Contains(html, "data-chart=\"compare-sessions\"")) << html;
  EXPECT_TRUE(Contains(html, "TTFT per turn and run"));
  EXPECT_TRUE(Contains(html, "TTFT at each turn; lower is better."));
  EXPECT_TRUE(Contains(html, "data-series=\"b\" data-x=\"turn 2\" data-y=\"160.5\""));
  EXPECT_FALSE(Contains(html, "data-y=\"11\"")) << "TPOT is not the first metric";
  ExpectSelfContained(html);
}

TEST(CompareChartsTest, NothingToDrawGivesNoSection) {
  int charts = 0;
  EXPECT_EQ(CompareCharts(json::parse(R"({"runs": [{"label": "a"}], "sections": [{"rows": []}]})"),
                          charts),
            "");
  EXPECT_EQ(charts, 0);
}

}  // namespace
}  // namespace sb::report
