// The run store through the command line: real simulators of different speeds, real runs
// recorded at their end, the store's commands, 8 writers at once, a writer killed mid-write, an
// unwritable or corrupt store, the default location, and the bridge check in history/compare.
#include "store/store_cli_test.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <signal.h>

namespace sb::store_test {
namespace {

using nlohmann::json;

int Lines(const std::string& s, const std::string& needle) {
  int n = 0;
  for (std::size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) {
    ++n;
  }
  return n;
}

TEST(StoreCli, TwoSimulatorsLeaderboardHistoryImportAndSchema) {
  TempDir tmp;
  const std::string db = (tmp.path() / "runs.sqlite").string();
  Sim fast("fast-model", "4");
  Sim slow("slow-model", "12");
  ASSERT_FALSE(fast.url().empty());
  ASSERT_FALSE(slow.url().empty());
  // The slower one first: the leaderboard's order is not the order of recording.
  auto s = DecodeRun(slow, tmp.path() / "slow", db, {"--tag", "hw=box", "--label", "slow one"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(Lines(s.err, "stored run "), 1) << s.err;
  auto f = DecodeRun(fast, tmp.path() / "fast", db, {"--tag", "hw=box"});
  ASSERT_EQ(f.exit_code, 0) << f.err;

  auto board = Sb({"leaderboard", "--store", db, "--format", "json"});
  ASSERT_EQ(board.exit_code, 0) << board.err;
  const json b = json::parse(board.out);
  ASSERT_EQ(b["entries"].size(), 2u) << board.out;
  EXPECT_EQ(b["entries"][0]["model"], "fast-model");
  EXPECT_EQ(b["entries"][0]["rank"], 1);
  EXPECT_EQ(b["entries"][1]["model"], "slow-model");
  EXPECT_EQ(b["entries"][1]["rank"], 2);
  EXPECT_GT(b["entries"][0]["value"].get<double>(), 1.5 * b["entries"][1]["value"].get<double>());
  auto md = Sb({"leaderboard", "--store", db});
  EXPECT_NE(md.out.find("| 1 | fast-model | hw=box |"), std::string::npos) << md.out;
  // A metric no stored run measured is a usage error naming what there is, not "0 entries".
  auto bogus = Sb({"leaderboard", "--store", db, "--metric", "bogus.metric"});
  EXPECT_EQ(bogus.exit_code, 2) << bogus.out;
  EXPECT_NE(bogus.err.find("--metric bogus.metric: no stored run measured it"), std::string::npos)
      << bogus.err;
  auto metrics = Sb({"history", "--store", db, "--list-metrics"});
  ASSERT_EQ(metrics.exit_code, 0) << metrics.err;
  EXPECT_NE(metrics.out.find("decode.decode_tok_s"), std::string::npos) << metrics.out;

  auto hist = Sb({"history", "--store", db, "--format", "json"});
  ASSERT_EQ(hist.exit_code, 0) << hist.err;
  const json h = json::parse(hist.out);
  ASSERT_EQ(h["runs"].size(), 2u);
  EXPECT_EQ(h["runs"][0]["model"], "slow-model");
  EXPECT_EQ(h["runs"][0]["label"], "slow one");
  EXPECT_EQ(h["runs"][1]["model"], "fast-model");
  auto only = Sb({"history", "--store", db, "--model", "fast-model", "--format", "csv"});
  EXPECT_EQ(Lines(only.out, "\n"), 2) << only.out;

  auto again = Sb({"store", "import", "--store", db, (tmp.path() / "slow").string(),
                   (tmp.path() / "fast").string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("0 added, 0 updated, 2 already stored, 0 failed"), std::string::npos)
      << again.out;
  auto ls = Sb({"store", "ls", "--store", db});
  EXPECT_NE(ls.out.find("2 runs in"), std::string::npos) << ls.out;

  auto schema = testing::RunProcess({"/usr/bin/sqlite3", db, ".schema"});
  ASSERT_EQ(schema.exit_code, 0) << schema.err;
  for (const char* table : {"CREATE TABLE runs", "CREATE TABLE metrics", "CREATE TABLE tests",
                            "CREATE TABLE tags", "CREATE TABLE meta"}) {
    EXPECT_NE(schema.out.find(table), std::string::npos) << schema.out;
  }
  auto count = testing::RunProcess(
      {"/usr/bin/sqlite3", db, "SELECT count(*) FROM metrics WHERE metric = 'decode_tok_s'"});
  EXPECT_EQ(count.out, "2\n");

  // store rm by a prefix of the id, then import adds it back.
  const std::string id = h["runs"][0]["id"];
  auto rm = Sb({"store", "rm", "--store", db, id.substr(0, 8)});
  ASSERT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_NE(rm.out.find("removed " + id), std::string::npos);
  auto back = Sb({"store", "import", "--store", db, (tmp.path() / "slow").string()});
  EXPECT_NE(back.out.find("1 added"), std::string::npos) << back.out;
  EXPECT_EQ(Sb({"store", "rm", "--store", db, "nosuchrun"}).exit_code, 2);
}

TEST(StoreCli, DefaultLocationIsXdgDataHomeThenHome) {
  TempDir tmp;
  Sim sim("m", "1");
  auto r =
      DecodeRun(sim, tmp.path() / "a", "", {}, {"XDG_DATA_HOME=" + (tmp.path() / "xdg").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path xdg_store = tmp.path() / "xdg" / "servebench" / "runs.sqlite";
  EXPECT_TRUE(fs::exists(xdg_store)) << r.err;
  EXPECT_NE(r.err.find("stored run"), std::string::npos);
  auto home = DecodeRun(sim, tmp.path() / "b", "", {},
                        {"-u XDG_DATA_HOME", "HOME=" + (tmp.path() / "home").string()});
  ASSERT_EQ(home.exit_code, 0) << home.err;
  EXPECT_TRUE(fs::exists(tmp.path() / "home" / ".local" / "share" / "servebench" / "runs.sqlite"));
  // SERVEBENCH_STORE, and --no-store, which records nothing.
  const fs::path env_store = tmp.path() / "env.sqlite";
  auto env = DecodeRun(sim, tmp.path() / "c", "", {}, {"SERVEBENCH_STORE=" + env_store.string()});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_TRUE(fs::exists(env_store));
  auto none = DecodeRun(sim, tmp.path() / "d", "", {"--no-store"},
                        {"XDG_DATA_HOME=" + (tmp.path() / "none").string()});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_FALSE(fs::exists(tmp.path() / "none"));
  EXPECT_EQ(none.err.find("stored"), std::string::npos);
}

TEST(StoreCli, EightRunsWritingAtOnceLoseNothing) {
  TempDir tmp;
  const std::string db = (tmp.path() / "runs.sqlite").string();
  Sim sim("m", "1");
  std::vector<std::future<testing::ProcessResult>> runs;
  for (int i = 0; i < 8; ++i) {
    runs.push_back(std::async(std::launch::async, [&, i] {
      return DecodeRun(sim, tmp.path() / ("run" + std::to_string(i)), db,
                       {"--tag", "writer=" + std::to_string(i)});
    }));
  }
  for (auto& f : runs) {
    auto r = f.get();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(Lines(r.err, "stored run "), 1) << r.err;
  }
  auto h = Sb({"history", "--store", db, "--format", "json"});
  ASSERT_EQ(h.exit_code, 0) << h.err;
  const json j = json::parse(h.out);
  ASSERT_EQ(j["runs"].size(), 8u);
  std::set<std::string> writers;
  for (const auto& r : j["runs"]) {
    writers.insert(r["tags"]["writer"].get<std::string>());
  }
  EXPECT_EQ(writers.size(), 8u);
  auto integrity = testing::RunProcess({"/usr/bin/sqlite3", db, "PRAGMA integrity_check"});
  EXPECT_EQ(integrity.out, "ok\n");
}

TEST(StoreCli, AWriterKilledMidWriteLeavesTheStoreAsItWas) {
  TempDir tmp;
  const std::string db = (tmp.path() / "runs.sqlite").string();
  Sim sim("m", "1");
  ASSERT_EQ(DecodeRun(sim, tmp.path() / "first", db).exit_code, 0);
  ASSERT_EQ(DecodeRun(sim, tmp.path() / "second", "", {"--no-store"}).exit_code, 0);
  const fs::path paused = tmp.path() / "paused";
  // The writer stops inside its transaction (every row written, no commit) and is killed.
  testing::Child writer({"/usr/bin/env", "SERVEBENCH_TEST_STORE_PAUSE=" + paused.string(), kBin,
                         "store", "import", "--store", db, (tmp.path() / "second").string()});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!fs::exists(paused) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(fs::exists(paused)) << "the writer never reached its commit";
  writer.Signal(SIGKILL);
  EXPECT_EQ(writer.Wait(), 128 + SIGKILL);

  auto ls = Sb({"store", "ls", "--store", db});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_NE(ls.out.find("1 run in"), std::string::npos) << ls.out;
  auto rows = testing::RunProcess({"/usr/bin/sqlite3", db,
                                   "SELECT (SELECT count(*) FROM runs), (SELECT count(DISTINCT "
                                   "run_id) FROM metrics), (SELECT count(DISTINCT run_id) FROM "
                                   "tags); PRAGMA integrity_check"});
  EXPECT_EQ(rows.out, "1|1|0\nok\n");
  auto retry = Sb({"store", "import", "--store", db, (tmp.path() / "second").string()});
  EXPECT_NE(retry.out.find("1 added"), std::string::npos) << retry.out << retry.err;
}

TEST(StoreCli, AnUnwritableOrCorruptStoreNeverCostsAMeasurement) {
  TempDir tmp;
  Sim sim("m", "1");
  const fs::path junk = tmp.path() / "junk.sqlite";
  std::ofstream(junk) << std::string(8192, 'j');
  // (A store whose directory is missing is refused before the run: StoreBounds.)
  const std::vector<std::pair<std::string, std::string>> stores = {
      {junk.string(), "not a database"},
  };
  int i = 0;
  for (const auto& [store, reason] : stores) {
    const fs::path out = tmp.path() / ("run" + std::to_string(i++));
    auto r = DecodeRun(sim, out, store);
    EXPECT_EQ(r.exit_code, 0) << r.err;  // the exit code is the run's
    EXPECT_TRUE(fs::exists(out / "results.json"));
    EXPECT_TRUE(fs::exists(out / "report.md"));
    EXPECT_NE(ReadFile(out / "results.json").find("\"status\": \"complete\""), std::string::npos);
    EXPECT_EQ(Lines(r.err, "run not stored in " + store + ": "), 1) << r.err;
    EXPECT_NE(r.err.find(reason), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("servebench store import " + out.string()), std::string::npos);
    // ... and the same run goes into a working store later.
    auto later =
        Sb({"store", "import", "--store", (tmp.path() / "good.sqlite").string(), out.string()});
    EXPECT_NE(later.out.find("1 added"), std::string::npos) << later.out << later.err;
  }
  // A failed run (every request refused) is still recorded, with its status and exit code 3.
  auto failed = Sb({"store", "ls", "--store", junk.string()});
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_NE(failed.err.find("not a database"), std::string::npos) << failed.err;
}

// A copy of a run directory as if measured later under another server version, with its decode
// figures scaled by `factor`.
fs::path Remeasured(const fs::path& from, const fs::path& to, const std::string& version,
                    const std::string& started_at, double factor) {
  fs::create_directories(to);
  json r = json::parse(ReadFile(from / "results.json"));
  r["target"]["server"]["version"] = version;
  r["started_at"] = started_at;
  for (auto& v : r["perf"]["decode"]["decode_tok_s"]["values"]) {
    v = v.get<double>() * factor;
  }
  r["perf"]["decode"]["decode_tok_s"]["median"] =
      r["perf"]["decode"]["decode_tok_s"]["median"].get<double>() * factor;
  std::ofstream(to / "results.json") << r.dump(2);
  fs::copy_file(from / "plan.json", to / "plan.json");
  return to;
}

TEST(StoreCli, BridgeCheckInHistoryAndCompare) {
  TempDir tmp;
  const std::string db = (tmp.path() / "runs.sqlite").string();
  Sim sim("m", "3");
  ASSERT_EQ(DecodeRun(sim, tmp.path() / "v1", "", {"--no-store"}).exit_code, 0);
  const fs::path v2 =
      Remeasured(tmp.path() / "v1", tmp.path() / "v2", "0.2.0", "2099-01-01T00:00:00Z", 1.0);
  const fs::path v3 =
      Remeasured(tmp.path() / "v1", tmp.path() / "v3", "0.3.0", "2099-01-02T00:00:00Z", 0.5);
  auto imp = Sb(
      {"store", "import", "--store", db, (tmp.path() / "v1").string(), v2.string(), v3.string()});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  auto h = Sb({"history", "--store", db});
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_NE(h.out.find("-> sim 0.2.0: re-measured within 0.0% (noise ±"), std::string::npos)
      << h.out;
  EXPECT_NE(h.out.find("sim 0.2.0 -> sim 0.3.0: SHIFT of -50.0%"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("-50.0% |"), std::string::npos) << h.out;

  auto cmp = Sb({"compare", (tmp.path() / "v1").string(), v3.string(), "--store", db});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  const auto table = cmp.out.find("| Metric");
  const auto bridge = cmp.out.find("bridge: m (-) decode.decode_tok_s, sim 0.2.0 -> sim 0.3.0");
  ASSERT_NE(table, std::string::npos) << cmp.out;
  ASSERT_NE(bridge, std::string::npos) << cmp.out;
  EXPECT_LT(table, bridge);
  // Without a store, the compared runs alone still bridge (v1 -> v3 directly).
  auto alone = Sb({"compare", (tmp.path() / "v1").string(), v3.string()},
                  {"SERVEBENCH_STORE=" + (tmp.path() / "absent.sqlite").string()});
  EXPECT_NE(alone.out.find("-> sim 0.3.0: SHIFT of -50.0%"), std::string::npos) << alone.out;
  EXPECT_FALSE(fs::exists(tmp.path() / "absent.sqlite"));
}

TEST(StoreCli, HelpAndUsageErrors) {
  auto help = Sb({"--help"});
  for (const char* cmd : {"store", "history", "leaderboard"}) {
    EXPECT_NE(help.out.find(cmd), std::string::npos) << cmd;
  }
  auto perf = Sb({"perf", "--help"});
  for (const char* flag : {"--store", "--no-store", "--label", "--tag"}) {
    EXPECT_NE(perf.out.find(flag), std::string::npos) << flag;
  }
  EXPECT_EQ(Sb({"perf", "--profile", "decode", "--tag", "novalue"}).exit_code, 2);
  EXPECT_EQ(Sb({"history", "--metric", "decode"}).exit_code, 2);
  TempDir tmp;
  auto missing = Sb({"history", "--store", (tmp.path() / "none.sqlite").string()});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("no run store at"), std::string::npos) << missing.err;
}

// --label and --tag live in the run directory (results.json "labels", report.md's Label line),
// not only in the store: an import without plan.json still finds them, and compare names the
// runs by their labels.
TEST(StoreCli, LabelsAndTagsLiveInTheRunDirectory) {
  TempDir tmp;
  const std::string db = (tmp.path() / "runs.sqlite").string();
  Sim a("same-model", "4");
  Sim b("same-model", "8");
  ASSERT_FALSE(a.url().empty());
  ASSERT_FALSE(b.url().empty());
  auto ra = DecodeRun(a, tmp.path() / "a", db, {"--label", "bare", "--tag", "spec=0"});
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  auto rb = DecodeRun(b, tmp.path() / "b", db, {"--label", "mtp 3", "--tag", "spec=3"});
  ASSERT_EQ(rb.exit_code, 0) << rb.err;

  std::ifstream in(tmp.path() / "a" / "results.json");
  const json results = json::parse(in);
  EXPECT_EQ(results["labels"]["label"], "bare");
  EXPECT_EQ(results["labels"]["tags"]["spec"], "0");
  std::ifstream md_in(tmp.path() / "b" / "report.md");
  const std::string md((std::istreambuf_iterator<char>(md_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(md.find("Label: **mtp 3** · `spec=3`"), std::string::npos) << md;

  auto cmp =
      Sb({"compare", (tmp.path() / "a").string(), (tmp.path() / "b").string(), "--format", "json"});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  const json c = json::parse(cmp.out);
  EXPECT_EQ(c["runs"][0]["label"], "bare");
  EXPECT_EQ(c["runs"][1]["label"], "mtp 3");

  fs::remove(tmp.path() / "a" / "plan.json");
  const std::string db2 = (tmp.path() / "again.sqlite").string();
  auto imp = Sb({"store", "import", "--store", db2, (tmp.path() / "a").string()});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  auto hist = Sb({"history", "--store", db2, "--format", "json"});
  ASSERT_EQ(hist.exit_code, 0) << hist.err;
  const json h = json::parse(hist.out);
  ASSERT_EQ(h["runs"].size(), 1u) << hist.out;
  EXPECT_EQ(h["runs"][0]["label"], "bare");
  EXPECT_EQ(h["runs"][0]["config"], "spec=0");
}

// What a result cost, stored: a run whose server servebench launched, with GPU figures from
// the tests' NVML library (tests/resources/fake_nvml.cpp: 2 GPUs at 100 W each), records the
// "resources" metric rows, and the leaderboard shows peak memory and J/token for it only.
TEST(StoreCli, ResourceFiguresAreStoredAndShownOnTheLeaderboard) {
  TempDir tmp;
  const std::string db = (tmp.path() / "runs.sqlite").string();
  Sim plain("plain-model", "4");
  ASSERT_FALSE(plain.url().empty());
  auto p = DecodeRun(plain, tmp.path() / "plain", db, {}, {"SERVEBENCH_NVML_LIB=/nonexistent.so"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto md = Sb({"leaderboard", "--store", db});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(md.out.find("J/token"), std::string::npos) << md.out;  // nobody measured energy

  auto served =
      Sb({"perf", "--profile", "decode", "--runs", "2", "--tokens", "32", "--warmup", "0",
          "--serve", kBin + " sim --model served-model --port {port} --itl-ms 2",
          "--sample-period-ms", "50", "--out", (tmp.path() / "served").string(), "--store", db},
         {"SERVEBENCH_NVML_LIB=" SB_FAKE_NVML, "FAKE_NVML_DEVICES=2", "FAKE_NVML_POWER_MW=100000"});
  ASSERT_EQ(served.exit_code, 0) << served.err;
  auto rows = testing::RunProcess({"/usr/bin/sqlite3", db,
                                   "SELECT metric || '@' || ifnull(point, '') || '=' || unit FROM "
                                   "metrics WHERE profile = 'resources' "
                                   "ORDER BY metric, point"});
  ASSERT_EQ(rows.exit_code, 0) << rows.err;
  for (const char* m :
       {"j_per_token@=J/token", "j_per_token@decode=J/token", "mean_power_w@=W",
        "peak_memory_bytes@=bytes", "tokens_per_j@=tokens/J", "energy_j@decode=J"}) {
    EXPECT_NE(rows.out.find(m), std::string::npos) << m << "\n" << rows.out;
  }
  const json results = json::parse(ReadFile(tmp.path() / "served" / "results.json"));
  auto board = Sb({"leaderboard", "--store", db, "--format", "json"});
  ASSERT_EQ(board.exit_code, 0) << board.err;
  const json b = json::parse(board.out);
  ASSERT_EQ(b["entries"].size(), 2u) << board.out;
  for (const json& e : b["entries"]) {
    const json& cols = e["columns"];
    if (e["model"] == "served-model") {
      EXPECT_EQ(cols["resources.j_per_token"], results["resources"]["run"]["j_per_token"]);
      EXPECT_EQ(cols["resources.peak_memory_bytes"],
                results["resources"]["run"]["memory_bytes"]["peak"]);
    } else {
      EXPECT_TRUE(cols["resources.j_per_token"].is_null()) << cols;
    }
  }
  md = Sb({"leaderboard", "--store", db});
  EXPECT_NE(md.out.find("| peak memory | J/token | run |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("40.00 GiB"), std::string::npos) << md.out;  // 2 × 20 GiB used
  // Ranked by energy per token (lower is better): the one run that has it.
  auto by_energy =
      Sb({"leaderboard", "--store", db, "--metric", "resources.j_per_token", "--format", "csv"});
  ASSERT_EQ(by_energy.exit_code, 0) << by_energy.err;
  EXPECT_EQ(Lines(by_energy.out, "\n"), 2) << by_energy.out;
  EXPECT_NE(by_energy.out.find("served-model"), std::string::npos) << by_energy.out;
}

// leaderboard --format html draws the stored runs' frontiers together (issue 23 item 1): one
// series per entry with a concurrency sweep, each point where its results.json put it; an entry
// without a sweep is named, not drawn.
TEST(StoreCli, LeaderboardHtmlDrawsTheStoredRunsFrontiersTogether) {
  TempDir tmp;
  const std::string db = (tmp.path() / "runs.sqlite").string();
  Sim fast("fast-model", "4");
  Sim slow("slow-model", "12");
  Sim plain("plain-model", "4");
  ASSERT_FALSE(fast.url().empty());
  ASSERT_FALSE(slow.url().empty());
  ASSERT_FALSE(plain.url().empty());
  for (const auto& [sim, name] : {std::pair{&fast, "fast"}, std::pair{&slow, "slow"}}) {
    auto r = Sb({"perf", "--endpoint", sim->url(), "--profile", "decode,concurrency", "--levels",
                 "1,2,4", "--tokens", "24", "--runs", "2", "--warmup", "0", "--out",
                 (tmp.path() / name).string(), "--store", db});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  ASSERT_EQ(DecodeRun(plain, tmp.path() / "plain", db).exit_code, 0);

  auto board = Sb({"leaderboard", "--store", db, "--format", "html"});
  ASSERT_EQ(board.exit_code, 0) << board.err;
  const std::string& html = board.out;
  const auto section = html.find("<section class=\"leaderboard-frontier\">");
  ASSERT_NE(section, std::string::npos) << html;
  const std::string fig = html.substr(section, html.find("</section>", section) - section);
  auto hist = Sb({"history", "--store", db, "--format", "json"});
  ASSERT_EQ(hist.exit_code, 0) << hist.err;
  std::map<std::string, std::string> ids;  // model -> run id
  const json history = json::parse(hist.out);
  for (const json& r : history["runs"]) {
    ids[r["model"].get<std::string>()] = r["id"].get<std::string>();
  }
  ASSERT_EQ(ids.size(), 3u) << hist.out;
  for (const char* name : {"fast", "slow"}) {
    const std::string model = std::string(name) + "-model";
    const std::string series = model + " · " + ids[model].substr(0, 12) + " · concurrency";
    const json results = json::parse(ReadFile(tmp.path() / name / "results.json"));
    const json& frontier = results["perf"]["concurrency"]["frontier"];
    ASSERT_EQ(frontier.size(), 3u) << results["perf"]["concurrency"].dump();
    EXPECT_EQ(Lines(fig, "data-series=\"" + series + "\" data-x"), 3) << series << "\n" << fig;
    for (const json& p : frontier) {
      const std::string mark =
          fmt::format("data-series=\"{}\" data-x=\"{}\" data-y=\"{}\"", series,
                      p["tok_s_per_user"].get<double>(), p["total_tok_s"].get<double>());
      EXPECT_NE(fig.find(mark), std::string::npos) << mark << "\n" << fig;
    }
  }
  // The faster server's one-stream point is faster per user than the slower one's.
  const json fast_results = json::parse(ReadFile(tmp.path() / "fast" / "results.json"));
  const json slow_results = json::parse(ReadFile(tmp.path() / "slow" / "results.json"));
  EXPECT_GT(fast_results["perf"]["concurrency"]["frontier"][0]["tok_s_per_user"].get<double>(),
            2 * slow_results["perf"]["concurrency"]["frontier"][0]["tok_s_per_user"].get<double>());
  EXPECT_EQ(fig.find("plain-model ·"), std::string::npos) << fig;
  EXPECT_NE(fig.find("Without frontier points"), std::string::npos);
  EXPECT_NE(fig.find(ids["plain-model"]), std::string::npos) << fig;
  // The store keeps each point's figures as metrics at dim "level".
  auto rows = testing::RunProcess(
      {"/usr/bin/sqlite3", db,
       "SELECT count(*) FROM metrics WHERE metric = 'frontier.total_tok_s' AND dim = 'level'"});
  EXPECT_EQ(rows.out, "6\n") << rows.err;
}

}  // namespace
}  // namespace sb::store_test
