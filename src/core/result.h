// Errors as values. Expected failures (an unreachable endpoint, a malformed stream, a bad file)
// are returned as Result<T>; exceptions from third-party code are converted at the boundary.
// The API is the subset of std::expected we use, so it can be swapped for it under C++23.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace sb {

// What kind of failure; cli maps these to exit codes (docs/architecture.md).
enum class ErrorCode {
  kUsage,      // bad flags or arguments (exit 2)
  kSetup,      // unreachable endpoint, unknown model, unreadable file (exit 3)
  kIo,         // file system (exit 3)
  kHttp,       // server answered with a non-2xx status
  kTransport,  // connect refused, reset, TLS, DNS
  kTimeout,    // a time limit fired
  kProtocol,   // malformed stream, bad JSON
  kCancelled,  // stop requested (Ctrl-C)
  kInternal,   // a bug
};

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;

  // Prefixes context: Error{...}.WithContext("loading x") -> "loading x: message".
  Error WithContext(const std::string& context) const {
    return Error{code, context + ": " + message};
  }
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)

  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const { return v_.index() == 0; }

  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(v_); }

  const T& value() const& { return std::get<0>(v_); }

  T&& value() && { return std::get<0>(std::move(v_)); }

  T* operator->() { return &std::get<0>(v_); }

  const T* operator->() const { return &std::get<0>(v_); }

  T& operator*() & { return value(); }

  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class Result<void> {
 public:
  Result() = default;

  Result(Error error)
      : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const { return ok_; }

  explicit operator bool() const { return ok_; }

  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

inline Error MakeError(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

}  // namespace sb
