// The comparison data model: quality pairing, per-test changes, warnings, the extra sections and
// loading a run directory with its samples.jsonl.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "report/compare.h"

namespace sb::report {
namespace {

using nlohmann::json;

json MakeDoc(const std::string& model) {
  return json{{"schema", "servebench.results/1"},
              {"status", "complete"},
              {"tool", {{"name", "servebench"}, {"version", "0.1.0"}}},
              {"target", {{"model", model}, {"simulated", false}}},
              {"summary", json::object()},
              {"tests", json::array()},
              {"perf", json::object()},
              {"spec_decode", nullptr},
              {"warnings", json::array()}};
}

json TestOf(const std::string& id, const std::string& status, const std::string& reason = "") {
  json t = {{"id", id}, {"name", "Test " + id}, {"category", "text"}, {"status", status}};
  if (!reason.empty()) {
    t["reason"] = reason;
  }
  return t;
}

Comparison Build(const std::vector<json>& docs) {
  std::vector<CompareRun> runs;
  for (const json& d : docs) {
    runs.push_back(CompareRun{d, {}, false, {}});
  }
  auto c = BuildComparison(runs, {"A", "B"});
  EXPECT_TRUE(c.has_value()) << c.error().message;
  return c.has_value() ? *c : Comparison{};
}

const CompareSection* SectionOf(const Comparison& c, const std::string& id) {
  for (const CompareSection& s : c.sections) {
    if (s.id == id) {
      return &s;
    }
  }
  return nullptr;
}

const CompareRow* RowOf(const Comparison& c, const std::string& key) {
  for (const CompareSection& s : c.sections) {
    for (const CompareRow& r : s.rows) {
      if (r.key == key) {
        return &r;
      }
    }
  }
  return nullptr;
}

TEST(CompareModelTest, PairedQualityAndFlips) {
  json a = MakeDoc("a");
  json b = MakeDoc("b");
  // 10 shared tests: 4 pass in both, 5 pass only in B, 1 only in A; one test only in A.
  for (int i = 0; i < 4; ++i) {
    a["tests"].push_back(TestOf("both" + std::to_string(i), "PASS"));
    b["tests"].push_back(TestOf("both" + std::to_string(i), "PASS"));
  }
  for (int i = 0; i < 5; ++i) {
    a["tests"].push_back(TestOf("fixed" + std::to_string(i), "FAIL", "wrong"));
    b["tests"].push_back(TestOf("fixed" + std::to_string(i), "PASS"));
  }
  a["tests"].push_back(TestOf("broke", "PASS"));
  b["tests"].push_back(TestOf("broke", "LOOP", "repetition"));
  a["tests"].push_back(TestOf("empty", "FAIL"));
  b["tests"].push_back(TestOf("empty", "EMPTY", "budget used"));
  a["tests"].push_back(TestOf("only_a", "PASS"));
  Comparison c = Build({a, b});
  ASSERT_EQ(c.paired.size(), 1u);
  const PairedQuality& p = c.paired[0];
  EXPECT_EQ(p.shared, 11);
  EXPECT_EQ(p.both_pass, 4);
  EXPECT_EQ(p.other_only, 5);
  EXPECT_EQ(p.base_only, 1);
  EXPECT_EQ(p.neither, 1);
  EXPECT_NEAR(p.p_value, 2.0 * (1 + 6) / 64.0, 1e-12);  // b = 1, c = 5
  EXPECT_NE(p.text.find("no significant difference"), std::string::npos) << p.text;
  std::vector<std::string> changes;
  for (const TestChange& ch : c.changes) {
    changes.push_back(ch.id + ": " + ch.change);
  }
  EXPECT_EQ(changes, (std::vector<std::string>{"broke: PASS → LOOP", "empty: new EMPTY",
                                               "fixed0: FAIL → PASS", "fixed1: FAIL → PASS",
                                               "fixed2: FAIL → PASS", "fixed3: FAIL → PASS",
                                               "fixed4: FAIL → PASS"}));
  EXPECT_EQ(c.changes[0].reason, "repetition");
  // The test only A has is named in a warning.
  std::string warnings = json(c.warnings).dump();
  EXPECT_NE(warnings.find("1 only in A (only_a), 0 only in B"), std::string::npos) << warnings;
  std::string md = RenderCompareMarkdown(c);
  EXPECT_NE(md.find("## Quality: tests both runs ran"), std::string::npos);
  EXPECT_NE(md.find("| Test broke (broke) | A → B | PASS → LOOP | repetition |"), std::string::npos)
      << md;
}

TEST(CompareModelTest, SignificantQualityDifference) {
  json a = MakeDoc("a");
  json b = MakeDoc("b");
  for (int i = 0; i < 8; ++i) {
    a["tests"].push_back(TestOf("t" + std::to_string(i), "PASS"));
    b["tests"].push_back(TestOf("t" + std::to_string(i), "FAIL"));
  }
  Comparison c = Build({a, b});
  ASSERT_EQ(c.paired.size(), 1u);
  EXPECT_NEAR(c.paired[0].p_value, 2.0 / 256.0, 1e-12);
  EXPECT_NE(c.paired[0].text.find("A passes more of them (p < 0.05)"), std::string::npos)
      << c.paired[0].text;
}

TEST(CompareModelTest, OneWarningPerUnsharedCondition) {
  json a = MakeDoc("a");
  json b = MakeDoc("b");
  a["perf"]["decode"] = {{"tokens", 256}};
  b["perf"]["decode"] = {{"tokens", 128}};
  b["perf"]["concurrency"] = {{"tokens", 256}, {"levels", {{{"concurrency", 1}}}}};
  a["perf"]["ttft"] = {{"prompts", {{{"name", "short"}, {"prompt_tokens", 14}}}}};
  b["perf"]["ttft"] = {{"prompts", {{{"name", "short"}, {"prompt_tokens", 20}}}}};
  a["config"] = {{"thinking", true}};
  b["config"] = {{"thinking", nullptr}};
  b["tool"]["version"] = "0.2.0";
  a["suite"] = {{"names", {"standard"}}};
  b["suite"] = {{"names", {"quick"}}};
  Comparison c = Build({a, b});
  std::vector<std::string> expected = {
      "Profile sets differ: A decode, ttft; B concurrency, decode, ttft.",
      "Decode token counts differ: A 256; B 128.",
      "TTFT prompts differ: A short (14 tokens); B short (20 tokens).",
      "Thinking settings differ: A on; B not sent.",
      "Suites differ: A standard (0 tests); B quick (0 tests).",
      "servebench versions differ: A 0.1.0; B 0.2.0."};
  EXPECT_EQ(c.warnings, expected);
  // Runs that share everything get none.
  EXPECT_TRUE(Build({a, a}).warnings.empty());
}

TEST(CompareModelTest, LevelsDifferNamesBothLists) {
  json a = MakeDoc("a");
  json b = MakeDoc("b");
  a["perf"]["concurrency"] = {{"levels", {{{"concurrency", 1}}, {{"concurrency", 4}}}}};
  b["perf"]["concurrency"] = {{"levels", {{{"concurrency", 1}}, {{"concurrency", 8}}}}};
  Comparison c = Build({a, b});
  EXPECT_EQ(c.warnings, (std::vector<std::string>{"Concurrency levels differ: A 1, 4; B 1, 8."}));
}

json RatePoint(double rate, std::vector<double> ttfts, double goodput) {
  json reqs = json::array();
  for (double t : ttfts) {
    reqs.push_back({{"status", "ok"}, {"ttft_ms", t}});
  }
  return {{"rate_rps", rate},
          {"output_tok_s", 100 * rate},
          {"goodput", {{"goodput_rps", goodput}, {"fraction", 1.0}}},
          {"from_send",
           {{"ttft_ms",
             {{"p50", ttfts[ttfts.size() / 2]}, {"p90", ttfts.back()}, {"p99", ttfts.back()}}}}},
          {"itl_ms", {{"p50", 5.0}, {"p99", 9.0}}},
          {"requests", reqs}};
}

TEST(CompareModelTest, SectionsWhenBothRunsHaveTheData) {
  json a = MakeDoc("a");
  json b = MakeDoc("b");
  a["perf"]["rate"] = {{"rates", {RatePoint(2, {40, 41, 42, 43, 44}, 2.0)}}};
  b["perf"]["rate"] = {{"rates", {RatePoint(2, {80, 82, 84, 86, 88}, 1.5)}}};
  a["roofline"] = {{"ceiling_tok_s", 125.4}, {"percent_of_ceiling", 61.1}};
  b["roofline"] = {{"ceiling_tok_s", 125.4}, {"percent_of_ceiling", 30.0}};
  a["spec_decode"] = {{"acceptance_rate", 0.7}, {"per_position", {0.86, 0.67, 0.55}}};
  b["spec_decode"] = {{"acceptance_rate", 0.5}, {"per_position", {0.8, 0.5}}};
  a["perf"]["context"] = {
      {"rows", {{{"size", 2000}, {"ttft_ms", 80.0}, {"prefill_tok_s", 25000}}}}};
  b["perf"]["context"] = {
      {"rows", {{{"size", 2000}, {"ttft_ms", 160.0}, {"prefill_tok_s", 12500}}}}};
  a["server_process"] = {{"time_to_ready_s", 212.4}};
  b["server_process"] = {{"time_to_ready_s", 100.0}};
  Comparison c = Build({a, b});
  for (const char* id : {"glance", "rate", "roofline", "spec_decode", "context", "startup"}) {
    EXPECT_NE(SectionOf(c, id), nullptr) << id;
  }
  const CompareRow* p50 = RowOf(c, "rate.2.00.ttft_ms.p50");
  ASSERT_NE(p50, nullptr);
  EXPECT_EQ(p50->judgement.verdict, Verdict::kBetter);
  EXPECT_EQ(p50->judgement.winner, 0u);
  EXPECT_GT(*p50->judgement.ci_low, 1.5);
  const CompareRow* p90 = RowOf(c, "rate.2.00.ttft_ms.p90");
  ASSERT_NE(p90, nullptr);
  EXPECT_DOUBLE_EQ(p90->quantile, 0.9);
  for (const char* key :
       {"rate.2.00.goodput_rps", "roofline.percent_of_ceiling", "spec_decode.position_3",
        "context.2000.prefill_tok_s", "server.time_to_ready_s"}) {
    ASSERT_NE(RowOf(c, key), nullptr) << key;
  }
  EXPECT_EQ(RowOf(c, "rate.2.00.goodput_rps")->judgement.winner, 0u);
  EXPECT_EQ(RowOf(c, "roofline.percent_of_ceiling")->judgement.text, "A 2.0× better (n=1, no CI)");
  EXPECT_EQ(RowOf(c, "spec_decode.position_3")->cells[1].text, "—");
  EXPECT_EQ(RowOf(c, "context.2000.prefill_tok_s")->judgement.winner, 0u);
  EXPECT_EQ(RowOf(c, "server.time_to_ready_s")->judgement.winner, 1u);
  // Only one run with rate data: no rate section.
  b["perf"].erase("rate");
  EXPECT_EQ(SectionOf(Build({a, b}), "rate"), nullptr);
}

// The profiles compared from their table entries' metrics (core/profile_table.h): sessions per
// turn, replay per request class, context per size, each a row per place and metric.
TEST(CompareModelTest, SessionsReplayAndContextAreComparedPerPlaceFromTheTable) {
  auto stats = [](double median) {
    return json{{"n", 3}, {"median", median}, {"p50", median}, {"p99", median * 2}};
  };
  auto turn = [&](int n, double ttft, json cached) {
    return json{{"turn", n},
                {"requests", 4},
                {"failed", 0},
                {"ttft_ms", stats(ttft)},
                {"tpot_ms", stats(10)},
                {"cached_tokens", std::move(cached)}};
  };
  json a = MakeDoc("a");
  json b = MakeDoc("b");
  json cached = stats(900);
  cached["reported"] = true;
  a["perf"]["sessions"] = {
      {"turns", {turn(1, 200, json{{"reported", false}}), turn(2, 40, cached)}}};
  b["perf"]["sessions"] = {{"turns", {turn(1, 210, cached), turn(2, 160, cached)}}};
  a["perf"]["replay"] = {{"classes", {{{"class", "cache hit"}, {"ttft_ms", stats(30)}}}}};
  b["perf"]["replay"] = {{"classes", {{{"class", "cache hit"}, {"ttft_ms", stats(90)}}}}};
  a["perf"]["context"] = {
      {"rows",
       {{{"size", 2000}, {"ttft_ms", 80.0}, {"prefill_tok_s", 25000}},
        {{"size", 128000}, {"skipped", "over the server's max model length"}}}}};
  b["perf"]["context"] = {
      {"rows", {{{"size", 2000}, {"ttft_ms", 160.0}, {"prefill_tok_s", 12500}}}}};
  const Comparison c = Build({a, b});

  const CompareSection* sessions = SectionOf(c, "sessions");
  ASSERT_NE(sessions, nullptr);
  EXPECT_EQ(sessions->title, "Sessions per turn");
  const CompareRow* t2 = RowOf(c, "sessions.2.ttft_ms");
  ASSERT_NE(t2, nullptr);
  EXPECT_EQ(t2->metric, "TTFT, turn 2");
  EXPECT_EQ(t2->cells[0].text, "40 ms");
  EXPECT_EQ(t2->judgement.winner, 0u);
  // The turns' statistics keep no values: a ratio, no interval.
  EXPECT_EQ(t2->judgement.verdict, Verdict::kNoInterval);
  // Turn 1's cache was not reported by A's server: its cell says nothing, not a zero.
  const CompareRow* c1 = RowOf(c, "sessions.1.cached_tokens");
  ASSERT_NE(c1, nullptr);
  EXPECT_EQ(c1->cells[0].text, "—");
  EXPECT_FALSE(c1->cells[0].value.has_value());
  EXPECT_EQ(RowOf(c, "sessions.2.cached_tokens")->cells[1].text, "900 tokens");

  const CompareRow* hit = RowOf(c, "replay.cache_hit.ttft_ms");
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->metric, "TTFT, class cache hit");
  EXPECT_EQ(hit->judgement.winner, 0u);
  EXPECT_EQ(RowOf(c, "replay.cache_hit.itl_ms"), nullptr) << "neither run has ITL: no row";

