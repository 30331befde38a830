#include <chrono>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <sqlite3.h>

#include "store/db.h"

namespace sb::store::internal {

namespace {

// How long a writer waits for another one (8 processes recording at once queue behind each
// other's short transactions).
constexpr int kBusyTimeoutMs = 60000;

class SqliteDb final : public Db {
 public:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  ~SqliteDb() override { sqlite3_close_v2(db_); }

  Result<void> Exec(const std::string& sql, const std::vector<Value>& params) override {
    auto rows = Run(sql, params, /*collect=*/false);
    if (!rows) {
      return rows.error();
    }
    return {};
  }

  Result<std::vector<Row>> Query(const std::string& sql,
                                 const std::vector<Value>& params) override {
    return Run(sql, params, /*collect=*/true);
  }

  Result<void> BeginWrite() override { return Exec("BEGIN IMMEDIATE", {}); }

  Result<void> Commit() override { return Exec("COMMIT", {}); }

  void Rollback() override { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }

  std::string Describe() const override { return path_; }

  Error Fail(const std::string& what) const {
    return MakeError(ErrorCode::kSetup, fmt::format("{}: {}", what, sqlite3_errmsg(db_)));
  }

 private:
  Result<std::vector<Row>> Run(const std::string& sql, const std::vector<Value>& params,
                               bool collect) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &st, nullptr) !=
        SQLITE_OK) {
      return Fail("SQLite");
    }
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> guard(st, sqlite3_finalize);
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int idx = static_cast<int>(i + 1);
      const Value& v = params[i];
      if (const auto* s = std::get_if<std::string>(&v)) {
        sqlite3_bind_text(st, idx, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
      } else if (const auto* n = std::get_if<long long>(&v)) {
        sqlite3_bind_int64(st, idx, *n);
      } else if (const auto* d = std::get_if<double>(&v)) {
        sqlite3_bind_double(st, idx, *d);
      } else {
        sqlite3_bind_null(st, idx);
      }
    }
    std::vector<Row> rows;
    for (;;) {
      const int rc = sqlite3_step(st);
      if (rc == SQLITE_DONE) {
        break;
      }
      if (rc != SQLITE_ROW) {
        return Fail("SQLite");
      }
      if (!collect) {
        continue;
      }
      Row row;
      const int cols = sqlite3_column_count(st);
      for (int c = 0; c < cols; ++c) {
        switch (sqlite3_column_type(st, c)) {
          case SQLITE_INTEGER:
            row.emplace_back(static_cast<long long>(sqlite3_column_int64(st, c)));
            break;
          case SQLITE_FLOAT:
            row.emplace_back(sqlite3_column_double(st, c));
            break;
          case SQLITE_NULL:
            row.emplace_back(std::monostate{});
            break;
          default: {
            const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
            row.emplace_back(
                std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(st, c))));
          }
        }
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  sqlite3* db_;
  std::string path_;
};

}  // namespace

Result<std::unique_ptr<Db>> OpenSqlite(const std::string& path) {
  sqlite3* raw = nullptr;
  const int open_rc =
      sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (open_rc != SQLITE_OK) {
    std::string why = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(open_rc);
    sqlite3_close_v2(raw);
    return MakeError(ErrorCode::kIo, fmt::format("cannot open: {}", why));
  }
  auto db = std::make_unique<SqliteDb>(raw, path);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  // WAL: readers never block the writer; FULL: a committed run survives a power cut too.
  // Switching a new database to WAL needs its exclusive lock, and SQLite answers SQLITE_BUSY at
  // once there, without the busy handler, when another process is opening it at the same
  // moment (8 runs finishing together: seen): retried here for as long as the busy timeout.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL"}) {
    for (int attempt = 0;; ++attempt) {
      const int step = sqlite3_exec(raw, pragma, nullptr, nullptr, nullptr);
      if (step == SQLITE_OK) {
        break;
      }
      const int primary = step & 0xff;
      if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) ||
          std::chrono::steady_clock::now() >= deadline) {
        return db->Fail("cannot open");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5 + (attempt % 10)));
    }
  }
  return std::unique_ptr<Db>(std::move(db));
}

}  // namespace sb::store::internal
