// HTTP/1.1 client over libcurl's multi interface: many concurrent chat streams driven by one
// thread (the caller's), keep-alive connection reuse, HTTPS. <curl/curl.h> appears only in
// http_client.cpp. Every SSE event is timestamped in the write callback, before parsing.
// Thread safety: one Client per thread; not reentrant: RunHooks must not call into the same
// Client (Get/Post from a hook fail with kInternal; use a second Client). The only cross-thread
// entry is the stop_token passed to RunChats (request_stop() from any thread wakes the loop).
// Each stream holds one connection (one file descriptor): thousands of concurrent streams need
// RLIMIT_NOFILE raised above the common 1024 soft limit (the caller's job).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "client/chat.h"
#include "core/clock.h"
#include "core/result.h"

namespace sb::client {

class Journal;  // client/journal.h: record and replay for resumed runs

struct ClientOptions {
  // Server root or API base: "http://127.0.0.1:8000", ".../v1" and ".../v1/" are all accepted.
  std::string endpoint;
  std::string api_key;  // sent as a Bearer token; never printed or logged
  // Time limits; each ends the request as Outcome::kTimeout with a reason naming it:
  // "no connection within N ms: <curl>", "no first byte within N ms", "idle gap over N ms",
  // "total time over N ms". 0 disables a limit.
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds first_byte_timeout{600'000};  // send -> first response byte
  std::chrono::milliseconds idle_timeout{120'000};        // longest gap between received bytes
  std::chrono::milliseconds total_timeout{0};             // send -> done
  bool verify_tls = true;
};

struct ChatCall {
  std::uint64_t id = 0;
  std::string body;  // from BuildChatBody()
  bool stream = true;
  std::optional<SteadyTime> send_at;  // absolute scheduled send; none = as soon as possible
  std::chrono::milliseconds total_timeout{0};  // overrides ClientOptions::total_timeout if > 0
};

struct RunHooks {
  // Called on the calling thread as each call finishes (success or not), in completion order,
  // exactly once per call -- calls cancelled before they were sent included.
  std::function<void(const ChatResponse&)> on_done;
  // Called on the calling thread, from inside the I/O loop, after each token-bearing event
  // (the response so far is passed). Returning false cancels that stream only: outcome
  // kCancelled, reason "cancelled by caller", what arrived is kept. Must be quick and must not
  // call back into the Client. Optional.
  std::function<bool(const ChatResponse&)> on_event;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::string content_type;
  std::string server_header;  // the "Server:" response header, "" if absent
};

class Client {
 public:
  explicit Client(ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // "http://host:port" (no trailing slash, no /v1). Invalid URLs are reported by Validate().
  const std::string& root() const;

  // Checks the endpoint URL's syntax (scheme http/https, host present). kUsage error if bad.
  Result<void> Validate() const;

  // Runs all calls concurrently (each at its send_at, or at once) and returns one response per
  // call, in the order of calls. Failures are recorded in the responses, never thrown. When stop
  // is requested, unsent calls end as kCancelled ("cancelled before send") without being sent
  // and running streams are aborted (kCancelled, "cancelled"); what was received is kept.
  // A stream that closes without [DONE] is fine if it gave a finish_reason; otherwise it ends as
  // kProtocol "stream ended early: ...". Sends are scheduled with nanosecond timers (timerfd),
  // so a send_at is met to well under a millisecond when the thread is not overloaded.
  std::vector<ChatResponse> RunChats(std::span<const ChatCall> calls, const RunHooks& hooks,
                                     std::stop_token stop);

  // Auxiliary requests, path relative to the root ("/v1/models", "/metrics", "/tokenize").
  // Transport failures are errors (kTransport/kTimeout); any HTTP status is a value.
  Result<HttpResponse> Get(std::string_view path,
                           std::chrono::milliseconds timeout = std::chrono::milliseconds(10'000));
  Result<HttpResponse> Post(std::string_view path, std::string_view json_body,
                            std::chrono::milliseconds timeout = std::chrono::milliseconds(30'000));

  // Resumable runs (client/journal.h, docs/resume.md): with a journal attached, every chat batch
  // and auxiliary request goes through it, and work is grouped in units (a measured batch, a
  // rate point, a quality test; nested units count as their outermost one). A unit the journal
  // holds complete from an earlier process is replayed instead of sent. Without a journal
  // (the default) BeginUnit/EndUnit do nothing. The journal must outlive its use here.
  void SetJournal(Journal* journal) { journal_ = journal; }

  Journal* journal() const { return journal_; }

  void BeginUnit(std::string_view name);
  void EndUnit();

 private:
  std::vector<ChatResponse> RunChatsLive(std::span<const ChatCall> calls, const RunHooks& hooks,
                                         std::stop_token stop);
  Result<HttpResponse> GetLive(std::string_view path, std::chrono::milliseconds timeout);
  Result<HttpResponse> PostLive(std::string_view path, std::string_view json_body,
                                std::chrono::milliseconds timeout);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  Journal* journal_ = nullptr;
};

// Brackets one unit of work (Client::BeginUnit / EndUnit) for the scope's lifetime.
class UnitScope {
 public:
  UnitScope(Client& client, std::string_view name) : client_(client) { client_.BeginUnit(name); }

  ~UnitScope() { client_.EndUnit(); }

  UnitScope(const UnitScope&) = delete;
  UnitScope& operator=(const UnitScope&) = delete;

 private:
  Client& client_;
};

}  // namespace sb::client
