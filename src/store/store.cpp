#include "store/store.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "core/profile_table.h"
#include "core/redact.h"
#include "store/db.h"

namespace sb::store {

namespace {

using internal::Db;
using internal::Int;
using internal::Real;
using internal::Row;
using internal::Text;
using internal::TextOrNull;
using internal::Value;

// Schema version 2, in the SQL both engines accept (docs/store.md explains every column).
const std::vector<std::string> kSchemaV2 = {
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, digest TEXT, started_at TEXT NOT NULL, "
    "finished_at TEXT, status TEXT NOT NULL, host TEXT, tool_version TEXT, server_kind TEXT, "
    "server_version TEXT, model TEXT NOT NULL, endpoint TEXT, simulated INTEGER NOT NULL, "
    "recipe TEXT, server_command TEXT, command TEXT, label TEXT, run_dir TEXT, "
    "recorded_at TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS tags (run_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT "
    "NULL, PRIMARY KEY (run_id, key))",
    "CREATE TABLE IF NOT EXISTS metrics (run_id TEXT NOT NULL, seq INTEGER NOT NULL, profile TEXT "
    "NOT NULL, dim TEXT, point TEXT, metric TEXT NOT NULL, value DOUBLE PRECISION NOT NULL, unit "
    "TEXT, n BIGINT, ci_lo DOUBLE PRECISION, ci_hi DOUBLE PRECISION, PRIMARY KEY (run_id, seq))",
    "CREATE TABLE IF NOT EXISTS tests (run_id TEXT NOT NULL, seq INTEGER NOT NULL, suite TEXT, "
    "test_id TEXT NOT NULL, category TEXT, status TEXT NOT NULL, seconds DOUBLE PRECISION, "
    "tokens BIGINT, reason TEXT, PRIMARY KEY (run_id, seq))",
    "CREATE INDEX IF NOT EXISTS metrics_by_name ON metrics (profile, metric)",
    "CREATE INDEX IF NOT EXISTS runs_by_model ON runs (model, started_at)",
};

// Version 1 -> 2: tags get their own table (v1 kept them in runs.tags as "k=v;k=v"), runs gain
// the content digest and the launched server, metric rows their 95% interval.
Result<void> MigrateV1ToV2(Db& db) {
  for (const char* sql :
       {"ALTER TABLE runs ADD COLUMN digest TEXT", "ALTER TABLE runs ADD COLUMN recipe TEXT",
        "ALTER TABLE runs ADD COLUMN server_command TEXT",
        "ALTER TABLE metrics ADD COLUMN ci_lo DOUBLE PRECISION",
        "ALTER TABLE metrics ADD COLUMN ci_hi DOUBLE PRECISION"}) {
    if (auto ok = db.Exec(sql); !ok) {
      return ok;
    }
  }
  for (const auto& sql : kSchemaV2) {
    if (auto ok = db.Exec(sql); !ok) {
      return ok;
    }
  }
  auto old = db.Query("SELECT id, tags FROM runs WHERE tags IS NOT NULL ORDER BY id");
  if (!old) {
    return old.error();
  }
  for (const Row& r : old.value()) {
    const std::string tags = Text(r[1]);
    std::size_t start = 0;
    while (start < tags.size()) {
      std::size_t end = tags.find(';', start);
      if (end == std::string::npos) {
        end = tags.size();
      }
      const std::string item = tags.substr(start, end - start);
      if (auto tag = ParseTag(item)) {
        if (auto ok = db.Exec("INSERT INTO tags (run_id, key, value) VALUES (?, ?, ?)",
                              {r[0], tag->first, tag->second});
            !ok) {
          return ok;
        }
      }
      start = end + 1;
    }
  }
  return db.Exec("ALTER TABLE runs DROP COLUMN tags");
}

Result<int> ReadVersion(Db& db) {
  // A store without a version row is a new one (version 0).
  auto rows = db.Query("SELECT value FROM meta WHERE key = 'schema_version'");
  if (!rows) {
    return rows.error();
  }
  if (rows->empty()) {
    return 0;
  }
  const auto v = Int(rows->front()[0]);
  return v ? static_cast<int>(*v) : 0;
}

std::string Now() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Test hook (tests/store): with SERVEBENCH_TEST_STORE_PAUSE=FILE, a writer creates FILE once the
// run's rows are written and waits there, before its commit, so a test can kill it mid-write.
void PauseForTest() {
  const char* file = std::getenv("SERVEBENCH_TEST_STORE_PAUSE");
  if (file == nullptr || *file == '\0') {
    return;
  }
  std::ofstream(file) << "paused\n";
  std::this_thread::sleep_for(std::chrono::seconds(30));
}

class SqlStore final : public Store {
 public:
  SqlStore(std::unique_ptr<Db> db, int version) : db_(std::move(db)), version_(version) {}

