// Whether the server stopped answering (docs/bounds.md, "a server that stopped answering"): a
// server that refuses connections, or one that froze (SIGSTOP, a deadlocked engine, a dead GPU)
// and accepts connections but never answers. kSilentInARow measured requests in a row that got
// no answer at all, then one health probe (GET /v1/models) that gets none within ProbeLimit():
// the server is gone, and the run sends nothing more. A probe that gets any HTTP answer clears
// the count: that server is alive, only slow or failing (its requests fail one by one).
// Thread safety: used from one thread (the run's).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "client/chat.h"
#include "client/http_client.h"
#include "core/result.h"

namespace sb::perf {

// A request that got no answer at all: refused or reset before its first byte, or ended by the
// first-byte or idle limit, or by a whole-request limit before any byte came. A request that
// was answered (any HTTP status, any byte of a stream) or cancelled is not silent.
bool Silent(const client::ChatResponse& r);

// The flag that raises the client limit a timeout reason names: "no connection within" ->
// --connect-timeout-s, "no first byte" -> --first-byte-timeout-s, "idle gap" ->
// --idle-timeout-s, "total time" -> --request-timeout-s; "" for any other reason.
std::string_view TimeoutFlag(std::string_view reason);

// A failed request for a progress line: "timeout: no first byte within 2000 ms (raise with
// --first-byte-timeout-s)", "http_error: HTTP 500: ...".
std::string FailureNote(const client::ChatResponse& r);

// The health probe: GET /v1/models through `client` within `limit`. Any HTTP answer is one; else
// an error "GET /v1/models: <why>" (the URL, which may hold credentials, left out).
Result<void> ProbeModels(client::Client& client, std::chrono::milliseconds limit);

class ServerWatch {
 public:
  static constexpr int kSilentInARow = 2;

  // The health probe: an error (its message says why) when the server did not answer.
  using Probe = std::function<Result<void>()>;

  // The probe's time limit for a client whose first-byte limit is `first_byte`: a quarter of
  // it, at least 0.5 s and at most 5 s (a live server lists its models in milliseconds).
  static std::chrono::milliseconds ProbeLimit(std::chrono::milliseconds first_byte);

  void SetProbe(Probe probe) { probe_ = std::move(probe); }

  // Feeds one finished request (replayed ones are ignored: they were judged when they ran).
  // Returns true when this request showed that the server is gone (once).
  bool Observe(const client::ChatResponse& r);

  bool gone() const { return gone_; }

  // Why the server is judged gone: "2 requests in a row got no answer (last: no first byte
  // within 2000 ms), and GET /v1/models got none within 1 s (...)"; "" while it is not.
  const std::string& reason() const { return reason_; }

 private:
  Probe probe_;
  int silent_ = 0;
  bool gone_ = false;
  std::string reason_;
};

}  // namespace sb::perf
