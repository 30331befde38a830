// The run store without the command line: records derived from results.json, the SQLite engine
// (add, unchanged, replace, remove), the migration of a version 1 store (tests/fixtures/store),
// and what history, leaderboard and the bridge check print.
#include "store/store.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <stdlib.h>

#include "store/import.h"
#include "store/query.h"
#include "store/record.h"
#include "support/temp_dir.h"

namespace sb::store {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using ::sb::testing::TempDir;

// A stored figure, as MetricRows makes one.
MetricRow Figure(std::string profile, std::string dim, std::string point, std::string metric,
                 double value, std::string unit, std::optional<long long> n,
                 std::optional<double> lo = std::nullopt, std::optional<double> hi = std::nullopt) {
  MetricRow r;
  r.profile = std::move(profile);
  r.dim = std::move(dim);
  r.point = std::move(point);
  r.metric = std::move(metric);
  r.value = value;
  r.unit = std::move(unit);
  r.n = n;
  r.ci_lo = lo;
  r.ci_hi = hi;
  return r;
}

json Stats(std::vector<double> values) {
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  return {{"n", values.size()}, {"median", sorted[sorted.size() / 2]}, {"values", values}};
}

json SampleResults(const std::string& started_at, double decode_base) {
  json r = {
      {"schema", "servebench.results/1"},
      {"tool", {{"name", "servebench"}, {"version", "0.1.0"}}},
      {"started_at", started_at},
      {"finished_at", started_at},
      {"status", "complete"},
      {"command", "servebench perf --profile decode,concurrency,rate"},
      {"host", "box-1"},
      {"target",
       {{"endpoint", "http://user:hunter22@127.0.0.1:8000/v1"},
        {"model", "m"},
        {"simulated", false},
        {"server", {{"kind", "vllm"}, {"version", "0.11.0"}}}}},
      {"summary",
       {{"total", 4},
        {"pass", 3},
        {"pass_rate", 0.75},
        {"effective_pass_rate", 0.9},
        {"pass_rate_ci95", {0.3, 0.95}}}},
      {"tests",
       {{{"id", "t.a"},
         {"category", "reasoning"},
         {"status", "PASS"},
         {"reason", nullptr},
         {"time_ms", 1500.0},
         {"completion_tokens", 40}}}},
      {"suite", {{"names", {"quick"}}}},
  };
  r["perf"]["decode"] = {{"tokens", 256},
                         {"runs", {{{"ttft_ms", 1.0}, {"decode_tok_s", 1.0}}}},
                         {"decode_tok_s", Stats({decode_base, decode_base + 2, decode_base - 2})},
                         {"ttft_ms", Stats({40, 41, 42})},
                         {"errors", 0}};
  json level1 = {{"concurrency", 1}, {"throughput_tok_s", 199.0}, {"requests", json::array()}};
  json level4 = {{"concurrency", 4},
                 {"throughput_tok_s", 710.25},
                 {"per_stream_decode_tok_s", Stats({170, 180, 175, 178})}};
  r["perf"]["concurrency"] = {{"tokens", 256}, {"levels", {level1, level4}}};
  json point = {{"rate_rps", 2}, {"output_tok_s", 120.5}};
  point["from_send"]["ttft_ms"] = {{"n", 10}, {"p50", 45.0}, {"p99", 90.0}};
  point["goodput"]["goodput_rps"] = 1.9;
  r["perf"]["rate"] = {{"seed", 1}, {"rates", json::array({point})}};
  return r;
}

const MetricRow* Row(const std::vector<MetricRow>& rows, const std::string& profile,
                     const std::string& metric, const std::string& point = "") {
  for (const auto& r : rows) {
    if (r.profile == profile && r.metric == metric && r.point == point) {
      return &r;
    }
  }
  return nullptr;
}

// A profile's rows are placed by the profile table's dim: prefix-cache's `prefix_tokens` (not in
// the store's fixed list) and the sessions profile's `turn` rows reach the store.
TEST(StoreRecord, RowsArePlacedByTheProfileTablesDim) {
  const json results = json::parse(R"({"perf": {
    "prefix_cache": {"prefixes": [{"prefix_tokens": 1024,
       "warm_ttft_ms": {"n": 3, "median": 25.0, "values": [24, 25, 26]}, "speedup": 2.8}]},
    "sessions": {"turns": [{"turn": 2, "ttft_ms": {"n": 4, "median": 9.0}}],
                 "levels": [{"concurrency": 4, "throughput_tok_s": 120.0}]}}})");
  const std::vector<MetricRow> rows = MetricRows(results);
  const MetricRow* warm = Row(rows, "prefix-cache", "warm_ttft_ms", "1024");
  ASSERT_NE(warm, nullptr);
  EXPECT_EQ(warm->dim, "prefix_tokens");
  EXPECT_EQ(warm->value, 25.0);
  EXPECT_EQ(warm->n, 3);
  const MetricRow* speedup = Row(rows, "prefix-cache", "speedup", "1024");
  ASSERT_NE(speedup, nullptr);
  EXPECT_EQ(speedup->value, 2.8);
  const MetricRow* turn = Row(rows, "sessions", "ttft_ms", "2");
  ASSERT_NE(turn, nullptr);
  EXPECT_EQ(turn->dim, "turn");
  // A nested row without the table's dim falls back to the fixed list.
  const MetricRow* level = Row(rows, "sessions", "throughput_tok_s", "4");
  ASSERT_NE(level, nullptr);
  EXPECT_EQ(level->dim, "concurrency");
}