  Result<AddOutcome> Add(const RunRecord& run) override {
    if (auto ok = db_->BeginWrite(); !ok) {
      return ok.error();
    }
    auto outcome = AddInTransaction(run);
    if (!outcome) {
      db_->Rollback();
      return outcome.error();
    }
    if (outcome.value() == AddOutcome::kUnchanged) {
      db_->Rollback();
      return outcome;
    }
    PauseForTest();
    if (auto ok = db_->Commit(); !ok) {
      db_->Rollback();
      return ok.error();
    }
    return outcome;
  }

  Result<std::vector<RunListing>> List() override {
    auto all = LoadRuns(/*with_metrics=*/false);
    if (!all) {
      return all.error();
    }
    std::vector<RunListing> out;
    for (const RunRecord& r : all.value()) {
      out.push_back(
          {r.id, r.started_at, r.status, r.model,
           r.server_version.empty() ? r.server_kind : r.server_kind + " " + r.server_version,
           r.tool_version, r.Config(), r.label, r.run_dir});
    }
    return out;
  }

  Result<std::vector<std::string>> Remove(const std::string& id_prefix) override {
    if (id_prefix.empty()) {
      return MakeError(ErrorCode::kUsage, "store rm: give a run id (see `servebench store ls`)");
    }
    if (auto ok = db_->BeginWrite(); !ok) {
      return ok.error();
    }
    auto done = RemoveInTransaction(id_prefix);
    if (!done) {
      db_->Rollback();
      return done.error();
    }
    if (auto ok = db_->Commit(); !ok) {
      db_->Rollback();
      return ok.error();
    }
    return done;
  }

  Result<std::vector<RunRecord>> LoadAll() override { return LoadRuns(/*with_metrics=*/true); }

  Result<std::vector<TestRow>> Tests(const std::string& id) override {
    auto rows = db_->Query(
        "SELECT suite, test_id, category, status, seconds, tokens, reason FROM tests WHERE "
        "run_id = ? ORDER BY seq",
        {id});
    if (!rows) {
      return rows.error();
    }
    std::vector<TestRow> out;
    for (const Row& r : rows.value()) {
      out.push_back(
          {Text(r[0]), Text(r[1]), Text(r[2]), Text(r[3]), Text(r[6]), Real(r[4]), Int(r[5])});
    }
    return out;
  }

  std::string Describe() const override { return db_->Describe(); }

  int SchemaVersion() const override { return version_; }

 private:
  Result<void> DeleteRun(const std::string& id) {
    for (const char* sql :
         {"DELETE FROM tags WHERE run_id = ?", "DELETE FROM metrics WHERE run_id = ?",
          "DELETE FROM tests WHERE run_id = ?", "DELETE FROM runs WHERE id = ?"}) {
      if (auto ok = db_->Exec(sql, {id}); !ok) {
        return ok;
      }
    }
    return {};
  }

