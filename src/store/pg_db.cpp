#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/redact.h"
#include "store/db.h"
#include <pqxx/pqxx>

namespace sb::store::internal {

namespace {

// Every writer of a store takes this advisory lock inside its transaction: one run is written
// at a time, as with SQLite (the number is "sbstore" in ASCII).
constexpr long long kWriteLock = 0x736273746f7265;

// An unresponsive store must cost seconds, not the process (docs/store.md, "Safe writes"):
// libpq gives up connecting after kConnectTimeoutS (per address); the server cancels a statement
// that runs, or waits for a lock, longer than kStatementTimeout; and a statement whose answer
// does not come kAnswerTimeout after it was sent (a server or backend that stopped, a network
// that went silent, where the server's own timeouts cannot fire) is abandoned here.
constexpr int kConnectTimeoutS = 5;
constexpr const char* kStatementTimeout = "10s";
constexpr auto kAnswerTimeout = std::chrono::seconds(15);

// The connection and the transaction on it, owned together: a statement abandoned after
// kAnswerTimeout keeps them alive in its thread until libpq returns (or the process ends).
struct Session {
  explicit Session(const std::string& url) : conn(url), ntx(conn) {}

  pqxx::connection conn;
  pqxx::nontransaction ntx;
};

// Runs `sql` on `session` in a thread of its own and waits at most kAnswerTimeout for it.
// nullopt: no answer in time (the session is then unusable and left to that thread).
std::optional<pqxx::result> ExecBounded(const std::shared_ptr<Session>& session,
                                        const std::string& sql) {
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    pqxx::result result;
    std::exception_ptr error;
  };

  auto shared = std::make_shared<Shared>();
  std::thread([session, shared, sql] {
    pqxx::result r;
    std::exception_ptr error;
    try {
      r = session->ntx.exec(sql);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(shared->mu);
    shared->result = std::move(r);
    shared->error = error;
    shared->done = true;
    shared->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(shared->mu);
  if (!shared->cv.wait_for(lock, kAnswerTimeout, [&] { return shared->done; })) {
    return std::nullopt;
  }
  if (shared->error) {
    std::rethrow_exception(shared->error);
  }
  return std::move(shared->result);
}

// `url` with libpq's connect_timeout added, unless it names one already.
std::string WithConnectTimeout(const std::string& url) {
  if (url.find("connect_timeout=") != std::string::npos) {
    return url;
  }
  const std::size_t fragment = url.find('#');
  std::string base = url.substr(0, fragment);
  base += base.find('?') == std::string::npos ? '?' : '&';
  base += fmt::format("connect_timeout={}", kConnectTimeoutS);
  return fragment == std::string::npos ? base : base + url.substr(fragment);
}

std::string Reason(const std::exception& e) {
  std::string why = e.what();
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) {
    why.pop_back();
  }
  return why;
}

class PgDb final : public Db {
 public:
  PgDb(std::shared_ptr<Session> session, std::string url)
      : session_(std::move(session)), url_(std::move(url)) {}

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
        out += session_->conn.quote(*s);
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
    if (session_ == nullptr) {
      return MakeError(ErrorCode::kSetup,
                       "PostgreSQL: the connection was given up after a statement went unanswered");
    }
    try {
      const auto answered = ExecBounded(session_, Bind(sql, params));
      if (!answered) {
        session_.reset();  // left to the thread still waiting on it
        return MakeError(ErrorCode::kSetup,
                         fmt::format("PostgreSQL: no answer within {} s (is the server stopped?)",
                                     kAnswerTimeout.count()));
      }
      const pqxx::result& r = *answered;
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
      return MakeError(ErrorCode::kSetup, Redact(fmt::format("PostgreSQL: {}", Reason(e))));
    }
  }

  std::shared_ptr<Session> session_;  // null once a statement went unanswered
  std::string url_;
};

}  // namespace

Result<std::unique_ptr<Db>> OpenPostgres(const std::string& url) {
  AddUrlSecrets(url);
  std::shared_ptr<Session> session;
  try {
    session = std::make_shared<Session>(WithConnectTimeout(url));
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kSetup, Redact(fmt::format("cannot connect: {}", Reason(e))));
  }
  auto db = std::make_unique<PgDb>(std::move(session), url);
  // Quiet NOTICEs ("relation already exists, skipping") on stderr; the server's own limits on a
  // statement and on a lock wait (another writer's transaction, a lock held by hand).
  for (const std::string& sql : {std::string("SET client_min_messages TO WARNING"),
                                 fmt::format("SET statement_timeout = '{}'", kStatementTimeout),
                                 fmt::format("SET lock_timeout = '{}'", kStatementTimeout)}) {
    if (auto ok = db->Exec(sql, {}); !ok) {
      return ok.error();
    }
  }
  return std::unique_ptr<Db>(std::move(db));
}

}  // namespace sb::store::internal