TEST(StoreRecord, MetricRowsComeFromEveryProfileGenerically) {
  const auto rows = MetricRows(SampleResults("2026-12-01T00:00:00Z", 200));
  const MetricRow* decode = Row(rows, "decode", "decode_tok_s");
  ASSERT_NE(decode, nullptr);
  EXPECT_EQ(decode->value, 200);
  EXPECT_EQ(decode->unit, "tok/s");
  EXPECT_EQ(decode->n, 3);
  EXPECT_EQ(decode->ci_lo, 198);
  EXPECT_EQ(decode->ci_hi, 202);
  EXPECT_EQ(Row(rows, "decode", "ttft_ms")->unit, "ms");
  EXPECT_EQ(Row(rows, "decode", "tokens"), nullptr);  // a setting, not a result
  const MetricRow* c4 = Row(rows, "concurrency", "throughput_tok_s", "4");
  ASSERT_NE(c4, nullptr);
  EXPECT_EQ(c4->dim, "concurrency");
  EXPECT_EQ(c4->value, 710.25);
  EXPECT_NE(Row(rows, "concurrency", "per_stream_decode_tok_s", "4"), nullptr);
  const MetricRow* p50 = Row(rows, "rate", "from_send.ttft_ms.p50", "2");
  ASSERT_NE(p50, nullptr);
  EXPECT_EQ(p50->value, 45);
  EXPECT_EQ(p50->n, 10);
  EXPECT_EQ(Row(rows, "rate", "goodput.goodput_rps", "2")->unit, "req/s");
  const MetricRow* pass = Row(rows, "suite", "pass_rate");
  ASSERT_NE(pass, nullptr);
  EXPECT_EQ(pass->ci_lo, 0.3);
  // Request records are not metrics: "runs" held a decode_tok_s of 1.
  for (const auto& r : rows) {
    EXPECT_NE(r.value, 1.0) << r.profile << "." << r.metric;
  }
}

TEST(StoreRecord, ReadRunDirTakesLabelsFromPlanAndIsStable) {
  TempDir tmp;
  std::ofstream(tmp.path() / "results.json") << SampleResults("2026-12-01T00:00:00Z", 200).dump();
  std::ofstream(tmp.path() / "plan.json")
      << json{{"args", {"perf", "--label", "first try", "--tag", "hw=spark", "--tag=spec=3"}}}
             .dump();
  auto a = ReadRunDir(tmp.path());
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->label, "first try");
  EXPECT_EQ(a->tags, (std::map<std::string, std::string>{{"hw", "spark"}, {"spec", "3"}}));
  EXPECT_EQ(a->Config(), "hw=spark,spec=3");
  EXPECT_EQ(a->endpoint, "http://***@127.0.0.1:8000/v1");
  EXPECT_EQ(a->host, "box-1");
  ASSERT_EQ(a->tests.size(), 1u);
  EXPECT_EQ(a->tests[0].suite, "quick");
  EXPECT_EQ(a->tests[0].seconds, 1.5);
  auto b = ReadRunDir(tmp.path());
  EXPECT_EQ(a->id, b->id);
  EXPECT_EQ(a->digest, b->digest);
  auto c = ReadRunDir(tmp.path(), Labels{"", {{"extra", "1"}}});
  EXPECT_EQ(c->id, a->id);
  EXPECT_NE(c->digest, a->digest);

  json running = SampleResults("2026-12-01T00:00:00Z", 200);
  running["status"] = "running";
  std::ofstream(tmp.path() / "results.json") << running.dump();
  auto r = ReadRunDir(tmp.path());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("still in progress"), std::string::npos);
  EXPECT_FALSE(ReadRunDir(tmp.path() / "nothing"));
}

RunRecord Record(const std::string& started_at, double decode) {
  return RecordFromResults(SampleResults(started_at, decode), {}, {}, "/runs/x");
}

TEST(StoreSqlite, AddIsIdempotentReplacesChangedRunsAndRemoves) {
  TempDir tmp;
  fs::create_directories(tmp.path() / "sub");  // a --store path's folder must exist
  auto s = Open((tmp.path() / "sub" / "runs.sqlite").string());
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s.value()->SchemaVersion(), kSchemaVersion);
  RunRecord a = Record("2026-12-01T00:00:00Z", 200);
  RunRecord b = Record("2026-12-02T00:00:00Z", 100);
  ASSERT_NE(a.id, b.id);
  EXPECT_EQ(s.value()->Add(a).value(), AddOutcome::kAdded);
  EXPECT_EQ(s.value()->Add(a).value(), AddOutcome::kUnchanged);
  EXPECT_EQ(s.value()->Add(b).value(), AddOutcome::kAdded);
  RunRecord a2 = a;
  a2.digest = "changed";
  a2.label = "relabelled";
  EXPECT_EQ(s.value()->Add(a2).value(), AddOutcome::kReplaced);
  auto all = s.value()->LoadAll();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ(all->at(0).id, a.id);  // time order
  EXPECT_EQ(all->at(0).label, "relabelled");
  EXPECT_EQ(all->at(0).metrics.size(), a.metrics.size());
  EXPECT_EQ(all->at(0).host, "box-1");
  for (std::size_t i = 0; i < a.metrics.size(); ++i) {
    EXPECT_EQ(all->at(0).metrics[i].value, a.metrics[i].value);  // exact round trip
    EXPECT_EQ(all->at(0).metrics[i].ci_lo, a.metrics[i].ci_lo);
  }
  auto tests = s.value()->Tests(a.id);
  ASSERT_TRUE(tests);
  ASSERT_EQ(tests->size(), 1u);
  EXPECT_EQ(tests->at(0).tokens, 40);

  auto removed = s.value()->Remove(b.id.substr(0, 6));
  ASSERT_TRUE(removed) << removed.error().message;
  EXPECT_EQ(removed->at(0), b.id);
  EXPECT_EQ(s.value()->List()->size(), 1u);
  EXPECT_FALSE(s.value()->Remove("zzzz"));
  EXPECT_FALSE(s.value()->Remove(""));
}