  // The context rows kept their keys and names; the skipped size is no row.
  const CompareRow* ctx = RowOf(c, "context.2000.prefill_tok_s");
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(ctx->metric, "Prefill tok/s, 2,000 tokens");
  EXPECT_EQ(RowOf(c, "context.2000.ttft_ms")->metric, "TTFT, 2,000 tokens");
  EXPECT_EQ(RowOf(c, "context.128000.ttft_ms"), nullptr);
  EXPECT_EQ(SectionOf(c, "context")->title, "Context");

  // One run without sessions: no sessions section (nothing to compare).
  b["perf"].erase("sessions");
  EXPECT_EQ(SectionOf(Build({a, b}), "sessions"), nullptr);

  // Two classes whose names differ only in punctuation keep keys of their own.
  a["perf"]["replay"] = {{"classes",
                          {{{"class", "code/chat"}, {"ttft_ms", stats(30)}},
                           {{"class", "code.chat"}, {"ttft_ms", stats(60)}}}}};
  b["perf"]["replay"] = a["perf"]["replay"];
  const Comparison both = Build({a, b});
  const CompareRow* slash = RowOf(both, "replay.code_chat.ttft_ms");
  const CompareRow* dot = RowOf(both, "replay.code_chat_2.ttft_ms");
  ASSERT_NE(slash, nullptr);
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(slash->metric, "TTFT, class code/chat");
  EXPECT_EQ(dot->metric, "TTFT, class code.chat");
  EXPECT_EQ(dot->cells[0].text, "60 ms");
}

// A turn's statistics keep no values; the run's samples.jsonl records of that turn give the
// interval, but only when their median is the row's own.
TEST(CompareModelTest, ATurnsIntervalComesFromItsRecordsWhenTheyGiveItsMedian) {
  auto run = [](double median, const std::vector<double>& ttfts) {
    json doc = MakeDoc("m");
    doc["perf"]["sessions"] = {
        {"turns", {{{"turn", 2}, {"ttft_ms", {{"n", ttfts.size()}, {"median", median}}}}}}};
    CompareRun r{doc, {}, true, {}};
    for (double t : ttfts) {
      r.samples.push_back({{"profile", "sessions"}, {"status", "ok"}, {"turn", 2}, {"ttft_ms", t}});
    }
    r.samples.push_back({{"profile", "sessions"}, {"status", "ok"}, {"turn", 1}, {"ttft_ms", 1}});
    r.samples.push_back({{"profile", "sessions"}, {"status", "http_error"}, {"turn", 2}});
    return r;
  };
  auto c =
      BuildComparison({run(20, {19, 20, 21, 20, 22}), run(80, {78, 80, 83, 79, 81})}, {"A", "B"});
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const CompareRow* row = RowOf(*c, "sessions.2.ttft_ms");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->cells[0].samples, (std::vector<double>{19, 20, 21, 20, 22}));
  EXPECT_EQ(row->judgement.verdict, Verdict::kBetter);
  EXPECT_EQ(row->judgement.winner, 0u);
  ASSERT_TRUE(row->judgement.ci_low.has_value());
  EXPECT_GT(*row->judgement.ci_low, 3.0);
  // Records whose median is not the row's (tool rounds among them, say): no samples, no interval.
  c = BuildComparison({run(20, {19, 20, 21, 40, 42}), run(80, {78, 80, 83, 79, 81})}, {"A", "B"});
  ASSERT_TRUE(c.has_value());
  row = RowOf(*c, "sessions.2.ttft_ms");
  ASSERT_NE(row, nullptr);
  EXPECT_TRUE(row->cells[0].samples.empty());
  EXPECT_EQ(row->judgement.verdict, Verdict::kNoInterval);
  // A median of five requests is not one value: "no CI", not "n=1".
  EXPECT_EQ(row->judgement.text, "A 4.0× faster (no CI)");
}

