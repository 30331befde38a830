// Internal: the little SQL both engines share (store.cpp holds the schema, the migrations and
// every statement once, written in the SQL common to SQLite and PostgreSQL; `?` marks a
// parameter). Not part of the store's interface.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/result.h"

namespace sb::store::internal {

using Value = std::variant<std::monostate, long long, double, std::string>;
using Row = std::vector<Value>;

class Db {
 public:
  virtual ~Db() = default;
  // Runs one statement (no result rows expected).
  virtual Result<void> Exec(const std::string& sql, const std::vector<Value>& params = {}) = 0;
  virtual Result<std::vector<Row>> Query(const std::string& sql,
                                         const std::vector<Value>& params = {}) = 0;
  // A write transaction that excludes every other writer of the store until Commit/Rollback
  // (SQLite: BEGIN IMMEDIATE with the busy timeout; PostgreSQL: BEGIN and an advisory lock).
  virtual Result<void> BeginWrite() = 0;
  virtual Result<void> Commit() = 0;
  virtual void Rollback() = 0;
  // Where the store is, with any password redacted.
  virtual std::string Describe() const = 0;
};

Result<std::unique_ptr<Db>> OpenSqlite(const std::string& path);
Result<std::unique_ptr<Db>> OpenPostgres(const std::string& url);

// Null-safe reads of a result value.
inline std::string Text(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) {
    return *s;
  }
  if (const auto* i = std::get_if<long long>(&v)) {
    return std::to_string(*i);
  }
  return {};
}

inline std::optional<double> Real(const Value& v) {
  if (const auto* d = std::get_if<double>(&v)) {
    return *d;
  }
  if (const auto* i = std::get_if<long long>(&v)) {
    return static_cast<double>(*i);
  }
  if (const auto* s = std::get_if<std::string>(&v)) {
    try {
      return std::stod(*s);
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

inline std::optional<long long> Int(const Value& v) {
  if (const auto* i = std::get_if<long long>(&v)) {
    return *i;
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return static_cast<long long>(*d);
  }
  if (const auto* s = std::get_if<std::string>(&v)) {
    try {
      return std::stoll(*s);
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

inline Value TextOrNull(const std::string& s) {
  return s.empty() ? Value{} : Value{s};
}

}  // namespace sb::store::internal
