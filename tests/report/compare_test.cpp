#include "report/compare.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/golden.h"

namespace sb::report {
namespace {

using nlohmann::json;
using testing::ExpectGolden;
using testing::LoadData;

// A stats object as perf writes it (only the fields compare reads, plus values).
json Stats(std::vector<double> values) {
  std::vector<double> s = values;
  std::sort(s.begin(), s.end());
  double median = s.size() % 2 == 1 ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2;
  return json{{"n", s.size()},
              {"min", s.front()},
              {"median", median},
              {"max", s.back()},
              {"values", values}};
}

json MakeRun(const std::string& model) {
  return json{{"schema", "servebench.results/1"},
              {"status", "complete"},
              {"target",
               {{"endpoint", "http://h:8000/v1"},
                {"model", model},
                {"simulated", false},
                {"server", {{"kind", "vllm"}, {"version", "0.11.0"}}}}},
              {"summary", json::object()},
              {"tests", json::array()},
              {"perf", json::object()},
              {"spec_decode", nullptr},
              {"warnings", json::array()}};
}

json WithDecode(json run, std::vector<double> values) {
  run["perf"]["decode"] = {{"tokens", 256}, {"decode_tok_s", Stats(std::move(values))}};
  return run;
}

json WithTtft(json run, std::vector<double> values) {
  run["perf"]["ttft"] = {
      {"prompts", json::array({{{"name", "short"}, {"ttft_ms", Stats(std::move(values))}}})}};
  return run;
}

json WithTests(json run, int pass, int total, const std::string& category = "vision") {
  run["summary"]["pass"] = pass;
  run["summary"]["total"] = total;
  run["summary"]["unsupported"] = 0;
  for (int i = 0; i < total; ++i) {
    run["tests"].push_back({{"id", category + std::to_string(i)},
                            {"category", category},
                            {"status", i < pass ? "PASS" : "FAIL"}});
  }
  return run;
}

json CompareJson(const std::vector<json>& runs,
                 const std::vector<std::string>& labels = {"A", "B"}) {
  auto out = Compare(runs, labels, OutputFormat::kJson);
  EXPECT_TRUE(out.has_value()) << out.error().message;
  return out.has_value() ? json::parse(*out) : json();
}

// The row with `key` in a JSON comparison; null when absent.
json RowByKey(const json& doc, const std::string& key) {
  for (const json& section : doc["sections"]) {
    for (const json& row : section["rows"]) {
      if (row["key"] == key) {
        return row;
      }
    }
  }
  return nullptr;
}

std::string Advantage(const std::vector<json>& runs, const std::string& key,
                      const std::vector<std::string>& labels = {"A", "B"}) {
  json row = RowByKey(CompareJson(runs, labels), key);
  EXPECT_FALSE(row.is_null()) << "no row " << key;
  return row.is_null() ? "" : row["advantage"]["text"].get<std::string>();
}

// ---- Wording -----------------------------------------------------------------------------------

TEST(CompareTest, HigherIsBetterSaysFaster) {
  std::vector<json> runs = {WithDecode(MakeRun("a"), {92.8}), WithDecode(MakeRun("b"), {23.6})};
  EXPECT_EQ(Advantage(runs, "decode_tok_s"), "A 3.9× faster (n=1, no CI)");
  std::swap(runs[0], runs[1]);
  EXPECT_EQ(Advantage(runs, "decode_tok_s"), "B 3.9× faster (n=1, no CI)");
}

TEST(CompareTest, LowerIsBetterForLatency) {
  std::vector<json> runs = {WithTtft(MakeRun("a"), {98}), WithTtft(MakeRun("b"), {266})};
  json row = RowByKey(CompareJson(runs), "ttft_ms.short");
  EXPECT_EQ(row["better"], "lower");
  EXPECT_EQ(row["advantage"]["text"], "A 2.7× faster (n=1, no CI)");
  EXPECT_EQ(row["advantage"]["verdict"], "no_interval");
  EXPECT_EQ(row["advantage"]["winner"], "A");
  EXPECT_NEAR(row["advantage"]["ratio"].get<double>(), 266.0 / 98.0, 1e-9);
  EXPECT_EQ(row["display"], json({"98 ms", "266 ms"}));
}

TEST(CompareTest, RatesSayBetter) {
  json a = MakeRun("a");
  json b = MakeRun("b");
  a["spec_decode"] = {{"acceptance_rate", 0.711}};
  b["spec_decode"] = {{"acceptance_rate", 0.503}};
  EXPECT_EQ(Advantage({a, b}, "spec_decode.acceptance_rate"), "A 1.4× better (n=1, no CI)");
}

TEST(CompareTest, FailedRequestsCountFewer) {
  json a = MakeRun("a");
  json b = MakeRun("b");
  a["summary"] = {{"failed_requests", 3}, {"requests", 41}};
  b["summary"] = {{"failed_requests", 0}, {"requests", 41}};
  EXPECT_EQ(Advantage({a, b}, "summary.failed_requests"), "B 3 fewer");
  a["summary"]["failed_requests"] = 0;
  EXPECT_EQ(Advantage({a, b}, "summary.failed_requests"), "Equal");
}

json WithContext(json run, std::vector<std::pair<int, bool>> rows, int skipped_size = 0) {
  json out = json::array();
  for (auto [tokens, correct] : rows) {
    out.push_back({{"size", tokens}, {"prompt_tokens", tokens}, {"correct", correct}});
  }
  if (skipped_size > 0) {
    out.push_back({{"size", skipped_size}, {"skipped", "over the server's max model length"}});
  }
  run["perf"]["context"] = {{"rows", out}};
  return run;
}

TEST(CompareTest, ContextScalingRows) {
  std::vector<json> runs = {
      WithContext(MakeRun("a"), {{115, true}, {7139, true}, {113804, true}}),
      WithContext(MakeRun("b"), {{115, true}, {7139, true}, {28471, false}}, 128000)};
  json doc = CompareJson(runs);
  json largest = RowByKey(doc, "context.max_correct_tokens");
  EXPECT_EQ(largest["display"], json({"113,804 tokens", "7,139 tokens"}));
  EXPECT_EQ(largest["advantage"]["winner"], "A");
  json correct = RowByKey(doc, "context.correct");
  EXPECT_EQ(correct["display"], json({"3/3 (100%)", "2/3 (66.7%)"}));
  EXPECT_TRUE(RowByKey(CompareJson({MakeRun("a"), MakeRun("b")}), "context.correct").is_null());
}

TEST(CompareTest, TokensHaveNoBetterDirection) {
  json a = MakeRun("a");
  json b = MakeRun("b");
  a["summary"] = {{"completion_tokens", 47716}};
  b["summary"] = {{"completion_tokens", 28369}};
  json row = RowByKey(CompareJson({a, b}), "summary.completion_tokens");
  EXPECT_EQ(row["better"], "none");
  EXPECT_EQ(row["advantage"]["text"], "A 1.7× more (n=1, no CI)");
}

// ---- The bootstrap interval --------------------------------------------------------------------

TEST(CompareTest, OverlappingSamplesAreWithinNoise) {
  std::vector<json> runs = {WithDecode(MakeRun("a"), {95, 100, 105, 98, 102}),
                            WithDecode(MakeRun("b"), {96, 101, 104, 99, 103})};
  json row = RowByKey(CompareJson(runs), "decode_tok_s");
  EXPECT_EQ(row["advantage"]["verdict"], "within_noise");
  EXPECT_TRUE(row["advantage"]["text"].get<std::string>().starts_with("≈ within noise (95% CI "))
      << row["advantage"]["text"];
  EXPECT_EQ(row["advantage"]["winner"], nullptr);
  double lo = row["advantage"]["ci95"][0];
  double hi = row["advantage"]["ci95"][1];
  EXPECT_LE(lo, 1.0);
  EXPECT_GE(hi, 1.0);
  EXPECT_EQ(row["advantage"]["within_noise"], json({"A", "B"}));
  EXPECT_EQ(row["samples"], json({5, 5}));
}

TEST(CompareTest, SeparatedSamplesGiveARatioWithItsInterval) {
  std::vector<json> runs = {WithDecode(MakeRun("a"), {100, 101, 99, 102, 98}),
                            WithDecode(MakeRun("b"), {200, 201, 199, 202, 198})};
  json row = RowByKey(CompareJson(runs), "decode_tok_s");
  EXPECT_EQ(row["advantage"]["verdict"], "better");
  EXPECT_EQ(row["advantage"]["winner"], "B");
  double lo = row["advantage"]["ci95"][0];
  double hi = row["advantage"]["ci95"][1];
  // The resampled medians stay within the samples' range: 198/102 .. 202/98.
  EXPECT_GE(lo, 198.0 / 102.0 - 1e-9);
  EXPECT_LE(hi, 202.0 / 98.0 + 1e-9);
  EXPECT_LE(lo, 2.0);
  EXPECT_GE(hi, 2.0);
  EXPECT_EQ(row["advantage"]["text"],
            fmt::format("B 2.00× faster (95% CI {:.2f}–{:.2f}×)", lo, hi));
  // Lower is better: the ratio is the slower run's TTFT over the faster one's.
  std::vector<json> t = {WithTtft(MakeRun("a"), {50, 51, 49, 52}),
                         WithTtft(MakeRun("b"), {100, 99, 101, 102})};
  json ttft = RowByKey(CompareJson(t), "ttft_ms.short");
  EXPECT_EQ(ttft["advantage"]["winner"], "A");
  EXPECT_GT(ttft["advantage"]["ci95"][0].get<double>(), 1.8);
  EXPECT_NEAR(ttft["advantage"]["ratio"].get<double>(), 100.5 / 50.5, 1e-9);
}

TEST(CompareTest, SameInputsSameOutput) {
  std::vector<json> runs = {WithDecode(MakeRun("a"), {95, 100, 105, 97, 110, 90}),
                            WithDecode(MakeRun("b"), {99, 103, 108, 112, 101, 96})};
  auto first = Compare(runs, {"A", "B"}, OutputFormat::kJson);
  auto second = Compare(runs, {"A", "B"}, OutputFormat::kJson);
  ASSERT_TRUE(first.has_value() && second.has_value());
  EXPECT_EQ(*first, *second);
}

TEST(CompareTest, ARunComparedWithItselfIsSaidToBeTheSameRun) {
  json run = WithDecode(MakeRun("a"), {95, 100, 105});
  run["started_at"] = "2026-12-04T10:00:00Z";
  run["command"] = "servebench perf --profile decode";
  run["host"] = "h1";
  json other = run;
  other["started_at"] = "2026-12-04T11:00:00Z";  // a second run of the same command
  auto same = Compare(std::vector<json>{run, run}, {"A", "B"}, OutputFormat::kJson);
  ASSERT_TRUE(same.has_value()) << same.error().message;
  EXPECT_NE(json::parse(*same)["warnings"].dump().find(
                "A and B are the same run (started 2026-12-04T10:00:00Z): every ratio is 1 by "
                "construction"),
            std::string::npos)
      << *same;
  auto two = Compare(std::vector<json>{run, other}, {"A", "B"}, OutputFormat::kJson);
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(json::parse(*two)["warnings"].dump().find("same run"), std::string::npos) << *two;
}

TEST(CompareTest, OneValueHasNoInterval) {
  // A single value per run: the ratio is shown, marked, never called noise.
  json row =
      RowByKey(CompareJson({WithDecode(MakeRun("a"), {100}), WithDecode(MakeRun("b"), {101, 103})}),
               "decode_tok_s");
  EXPECT_EQ(row["advantage"]["verdict"], "no_interval");
  EXPECT_EQ(row["advantage"]["ci95"], nullptr);
  EXPECT_EQ(row["advantage"]["text"], "B 1.02× faster (n=1, no CI)");
  row = RowByKey(CompareJson({WithDecode(MakeRun("a"), {100}), WithDecode(MakeRun("b"), {100})}),
                 "decode_tok_s");
  EXPECT_EQ(row["advantage"]["text"], "Equal (n=1, no CI)");
}

TEST(CompareTest, ScoresTieOnEqualPassCounts) {
  std::vector<json> runs = {WithTests(MakeRun("a"), 65, 65), WithTests(MakeRun("b"), 65, 65)};
  EXPECT_EQ(Advantage(runs, "score.total"), "Equal");
  EXPECT_EQ(Advantage(runs, "score.category.vision"), "Equal");
  runs[1] = WithTests(MakeRun("b"), 60, 65);
  EXPECT_EQ(Advantage(runs, "score.total"), "A +5 passed");
  // 64/65 is within 3 % of 65/65 but is still a difference: counts are exact.
  runs[1] = WithTests(MakeRun("b"), 64, 65);
  EXPECT_EQ(Advantage(runs, "score.total"), "A +1 passed");
  // Different suites: pass rates are compared.
  runs[1] = WithTests(MakeRun("b"), 10, 20);
  EXPECT_EQ(Advantage({WithTests(MakeRun("a"), 10, 10), runs[1]}, "score.total"), "A 2.0× better");
  json row = RowByKey(CompareJson(runs), "score.total");
  EXPECT_EQ(row["display"], json({"65/65 (100%)", "10/20 (50%)"}));
}

// ---- Missing values ----------------------------------------------------------------------------

TEST(CompareTest, MissingOnOneSideIsDash) {
  std::vector<json> runs = {WithTtft(WithDecode(MakeRun("a"), {90}), {98}),
                            WithDecode(MakeRun("b"), {20})};
  json row = RowByKey(CompareJson(runs), "ttft_ms.short");
  ASSERT_FALSE(row.is_null());
  EXPECT_EQ(row["values"][1], nullptr);
  EXPECT_EQ(row["display"][1], "—");
  EXPECT_EQ(row["advantage"]["text"], "—");
  EXPECT_EQ(row["advantage"]["winner"], nullptr);
}

// "1.3× faster (95% CI 1.34–1.45×)" put the point outside its own bracket by rounding alone.
TEST(CompareTest, RatioPrintsInsideItsOwnInterval) {
  std::vector<json> runs = {WithDecode(MakeRun("a"), {213, 214, 214, 214, 215}),
                            WithDecode(MakeRun("b"), {100, 100, 100, 100, 100})};
  json row = RowByKey(CompareJson(runs), "decode_tok_s");
  std::string text = row["advantage"]["text"];
  double ratio = 0;
  double lo = 0;
  double hi = 0;
  ASSERT_EQ(std::sscanf(text.c_str(), "A %lf× faster (95%% CI %lf–%lf×)", &ratio, &lo, &hi), 3)
      << text;
  EXPECT_EQ(text, "A 2.14× faster (95% CI 2.13–2.15×)");
  EXPECT_LE(lo, ratio);
  EXPECT_LE(ratio, hi);
}

// Two runs 0.2% apart with no spread: inside the default equivalence margin they are "same";
// with no margin the interval 1.002–1.002 prints as 1.00–1.00, which is within noise, not
// "1.00× faster" (the same figures were shown both ways).
TEST(CompareTest, AnIntervalThatPrintsAsOneIsWithinNoise) {
  std::vector<json> runs = {WithDecode(MakeRun("a"), {1002, 1002, 1002, 1002, 1002}),
                            WithDecode(MakeRun("b"), {1000, 1000, 1000, 1000, 1000})};
  json row = RowByKey(CompareJson(runs), "decode_tok_s");
  EXPECT_EQ(row["advantage"]["verdict"], "same");
  EXPECT_EQ(row["advantage"]["text"], "same (within 2.5%)");
  std::vector<CompareRun> in;
  for (const json& r : runs) {
    in.push_back(CompareRun{r, {}, false, {}});
  }
  auto c = BuildComparison(in, {"A", "B"}, 0.0);
  ASSERT_TRUE(c.has_value());
  json doc = json::parse(RenderCompareJson(*c));
  row = RowByKey(doc, "decode_tok_s");
  EXPECT_EQ(doc["equivalence_pct"], 0.0);
  EXPECT_EQ(row["advantage"]["verdict"], "within_noise");
  EXPECT_EQ(row["advantage"]["text"], "≈ within noise (95% CI 1.00–1.00×)");
}

TEST(CompareTest, WallTimeIsShorterNotFaster) {
  json a = MakeRun("a");
  json b = MakeRun("b");
  a["summary"] = {{"wall_time_s", 100.0}};
  b["summary"] = {{"wall_time_s", 200.0}};
  json row = RowByKey(CompareJson({a, b}), "summary.wall_time_s");
  EXPECT_EQ(row["advantage"]["text"], "A 2.0× shorter (n=1, no CI)");
}

// Against --search-rate runs compare said offered rates "none" and dropped the Rate section.
TEST(CompareTest, RateSearchRunsCompareTheirAnswers) {
  auto search = [](const std::string& model, double best) {
    json r = MakeRun(model);
    r["perf"]["rate"] = {
        {"rates", json::array()},
        {"search",
         {{"result", "found"},
          {"best_rps", best},
          {"points", json::array({{{"rate_rps", best}, {"offered_rate_rps", best}}})}}}};
    return r;
  };
  json doc = CompareJson({search("a", 11.3), search("b", 8.0)});
  json row = RowByKey(doc, "rate.search.best_rps");
  ASSERT_FALSE(row.is_null()) << doc.dump();
  EXPECT_EQ(row["display"], json({"11.30 req/s (found)", "8.00 req/s (found)"}));
  EXPECT_EQ(row["advantage"]["winner"], "A");
  for (const json& w : doc["warnings"]) {
    EXPECT_EQ(w.get<std::string>().find("none"), std::string::npos) << w;
  }
  // One search run against one with fixed rates: the warning says which is which.
  json fixed = MakeRun("c");
  fixed["perf"]["rate"] = {{"rates", json::array({{{"rate_rps", 4}}})}};
  json mixed = CompareJson({search("a", 11.3), fixed});
  bool said = false;
  for (const json& w : mixed["warnings"]) {
    said = said || w.get<std::string>().find("a rate search (found, best 11.30 req/s)") !=
                       std::string::npos;
  }
  EXPECT_TRUE(said) << mixed["warnings"].dump();
}

TEST(CompareTest, RowMissingEverywhereIsLeftOut) {
  json doc = CompareJson({WithDecode(MakeRun("a"), {90}), WithDecode(MakeRun("b"), {20})});
  EXPECT_TRUE(RowByKey(doc, "ttft_ms.short").is_null());
  EXPECT_TRUE(RowByKey(doc, "score.total").is_null());
  EXPECT_TRUE(RowByKey(doc, "spec_decode.acceptance_rate").is_null());
}

TEST(CompareTest, NullMedianIsNotZero) {
  json b = MakeRun("b");
  b["perf"]["decode"] = {{"decode_tok_s", {{"n", 0}}}};
  json row = RowByKey(CompareJson({WithDecode(MakeRun("a"), {90}), b}), "decode_tok_s");
  EXPECT_EQ(row["display"], json({"90.0 tok/s", "—"}));
  EXPECT_EQ(row["advantage"]["text"], "—");
}

// ---- Three runs --------------------------------------------------------------------------------

TEST(CompareTest, ThreeRunsBestAgainstRunnerUp) {
  auto around = [](double v) { return std::vector<double>{v - 2, v - 1, v, v + 1, v + 2}; };
  std::vector<json> runs = {WithDecode(MakeRun("a"), around(100)),
                            WithDecode(MakeRun("b"), around(200)),
                            WithDecode(MakeRun("c"), around(300))};
  std::vector<std::string> labels = {"A", "B", "C"};
  EXPECT_TRUE(Advantage(runs, "decode_tok_s", labels).starts_with("C 1.50× faster (95% CI"));
  runs[2] = WithDecode(MakeRun("c"), around(200.5));
  EXPECT_EQ(Advantage(runs, "decode_tok_s", labels), "same: B, C (within 2.5%)");
  runs[0] = WithDecode(MakeRun("a"), around(200.2));
  EXPECT_EQ(Advantage(runs, "decode_tok_s", labels), "same (within 2.5%)");
  // Wider apart (2%) with a wide spread: the interval holds 1 but leaves the margin.
  runs = {WithDecode(MakeRun("a"), {150, 175, 200, 225, 250}),
          WithDecode(MakeRun("b"), {154, 179, 204, 229, 254}),
          WithDecode(MakeRun("c"), around(100))};
  EXPECT_TRUE(Advantage(runs, "decode_tok_s", labels).starts_with("≈ within noise: A, B (95% CI"))
      << Advantage(runs, "decode_tok_s", labels);
  // A run without the figure does not stop the others from being compared.
  runs = {MakeRun("a"), WithDecode(MakeRun("b"), {200}), WithDecode(MakeRun("c"), {100})};
  EXPECT_EQ(Advantage(runs, "decode_tok_s", labels), "B 2.0× faster (n=1, no CI)");
}

TEST(CompareTest, MarkdownTableShape) {
  std::vector<json> runs = {WithTtft(WithDecode(MakeRun("a"), {100}), {50}),
                            WithTtft(WithDecode(MakeRun("b"), {200}), {60}),
                            WithDecode(MakeRun("c"), {300})};
  auto md = Compare(runs, {"A", "B", "C"}, OutputFormat::kMarkdown);
  ASSERT_TRUE(md.has_value()) << md.error().message;
  std::istringstream in(*md);
  std::vector<std::string> table;
  bool in_glance = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "## At a glance") {
      in_glance = true;
    } else if (in_glance && line.starts_with("|")) {
      table.push_back(line);
    } else if (in_glance && !table.empty()) {
      break;
    }
  }
  ASSERT_GE(table.size(), 4u) << *md;
  EXPECT_EQ(table[0], "| Metric | A | B | C | Advantage |");
  EXPECT_EQ(table[1], "|---|---:|---:|---:|---|");
  EXPECT_EQ(table[2],
            "| Decode speed (median) | 100.0 tok/s | 200.0 tok/s | 300.0 tok/s | C 1.5× faster "
            "(n=1, no CI) |");
  EXPECT_EQ(table[3], "| TTFT (short prompt) | 50 ms | 60 ms | — | A 1.2× faster (n=1, no CI) |");
  for (const std::string& row : table) {
    EXPECT_EQ(std::count(row.begin(), row.end(), '|'), 6) << row;
  }
}