  Result<AddOutcome> AddInTransaction(const RunRecord& run) {
    auto existing = db_->Query("SELECT digest FROM runs WHERE id = ?", {run.id});
    if (!existing) {
      return existing.error();
    }
    AddOutcome outcome = AddOutcome::kAdded;
    if (!existing->empty()) {
      if (Text(existing->front()[0]) == run.digest) {
        return AddOutcome::kUnchanged;
      }
      if (auto ok = DeleteRun(run.id); !ok) {
        return ok.error();
      }
      outcome = AddOutcome::kReplaced;
    }
    auto ok = db_->Exec(
        "INSERT INTO runs (id, digest, started_at, finished_at, status, host, tool_version, "
        "server_kind, server_version, model, endpoint, simulated, recipe, server_command, command, "
        "label, run_dir, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?)",
        {run.id, run.digest, run.started_at, TextOrNull(run.finished_at), run.status,
         TextOrNull(run.host), TextOrNull(run.tool_version), TextOrNull(run.server_kind),
         TextOrNull(run.server_version), run.model, TextOrNull(run.endpoint),
         static_cast<long long>(run.simulated ? 1 : 0), TextOrNull(run.recipe),
         TextOrNull(run.server_command), TextOrNull(run.command), TextOrNull(run.label),
         TextOrNull(run.run_dir), Now()});
    if (!ok) {
      return ok.error();
    }
    for (const auto& [k, v] : run.tags) {
      if (auto t =
              db_->Exec("INSERT INTO tags (run_id, key, value) VALUES (?, ?, ?)", {run.id, k, v});
          !t) {
        return t.error();
      }
    }
    long long seq = 0;
    for (const MetricRow& m : run.metrics) {
      auto opt = [](const std::optional<double>& d) { return d ? Value{*d} : Value{}; };
      if (auto t = db_->Exec(
              "INSERT INTO metrics (run_id, seq, profile, dim, point, metric, value, unit, n, "
              "ci_lo, ci_hi) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
              {run.id, seq++, m.profile, TextOrNull(m.dim), TextOrNull(m.point), m.metric, m.value,
               TextOrNull(m.unit), m.n ? Value{*m.n} : Value{}, opt(m.ci_lo), opt(m.ci_hi)});
          !t) {
        return t.error();
      }
    }
    seq = 0;
    for (const TestRow& t : run.tests) {
      if (auto ok2 = db_->Exec(
              "INSERT INTO tests (run_id, seq, suite, test_id, category, status, seconds, tokens, "
              "reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
              {run.id, seq++, TextOrNull(t.suite), t.test_id, TextOrNull(t.category), t.status,
               t.seconds ? Value{*t.seconds} : Value{}, t.tokens ? Value{*t.tokens} : Value{},
               TextOrNull(t.reason)});
          !ok2) {
        return ok2.error();
      }
    }
    return outcome;
  }

  Result<std::vector<std::string>> RemoveInTransaction(const std::string& id_prefix) {
    auto rows = db_->Query("SELECT id FROM runs ORDER BY id");
    if (!rows) {
      return rows.error();
    }
    std::vector<std::string> matched;
    for (const Row& r : rows.value()) {
      const std::string id = Text(r[0]);
      if (id == id_prefix) {
        matched = {id};
        break;
      }
      if (id.starts_with(id_prefix)) {
        matched.push_back(id);
      }
    }
    if (matched.empty()) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("store rm: no run {} in {}", id_prefix, db_->Describe()));
    }
    if (matched.size() > 1) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("store rm: {} names {} runs ({}): give more of the id",
                                   id_prefix, matched.size(), fmt::join(matched, ", ")));
    }
    if (auto ok = DeleteRun(matched.front()); !ok) {
      return ok.error();
    }
    return matched;
  }

  Result<std::vector<RunRecord>> LoadRuns(bool with_metrics) {
    auto rows = db_->Query(
        "SELECT id, digest, started_at, finished_at, status, host, tool_version, server_kind, "
        "server_version, model, endpoint, simulated, recipe, server_command, command, label, "
        "run_dir FROM runs ORDER BY started_at, id");
    if (!rows) {
      return rows.error();
    }
    std::vector<RunRecord> runs;
    std::map<std::string, std::size_t> index;
    for (const Row& r : rows.value()) {
      RunRecord run;
      run.id = Text(r[0]);
      run.digest = Text(r[1]);
      run.started_at = Text(r[2]);
      run.finished_at = Text(r[3]);
      run.status = Text(r[4]);
      run.host = Text(r[5]);
      run.tool_version = Text(r[6]);
      run.server_kind = Text(r[7]);
      run.server_version = Text(r[8]);
      run.model = Text(r[9]);
      run.endpoint = Text(r[10]);
      run.simulated = Int(r[11]).value_or(0) != 0;
      run.recipe = Text(r[12]);
      run.server_command = Text(r[13]);
      run.command = Text(r[14]);
      run.label = Text(r[15]);
      run.run_dir = Text(r[16]);
      index[run.id] = runs.size();
      runs.push_back(std::move(run));
    }
    auto tags = db_->Query("SELECT run_id, key, value FROM tags ORDER BY run_id, key");
    if (!tags) {
      return tags.error();
    }
    for (const Row& r : tags.value()) {
      if (auto it = index.find(Text(r[0])); it != index.end()) {
        runs[it->second].tags[Text(r[1])] = Text(r[2]);
      }
    }
    if (!with_metrics) {
      return runs;
    }
    auto metrics = db_->Query(
        "SELECT run_id, profile, dim, point, metric, value, unit, n, ci_lo, ci_hi FROM metrics "
        "ORDER BY run_id, seq");
    if (!metrics) {
      return metrics.error();
    }
    for (const Row& r : metrics.value()) {
      auto it = index.find(Text(r[0]));
      if (it == index.end()) {
        continue;
      }
      MetricRow m;
      m.profile = ProfileDisplayName(Text(r[1]));  // a store written before: max_tokens
      m.dim = Text(r[2]);
      m.point = Text(r[3]);
      m.metric = Text(r[4]);
      m.value = Real(r[5]).value_or(0);
      m.unit = Text(r[6]);
      m.n = Int(r[7]);
      m.ci_lo = Real(r[8]);
      m.ci_hi = Real(r[9]);
      runs[it->second].metrics.push_back(std::move(m));
    }
    return runs;
  }

  std::unique_ptr<Db> db_;
  int version_;
};