TEST(StoreImport, EachDirectoryIsCountedAndABadOneDoesNotStopTheRest) {
  TempDir tmp;
  const fs::path one = tmp.path() / "one", two = tmp.path() / "two", bad = tmp.path() / "bad";
  for (const auto& [dir, day] : {std::pair{one, "01"}, std::pair{two, "02"}}) {
    fs::create_directories(dir);
    std::ofstream(dir / "results.json")
        << SampleResults(std::string("2026-12-") + day + "T00:00:00Z", 200).dump();
  }
  fs::create_directories(bad);  // no results.json
  auto s = Open((tmp.path() / "runs.sqlite").string());
  ASSERT_TRUE(s) << s.error().message;
  std::vector<std::string> seen;
  const auto note = [&](const std::string& dir, const std::string& id, bool ok,
                        const std::string& what) {
    seen.push_back(fs::path(dir).filename().string() + (ok ? " " + what : " failed"));
    EXPECT_EQ(ok, !id.empty());
  };
  const std::vector<std::string> dirs = {one.string(), bad.string(), two.string()};
  ImportTally t = ImportRunDirs(*s.value(), dirs, {}, {}, note);
  EXPECT_EQ(t.added, 2);
  EXPECT_EQ(t.failed, 1);
  EXPECT_EQ(t.attempted, 3u);
  EXPECT_EQ(seen, (std::vector<std::string>{"one added", "bad failed", "two added"}));

  // Again: nothing new; with a label, replaced.
  t = ImportRunDirs(*s.value(), {one.string()}, {}, {}, note);
  EXPECT_EQ(t.unchanged, 1);
  t = ImportRunDirs(*s.value(), {one.string()}, Labels{"again", {}}, {}, note);
  EXPECT_EQ(t.replaced, 1);

  // A stop request before the first directory: none is started.
  std::stop_source stop;
  stop.request_stop();
  t = ImportRunDirs(*s.value(), dirs, {}, stop.get_token(), note);
  EXPECT_EQ(t.attempted, 0u);
  EXPECT_EQ(s.value()->List()->size(), 2u);
}

using ::sb::testing::ReadFile;

void LoadSql(const fs::path& db, const std::string& sql) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &err);
  const std::string why = err != nullptr ? err : "";
  sqlite3_free(err);
  sqlite3_close(raw);
  ASSERT_EQ(rc, SQLITE_OK) << why;
}

TEST(StoreSqlite, MigratesAVersion1StoreWithNothingLost) {
  TempDir tmp;
  const fs::path db = tmp.path() / "v1.sqlite";
  LoadSql(db, ReadFile(fs::path(SB_FIXTURES_DIR) / "store" / "store_v1.sql"));
  auto s = Open(db.string());
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s.value()->SchemaVersion(), 2);
  auto all = s.value()->LoadAll();
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 2u);
  const RunRecord& a = all->at(0);
  EXPECT_EQ(a.id, "a1b2c3d4e5f6");
  EXPECT_EQ(a.label, "baseline");
  EXPECT_EQ(a.host, "spark-1");
  EXPECT_EQ(a.tags, (std::map<std::string, std::string>{{"hw", "dgx-spark"}, {"spec", "3"}}));
  ASSERT_EQ(a.metrics.size(), 3u);
  EXPECT_EQ(a.metrics[0].value, 198.7);
  EXPECT_EQ(a.metrics[0].n, 3);
  EXPECT_FALSE(a.metrics[0].ci_lo.has_value());
  EXPECT_EQ(a.metrics[2].point, "4");
  EXPECT_EQ(a.metrics[2].value, 702.25);
  EXPECT_EQ(all->at(1).model, "slow-model");
  EXPECT_TRUE(all->at(1).tags.empty());
  auto tests = s.value()->Tests("a1b2c3d4e5f6");
  ASSERT_EQ(tests->size(), 2u);
  EXPECT_EQ(tests->at(1).reason, "expected \"Q3\"");
  // The migrated store takes new runs, and opening it again migrates nothing.
  EXPECT_EQ(s.value()->Add(Record("2026-12-02T00:00:00Z", 300)).value(), AddOutcome::kAdded);
  s.value().reset();
  auto again = Open(db.string());
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again.value()->LoadAll()->size(), 3u);
}

TEST(StoreSqlite, RefusesANewerSchemaAndACorruptFile) {
  TempDir tmp;
  const fs::path db = tmp.path() / "new.sqlite";
  ASSERT_TRUE(Open(db.string()));
  LoadSql(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
  auto s = Open(db.string());
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("schema version 99 is newer"), std::string::npos)
      << s.error().message;
  const fs::path junk = tmp.path() / "junk.sqlite";
  std::ofstream(junk) << std::string(4096, 'x');
  auto bad = Open(junk.string());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find(junk.string()), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("not a database"), std::string::npos) << bad.error().message;
}

RunRecord Synthetic(const std::string& id, const std::string& model, const std::string& version,
                    double value, double lo, double hi, const std::string& at) {
  RunRecord r;
  r.id = id;
  r.model = model;
  r.status = "complete";
  r.started_at = at;
  r.server_kind = "vllm";
  r.server_version = version;
  r.tool_version = "0.1.0";
  r.metrics.push_back(Figure("decode", "", "", "decode_tok_s", value, "tok/s", 3, lo, hi));
  r.metrics.push_back(Figure("decode", "", "", "ttft_ms", 1000 / value, "ms", 3));
  return r;
}