// ---- Labels and errors -------------------------------------------------------------------------

TEST(CompareTest, LabelsDefaultToModelAndDisambiguate) {
  std::vector<json> runs = {MakeRun("Qwen/Qwen3-8B"), MakeRun("Qwen/Qwen3-8B"), MakeRun("other")};
  EXPECT_EQ(DefaultLabels(runs, {"runs/base/", "runs/mtp/results.json", "runs/o"}),
            (std::vector<std::string>{"Qwen/Qwen3-8B (base)", "Qwen/Qwen3-8B (mtp)", "other"}));
  EXPECT_EQ(DefaultLabels(runs),
            (std::vector<std::string>{"Qwen/Qwen3-8B #1", "Qwen/Qwen3-8B #2", "other"}));
  EXPECT_EQ(
      DefaultLabels(runs, {"x/same", "y/same", "z"}),
      (std::vector<std::string>{"Qwen/Qwen3-8B (same) #1", "Qwen/Qwen3-8B (same) #2", "other"}));
  auto md =
      Compare(std::vector<json>{WithDecode(MakeRun("m1"), {1}), WithDecode(MakeRun("m2"), {2})}, {},
              OutputFormat::kMarkdown);
  ASSERT_TRUE(md.has_value());
  EXPECT_NE(md->find("| Metric | m1 | m2 | Advantage |"), std::string::npos) << *md;
}

