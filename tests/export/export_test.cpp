#include "export/export.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/profile_table.h"
#include "report/html.h"
#include "report/markdown.h"
#include "store/record.h"
#include "support/text.h"

namespace sb::exporter {
namespace {

using nlohmann::json;

using ::sb::testing::Count;

json Doc() {
  return json{{"schema", "servebench.results/1"},
              {"started_at", "2026-12-03T10:36:07Z"},
              {"status", "complete"},
              {"tool", {{"version", "0.1.0"}}},
              {"target",
               {{"model", "m"},
                {"endpoint", "http://user:secret@gpu-box:8000/v1"},
                {"server", {{"kind", "vllm"}, {"version", "0.11"}}}}},
              {"tests", json::array()},
              {"perf", json::object()}};
}

TEST(ExportTest, CsvLongFormatWithLevelsUnitsAndQuoting) {
  json d = Doc();
  d["perf"]["concurrency"] = {
      {"tokens", 256},
      {"levels",
       {{{"concurrency", 4},
         {"throughput_tok_s", 710.5},
         {"ok", 4},
         {"per_stream_decode_tok_s", {{"n", 4}, {"median", 180.0}, {"values", {1, 2, 3, 4}}}},
         {"requests", json::array({{{"ttft_ms", 1.0}}})}}}}};
  d["perf"]["ttft"] = {
      {"prompts", {{{"name", "a,\"b\""}, {"ttft_ms", {{"n", 1}, {"median", 98}}}}}}};
  d["perf"]["context"] = {{"rows", {{{"size", 2000}, {"correct", true}, {"prefill_tok_s", 1e4}}}}};
  d["spec_decode"] = {{"acceptance_rate", 0.7}, {"per_position", {0.86, 0.5}}};
  std::string csv = ToCsv(d);
  EXPECT_TRUE(csv.starts_with(std::string(kCsvHeader) + "\n"));
  EXPECT_NE(csv.find("concurrency,,,tokens,value,256,tokens\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("concurrency,4,streams,throughput_tok_s,value,710.5,tok/s\n"),
            std::string::npos);
  EXPECT_NE(csv.find("concurrency,4,streams,per_stream_decode_tok_s,median,180,tok/s\n"),
            std::string::npos);
  EXPECT_NE(csv.find("concurrency,4,streams,per_stream_decode_tok_s,n,4,count\n"),
            std::string::npos);
  // A prompt name with a comma and quotes is one quoted field.
  EXPECT_NE(csv.find("ttft,\"a,\"\"b\"\"\",prompt,ttft_ms,median,98,ms\n"), std::string::npos)
      << csv;
  EXPECT_NE(csv.find("context,2000,tokens,correct,value,1,bool\n"), std::string::npos);
  EXPECT_NE(csv.find("context,2000,tokens,prefill_tok_s,value,10000,tok/s\n"), std::string::npos);
  EXPECT_NE(csv.find("spec_decode,2,draft position,acceptance,value,0.5,fraction\n"),
            std::string::npos);
  // Raw values and request records are jsonl's, not the CSV's.
  EXPECT_EQ(csv.find("values"), std::string::npos);
  EXPECT_EQ(csv.find("requests"), std::string::npos);
}

TEST(ExportTest, CsvHasTheFrontierPointsOfEachSweep) {
  json d = Doc();
  d["perf"]["concurrency"] = {{"tokens", 64},
                              {"levels", json::array()},
                              {"gpus", 2},
                              {"frontier",
                               {{{"level", 8},
                                 {"label", "c8"},
                                 {"tok_s_per_user", 41.5},
                                 {"tok_s_per_user_tpot", 40.0},
                                 {"total_tok_s", 320.0},
                                 {"total_tok_s_per_gpu", 160.0},
                                 {"pareto", true}}}}};
  d["perf"]["rate"] = {{"rates", json::array()},
                       {"gpus", nullptr},
                       {"frontier",
                        {{{"level", 4},
                          {"label", "4 req/s"},
                          {"tok_s_per_user", 90.0},
                          {"tok_s_per_user_tpot", nullptr},
                          {"total_tok_s", 250.0},
                          {"total_tok_s_per_gpu", nullptr},
                          {"pareto", false}}}}};
  const std::string csv = ToCsv(d);
  EXPECT_NE(csv.find("concurrency-frontier,,,gpus,value,2,GPUs\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("concurrency-frontier,8,streams,tok_s_per_user,value,41.5,tok/s\n"),
            std::string::npos);
  EXPECT_NE(csv.find("concurrency-frontier,8,streams,tok_s_per_user_tpot,value,40,tok/s\n"),
            std::string::npos);
  EXPECT_NE(csv.find("concurrency-frontier,8,streams,total_tok_s_per_gpu,value,160,tok/s\n"),
            std::string::npos);
  EXPECT_NE(csv.find("concurrency-frontier,8,streams,pareto,value,1,bool\n"), std::string::npos);
  EXPECT_NE(csv.find("rate-frontier,4,req/s,total_tok_s,value,250,tok/s\n"), std::string::npos);
  EXPECT_NE(csv.find("rate-frontier,4,req/s,pareto,value,0,bool\n"), std::string::npos);
  // A null figure (no --gpus) has no row.
  EXPECT_EQ(csv.find("rate-frontier,4,req/s,total_tok_s_per_gpu"), std::string::npos);
}

TEST(ExportTest, CsvHasTheProfileWideFiguresBesideASweepsRows) {
  json d = Doc();
  d["perf"]["replay"] = {{"achieved_rate_rps", 4.5},
                         {"send_lag_ms", {{"n", 2}, {"median", 0.25}, {"p99", 0.5}}},
                         {"format", "mooncake"},
                         {"classes", {{{"class", "all"}, {"ok", 2}}}}};
  d["perf"]["sessions"] = {{"output_tok_s", 321.5}, {"gpus", 2}, {"turns", json::array()}};
  d["perf"]["rate"] = {{"rates", json::array()},
                       {"search",
                        {{"best_rps", 12.5},
                         {"result", "found"},
                         {"points", {{{"rate_rps", 12.5}, {"goodput_rps", 11.0}}}}}}};
  const std::string csv = ToCsv(d);
  EXPECT_NE(csv.find("replay,,,achieved_rate_rps,value,4.5,req/s\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("replay,,,send_lag_ms,p99,0.5,ms\n"), std::string::npos);
  EXPECT_NE(csv.find("replay,all,class,ok,value,2,\n"), std::string::npos);
  EXPECT_NE(csv.find("sessions,,,output_tok_s,value,321.5,tok/s\n"), std::string::npos);
  // The GPU count is the frontier's figure, and a search's outcome is rate-search's.
  EXPECT_EQ(csv.find("sessions,,,gpus"), std::string::npos);
  EXPECT_NE(csv.find("rate-search,,,best_rps,value,12.5,req/s\n"), std::string::npos);
  EXPECT_NE(csv.find("rate-search,12.5,req/s,goodput_rps,value,11,req/s\n"), std::string::npos);
  EXPECT_EQ(csv.find("rate,,,search."), std::string::npos);
}

TEST(ExportTest, SpeedRowsAreTypedRowsThatSayWhereEachFigureSits) {
  json d = Doc();
  d["perf"]["concurrency"] = {
      {"levels",
       {{{"concurrency", 4},
         {"per_stream_decode_tok_s",
          {{"n", 6}, {"median", 180.0}, {"values", {150, 170, 180, 181, 190, 200}}}}}}}};
  const std::vector<ResultRow> rows = SpeedRows(d);
  const auto median = std::find_if(rows.begin(), rows.end(), [](const ResultRow& r) {
    return r.metric == "per_stream_decode_tok_s" && r.stat == "median";
  });
  ASSERT_NE(median, rows.end());
  EXPECT_EQ(median->profile, "concurrency");
  EXPECT_EQ(median->dim, "concurrency");
  EXPECT_EQ(median->point, "4");
  EXPECT_EQ(median->point_unit, "streams");
  EXPECT_EQ(median->unit, "tok/s");
  EXPECT_EQ(median->n, 6);
  // n = 6: the whole range is the 95% interval of the median (P(Binomial(6, 1/2) = 0) = 1.6%).
  EXPECT_EQ(median->ci_lo, 150);
  EXPECT_EQ(median->ci_hi, 200);
}

// The CSV export and the run store are two views of the one row model: every figure the store
// keeps of a profile's rows, or of its whole section, the CSV has too, with the same value,
// unit, n and interval. Checked on runs recorded by three servebench versions
// (tests/fixtures/runs), replay, sessions and prefix-cache among them.
// Each figure of results' profiles that the store keeps is in the CSV, with the same value,
// unit, n and interval; returns how many were matched.
std::size_t ExpectStoreFiguresInCsv(const json& results, const std::string& run) {
  std::size_t matched = 0;
  const std::vector<ResultRow> csv = SpeedRows(results);
  for (const store::MetricRow& m : store::MetricRows(results)) {
    const ProfileSpec* p = FindProfile(m.profile);
    // The store's own rows: suite, resources, frontier and search points; the frontier's GPUs.
    if (p == nullptr || (m.dim != p->dim && !m.dim.empty()) || m.metric == "gpus" ||
        m.metric.starts_with("search.")) {
      continue;
    }
    const auto it = std::find_if(csv.begin(), csv.end(), [&m](const ResultRow& c) {
      const std::string metric =
          m.kind == ResultRow::kPercentiles ? c.metric + "." + c.stat : c.metric;
      return c.profile == m.profile && c.point == m.point && metric == m.metric &&
             c.stat == m.stat;
    });
    EXPECT_NE(it, csv.end()) << run << ": " << m.profile << "." << m.metric << "@" << m.point;
    if (it == csv.end()) {
      continue;
    }
    EXPECT_EQ(it->value, m.value) << m.metric;
    EXPECT_EQ(it->unit, m.unit) << m.metric;
    EXPECT_EQ(it->n, m.n) << m.metric;
    EXPECT_EQ(it->ci_lo, m.ci_lo) << m.metric;
    EXPECT_EQ(it->ci_hi, m.ci_hi) << m.metric;
    ++matched;
  }
  return matched;
}

TEST(ExportTest, TheStoreAndTheCsvReadEveryFigureTheSameWay) {
  std::size_t matched = 0;
  for (const char* run :
       {"d1b248f-run", "d1b248f-rate", "f1b7e34-run", "f1b7e34-rate", "c23d56c-workloads"}) {
    std::ifstream in(std::string(SB_FIXTURES_DIR) + "/runs/" + run + "/results.json");
    ASSERT_TRUE(in) << run;
    matched += ExpectStoreFiguresInCsv(json::parse(in), run);
  }
  // Every profile of those runs, every level: hundreds of figures, not a handful.
  EXPECT_GT(matched, 200U);
}

// context --context-cached: each size's second, cached send (its TTFT and the server's cached
// tokens) is a figure of the CSV as of the store (the CSV had left the "cached" object out).
TEST(ExportTest, AContextSizesCachedSendIsInTheCsvAsInTheStore) {
  json results = Doc();
  results["perf"] = {
      {"context",
       {{"max_tokens", 16},
        {"rows",
         {{{"size", 4000},
           {"prompt_tokens", 4012},
           {"ttft_ms", 120.5},
           {"cached", {{"ttft_ms", 31.25}, {"cached_tokens", 3968}, {"status", "ok"}}}}}}}}};
  EXPECT_GE(ExpectStoreFiguresInCsv(results, "context"), 3U);  // ttft_ms and the two cached
  const std::string csv = ToCsv(results);
  EXPECT_NE(csv.find("context,4000,tokens,cached.ttft_ms,value,31.25,ms\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("context,4000,tokens,cached.cached_tokens,value,3968,tokens\n"),
            std::string::npos)
      << csv;
}

TEST(ExportTest, JunitMapsStatusesAndEscapes) {
  json d = Doc();
  auto test = [](std::string id, std::string cat, std::string status, json reason) {
    return json{{"id", id},         {"name", "Test <" + id + ">"},
                {"category", cat},  {"status", status},
                {"reason", reason}, {"time_ms", 1500.0}};
  };
  d["tests"] = {test("a", "image", "PASS", nullptr),
                test("b", "image", "FAIL", "expected \"Q3\" & got Q2"),
                test("c", "text", "LOOP", "repetition"),
                test("d", "text", "ERROR", "HTTP 500"),
                test("e", "text", "TIMEOUT", "over 60 s"),
                test("f", "audio", "UNSUPPORTED", "HTTP 400: no audio"),
                test("g", "text", "EMPTY", "thinking used the budget\x01")};
  std::string xml = ToJunit(d);
  EXPECT_EQ(Count(xml, "<testsuite "), 3);  // image, text, audio
  EXPECT_EQ(Count(xml, "<testcase "), 7);
  EXPECT_EQ(Count(xml, "<failure "), 2);
  EXPECT_EQ(Count(xml, "<error "), 2);
  EXPECT_EQ(Count(xml, "<skipped "), 2);
  EXPECT_NE(xml.find("<failure type=\"FAIL\" message=\"FAIL: expected &quot;Q3&quot; &amp; got "
                     "Q2\">expected &quot;Q3&quot; &amp; got Q2</failure>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<error type=\"TIMEOUT\""), std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"UNSUPPORTED: HTTP 400: no audio\"/>"), std::string::npos);
  EXPECT_NE(xml.find("name=\"Test &lt;a&gt; (a)\" classname=\"servebench.image\" time=\"1.500\""),
            std::string::npos);
  EXPECT_NE(xml.find("budget "), std::string::npos);  // no control character (core/escape)
  EXPECT_NE(xml.find("timestamp=\"2026-12-03T10:36:07\""), std::string::npos);
  EXPECT_NE(xml.find("hostname=\"gpu-box\""), std::string::npos);
  EXPECT_EQ(xml.find("secret"), std::string::npos);
  EXPECT_NE(xml.find("tests=\"4\" failures=\"1\" errors=\"2\" skipped=\"1\""), std::string::npos)
      << xml;
}

TEST(ExportTest, JsonlRecordsFirstThenFields) {
  report::CompareRun run;
  run.results = Doc();
  run.results["tests"] = {{{"id", "t1"}, {"status", "PASS"}}};
  run.samples = {json{{"profile", "decode"}, {"status", "ok"}, {"decode_tok_s", 1.5}}};
  std::string out = ToJsonl(run);
  EXPECT_EQ(
      out,
      "{\"record\":\"sample\",\"decode_tok_s\":1.5,\"profile\":\"decode\",\"status\":\"ok\"}\n"
      "{\"record\":\"test\",\"id\":\"t1\",\"status\":\"PASS\"}\n");
}

// One exporter for every format: md and html are the reports themselves, json is results.json.
TEST(ExportTest, EveryFormatGoesThroughTheOneExporter) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("sb_export_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
       std::to_string(reinterpret_cast<std::uintptr_t>(&dir)));
  std::filesystem::create_directories(dir);
  json doc = Doc();
  doc["tests"] = json::array({{{"id", "t1"}, {"status", "PASS"}, {"category", "reasoning"}}});
  std::ofstream(dir / "results.json") << doc.dump();
  auto md = ExportRun(dir, OutputFormat::kMarkdown);
  ASSERT_TRUE(md) << md.error().message;
  EXPECT_EQ(*md, report::RenderMarkdown(doc));
  auto html = ExportRun(dir, OutputFormat::kHtml);
  ASSERT_TRUE(html);
  EXPECT_EQ(*html, report::RenderHtml(doc));
  auto js = ExportRun(dir, OutputFormat::kJson);
  ASSERT_TRUE(js);
  EXPECT_EQ(json::parse(*js), doc);
  auto junit = ExportRun(dir, OutputFormat::kJunit);
  ASSERT_TRUE(junit);
  EXPECT_EQ(Count(*junit, "<testcase "), 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sb::exporter
