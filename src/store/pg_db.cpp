#include <fmt/format.h>

#include "core/redact.h"
#include "store/db.h"
#include <pqxx/pqxx>

namespace sb::store::internal {

namespace {

// Every writer of a store takes this advisory lock inside its transaction: one run is written
// at a time, as with SQLite (the number is "sbstore" in ASCII).
constexpr long long kWriteLock = 0x736273746f7265;

class PgDb final : public Db {
 public:
  PgDb(std::unique_ptr<pqxx::connection> conn, std::string url)
      : conn_(std::move(conn)), ntx_(*conn_), url_(std::move(url)) {}

  Result<void> Exec(const std::string& sql, const std::vector<Value>& params) override {
    auto r = Run(sql, params);
    if (!r) {
      return r.error();
    }
    return {};
  }

  Result<std::vector<Row>> Query(const std::string& sql,
                                 const std::vector<Value>& params) override {
    return Run(sql, params);
  }

  Result<void> BeginWrite() override {
    if (auto ok = Exec("BEGIN", {}); !ok) {
      return ok;
    }
    return Exec(fmt::format("SELECT pg_advisory_xact_lock({})", kWriteLock), {});
  }

  Result<void> Commit() override { return Exec("COMMIT", {}); }

  void Rollback() override { (void)Exec("ROLLBACK", {}); }

  std::string Describe() const override { return RedactUrl(url_); }

 private:
  // `?` placeholders become quoted literals (pqxx quotes and escapes them).
  std::string Bind(const std::string& sql, const std::vector<Value>& params) {
    std::string out;
    std::size_t p = 0;
    for (char ch : sql) {
      if (ch != '?' || p >= params.size()) {
        out += ch;
        continue;
      }
      const Value& v = params[p++];
      if (const auto* s = std::get_if<std::string>(&v)) {
        out += conn_->quote(*s);
      } else if (const auto* n = std::get_if<long long>(&v)) {
        out += std::to_string(*n);
      } else if (const auto* d = std::get_if<double>(&v)) {
        out += fmt::format("CAST('{}' AS DOUBLE PRECISION)", *d);
      } else {
        out += "NULL";
      }
    }
    return out;
  }

  Result<std::vector<Row>> Run(const std::string& sql, const std::vector<Value>& params) {
    try {
      const pqxx::result r = ntx_.exec(Bind(sql, params));
      std::vector<Row> rows;
      for (const auto& row : r) {
        Row out;
        for (const auto& f : row) {
          if (f.is_null()) {
            out.emplace_back(std::monostate{});
            continue;
          }
          switch (f.type()) {
            case 20:  // int8
            case 21:  // int2
            case 23:  // int4
              out.emplace_back(f.as<long long>());
              break;
            case 700:   // float4
            case 701:   // float8
            case 1700:  // numeric
              out.emplace_back(f.as<double>());
              break;
            default:
              out.emplace_back(std::string(f.c_str(), f.size()));
          }
        }
        rows.push_back(std::move(out));
      }
      return rows;
    } catch (const std::exception& e) {
      std::string why = e.what();
      while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) {
        why.pop_back();
      }
      return MakeError(ErrorCode::kSetup, Redact(fmt::format("PostgreSQL: {}", why)));
    }
  }

  std::unique_ptr<pqxx::connection> conn_;
  pqxx::nontransaction ntx_;
  std::string url_;
};

}  // namespace

Result<std::unique_ptr<Db>> OpenPostgres(const std::string& url) {
  AddUrlSecrets(url);
  try {
    auto conn = std::make_unique<pqxx::connection>(url);
    // Quiet NOTICEs ("relation already exists, skipping") on stderr.
    pqxx::nontransaction(*conn).exec("SET client_min_messages TO WARNING");
    return std::unique_ptr<Db>(std::make_unique<PgDb>(std::move(conn), url));
  } catch (const std::exception& e) {
    std::string why = e.what();
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) {
      why.pop_back();
    }
    return MakeError(ErrorCode::kSetup, Redact(fmt::format("cannot connect: {}", why)));
  }
}

}  // namespace sb::store::internal