TEST(CompareTest, Errors) {
  auto one = Compare(std::vector<json>{MakeRun("a")}, {}, OutputFormat::kMarkdown);
  ASSERT_FALSE(one.has_value());
  EXPECT_EQ(one.error().code, ErrorCode::kUsage);
  auto labels =
      Compare(std::vector<json>{MakeRun("a"), MakeRun("b")}, {"only one"}, OutputFormat::kMarkdown);
  ASSERT_FALSE(labels.has_value());
  EXPECT_EQ(labels.error().code, ErrorCode::kUsage);
}

TEST(CompareTest, HtmlEscapesEverything) {
  auto html = Compare(std::vector<json>{WithDecode(MakeRun("<script>x</script>"), {1}),
                                        WithDecode(MakeRun("b&c"), {2})},
                      {}, OutputFormat::kHtml);
  ASSERT_TRUE(html.has_value());
  EXPECT_EQ(html->find("<script>"), std::string::npos) << *html;
  EXPECT_NE(html->find("&lt;script&gt;x&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html->find("b&amp;c"), std::string::npos);
}

// One stylesheet, report.html's (dark mode and print included), with or without charts.
TEST(CompareTest, HtmlHasOneStylesheetWithDarkModeAndPrint) {
  for (const bool charts : {false, true}) {
    json a = MakeRun("a"), b = MakeRun("b");
    if (charts) {
      a = WithDecode(a, {100, 101, 99});
      b = WithDecode(b, {50, 51, 49});
    }
    auto html = Compare(std::vector<json>{a, b}, {}, OutputFormat::kHtml);
    ASSERT_TRUE(html.has_value());
    EXPECT_EQ(html->find("<style>"), html->rfind("<style>")) << "charts=" << charts;
    EXPECT_NE(html->find("prefers-color-scheme: dark"), std::string::npos);
    EXPECT_NE(html->find("@media print"), std::string::npos);
    EXPECT_EQ(html->find("<svg") != std::string::npos, charts) << *html;
  }
}

TEST(CompareTest, NotesWarnAboutSimulatorAndPartialRuns) {
  json a = WithDecode(MakeRun("a"), {1});
  json b = WithDecode(MakeRun("b"), {2});
  b["target"]["simulated"] = true;
  b["status"] = "interrupted";
  b["perf"]["decode"]["tokens"] = 512;
  json doc = CompareJson({a, b});
  std::string notes = doc["notes"].dump();
  EXPECT_NE(notes.find("B ran against the built-in simulator"), std::string::npos) << notes;
  EXPECT_NE(notes.find("B has partial results (status: interrupted)"), std::string::npos) << notes;
  std::string warnings = doc["warnings"].dump();
  EXPECT_NE(warnings.find("Decode token counts differ: A 256; B 512."), std::string::npos)
      << warnings;
}

// The profile table's options each run was given (config.profile_options): a value that
// differs between runs that both read it is a warning; list spellings and a default written out
// are the same value; an option of a profile only one run ran, a run that recorded no options,
// and the options whose rows the other warnings show are not.
TEST(CompareTest, WarnsWhenRunsReadAnOptionWithDifferentValues) {
  auto with_rate = [](json run, json options) {
    run["perf"]["rate"] = {{"rates", json::array()}};
    run["config"]["profile_options"] = std::move(options);
    return run;
  };
  json a = with_rate(WithDecode(MakeRun("a"), {1}),
                     {{"--slo", "ttft_ms=500"}, {"--duration-s", "10"}, {"--rates", "5,10"}});
  json b = with_rate(WithDecode(MakeRun("b"), {2}), {{"--slo", "ttft_ms=200"},
                                                     {"--arrival", "poisson"},
                                                     {"--rates", "5,20"},
                                                     {"--prefix-hits", "9"},
                                                     {"--context-cached", ""}});
  const std::string warnings = CompareJson({a, b})["warnings"].dump();
  EXPECT_NE(warnings.find("--slo settings differ: A ttft_ms=500; B ttft_ms=200."),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("--duration-s settings differ: A 10; B none."), std::string::npos)
      << warnings;
  EXPECT_EQ(warnings.find("--arrival"), std::string::npos) << warnings;  // the default, given
  EXPECT_EQ(warnings.find("--rates settings"), std::string::npos) << warnings;  // rows show it
  EXPECT_EQ(warnings.find("--prefix-hits"), std::string::npos) << warnings;     // neither ran it
  EXPECT_EQ(warnings.find("--context-cached"), std::string::npos) << warnings;

  // A path is one value, spaces and all.
  a["perf"]["replay"] = {{"classes", json::array()}};
  b["perf"]["replay"] = {{"classes", json::array()}};
  a["config"]["profile_options"]["--trace"] = "my traces/a,b.jsonl";
  b["config"]["profile_options"]["--trace"] = "my traces/c.jsonl";
  EXPECT_NE(CompareJson({a, b})["warnings"].dump().find(
                "--trace settings differ: A my traces/a,b.jsonl; B my traces/c.jsonl."),
            std::string::npos);
  a["perf"].erase("replay");
  b["perf"].erase("replay");

  // Both ran context: a flag given to one of them is "on" against "off".
  a["perf"]["context"] = {{"rows", json::array()}};
  b["perf"]["context"] = {{"rows", json::array()}};
  EXPECT_NE(
      CompareJson({a, b})["warnings"].dump().find("--context-cached settings differ: A off; B on."),
      std::string::npos);

  // A run written before the options were recorded: nothing to compare with.
  json old = a;
  old["config"].erase("profile_options");
  EXPECT_EQ(CompareJson({old, b})["warnings"].dump().find("settings differ"), std::string::npos);
  // The same values, however they were typed: no warning.
  a["config"]["profile_options"]["--slo"] = "ttft_ms=500,tpot_ms=50";
  json c = a;
  c["config"]["profile_options"]["--slo"] = "ttft_ms=500, tpot_ms=50";
  c["config"]["profile_options"]["--arrival"] = "poisson";
  EXPECT_EQ(CompareJson({a, c})["warnings"].dump().find("settings differ"), std::string::npos);
}

// ---- Goldens -----------------------------------------------------------------------------------

TEST(CompareGolden, HeadToHead) {
  std::vector<json> runs = {LoadData("h2h_a.json"), LoadData("h2h_b.json")};
  std::vector<std::string> labels = {"35B-A3B-NVFP4", "27B-NVFP4"};
  for (auto [format, name] : {std::pair{OutputFormat::kMarkdown, "compare_h2h.md"},
                              std::pair{OutputFormat::kJson, "compare_h2h.json"},
                              std::pair{OutputFormat::kHtml, "compare_h2h.html"}}) {
    auto out = Compare(runs, labels, format);
    ASSERT_TRUE(out.has_value()) << out.error().message;
    ExpectGolden(*out, name);
  }
}

TEST(CompareGolden, ThreeRunsWithDefaultLabels) {
  std::vector<json> runs = {LoadData("h2h_a.json"), LoadData("h2h_b.json"),
                            LoadData("perf_sim.json")};
  auto out = Compare(runs, {}, OutputFormat::kMarkdown);
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ExpectGolden(*out, "compare_three.md");
}

}  // namespace
}  // namespace sb::report