TEST(StoreQuery, LeaderboardRanksAndMarksOverlappingIntervalsAsTies) {
  std::vector<RunRecord> runs = {
      Synthetic("c", "slow", "1", 100, 99, 101, "2026-12-01T00:00:00Z"),
      Synthetic("a", "fast", "1", 200, 195, 205, "2026-12-01T00:00:01Z"),
      Synthetic("b", "close", "1", 198, 190, 202, "2026-12-01T00:00:02Z"),
  };
  const auto spec = ParseMetric("decode.decode_tok_s").value();
  const std::string md = RenderLeaderboard(runs, spec, "model", OutputFormat::kMarkdown);
  const auto fast = md.find("| 1= | fast |");
  const auto close = md.find("| 1= | close |");
  const auto slow = md.find("| 3 | slow |");
  ASSERT_NE(fast, std::string::npos) << md;
  ASSERT_NE(close, std::string::npos) << md;
  ASSERT_NE(slow, std::string::npos) << md;
  EXPECT_LT(fast, close);
  EXPECT_LT(close, slow);
  EXPECT_NE(md.find("= marks a tie"), std::string::npos);
  EXPECT_NE(md.find("3 entries (the latest run of each model, server and configuration)"),
            std::string::npos)
      << md;
  // A later run of "slow" replaces the earlier one: still three entries, slow now first.
  runs.push_back(Synthetic("d", "slow", "1", 400, 398, 402, "2026-12-01T00:00:03Z"));
  const std::string md2 = RenderLeaderboard(runs, spec, "model", OutputFormat::kMarkdown);
  EXPECT_NE(md2.find("3 entries"), std::string::npos) << md2;
  EXPECT_NE(md2.find("| 1 | slow |"), std::string::npos) << md2;
  runs.pop_back();
  // Lower is better for a latency: slow's TTFT (10 ms) is the largest, so it ranks last.
  const json j = json::parse(
      RenderLeaderboard(runs, ParseMetric("decode.ttft_ms").value(), "model", OutputFormat::kJson));
  EXPECT_EQ(j["entries"][0]["model"], "fast");
  EXPECT_EQ(j["entries"][2]["model"], "slow");
  const std::string html = RenderLeaderboard(runs, spec, "model", OutputFormat::kHtml);
  EXPECT_NE(html.find("<table class=\"leaderboard\">"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">1=</td>"), std::string::npos);
}

// SampleResults with sampled resources: the whole run, and two decode runs of 100 and 300 J
// over 1 s each for 200 tokens each (energy nullopt: no power source).
json WithResources(json r, std::optional<double> energy) {
  auto figures = [&](double peak, std::optional<double> e, double window, double tokens) {
    json f = {{"window_s", window},
              {"samples", 4},
              {"output_tokens", tokens},
              {"memory_bytes", {{"peak", peak}, {"mean", peak}, {"samples", 4}}},
              {"memory_source", "gpu"},
              {"kv_cache_usage", {{"peak", 0.25}, {"mean", 0.2}, {"samples", 4}}},
              {"power_w", nullptr},
              {"energy_j", nullptr},
              {"j_per_token", nullptr},
              {"tokens_per_j", nullptr}};
    if (e) {
      f["power_w"] = {{"peak", *e / window}, {"mean", *e / window}};
      f["energy_j"] = *e;
      f["j_per_token"] = *e / tokens;
      f["tokens_per_j"] = tokens / *e;
    }
    return f;
  };
  r["resources"] = {
      {"period_ms", 250},
      {"samples", 40},
      {"sources", json::array()},
      {"run", figures(5e10, energy ? std::optional(*energy * 10) : std::nullopt, 10, 1000)}};
  r["resources"]["run"]["samples"] = 40;
  r["perf"]["decode"]["runs"] = json::array();
  for (double scale : {1.0, 3.0}) {
    r["perf"]["decode"]["runs"].push_back(
        {{"ttft_ms", 1.0},
         {"decode_tok_s", 1.0},
         {"resources",
          figures(4e10 * scale, energy ? std::optional(*energy * scale) : std::nullopt, 1, 200)}});
  }
  return r;
}

TEST(StoreRecord, ResourceFiguresAreMetricRowsOfTheWholeRunAndTheDecodeRuns) {
  auto rows = MetricRows(WithResources(SampleResults("2026-12-01T00:00:00Z", 200), 100));
  const MetricRow* jpt = Row(rows, "resources", "j_per_token");
  ASSERT_NE(jpt, nullptr);
  EXPECT_DOUBLE_EQ(jpt->value, 1.0);  // 1000 J for 1000 tokens
  EXPECT_EQ(jpt->unit, "J/token");
  EXPECT_EQ(jpt->n, 40);
  EXPECT_EQ(Row(rows, "resources", "peak_memory_bytes")->value, 5e10);
  EXPECT_EQ(Row(rows, "resources", "peak_memory_bytes")->unit, "bytes");
  EXPECT_EQ(Row(rows, "resources", "mean_power_w")->value, 100);
  EXPECT_EQ(Row(rows, "resources", "energy_j")->value, 1000);
  EXPECT_EQ(Row(rows, "resources", "tokens_per_j")->unit, "tokens/J");
  EXPECT_EQ(Row(rows, "resources", "peak_kv_cache_usage")->value, 0.25);
  // The decode runs together: the higher peak; 400 J over 2 s and 400 tokens.
  const MetricRow* d = Row(rows, "resources", "j_per_token", "decode");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->dim, "profile");
  EXPECT_DOUBLE_EQ(d->value, 1.0);
  EXPECT_EQ(d->n, 2);
  EXPECT_DOUBLE_EQ(Row(rows, "resources", "mean_power_w", "decode")->value, 200);
  EXPECT_EQ(Row(rows, "resources", "peak_memory_bytes", "decode")->value, 1.2e11);
  // Without a power source: memory, and no energy figure at all (not a zero).
  rows = MetricRows(WithResources(SampleResults("2026-12-01T00:00:00Z", 200), std::nullopt));
  EXPECT_NE(Row(rows, "resources", "peak_memory_bytes"), nullptr);
  for (const char* m : {"mean_power_w", "energy_j", "j_per_token", "tokens_per_j"}) {
    EXPECT_EQ(Row(rows, "resources", m), nullptr) << m;
    EXPECT_EQ(Row(rows, "resources", m, "decode"), nullptr) << m;
  }
  // A run from before the sampler: no resources rows.
  rows = MetricRows(SampleResults("2026-12-01T00:00:00Z", 200));
  for (const auto& r : rows) {
    EXPECT_NE(r.profile, "resources") << r.metric;
  }
}

