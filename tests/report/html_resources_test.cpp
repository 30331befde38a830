// report.html's "Resources over the run" (src/report/html_resources.cpp): one vertex per sample
// that read a value, a gap (a new polyline) for each null, no chart for a column nobody
// measured, and the figures per row with "—" where a row lacks one.
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/golden.h"
#include "report/html.h"
#include "support/text.h"

namespace sb::report {
namespace {

using nlohmann::json;
using testing::LoadData;

using ::sb::testing::Contains;

// The <figure> of chart `id`, or "" when the page has none.
std::string FigureOf(const std::string& html, const std::string& id) {
  const auto start = html.find("<figure class=\"figure\" id=\"chart-" + id + "\"");
  if (start == std::string::npos) {
    return "";
  }
  return html.substr(start, html.find("</figure>", start) - start);
}

// Vertices of each polyline of a figure, in order.
std::vector<int> Polylines(const std::string& figure) {
  std::vector<int> out;
  const std::regex line(R"re(<polyline class="line" points="([^"]*)")re");
  for (auto it = std::sregex_iterator(figure.begin(), figure.end(), line);
       it != std::sregex_iterator(); ++it) {
    const std::string pts = (*it)[1];
    out.push_back(static_cast<int>(std::count(pts.begin(), pts.end(), ',')));
  }
  return out;
}

// perf_sim.json with a sampled run: five samples, server RSS and KV usage with gaps, no GPU.
json WithResources() {
  json doc = LoadData("perf_sim.json");
  doc["resources"] = json::parse(R"({
    "period_ms": 250, "samples": 5,
    "sources": [
      {"name": "process", "available": true, "detail": "the server's process tree", "reads": 5,
       "failed_reads": 2, "last_error": "no such process"},
      {"name": "prometheus", "available": true, "detail": "GET /metrics: kv_cache_usage",
       "reads": 5, "failed_reads": 0},
      {"name": "nvml", "available": false, "reason": "libnvidia-ml.so.1 not found"},
      {"name": "power-cmd", "available": false, "reason": "no --power-cmd given"}],
    "run": {"window_s": 1.0, "samples": 5, "output_tokens": 256,
            "memory_bytes": {"peak": 31457280, "mean": 20971520, "samples": 3},
            "memory_source": "server_rss",
            "server_rss_bytes": {"peak": 31457280, "mean": 20971520, "samples": 3},
            "kv_cache_usage": {"peak": 0.5, "mean": 0.3, "samples": 4},
            "power_w": null, "energy_j": null, "j_per_token": null, "tokens_per_j": null},
    "series": {"t_s": [0.0, 0.25, 0.5, 0.75, 1.0],
               "server_rss_bytes": [10485760, null, 20971520, 31457280, null],
               "kv_cache_usage": [0.1, 0.2, null, 0.4, 0.5],
               "requests_running": [null, null, null, null, null]}})");
  doc["perf"]["decode"]["runs"][0]["resources"] = json::parse(R"({
    "window_s": 0.5, "samples": 2, "output_tokens": 256,
    "memory_bytes": {"peak": 20971520, "mean": 15728640, "samples": 2},
    "memory_source": "server_rss",
    "kv_cache_usage": {"peak": 0.2, "mean": 0.15, "samples": 2}})");
  return doc;
}

TEST(HtmlResourcesTest, OneVertexPerNonNullSampleAndAGapForEachNull) {
  // No "resources": no section (perf_sim alone has 5 charts, html_test.cpp).
  EXPECT_FALSE(Contains(RenderHtml(LoadData("perf_sim.json")), "Resources over the run"));
  const std::string html = RenderHtml(WithResources());
  ASSERT_TRUE(Contains(html, "<h2>Resources over the run</h2>"));
  // RSS: samples 0 | 2, 3 (sample 1 and 4 are null): two lines, 1 + 2 vertices.
  const std::string rss = FigureOf(html, "res-server-memory");
  ASSERT_FALSE(rss.empty());
  EXPECT_EQ(Polylines(rss), (std::vector<int>{1, 2}));
  EXPECT_TRUE(Contains(rss, "Memory (MiB)"));
  EXPECT_TRUE(Contains(rss, "<td>0.25</td><td>—</td>"));  // the gap, in the table too
  EXPECT_TRUE(Contains(rss, "<td>30.0</td>"));            // 31457280 B = 30 MiB
  // KV: 0, 1 | 3, 4 in percent.
  const std::string kv = FigureOf(html, "res-kv");
  EXPECT_EQ(Polylines(kv), (std::vector<int>{2, 2}));
  EXPECT_TRUE(Contains(kv, "<td>50.0</td>"));
  // Nobody read GPU memory or power; requests_running is all null: no chart for them.
  for (const char* id : {"res-gpu-memory", "res-power", "res-requests"}) {
    EXPECT_TRUE(FigureOf(html, id).empty()) << id;
  }
  // perf_sim's decode runs have send times: output tok/s is derived over the same samples.
  EXPECT_FALSE(FigureOf(html, "res-tok-s").empty());
  EXPECT_TRUE(Contains(html, "<body data-charts=\"9\">"));
  EXPECT_EQ(html.find("nan"), std::string::npos);
}

// The sampler's last sample can come within a millisecond of the one before (t_s has ms
// precision): both are rows of the samples table, which has one row per sample.
TEST(HtmlResourcesTest, TwoSamplesAtOneTimeAreTwoRows) {
  json doc = WithResources();
  doc["resources"]["series"]["t_s"] = json::array({0.0, 0.25, 0.5, 0.75, 0.75});
  doc["resources"]["series"]["server_rss_bytes"] =
      json::array({10485760, 20971520, 20971520, 31457280, 32505856});
  const std::string rss = FigureOf(RenderHtml(doc), "res-server-memory");
  ASSERT_FALSE(rss.empty());
  EXPECT_TRUE(Contains(rss, "The 5 samples"));
  EXPECT_TRUE(Contains(rss, "<td>0.75</td><td>30.0</td></tr>\n<tr><td>0.75</td><td>31.0</td>"))
      << rss;
}

TEST(HtmlResourcesTest, SourcesSayWhyNotAndTheFiguresTableLeavesOutWhatNoRowHas) {
  const std::string html = RenderHtml(WithResources());
  EXPECT_TRUE(Contains(html,
                       "<tr data-source=\"nvml\"><td>nvml</td><td>not available</td>"
                       "<td>libnvidia-ml.so.1 not found</td></tr>"));
  EXPECT_TRUE(Contains(html, "(2 of 5 reads failed; last: no such process)"));
  const auto start = html.find("<table class=\"resources\">");
  ASSERT_NE(start, std::string::npos);
  const std::string table = html.substr(start, html.find("</table>", start) - start);
  EXPECT_TRUE(Contains(table, "<th>Peak memory</th>"));
  EXPECT_TRUE(Contains(table, "<th>Peak KV</th>"));
  // No source measured power or energy: those columns are left out, not zeros.
  EXPECT_FALSE(Contains(table, "Mean power"));
  EXPECT_FALSE(Contains(table, "J/token"));
  EXPECT_TRUE(Contains(table, "<tr data-row=\"run\"><td>whole run</td>"));
  EXPECT_TRUE(Contains(table, "<td class=\"num\">30.0 MiB (RSS)</td>"));
  EXPECT_TRUE(Contains(table, "<td class=\"num\">50.0%</td>"));
  EXPECT_TRUE(Contains(table, "<tr data-row=\"decode.run 1\"><td>decode</td><td>run 1</td>"))
      << table;
  EXPECT_TRUE(Contains(table, "<td class=\"num\">20.0 MiB (RSS)</td>"));
  // A decode run without figures has no row (perf_sim has more than one run).
  EXPECT_FALSE(Contains(table, "data-row=\"decode.run 2\""));
}

TEST(HtmlResourcesTest, NoSeriesNoChartsAndAMergedSeriesSaysSo) {
  json doc = WithResources();
  doc["resources"].erase("series");
  std::string html = RenderHtml(doc);
  EXPECT_TRUE(Contains(html, "<h2>Resources over the run</h2>"));
  EXPECT_TRUE(Contains(html, "no time series in results.json"));
  EXPECT_EQ(html.find("data-chart=\"res-"), std::string::npos);

  // A sample time that is not a number: nothing to plot against, and the page still renders.
  doc = WithResources();
  doc["resources"]["series"]["t_s"][2] = "soon";
  html = RenderHtml(doc);
  EXPECT_TRUE(Contains(html, "<h2>Resources over the run</h2>"));
  EXPECT_EQ(html.find("data-chart=\"res-"), std::string::npos);
  EXPECT_TRUE(Contains(html, "<table class=\"resources\">"));  // the figures are still there

  doc = WithResources();
  doc["resources"]["series"]["merged"] = true;
  doc["resources"]["samples"] = 4000;
  html = RenderHtml(doc);
  EXPECT_TRUE(Contains(html, "5 points: the run's 4,000 samples merged")) << html;
}

// The sampler caps the series at 2,000 points; with every column at that length, varied values
// and the page's other charts, report.html stays under 1 MB.
TEST(HtmlResourcesTest, AFullSeriesOfEveryColumnKeepsThePageUnderOneMegabyte) {
  json doc = WithResources();
  json& series = doc["resources"]["series"];
  series = json::object();
  const int n = 2000;
  for (int i = 0; i < n; ++i) {
    const double wobble = 1 + 0.123457 * ((i * 7919) % 1000) / 1000.0;  // no two alike
    series["t_s"].push_back(i * 0.2513);
    series["gpu_memory_used_bytes"].push_back(7.3e10 * wobble);
    series["server_rss_bytes"].push_back(1.234e9 * wobble);
    series["gpu_power_w"].push_back(498.123 * wobble);
    series["power_cmd_w"].push_back(612.345 * wobble);
    series["kv_cache_usage"].push_back(0.4567 * wobble);
    series["requests_running"].push_back(i % 64);
    series["requests_waiting"].push_back(i % 17);
  }
  series["merged"] = true;
  const std::string html = RenderHtml(doc);
  for (const char* id : {"res-gpu-memory", "res-server-memory", "res-power", "res-kv",
                         "res-requests", "res-tok-s"}) {
    EXPECT_FALSE(FigureOf(html, id).empty()) << id;
  }
  EXPECT_LT(html.size(), 1u << 20);
}

// Output tok/s: a request's tokens spread evenly from its first token to its last, summed per
// sampling interval. 100 tokens from 0.1 s to 1.1 s over samples at 0, 0.5, 1.0, 1.5 s: 40
// tokens in (0, 0.5] = 80 tok/s, 50 in (0.5, 1.0] = 100 tok/s, 10 in (1.0, 1.5] = 20 tok/s.
TEST(HtmlResourcesTest, OutputTokSIsDerivedFromTheRequestsPerSamplingInterval) {
  json doc = json::parse(R"({
    "status": "complete", "target": {"model": "m"},
    "perf": {"decode": {"tokens": 100, "runs": [
      {"id": 1, "label": "run 1", "status": "ok", "sent_at_ms": 0, "ttft_ms": 100,
       "e2e_ms": 1100, "completion_tokens": 100, "decode_tok_s": 99},
      {"id": 2, "label": "run 2", "status": "transport", "sent_at_ms": 0, "ttft_ms": 100,
       "e2e_ms": 1100, "completion_tokens": 1000}]}},
    "resources": {"period_ms": 500, "samples": 4, "sources": [],
                  "series": {"t_s": [0.0, 0.5, 1.0, 1.5]}}})");
  const std::string fig = FigureOf(RenderHtml(doc), "res-tok-s");
  ASSERT_FALSE(fig.empty());
  EXPECT_EQ(Polylines(fig), (std::vector<int>{3}));  // no interval ends at the first sample
  EXPECT_TRUE(Contains(fig, "<tr><td>0.50</td><td>80.0</td></tr>")) << fig;
  EXPECT_TRUE(Contains(fig, "<tr><td>1.00</td><td>100.0</td></tr>")) << fig;
  EXPECT_TRUE(Contains(fig, "<tr><td>1.50</td><td>20.0</td></tr>")) << fig;
  // Without a request that has its times there is nothing to derive.
  doc["perf"]["decode"]["runs"][0].erase("sent_at_ms");
  EXPECT_TRUE(FigureOf(RenderHtml(doc), "res-tok-s").empty());
}

// Issue 24 item 11: the quality suite's requests count too (each attempt that received its
// answer, at its sent_at_ms), and the time axis ends at the last sample. A suite test of 200
// tokens from 0.1 s to 1.1 s and a failed attempt (no token count); samples at 0, 0.5, 1.0,
// 1.5, 1.9 s: 80 tokens in (0, 0.5] = 160 tok/s, 100 in (0.5, 1.0] = 200 tok/s, 20 in
// (1.0, 1.5] = 40 tok/s, then 0.
TEST(HtmlResourcesTest, OutputTokSCountsTheQualityTestsAndEndsAtTheRunsEnd) {
  json doc = json::parse(R"({
    "status": "complete", "target": {"model": "m"},
    "tests": [
      {"id": "text.a", "name": "A", "category": "text", "status": "PASS",
       "attempts": [{"max_tokens": 512, "status": "PASS", "sent_at_ms": 0, "ttft_ms": 100,
                     "e2e_ms": 1100, "completion_tokens": 200}]},
      {"id": "text.b", "name": "B", "category": "text", "status": "ERROR",
       "attempts": [{"max_tokens": 512, "status": "ERROR", "sent_at_ms": 0, "ttft_ms": 100,
                     "e2e_ms": 1100, "completion_tokens": null}]},
      {"id": "speed.decode", "name": "Decode", "category": "speed", "status": "PASS",
       "profile": "decode", "attempts": 1}],
    "resources": {"period_ms": 500, "samples": 5, "sources": [],
                  "series": {"t_s": [0.0, 0.5, 1.0, 1.5, 1.9]}}})");
  const std::string fig = FigureOf(RenderHtml(doc), "res-tok-s");
  ASSERT_FALSE(fig.empty()) << "the suite's tokens make the chart";
  EXPECT_TRUE(Contains(fig, "<tr><td>0.50</td><td>160.0</td></tr>")) << fig;
  EXPECT_TRUE(Contains(fig, "<tr><td>1.00</td><td>200.0</td></tr>")) << fig;
  EXPECT_TRUE(Contains(fig, "<tr><td>1.50</td><td>40.0</td></tr>")) << fig;
  EXPECT_TRUE(Contains(fig, "<tr><td>1.90</td><td>0.0</td></tr>")) << fig;
  // The x axis ends at 1.9 s: its ticks stop at 1.5 (a nice axis would run on to 2).
  const std::regex tick(
      R"re(<text class="tick" x="([^"]+)" y="([^"]+)" text-anchor="middle">([^<]*)</text>)re");
  std::vector<std::string> ticks;
  for (auto it = std::sregex_iterator(fig.begin(), fig.end(), tick); it != std::sregex_iterator();
       ++it) {
    ticks.push_back((*it)[3]);
  }
  ASSERT_FALSE(ticks.empty());
  EXPECT_EQ(ticks.back(), "1.5") << fig;
  EXPECT_TRUE(Contains(fig, "class=\"axis-line\" x1=\"72\" x2=\"616\""));
}

}  // namespace
}  // namespace sb::report
