// compare's "Resources" section (src/report/compare_resources.cpp, docs/compare.md): the whole
// run, the decode runs together and each matching concurrency level, as single measurements
// (n=1, no CI); a figure only when at least two runs have it; a warning for a run without
// resources and for peak memory that is GPU memory in one run and RSS in another.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/compare.h"

namespace sb::report {
namespace {

using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024 * 1024;

json MakeRun(const std::string& model) {
  return json{{"schema", "servebench.results/1"},
              {"status", "complete"},
              {"target", {{"endpoint", "http://h:8000/v1"}, {"model", model}}},
              {"summary", json::object()},
              {"tests", json::array()},
              {"perf", json::object()},
              {"warnings", json::array()}};
}

json Figures(double peak_gib, std::optional<double> energy_j, double window_s, double tokens,
             const char* source = "gpu") {
  json f = {{"window_s", window_s},
            {"output_tokens", tokens},
            {"memory_bytes", {{"peak", peak_gib * kGiB}, {"mean", peak_gib * kGiB}}},
            {"memory_source", source},
            {"power_w", nullptr},
            {"energy_j", nullptr},
            {"j_per_token", nullptr},
            {"tokens_per_j", nullptr}};
  if (energy_j) {
    f["power_w"] = {{"peak", *energy_j / window_s}, {"mean", *energy_j / window_s}};
    f["energy_j"] = *energy_j;
    f["j_per_token"] = *energy_j / tokens;
    f["tokens_per_j"] = tokens / *energy_j;
  }
  return f;
}

// A run with resources: the whole run, two decode runs and the given concurrency levels, each
// window `energy` joules over 1 s for 200 tokens (energy nullopt: no power source).
json WithResources(json run, double peak_gib, std::optional<double> energy,
                   std::vector<int> levels = {1, 2}, const char* source = "gpu") {
  run["resources"] = {{"period_ms", 250},
                      {"samples", 40},
                      {"sources", json::array()},
                      {"run", Figures(peak_gib, energy ? std::optional(*energy * 5) : std::nullopt,
                                      5, 1000, source)}};
  run["perf"]["decode"]["runs"] = json::array();
  for (int i = 1; i <= 2; ++i) {
    run["perf"]["decode"]["runs"].push_back(
        {{"label", "run " + std::to_string(i)},
         {"status", "ok"},
         {"resources", Figures(peak_gib, energy, 1, 200, source)}});
  }
  for (int c : levels) {
    run["perf"]["concurrency"]["levels"].push_back(
        {{"concurrency", c}, {"resources", Figures(peak_gib, energy, 1, 200.0 * c, source)}});
  }
  return run;
}

json CompareJson(const std::vector<json>& runs) {
  auto out = Compare(runs, {"A", "B"}, OutputFormat::kJson);
  EXPECT_TRUE(out.has_value()) << out.error().message;
  return out.has_value() ? json::parse(*out) : json();
}

json Section(const json& doc, const std::string& id) {
  for (const json& s : doc["sections"]) {
    if (s["id"] == id) {
      return s;
    }
  }
  return nullptr;
}

json Row(const json& doc, const std::string& key) {
  const json s = Section(doc, "resources");
  if (!s.is_null()) {
    for (const json& row : s["rows"]) {
      if (row["key"] == key) {
        return row;
      }
    }
  }
  return nullptr;
}

TEST(CompareResourcesTest, WholeRunDecodeAndMatchingLevelsAreSingleMeasurements) {
  const json doc = CompareJson({WithResources(MakeRun("a"), 40, 100.0, {1, 2}),
                                WithResources(MakeRun("b"), 20, 150.0, {2, 4})});
  ASSERT_FALSE(Section(doc, "resources").is_null());

  json row = Row(doc, "resources.run.peak_memory_bytes");
  ASSERT_FALSE(row.is_null());
  EXPECT_EQ(row["metric"], "Peak memory, whole run");
  EXPECT_EQ(row["values"], json::array({40 * kGiB, 20 * kGiB}));
  EXPECT_EQ(row["display"], json::array({"40.00 GiB", "20.00 GiB"}));
  EXPECT_EQ(row["advantage"]["text"], "B 2.0× smaller (n=1, no CI)");
  EXPECT_EQ(row["advantage"]["verdict"], "no_interval");

  // The decode runs together: A 200 J over 400 tokens, B 300 J: A is 1.5× more efficient.
  row = Row(doc, "resources.decode.j_per_token");
  ASSERT_FALSE(row.is_null());
  EXPECT_DOUBLE_EQ(row["values"][0].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(row["values"][1].get<double>(), 0.75);
  EXPECT_EQ(row["advantage"]["text"], "A 1.5× more efficient (n=1, no CI)");
  row = Row(doc, "resources.decode.mean_power_w");
  EXPECT_DOUBLE_EQ(row["values"][0].get<double>(), 100);  // 200 J over 2 s
  EXPECT_EQ(row["advantage"]["text"], "A 1.5× lower (n=1, no CI)");
  row = Row(doc, "resources.decode.tokens_per_j");
  EXPECT_EQ(row["better"], "higher");
  EXPECT_EQ(row["advantage"]["winner"], "A");

  // Level 2 is in both runs; 1 and 4 only in one: no row for them.
  EXPECT_FALSE(Row(doc, "resources.concurrency.c2.j_per_token").is_null());
  EXPECT_EQ(Row(doc, "resources.concurrency.c2.j_per_token")["metric"],
            "Energy per token, concurrency 2");
  EXPECT_TRUE(Row(doc, "resources.concurrency.c1.j_per_token").is_null());
  EXPECT_TRUE(Row(doc, "resources.concurrency.c4.j_per_token").is_null());
  // Every run had resources, all memory from the GPU: no resource warning.
  for (const json& w : doc["warnings"]) {
    EXPECT_EQ(w.get<std::string>().find("esources"), std::string::npos) << w;
    EXPECT_EQ(w.get<std::string>().find("Peak memory"), std::string::npos) << w;
  }
}

TEST(CompareResourcesTest, AFigureOnlyOneRunMeasuredHasNoRow) {
  // B had no power source: memory is compared, power and energy are not (no zeros, no "—").
  const json doc = CompareJson(
      {WithResources(MakeRun("a"), 40, 100.0), WithResources(MakeRun("b"), 20, std::nullopt)});
  EXPECT_FALSE(Row(doc, "resources.run.peak_memory_bytes").is_null());
  for (const char* key :
       {"resources.run.mean_power_w", "resources.run.j_per_token", "resources.decode.tokens_per_j",
        "resources.concurrency.c1.j_per_token"}) {
    EXPECT_TRUE(Row(doc, key).is_null()) << key;
  }
}

TEST(CompareResourcesTest, ARunWithoutResourcesGivesOneWarningAndNoSection) {
  const json doc = CompareJson({WithResources(MakeRun("a"), 40, 100.0), MakeRun("b")});
  EXPECT_TRUE(Section(doc, "resources").is_null());
  int warnings = 0;
  for (const json& w : doc["warnings"]) {
    if (w.get<std::string>().find("Resources were sampled in A but not in B") !=
        std::string::npos) {
      ++warnings;
    }
  }
  EXPECT_EQ(warnings, 1) << doc["warnings"].dump();
  // Markdown says it too, and has no Resources table.
  auto md = Compare(std::vector<json>{WithResources(MakeRun("a"), 40, 100.0), MakeRun("b")},
                    {"A", "B"}, OutputFormat::kMarkdown);
  ASSERT_TRUE(md.has_value());
  EXPECT_NE(md->find("Resources were sampled in A but not in B"), std::string::npos);
  EXPECT_EQ(md->find("## Resources"), std::string::npos);
  EXPECT_NE(md->find("not in B (a run from before the sampler)"), std::string::npos);

  // A run merged from shards has none because sampling is per machine: said so.
  json merged = MakeRun("b");
  merged["shards"] = {{"count", 4}};
  auto md2 = Compare(std::vector<json>{WithResources(MakeRun("a"), 40, 100.0), merged}, {"A", "B"},
                     OutputFormat::kMarkdown);
  ASSERT_TRUE(md2.has_value());
  EXPECT_NE(md2->find("not in B (merged from shards: each shard's run keeps its own)"),
            std::string::npos)
      << *md2;
}

TEST(CompareResourcesTest, PeakMemoryOfDifferentSourcesIsFlagged) {
  const json doc =
      CompareJson({WithResources(MakeRun("a"), 40, 100.0, {1}, "gpu"),
                   WithResources(MakeRun("b"), 0.05, std::nullopt, {1}, "server_rss")});
  bool flagged = false;
  for (const json& w : doc["warnings"]) {
    flagged = flagged || w.get<std::string>().find(
                             "Peak memory is not the same quantity in "
                             "every run: A GPU memory; B server RSS") != std::string::npos;
  }
  EXPECT_TRUE(flagged) << doc["warnings"].dump();
  EXPECT_EQ(Row(doc, "resources.run.peak_memory_bytes")["display"][1], "51.2 MiB (RSS)");
}

TEST(CompareResourcesTest, MarkdownAndHtmlRenderTheSection) {
  const std::vector<json> runs = {WithResources(MakeRun("a"), 40, 100.0),
                                  WithResources(MakeRun("b"), 20, 150.0)};
  auto md = Compare(runs, {"A", "B"}, OutputFormat::kMarkdown);
  ASSERT_TRUE(md.has_value());
  EXPECT_NE(md->find("## Resources"), std::string::npos);
  EXPECT_NE(md->find("| Peak memory, whole run | 40.00 GiB | 20.00 GiB | B 2.0× smaller (n=1, "
                     "no CI) |"),
            std::string::npos)
      << *md;
  auto html = Compare(runs, {"A", "B"}, OutputFormat::kHtml);
  ASSERT_TRUE(html.has_value());
  EXPECT_NE(html->find("<h2>Resources</h2>"), std::string::npos);
}

}  // namespace
}  // namespace sb::report