// A model name is the user's (or the server's) text: a '|', a line break or a tag in it must not
// break the leaderboard's Markdown table (the store escaped only '|' before core/escape.h).
TEST(StoreQuery, ALeaderboardCellCannotBreakItsMarkdownTable) {
  std::vector<RunRecord> runs = {
      Synthetic("a", "evil|model\n<script>x</script>", "1", 200, 195, 205, "2026-12-01T00:00:01Z"),
  };
  const auto spec = ParseMetric("decode.decode_tok_s").value();
  const std::string md = RenderLeaderboard(runs, spec, "model", OutputFormat::kMarkdown);
  EXPECT_NE(md.find("evil\\|model \\<script>x\\</script>"), std::string::npos) << md;
  std::size_t lines = 0;
  for (char c : md) {
    lines += c == '\n' ? 1 : 0;
  }
  const std::string one_row =
      RenderLeaderboard({Synthetic("a", "plain", "1", 200, 195, 205, "2026-12-01T00:00:01Z")}, spec,
                        "model", OutputFormat::kMarkdown);
  std::size_t plain_lines = 0;
  for (char c : one_row) {
    plain_lines += c == '\n' ? 1 : 0;
  }
  EXPECT_EQ(lines, plain_lines) << md;  // the line break did not add a line
}

