#include "report/markdown.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/golden.h"
#include "support/text.h"

namespace sb::report {
namespace {

using nlohmann::json;
using testing::ExpectGolden;
using testing::LoadData;

using ::sb::testing::Contains;

// ---- Goldens: what users see -----------------------------------------------------------------

class ReportGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(ReportGolden, MarkdownMatches) {
  json doc = LoadData(GetParam() + ".json");
  ExpectGolden(RenderMarkdown(doc), GetParam() + ".md");
}

TEST_P(ReportGolden, ConsoleSummaryMatches) {
  json doc = LoadData(GetParam() + ".json");
  ExpectGolden(RenderConsoleSummary(doc), GetParam() + ".console.txt");
}

// rate_sim.json: `servebench perf --profile rate --rates 5,20 --requests 20 --rate-tokens 8
// --slo ttft_ms=200` against the built-in simulator (each point's requests cut to two, the
// histograms and resources left out). Issue 24 items 6 and 26: its console summary has a line per
// rate with the offered and achieved rates beside the nominal one, and goodput.
INSTANTIATE_TEST_SUITE_P(Runs, ReportGolden,
                         ::testing::Values("perf_sim", "suite_statuses", "interrupted",
                                           "failed_requests", "h2h_a", "rate_sim"));

// Issue 24 item 26: "1 token" (not "1 tokens"), and a request cut short by Ctrl-C is counted as
// interrupted, apart from the failed ones.
TEST(MarkdownTest, ConsoleRequestsLineSaysInterruptedAndCountsTokens) {
  json doc = LoadData("interrupted.json");
  doc["summary"]["completion_tokens"] = 1;
  doc["summary"]["requests"] = 1;
  doc["summary"]["failed_requests"] = 0;
  doc["summary"]["interrupted_requests"] = 1;
  const std::string text = RenderConsoleSummary(doc);
  EXPECT_TRUE(Contains(text, "requests: 1 (0 failed, 1 interrupted), 1 token in ")) << text;
}

// ---- Properties the goldens rely on ------------------------------------------------------------

json MinimalRun() {
  return json{{"schema", "servebench.results/1"},
              {"status", "complete"},
              {"target",
               {{"endpoint", "http://h:8000/v1"},
                {"model", "m"},
                {"simulated", false},
                {"server", {{"kind", "vllm"}, {"version", "0.11.0"}}}}},
              {"summary",
               {{"total", 0},
                {"pass", 0},
                {"requests", 3},
                {"failed_requests", 0},
                {"completion_tokens", 768},
                {"wall_time_s", 3.9},
                {"avg_tok_s", 196.9}}},
              {"tests", json::array()},
              {"perf", json::object()},
              {"spec_decode", nullptr},
              {"warnings", json::array()}};
}

TEST(MarkdownTest, SimulatedTargetIsSaidPlainly) {
  json doc = LoadData("perf_sim.json");
  std::string md = RenderMarkdown(doc);
  EXPECT_TRUE(Contains(md,
                       "Target: the built-in simulator (no model server) — figures show the "
                       "harness, not a model"))
      << md;
  EXPECT_TRUE(Contains(RenderConsoleSummary(doc), "the built-in simulator (no model server)"));
  doc["target"]["simulated"] = false;
  EXPECT_FALSE(Contains(RenderMarkdown(doc), "built-in simulator"));
}

TEST(MarkdownTest, InterruptedRunSaysPartial) {
  json doc = LoadData("interrupted.json");
  EXPECT_TRUE(Contains(RenderMarkdown(doc), "**Interrupted: partial results.**"));
  EXPECT_TRUE(Contains(RenderConsoleSummary(doc), "status: interrupted (partial results)"));
  doc["status"] = "complete";
  EXPECT_FALSE(Contains(RenderMarkdown(doc), "Interrupted"));
}

TEST(MarkdownTest, RunThatNeverFinishedSaysIncomplete) {
  json doc = LoadData("interrupted.json");
  doc["status"] = "running";  // the last results.json a crashed run leaves behind
  std::string md = RenderMarkdown(doc);
  EXPECT_TRUE(Contains(md, "**Incomplete: partial results.**")) << md;
  doc["status"] = "failed";
  EXPECT_TRUE(Contains(RenderMarkdown(doc), "**Failed: partial results.**"));
}

TEST(MarkdownTest, NullStaysDashNeverZero) {
  json doc = MinimalRun();
  doc["perf"]["decode"] = {{"tokens", 256},
                           {"runs", json::array({{{"label", "run 1"},
                                                  {"status", "ok"},
                                                  {"decode_tok_s", nullptr},
                                                  {"ttft_ms", nullptr},
                                                  {"e2e_ms", 1300.0},
                                                  {"completion_tokens", nullptr}}})},
                           {"decode_tok_s", {{"n", 0}}},
                           {"ttft_ms", {{"n", 0}}},
                           {"e2e_ms", {{"n", 1}, {"median", 1300.0}}},
                           {"errors", 0}};
  doc["summary"]["avg_tok_s"] = nullptr;
  std::string md = RenderMarkdown(doc);
  EXPECT_TRUE(Contains(md, "| run 1 | — | — | 1.3 | — | ok |")) << md;
  EXPECT_TRUE(Contains(md, "| Average throughput | — |")) << md;
  EXPECT_TRUE(Contains(md, "No run produced a decode speed")) << md;
  EXPECT_FALSE(Contains(md, "| 0.0 |")) << md;
  EXPECT_FALSE(Contains(md, "0.0 tok/s")) << md;
}

TEST(MarkdownTest, TestRowsOnlyWhenTestsExist) {
  std::string perf_only = RenderMarkdown(LoadData("perf_sim.json"));
  EXPECT_FALSE(Contains(perf_only, "Total tests"));
  EXPECT_FALSE(Contains(perf_only, "Results by category"));
  EXPECT_FALSE(Contains(perf_only, "Effective pass rate"));
  std::string suite = RenderMarkdown(LoadData("suite_statuses.json"));
  EXPECT_TRUE(Contains(suite, "| Total tests | 12 |"));
  EXPECT_TRUE(Contains(suite, "## Results by category"));
}

TEST(MarkdownTest, EveryStatusIsCountedSeparately) {
  std::string md = RenderMarkdown(LoadData("suite_statuses.json"));
  // The Total row of the category table names each non-passing status.
  EXPECT_TRUE(Contains(md,
                       "| **Total** | 5/12 | 1 FAIL, 1 EMPTY, 1 LOOP, 2 UNSUPPORTED, 1 ERROR, "
                       "1 TIMEOUT | 12 |"))
      << md;
  EXPECT_TRUE(Contains(md, "| Audio | 0/2 ❌ | 2 UNSUPPORTED | 2 | — | — |")) << md;
  EXPECT_TRUE(Contains(md, "| Effective pass rate (excl. unsupported) | 5/10 = 50% |")) << md;
  for (const char* status : {"PASS", "FAIL", "EMPTY", "LOOP", "UNSUPPORTED", "ERROR", "TIMEOUT"}) {
    EXPECT_TRUE(Contains(md, std::string("| ") + status + " |")) << status;
  }
}

TEST(MarkdownTest, ConcurrencyErrorsAreShown) {
  std::string md = RenderMarkdown(LoadData("failed_requests.json"));
  EXPECT_TRUE(Contains(md, "| 8 | 6 | **2** |")) << md;
  EXPECT_TRUE(Contains(md, "## Errors")) << md;
  EXPECT_TRUE(
      Contains(md, "| concurrency | c8 stream 1 | transport | — | connection reset by peer |"))
      << md;
  // The '|' inside the server's reason must not split the cell.
  EXPECT_TRUE(Contains(md, "HTTP 503: server overloaded \\| retry later")) << md;
}

TEST(MarkdownTest, UnlistedFailuresArePointedAt) {
  std::string md = RenderMarkdown(LoadData("failed_requests.json"));
  EXPECT_TRUE(Contains(md,
                       "These are the speed profiles' failed requests, 5 of the 6 in the "
                       "summary; samples.jsonl holds every request."))
      << md;
}

TEST(MarkdownTest, FailedTestsNeedNoErrorsSection) {
  // Its 4 failed requests belong to ERROR/TIMEOUT/UNSUPPORTED tests, shown in the test tables.
  json doc = LoadData("suite_statuses.json");
  EXPECT_FALSE(Contains(RenderMarkdown(doc), "## Errors"));
  doc["tests"] = json::array();
  doc["summary"]["total"] = 0;
  EXPECT_TRUE(Contains(RenderMarkdown(doc), "## Errors"));
}

TEST(MarkdownTest, NoErrorsSectionWithoutFailures) {
  EXPECT_FALSE(Contains(RenderMarkdown(LoadData("perf_sim.json")), "## Errors"));
}

TEST(MarkdownTest, SpecDecodeOnlyWhenMeasured) {
  json doc = LoadData("perf_sim.json");
  EXPECT_TRUE(Contains(RenderMarkdown(doc), "### Speculative decoding"));
  doc["spec_decode"] = nullptr;
  EXPECT_FALSE(Contains(RenderMarkdown(doc), "Speculative decoding"));
  EXPECT_FALSE(Contains(RenderMarkdown(doc), "Acceptance rate"));
}

TEST(MarkdownTest, UnknownProfilesAreNamed) {
  json doc = MinimalRun();
  doc["perf"]["warp"] = {{"sizes", json::array()}};
  EXPECT_TRUE(Contains(RenderMarkdown(doc), "`perf.warp`"));
}

TEST(MarkdownTest, RateRowsShowScheduledAndFromSendLatency) {
  json doc = MinimalRun();
  json pct_s = {{"n", 10}, {"p50", 41.0}, {"p99", 900.0}};
  json pct_e = {{"n", 10}, {"p50", 300.0}, {"p99", 1500.0}};
  json pct_e_send = {{"n", 10}, {"p50", 300.0}, {"p99", 420.0}};
  json point = {{"rate_rps", 8},
                {"offered_rate_rps", 9.62},
                {"achieved_rate_rps", 7.9},
                {"ok", 10},
                {"failed", 0},
                {"late_sends", 1},
                {"from_scheduled", {{"ttft_ms", pct_s}, {"e2e_ms", pct_e}}},
                {"from_send", {{"ttft_ms", pct_s}, {"e2e_ms", pct_e_send}}},
                {"tpot_ms", {{"n", 10}, {"p50", 6.5}, {"p99", 12.0}}},
                {"output_tok_s", 512.0},
                {"goodput", {{"fraction", 0.9}, {"meets_slo", false}}}};
  json rate = json::object();
  rate["arrival"] = "poisson";
  rate["slo"] = {{"ttft_ms", 500}};
  rate["rates"] = json::array({point});
  rate["search"] = nullptr;
  doc["perf"]["rate"] = rate;
  std::string md = RenderMarkdown(doc);
  EXPECT_TRUE(Contains(md, "### Open-loop load")) << md;
  EXPECT_TRUE(Contains(md,
                       "| 8.00 | 9.62 | 7.90 | 10 | 0 | 1 | 41 / 900 | 1,500 | 420 | 6.5 / 12 | "
                       "512.0 | 90.0% | no |"))
      << md;  // issue 24 item 6: nominal, offered (the drawn schedule) and achieved side by side
  EXPECT_TRUE(Contains(md, "| Rate (req/s) | Offered | Achieved |")) << md;
  EXPECT_FALSE(Contains(md, "`perf.rate`")) << md;
}

TEST(MarkdownTest, ContextRowsShowSizesCorrectnessAndSkips) {
  json doc = MinimalRun();
  doc["perf"]["context"] = {
      {"counted_by", "tokenize"},
      {"rows",
       {{{"size", 2000},
         {"prompt_tokens", 2000},
         {"correct", true},
         {"ttft_ms", 81.2},
         {"prefill_tok_s", 24630.5},
         {"decode_tok_s", 241.7},
         {"status", "ok"},
         {"expected", "56"},
         {"answer", " 56"}},
        {{"size", 8000},
         {"prompt_tokens", 8000},
         {"correct", false},
         {"ttft_ms", 201.0},
         {"prefill_tok_s", 39800.0},
         {"decode_tok_s", 240.0},
         {"status", "ok"},
         {"expected", "42"},
         {"answer", " 41"}},
        {{"size", 128000}, {"skipped", "over the server's max model length (32768 tokens)"}}}}};
  std::string md = RenderMarkdown(doc);
  EXPECT_TRUE(Contains(md, "### Context length scaling")) << md;
  EXPECT_TRUE(Contains(md, "| ~2,000 | 2,000 | ✅ | 81 | 24,630.5 | 241.7 |")) << md;
  EXPECT_TRUE(Contains(md, "expected 42, answered \" 41\"")) << md;
  EXPECT_TRUE(Contains(md, "skipped: over the server's max model length")) << md;
  EXPECT_FALSE(Contains(md, "`perf.context`")) << md;
}

TEST(MarkdownTest, OddInputNeverThrows) {
  EXPECT_NO_THROW(RenderMarkdown(json::array()));
  EXPECT_NO_THROW(RenderMarkdown(json{{"summary", "x"}, {"tests", {1, "a", nullptr}}}));
  EXPECT_NO_THROW(RenderConsoleSummary(json{{"perf", {{"decode", {{"decode_tok_s", 3}}}}}}));
  json doc = MinimalRun();
  doc["perf"]["concurrency"] = {{"levels", {{{"concurrency", "four"}, {"ok", nullptr}}}}};
  std::string md;
  EXPECT_NO_THROW(md = RenderMarkdown(doc));
  EXPECT_TRUE(Contains(md, "| — | — | — | — | — | — | — |")) << md;
}

TEST(MarkdownTest, ConsoleHasNoTablesAndShowsWarnings) {
  std::string text = RenderConsoleSummary(LoadData("suite_statuses.json"));
  EXPECT_FALSE(Contains(text, "| "));
  EXPECT_TRUE(Contains(text, "warning: 2 audio tests are UNSUPPORTED")) << text;
  EXPECT_TRUE(Contains(text, "decode: 108.3 tok/s (median of 3; runs 107.1, 108.3, 108.9)"))
      << text;
}

}  // namespace
}  // namespace sb::report