// Issue 24 item 6: a goodput at a nominal rate shows the rate the drawn schedule offered.
TEST(CompareModelTest, GoodputCellsShowTheOfferedRateBesideTheNominal) {
  json a = MakeDoc("a");
  json b = MakeDoc("b");
  json pa = RatePoint(5, {40, 41, 42}, 5.84);
  pa["offered_rate_rps"] = 6.01;
  json pb = RatePoint(5, {40, 41, 42}, 4.9);
  pb["offered_rate_rps"] = 4.97;
  a["perf"]["rate"] = {{"rates", {pa}}};
  b["perf"]["rate"] = {{"rates", {pb}}};
  Comparison c = Build({a, b});
  const CompareRow* row = RowOf(c, "rate.5.00.goodput_rps");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->metric, "Goodput, 5.00 req/s");
  EXPECT_EQ(row->cells[0].text, "5.84 req/s (100%; offered 6.01 req/s)");
  EXPECT_EQ(row->cells[1].text, "4.90 req/s (100%; offered 4.97 req/s)");
}

// Issue 24 item 2: start-up times known only to the poll (0.5 s) ranked "draft 1.00× faster" the
// wrong way round; within the larger of the two resolutions they are a tie.
TEST(CompareModelTest, StartupTimesWithinTheirPollResolutionTie) {
  auto startup = [](const std::vector<json>& docs, std::vector<std::string> labels) {
    std::vector<CompareRun> runs;
    for (const json& d : docs) {
      runs.push_back(CompareRun{d, {}, false, {}});
    }
    auto c = BuildComparison(runs, labels);
    EXPECT_TRUE(c.has_value()) << c.error().message;
    const CompareRow* row = c.has_value() ? RowOf(*c, "server.time_to_ready_s") : nullptr;
    return row != nullptr ? *row : CompareRow{};
  };
  json base = MakeDoc("base");
  json draft = MakeDoc("draft");
  base["server_process"] = {{"time_to_ready_s", 0.503}, {"time_to_ready_resolution_s", 0.5}};
  draft["server_process"] = {{"time_to_ready_s", 0.501}, {"time_to_ready_resolution_s", 0.5}};
  CompareRow row = startup({base, draft}, {"base", "draft"});
  ASSERT_EQ(row.cells.size(), 2u);
  EXPECT_EQ(row.judgement.verdict, Verdict::kEqual);
  EXPECT_FALSE(row.judgement.winner.has_value());
  EXPECT_EQ(row.judgement.text, "≈ tie (within the 0.5 s resolution)");
  EXPECT_EQ(row.cells[0].text, "0.5s (±0.5s)");
  EXPECT_EQ(row.judgement.within_noise, (std::vector<std::size_t>{0, 1}));

  // Polled finely: 0.10 s (±0.02) against 0.18 s (±0.04) is a real difference.
  base["server_process"] = {{"time_to_ready_s", 0.10}, {"time_to_ready_resolution_s", 0.02}};
  draft["server_process"] = {{"time_to_ready_s", 0.18}, {"time_to_ready_resolution_s", 0.04}};
  row = startup({base, draft}, {"base", "draft"});
  EXPECT_EQ(row.judgement.winner, 0u);
  EXPECT_EQ(row.judgement.text, "base 1.8× faster (n=1, no CI)");

  // Three runs: the two within 0.04 s of the best tie with it, named.
  json third = MakeDoc("third");
  third["server_process"] = {{"time_to_ready_s", 0.9}, {"time_to_ready_resolution_s", 0.04}};
  draft["server_process"] = {{"time_to_ready_s", 0.13}, {"time_to_ready_resolution_s", 0.04}};
  row = startup({base, draft, third}, {"base", "draft", "third"});
  EXPECT_EQ(row.judgement.text, "≈ tie: base, draft (within the 0.04 s resolution)");

  // Older runs without a resolution compare exactly, as before.
  base["server_process"] = {{"time_to_ready_s", 0.503}};
  draft["server_process"] = {{"time_to_ready_s", 0.501}};
  row = startup({base, draft}, {"base", "draft"});
  EXPECT_EQ(row.judgement.winner, 1u);
}

class LoadCompareRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("compare_load_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    json r = MakeDoc("m");
    r["perf"]["decode"] = {{"decode_tok_s", {{"n", 1}, {"median", 1.0}, {"values", {1.0}}}}};
    Write("results.json", r.dump());
  }

  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }

  std::filesystem::path dir_;
};

TEST_F(LoadCompareRunTest, ReadsMeasuredSamplesOnly) {
  Write("samples.jsonl",
        R"({"profile":"warmup","label":"warm-up 1","status":"ok","decode_tok_s":9,"warmup":true})"
        "\n"
        R"({"profile":"decode","label":"run 1","status":"ok","decode_tok_s":100})"
        "\n"
        R"({"profile":"decode","label":"run 2","status":"ok","decode_tok_s":50,"superseded":true})"
        "\n"
        R"({"profile":"decode","label":"run 2","status":"http_error","decode_tok_s":null})"
        "\n"
        R"({"profile":"decode","label":"run 2","status":"ok","decode_tok_s":102})"
        "\n"
        R"({"profile":"decode","label":"run 3","sta)");  // cut off by a crash
  auto run = LoadCompareRun(dir_);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  EXPECT_TRUE(run->has_samples);
  ASSERT_EQ(run->samples.size(), 3u);  // the failed request is kept, out of every interval
  EXPECT_EQ(run->samples[1]["status"], "http_error");
  EXPECT_EQ(run->samples[2]["decode_tok_s"], 102);
  // The figure's samples come from samples.jsonl, not from results.json's one value.
  auto other = *run;
  auto c = BuildComparison({*run, other}, {"A", "B"});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(RowOf(*c, "decode_tok_s")->cells[0].samples, (std::vector<double>{100, 102}));
  // The same through results.json's path.
  EXPECT_TRUE(LoadCompareRun(dir_ / "results.json")->has_samples);
}

TEST_F(LoadCompareRunTest, WithoutSamplesUsesResultsValues) {
  auto run = LoadCompareRun(dir_);
  ASSERT_TRUE(run.has_value());
  EXPECT_FALSE(run->has_samples);
  auto c = BuildComparison({*run, *run}, {"A", "B"});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(RowOf(*c, "decode_tok_s")->cells[0].samples, (std::vector<double>{1.0}));
  EXPECT_NE(json(c->notes).dump().find("A has no samples.jsonl"), std::string::npos);
}

TEST_F(LoadCompareRunTest, BadLineIsAnErrorNamingIt) {
  Write("samples.jsonl", "{\"profile\":\"decode\"}\nnot json\n{}\n");
  auto run = LoadCompareRun(dir_);
  ASSERT_FALSE(run.has_value());
  EXPECT_NE(run.error().message.find("samples.jsonl line 2"), std::string::npos)
      << run.error().message;
}

}  // namespace
}  // namespace sb::report