TEST(StoreQuery, LeaderboardShowsPeakMemoryAndJPerTokenOnlyWhenAnEntryHasThem) {
  std::vector<RunRecord> runs = {
      Synthetic("a", "fast", "1", 200, 195, 205, "2026-12-01T00:00:01Z"),
      Synthetic("b", "slow", "1", 100, 99, 101, "2026-12-01T00:00:02Z"),
  };
  const auto spec = ParseMetric("decode.decode_tok_s").value();
  std::string md = RenderLeaderboard(runs, spec, "model", OutputFormat::kMarkdown);
  EXPECT_EQ(md.find("peak memory"), std::string::npos) << md;
  EXPECT_EQ(md.find("J/token"), std::string::npos) << md;

  runs[1].metrics.push_back(Figure("resources", "", "", "peak_memory_bytes", 5.5e10, "bytes", 40));
  runs[1].metrics.push_back(Figure("resources", "", "", "j_per_token", 0.42, "J/token", 40));
  md = RenderLeaderboard(runs, spec, "model", OutputFormat::kMarkdown);
  EXPECT_NE(md.find("| pass rate | peak memory | J/token | run |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 51.22 GiB | 0.420 | b |"), std::string::npos) << md;
  EXPECT_NE(md.find("| — | — | a |"), std::string::npos) << md;  // not measured: not 0
  const std::string csv = RenderLeaderboard(runs, spec, "model", OutputFormat::kCsv);
  EXPECT_NE(csv.find(",peak memory,J/token,run\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",55000000000,0.42,b\n"), std::string::npos) << csv;
  const json j = json::parse(RenderLeaderboard(runs, spec, "model", OutputFormat::kJson));
  EXPECT_EQ(j["entries"][0]["columns"]["resources.j_per_token"], nullptr);
  EXPECT_EQ(j["entries"][1]["columns"]["resources.j_per_token"], 0.42);
  EXPECT_EQ(j["entries"][1]["columns"]["resources.peak_memory_bytes"], 5.5e10);
  const std::string html = RenderLeaderboard(runs, spec, "model", OutputFormat::kHtml);
  EXPECT_NE(html.find("<th class=\"num\">J/token</th>"), std::string::npos) << html;

  // Ranked by J/token: lower is better.
  runs[0].metrics.push_back(Figure("resources", "", "", "j_per_token", 0.84, "J/token", 40));
  const json by_energy = json::parse(RenderLeaderboard(
      runs, ParseMetric("resources.j_per_token").value(), "model", OutputFormat::kJson));
  EXPECT_EQ(by_energy["entries"][0]["model"], "slow");
  EXPECT_EQ(by_energy["entries"][1]["model"], "fast");
}

// The <td>/<th> cells of the first <tr> of `html`'s <tbody> (or of its <thead> with head).
std::vector<std::string> Cells(const std::string& html, const std::string& row_start) {
  std::vector<std::string> out;
  const auto start = html.find(row_start);
  if (start == std::string::npos) {
    return out;
  }
  const std::string row = html.substr(start, html.find("</tr>", start) - start);
  const std::regex cell(R"re(<t[dh][^>]*>([^<]*)</t[dh]>)re");
  for (auto it = std::sregex_iterator(row.begin(), row.end(), cell); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

// Issue 24 item 24: the HTML leaderboard looks like report.html (its stylesheet, numbers
// right-aligned with thousands separators), shows the ranked metric's 95% interval, drops the
// columns no entry has (the pass rates of runs without suites), and has the tie note only when
// a tie appears.
TEST(StoreQuery, HtmlLeaderboardIsStyledLikeTheReportWithCiAndNoEmptyColumns) {
  std::vector<RunRecord> runs = {
      Synthetic("a", "fast", "1", 1234.5, 1200, 1250, "2026-12-01T00:00:01Z"),
      Synthetic("b", "slow", "1", 100, 99, 101, "2026-12-01T00:00:02Z"),
  };
  const auto spec = ParseMetric("decode.decode_tok_s").value();
  const std::string html = RenderLeaderboard(runs, spec, "model", OutputFormat::kHtml);
  // report.html's stylesheet (its palette and the right-aligned number cells) and its CSP.
  EXPECT_NE(html.find("--pass: #2e9e5b"), std::string::npos) << html;
  EXPECT_NE(html.find("td.num { text-align: right;"), std::string::npos);
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  const auto head = Cells(html, "<thead>");
  EXPECT_EQ(head, (std::vector<std::string>{"rank (decode.decode_tok_s)", "model", "configuration",
                                            "server", "servebench", "decode tok/s", "95% CI",
                                            "TTFT ms", "run"}))
      << html;
  const auto first = Cells(html, "<tbody>");
  EXPECT_EQ(first, (std::vector<std::string>{"1", "fast", "-", "vllm 1", "0.1.0", "1,234.5",
                                             "1,200.0–1,250.0", "0.8", "a"}))
      << html;
  EXPECT_NE(html.find("<td class=\"num\">1,234.5</td>"), std::string::npos);
  // No tie: no tie note.
  EXPECT_EQ(html.find("marks a tie"), std::string::npos) << html;
  // A tie: the note appears.
  runs.push_back(Synthetic("c", "close", "1", 1230, 1190, 1240, "2026-12-01T00:00:03Z"));
  const std::string tied = RenderLeaderboard(runs, spec, "model", OutputFormat::kHtml);
  EXPECT_NE(tied.find("marks a tie"), std::string::npos) << tied;
  EXPECT_NE(tied.find("<td class=\"num\">1=</td>"), std::string::npos) << tied;
  // A pass rate some entry measured keeps its column ("—" for the others).
  runs[0].metrics.push_back(Figure("suite", "", "", "pass_rate", 0.75, "", 4, 0.3, 0.95));
  const std::string with_suite = RenderLeaderboard(runs, spec, "model", OutputFormat::kHtml);
  EXPECT_NE(with_suite.find("<th class=\"num\">pass rate</th>"), std::string::npos);
  EXPECT_NE(with_suite.find("<td class=\"num\">75.0%</td>"), std::string::npos);
  EXPECT_EQ(with_suite.find("effective pass rate"), std::string::npos);
}

// Issue 24 item 25: runs of one model against two servers (the demo's simulator and a vLLM
// endpoint), neither with a recipe or tags, are two entries, not one replacing the other; and
// a recipe and tags both show in the configuration.
TEST(StoreQuery, LeaderboardGroupsByServerRecipeAndTags) {
  std::vector<RunRecord> runs = {
      Synthetic("a", "m", "0.11.0", 200, 195, 205, "2026-12-01T00:00:01Z"),
      Synthetic("b", "m", "1", 100, 99, 101, "2026-12-01T00:00:02Z"),
  };
  runs[1].server_kind = "sim";
  runs[1].server_version = "0.1.0";
  const auto spec = ParseMetric("decode.decode_tok_s").value();
  json j = json::parse(RenderLeaderboard(runs, spec, "model", OutputFormat::kJson));
  ASSERT_EQ(j["entries"].size(), 2u) << j.dump(1);
  EXPECT_EQ(j["entries"][0]["server"], "vllm 0.11.0");
  EXPECT_EQ(j["entries"][1]["server"], "sim 0.1.0");
  // Another server version is another entry too.
  runs.push_back(Synthetic("c", "m", "0.12.0", 210, 205, 215, "2026-12-01T00:00:03Z"));
  j = json::parse(RenderLeaderboard(runs, spec, "model", OutputFormat::kJson));
  EXPECT_EQ(j["entries"].size(), 3u) << j.dump(1);
  // The same server, recipe and tags: the later run replaces the earlier one.
  runs.push_back(Synthetic("d", "m", "0.12.0", 220, 215, 225, "2026-12-01T00:00:04Z"));
  j = json::parse(RenderLeaderboard(runs, spec, "model", OutputFormat::kJson));
  ASSERT_EQ(j["entries"].size(), 3u) << j.dump(1);
  EXPECT_EQ(j["entries"][0]["run"], "d");
  // A recipe and tags: both make the configuration, and each is its own entry.
  runs[3].recipe = "mtp";
  runs[3].tags = {{"hw", "spark"}};
  j = json::parse(RenderLeaderboard(runs, spec, "model", OutputFormat::kJson));
  ASSERT_EQ(j["entries"].size(), 4u) << j.dump(1);
  EXPECT_EQ(j["entries"][0]["config"], "mtp,hw=spark");
  const std::string md = RenderLeaderboard(runs, spec, "model", OutputFormat::kMarkdown);
  EXPECT_NE(md.find("| m | mtp,hw=spark | vllm 0.12.0 |"), std::string::npos) << md;
  // One recipe with two tag values (--serve runs tagged itl=3 and itl=8) is two
  // configurations: two entries, and two series in history (the tags used to be ignored when a
  // recipe was known). History groups by model and configuration only (not the server).
  runs[2].recipe = "mtp";
  runs[2].tags = {{"hw", "box"}};
  j = json::parse(RenderLeaderboard(runs, spec, "model", OutputFormat::kJson));
  EXPECT_EQ(j["entries"].size(), 4u) << j.dump(1);
  const json h = json::parse(RenderHistory(runs, spec, OutputFormat::kJson));
  ASSERT_EQ(h["series"].size(), 3u) << h.dump(1);  // "-" (a, b), then c and d
  EXPECT_EQ(h["series"][1]["config"], "mtp,hw=box");
  EXPECT_EQ(h["series"][2]["config"], "mtp,hw=spark");
}

// Issue 24 item 24: `history --format html` has a chart of the metric over time (one line per
// model and configuration, a dot per run at its value) above the styled table.
TEST(StoreQuery, HtmlHistoryChartsTheMetricOverTime) {
  std::vector<RunRecord> runs = {
      Synthetic("a", "m", "1", 1200, 1190, 1210, "2026-12-01T00:00:00Z"),
      Synthetic("b", "m", "1", 1250, 1240, 1260, "2026-12-01T06:00:00Z"),
      Synthetic("c", "other", "1", 90, 89, 91, "2026-12-01T12:00:00Z"),
  };
  const auto spec = ParseMetric("decode.decode_tok_s").value();
  const std::string html = RenderHistory(runs, spec, OutputFormat::kHtml);
  EXPECT_NE(html.find("--pass: #2e9e5b"), std::string::npos);  // report.html's stylesheet
  ASSERT_NE(html.find("<svg"), std::string::npos) << html;
  EXPECT_NE(html.find("data-chart=\"history\""), std::string::npos);
  EXPECT_NE(html.find(">Time since the first run (hours)</text>"), std::string::npos) << html;
  const std::regex mark(R"re(<circle class="mark"[^>]*data-series="([^"]*)" data-x="([^"]*)" )re"
                        R"re(data-y="([^"]*)")re");
  std::vector<std::tuple<std::string, std::string, std::string>> marks;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), mark); it != std::sregex_iterator();
       ++it) {
    marks.emplace_back((*it)[1], (*it)[2], (*it)[3]);
  }
  using M = std::tuple<std::string, std::string, std::string>;
  EXPECT_EQ(marks, (std::vector<M>{M{"m (-)", "0", "1200"}, M{"m (-)", "6", "1250"},
                                   M{"other (-)", "12", "90"}}));
  EXPECT_NE(html.find("<td class=\"num\">1,250.0</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td class=\"num\">+4.2%</td>"), std::string::npos) << html;
  // Runs over more than two days: the axis is in days.
  runs[2].started_at = "2026-12-05T00:00:00Z";
  EXPECT_NE(RenderHistory(runs, spec, OutputFormat::kHtml).find("(days)</text>"),
            std::string::npos);
  // Nothing measured: no chart, no table.
  EXPECT_EQ(RenderHistory({}, spec, OutputFormat::kHtml).find("<svg"), std::string::npos);
}

// A -0.1% change drew a full-height jump (the scale was min..max, however close they were).
TEST(StoreQuery, TheSparklineIsScaledToTheSizeOfTheChange) {
  EXPECT_EQ(Sparkline({100, 50}), "█▁");
  const std::string small = Sparkline({100, 99.9, 100});
  EXPECT_NE(small, "█▁█") << small;
  // At most one step between any two bars (each bar is 3 bytes of UTF-8).
  std::vector<std::string> bars = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  std::vector<int> level;
  for (std::size_t i = 0; i + 3 <= small.size(); i += 3) {
    level.push_back(
        static_cast<int>(std::find(bars.begin(), bars.end(), small.substr(i, 3)) - bars.begin()));
  }
  ASSERT_EQ(level.size(), 3u) << small;
  EXPECT_LE(
      *std::max_element(level.begin(), level.end()) - *std::min_element(level.begin(), level.end()),
      1)
      << small;
  const std::string flat = Sparkline({5, 5});
  EXPECT_EQ(flat.substr(0, 3), flat.substr(3, 3)) << flat;
}

TEST(StoreQuery, HistoryShowsChangeSparklineAndTheBridge) {
  std::vector<RunRecord> runs = {
      Synthetic("r1", "m", "0.10.0", 100, 98, 102, "2026-12-01T00:00:00Z"),
      Synthetic("r2", "m", "0.11.0", 101, 99, 103, "2026-12-02T00:00:00Z"),
      Synthetic("r3", "m", "0.12.0", 80, 79, 81, "2026-12-03T00:00:00Z"),
  };
  const auto spec = ParseMetric("decode.decode_tok_s").value();
  const std::string md = RenderHistory(runs, spec, OutputFormat::kMarkdown);
  EXPECT_NE(md.find("+1.0%"), std::string::npos) << md;
  EXPECT_NE(md.find("-20.8%"), std::string::npos) << md;
  EXPECT_NE(md.find("m (-): ██▁"), std::string::npos) << md;
  const auto bridge = BridgeCheck(runs, spec);
  ASSERT_EQ(bridge.size(), 2u);
  EXPECT_NE(bridge[0].find("vllm 0.10.0 -> vllm 0.11.0: re-measured within 1.0% (noise ±2.8%)"),
            std::string::npos)
      << bridge[0];
  EXPECT_NE(bridge[1].find("SHIFT of -20.8%"), std::string::npos) << bridge[1];
  EXPECT_TRUE(BridgeCheck(runs, spec, {"zz"}).empty());
  const json j = json::parse(RenderHistory(runs, spec, OutputFormat::kJson));
  ASSERT_EQ(j["runs"].size(), 3u);
  EXPECT_EQ(j["runs"][1]["change"], (101.0 - 100.0) / 100.0);
  EXPECT_EQ(j["bridge"].size(), 2u);
  const std::string csv = RenderHistory(runs, spec, OutputFormat::kCsv);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
}

TEST(StoreQuery, ParsesMetricsFormatsAndFilters) {
  auto m = ParseMetric("concurrency.throughput_tok_s@8");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->profile, "concurrency");
  EXPECT_EQ(m->point, "8");
  EXPECT_FALSE(ParseMetric("decode"));
  EXPECT_FALSE(ParseGroupBy("tag:"));
  EXPECT_TRUE(ParseGroupBy("tag:hw"));
  std::vector<RunRecord> runs = {Synthetic("a", "m", "1", 1, 1, 1, "2026-11-01T00:00:00Z"),
                                 Synthetic("b", "n", "1", 1, 1, 1, "2026-12-01T00:00:00Z")};
  runs[1].tags["hw"] = "spark";
  EXPECT_EQ(Select(runs, {"m", {}, ""}).size(), 1u);
  EXPECT_EQ(Select(runs, {"", {}, "2026-11-15"}).size(), 1u);
  EXPECT_EQ(Select(runs, {"", {{"hw", "spark"}}, ""}).at(0).id, "b");
}

// A misspelt metric printed "0 entries" and exited 0; a swept one without @POINT silently took
// one point; the CLI's "max-tokens" found nothing because the store says "max_tokens".
TEST(StoreQuery, AMetricTheStoreDoesNotHaveIsAUsageErrorNamingWhatItHas) {
  RunRecord r;
  r.id = "r";
  r.metrics = MetricRows(SampleResults("2026-12-01T00:00:00Z", 100));
  r.metrics.push_back(Figure("max-tokens", "max_tokens", "64", "tok_s", 90, "tok/s", 3));
  const std::vector<RunRecord> runs = {r};
  EXPECT_TRUE(CheckMetric(runs, ParseMetric("decode.decode_tok_s").value()));
  EXPECT_TRUE(CheckMetric(runs, ParseMetric("concurrency.throughput_tok_s@4").value()));
  EXPECT_TRUE(CheckMetric(runs, ParseMetric("max-tokens.tok_s@64").value()));
  EXPECT_TRUE(CheckMetric(runs, ParseMetric("max_tokens.tok_s@64").value()));  // the old spelling
  EXPECT_TRUE(CheckMetric({}, ParseMetric("bogus.metric").value()));           // an empty store

  auto bogus = CheckMetric(runs, ParseMetric("bogus.metric").value());
  ASSERT_FALSE(bogus);
  EXPECT_EQ(bogus.error().code, ErrorCode::kUsage);
  EXPECT_NE(bogus.error().message.find("no stored run has a bogus profile"), std::string::npos)
      << bogus.error().message;
  EXPECT_NE(bogus.error().message.find("--list-metrics"), std::string::npos);

  auto typo = CheckMetric(runs, ParseMetric("decode.decode_toks").value());
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.error().message.find("decode has: decode.decode_tok_s"), std::string::npos)
      << typo.error().message;

  auto swept = CheckMetric(runs, ParseMetric("concurrency.throughput_tok_s").value());
  ASSERT_FALSE(swept);
  EXPECT_NE(swept.error().message.find("name one with @POINT (stored: @1, @4)"), std::string::npos)
      << swept.error().message;
  auto point = CheckMetric(runs, ParseMetric("rate.goodput.goodput_rps@3").value());
  ASSERT_FALSE(point);
  EXPECT_NE(point.error().message.find("at @3 (stored: @2)"), std::string::npos)
      << point.error().message;

  const std::string list = ListMetrics(runs);
  EXPECT_NE(list.find("concurrency.throughput_tok_s"), std::string::npos) << list;
  EXPECT_NE(list.find("@1, @4"), std::string::npos) << list;
  EXPECT_NE(list.find("max-tokens.tok_s"), std::string::npos) << list;
}

// The store names a profile as the profile table does (one spelling everywhere), though
// results.json keeps its schema's key (perf.max_tokens).
TEST(StoreRecord, ProfilesAreStoredUnderTheTablesName) {
  nlohmann::json results = nlohmann::json::parse(R"({"perf": {"max_tokens": {"lengths": [
      {"max_tokens": 64, "tok_s": {"n": 1, "median": 90, "values": [90]}}]}}})");
  const auto rows = MetricRows(results);
  ASSERT_FALSE(rows.empty());
  for (const MetricRow& m : rows) {
    EXPECT_EQ(m.profile, "max-tokens");
  }
}

TEST(StoreLocation, FlagThenEnvironmentThenXdgThenHome) {
  StoreOptions o;
  o.store = "/x/runs.sqlite";
  EXPECT_EQ(ResolveLocation(o), "/x/runs.sqlite");
  o.store.clear();
  setenv("SERVEBENCH_STORE", "/env/runs.sqlite", 1);
  EXPECT_EQ(ResolveLocation(o), "/env/runs.sqlite");
  setenv("SERVEBENCH_STORE", "off", 1);
  EXPECT_FALSE(ResolveLocation(o));
  unsetenv("SERVEBENCH_STORE");
  setenv("XDG_DATA_HOME", "/xdg", 1);
  EXPECT_EQ(ResolveLocation(o), "/xdg/servebench/runs.sqlite");
  unsetenv("XDG_DATA_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(ResolveLocation(o), "/home/u/.local/share/servebench/runs.sqlite");
  o.no_store = true;
  EXPECT_FALSE(ResolveLocation(o));
  EXPECT_EQ(DisplayLocation("postgresql://u:pw@h/db"), "postgresql://***@h/db");
}

}  // namespace
}  // namespace sb::store