// Creates the schema or migrates it to kSchemaVersion, in one write transaction (two processes
// opening a new store at once: the second finds it done).
Result<int> PrepareSchema(Db& db) {
  if (auto ok = db.BeginWrite(); !ok) {
    return ok.error();
  }
  auto done = [&]() -> Result<int> {
    // Every version has this table; creating it first keeps a new store's first read from
    // failing (which would abort a PostgreSQL transaction).
    if (auto ok = db.Exec(kSchemaV2.front()); !ok) {
      return ok.error();
    }
    auto version = ReadVersion(db);
    if (!version) {
      return version.error();
    }
    int v = version.value();
    if (v > kSchemaVersion) {
      return MakeError(ErrorCode::kSetup,
                       fmt::format("its schema version {} is newer than this servebench's ({}): "
                                   "use a newer servebench",
                                   v, kSchemaVersion));
    }
    if (v == kSchemaVersion) {
      return v;
    }
    if (v == 0) {
      for (const auto& sql : kSchemaV2) {
        if (auto ok = db.Exec(sql); !ok) {
          return ok.error();
        }
      }
      if (auto ok = db.Exec("INSERT INTO meta (key, value) VALUES ('schema_version', ?)",
                            {std::to_string(kSchemaVersion)});
          !ok) {
        return ok.error();
      }
      return kSchemaVersion;
    }
    if (v == 1) {
      if (auto ok = MigrateV1ToV2(db); !ok) {
        return ok.error();
      }
      v = 2;
    }
    if (auto ok =
            db.Exec("UPDATE meta SET value = ? WHERE key = 'schema_version'", {std::to_string(v)});
        !ok) {
      return ok.error();
    }
    return v;
  }();
  if (!done) {
    db.Rollback();
    return done;
  }
  if (auto ok = db.Commit(); !ok) {
    db.Rollback();
    return ok.error();
  }
  return done;
}

// The default location (its folder is created when needed), or nullopt without a HOME.
std::optional<std::string> DefaultLocation() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : std::string();
  };
  const std::string xdg = env("XDG_DATA_HOME");
  if (!xdg.empty() && std::filesystem::path(xdg).is_absolute()) {
    return (std::filesystem::path(xdg) / "servebench" / "runs.sqlite").string();
  }
  const std::string home = env("HOME");
  if (!home.empty()) {
    return (std::filesystem::path(home) / ".local" / "share" / "servebench" / "runs.sqlite")
        .string();
  }
  return std::nullopt;
}

// The length of an RFC 3986 scheme followed by "://" at the start of `location`, or 0.
std::size_t SchemeLength(std::string_view location) {
  if (location.empty() || !std::isalpha(static_cast<unsigned char>(location[0]))) {
    return 0;
  }
  std::size_t i = 1;
  while (i < location.size() && (std::isalnum(static_cast<unsigned char>(location[i])) ||
                                 location[i] == '+' || location[i] == '-' || location[i] == '.')) {
    ++i;
  }
  return location.substr(i).starts_with("://") ? i : 0;
}

// A PostgreSQL URL with its scheme in lower case (libpq recognises only that spelling).
std::string LowerScheme(const std::string& location) {
  std::string out = location;
  const std::size_t n = SchemeLength(out);
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[i])));
  }
  return out;
}

}  // namespace

bool IsPostgresUrl(std::string_view location) {
  const std::size_t n = SchemeLength(location);
  std::string scheme(location.substr(0, n));
  for (char& c : scheme) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return scheme == "postgresql" || scheme == "postgres";
}

Result<void> CheckLocation(const std::string& location) {
  if (location.empty()) {
    return MakeError(ErrorCode::kUsage,
                     "empty: give a SQLite file path or postgresql://USER@HOST/DB");
  }
  if (IsPostgresUrl(location)) {
    return {};
  }
  if (const std::size_t n = SchemeLength(location); n > 0) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("unknown scheme '{}://': a store is a SQLite file path or a "
                                 "postgresql:// (postgres://) URL",
                                 location.substr(0, n)));
  }
  const std::filesystem::path parent = std::filesystem::path(location).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("directory {} does not exist (create it first)", parent.string()));
  }
  if (std::filesystem::is_directory(location, ec)) {
    return MakeError(ErrorCode::kUsage,
                     "is a directory: give the SQLite file's path (e.g. DIR/runs.sqlite)");
  }
  return {};
}

std::optional<std::string> ResolveLocation(const StoreOptions& options) {
  if (options.no_store) {
    return std::nullopt;
  }
  if (!options.store.empty()) {
    return options.store;
  }
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : std::string();
  };
  const std::string from_env = env("SERVEBENCH_STORE");
  if (from_env == "off") {
    return std::nullopt;
  }
  if (!from_env.empty()) {
    return from_env;
  }
  return DefaultLocation();
}

std::string DisplayLocation(const std::string& location) {
  return RedactUrl(location);
}

Result<std::unique_ptr<Store>> Open(const std::string& location) {
  if (location == DefaultLocation()) {
    // The default store's folder is made on first use; any other store's must exist.
    std::error_code ec;
    const auto dir = std::filesystem::path(location).parent_path();
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return MakeError(ErrorCode::kIo,
                       fmt::format("cannot create {}: {}", dir.string(), ec.message()))
          .WithContext(fmt::format("store {}", DisplayLocation(location)));
    }
  } else if (auto ok = CheckLocation(location); !ok) {
    return ok.error().WithContext(fmt::format("store {}", DisplayLocation(location)));
  }
  auto db = IsPostgresUrl(location) ? internal::OpenPostgres(LowerScheme(location))
                                    : internal::OpenSqlite(location);
  if (!db) {
    return db.error().WithContext(fmt::format("store {}", DisplayLocation(location)));
  }
  auto version = PrepareSchema(*db.value());
  if (!version) {
    return version.error().WithContext(fmt::format("store {}", DisplayLocation(location)));
  }
  return std::unique_ptr<Store>(std::make_unique<SqlStore>(std::move(db.value()), *version));
}

void RecordRun(const StoreOptions& options, const std::filesystem::path& dir) {
  const auto location = ResolveLocation(options);
  if (!location) {
    return;
  }
  const std::string shown = DisplayLocation(*location);
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "%s\n",
                 Redact(fmt::format("run not stored in {}: {}; the run directory is complete: add "
                                    "it later with `servebench store import {}`",
                                    shown, why, dir.string()))
                     .c_str());
  };
  Labels labels;  // the run's own --label/--tag are in its plan.json
  auto record = ReadRunDir(dir, labels);
  if (!record) {
    fail(record.error().message);
    return;
  }
  auto store = Open(*location);
  if (!store) {
    // The message starts "store LOCATION: ": keep only the reason.
    std::string why = store.error().message;
    const std::string prefix = fmt::format("store {}: ", shown);
    if (why.starts_with(prefix)) {
      why = why.substr(prefix.size());
    }
    fail(why);
    return;
  }
  auto added = store.value()->Add(record.value());
  if (!added) {
    fail(added.error().message);
    return;
  }
  std::fprintf(stderr, "stored run %s in %s\n", record->id.c_str(), shown.c_str());
}

}  // namespace sb::store
