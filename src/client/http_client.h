// HTTP/1.1 client over libcurl's multi interface: many concurrent chat streams driven by one
// thread (the caller's), or by several I/O threads for a large batch (ClientOptions::io_threads),
// keep-alive connection reuse, HTTPS. <curl/curl.h> appears only in http_client.cpp. Every SSE
// event is timestamped in the write callback, before parsing, from the one steady clock.
// Every request asks for compression (Accept-Encoding: the encodings libcurl decodes: gzip,
// deflate, ...); compressed bodies are decoded as they arrive, so a server that flushes its
// compressor per event still gives per-event timestamps.
// Thread safety: one Client per thread; not reentrant: RunHooks must not call into the same
// Client (Get/Post from a hook fail with kInternal; use a second Client). The only cross-thread
// entry is the stop_token passed to RunChats (request_stop() from any thread wakes every loop).
// The Client's I/O threads live only inside RunChats; RunHooks explains where hooks run.
// Each stream holds one connection (one file descriptor): thousands of concurrent streams need
// RLIMIT_NOFILE raised above the common 1024 soft limit (the caller's job).
#pragma once

#include <chrono>
#include <cstddef>
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
  // "total time over N ms". 0 disables a limit; a negative value is invalid (ValidateOptions;
  // a Client built with one fails every request with that message instead of running unbounded).
  // The defaults end a dead server's request within about a minute: connect 10 s, first byte
  // 60 s (a long prompt's prefill on a loaded server fits), then 30 s of silence at most.
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds first_byte_timeout{60'000};  // send -> first response byte
  std::chrono::milliseconds idle_timeout{30'000};        // longest gap between received bytes
  std::chrono::milliseconds total_timeout{0};            // send -> done, per attempt

  // TLS (https endpoints). ca_cert: a PEM file of CA certificates to trust instead of the
  // system store (CURLOPT_CAINFO), e.g. a self-signed server's certificate; it must be readable
  // (ValidateOptions). insecure: skip certificate and host name verification (curl -k).
  std::string ca_cert;
  bool insecure = false;

  // Caps that keep a misbehaving server from exhausting memory. A stream that crosses one ends
  // as Outcome::kProtocol ("SSE line over 1 MiB (cap: 1048576 bytes)", "answer over N bytes
  // (max_answer_bytes)"); what arrived before is kept and nothing more is buffered.
  // max_line_bytes: one SSE line, and one event's joined data lines (> 0).
  std::size_t max_line_bytes = std::size_t{1} << 20;
  // Answer + reasoning + tool-call argument text of one response, 0 = no cap. ChatCall's own
  // max_answer_bytes wins when > 0. (Non-SSE bodies are bounded at 64 MiB regardless.)
  std::size_t max_answer_bytes = 0;

  // Retries of chat calls (Get/Post are never retried). 0 = none, the default: a failure is
  // reported as is. With retries > 0 a call is sent again after
  //   - HTTP 429 or 503, waiting Retry-After (seconds, fractions accepted, or an HTTP date), or
  //     retry_backoff * 2^k without one (k = retries so far);
  //   - a refused or reset connection (or one closed with no reply) before the first response
  //     byte, waiting retry_backoff * 2^k.
  // A wait is capped at retry_wait_cap; when the waits of one call would pass retry_wait_budget
  // in all, it is not retried and the last failure stands. Waits are timers inside the event
  // loop: other streams run on, stop requests end the wait at once. A retried call's send_ns is
  // that of the attempt that produced the response (waits never count in latency);
  // ChatResponse::retries and retry_reasons say what happened.
  int retries = 0;
  std::chrono::milliseconds retry_backoff{500};
  std::chrono::milliseconds retry_wait_cap{30'000};
  std::chrono::milliseconds retry_wait_budget{60'000};

  // I/O threads of a RunChats batch, 0 = automatic: one (the calling thread) below 512
  // concurrent streams (RunHooks::max_in_flight if set, else the number of calls), else
  // min(ceil(streams / 256), 16), whatever the number of cores (see Why below); one for an
  // open-loop schedule without a cap (calls with send_at, no max_in_flight), whose concurrency
  // is not its number of calls. Never more than the batch's streams; at most 64. With K > 1, call i
  // goes to thread i % K, each thread running its own curl multi handle, connection cache and
  // timers (the calling thread is one of them); max_in_flight is split over them (cap / K each, the
  // remainder to the first ones; a thread's free slot is not lent to another), start_until and
  // preconnect apply to each. Every timestamp comes from the same steady clock, so a response's
  // timing does not depend on the thread that served it. Why: libcurl's cost of starting a transfer
  // grows with its multi handle's connections, so K handles of n/K cost less in all (even on shared
  // cores), and K threads can use K cores (docs/performance.md). Where a thread or its descriptors
  // cannot be made, fewer run.
  int io_threads = 0;

  // What carries the requests. kNative: servebench's own HTTP/1.1 over non-blocking sockets in
  // the same event loop, TLS through OpenSSL for https:// (a request leaves with one sendmsg, a
  // token costs one epoll_wait and one recv; docs/performance.md "The send path"); kCurl:
  // libcurl. A user:password in the URL and a proxy variable for the scheme (http_proxy,
  // https_proxy, all_proxy) always use libcurl. kAuto: the environment variable
  // SERVEBENCH_HTTP_TRANSPORT (native or curl) if set, else kNative. Both ask for gzip and
  // deflate and decode them as they arrive; records, time limits, retries and errors are the
  // same.
  enum class Transport { kAuto, kCurl, kNative };
  Transport transport = Transport::kAuto;
};

// kUsage error naming the field and value when an option is out of range: a negative time
// limit, retry setting or max_line_bytes of 0, retries < 0, io_threads outside 0..64, or a
// ca_cert that cannot be read.
Result<void> ValidateOptions(const ClientOptions& options);

struct ChatCall {
  std::uint64_t id = 0;
  std::string body;  // from BuildChatBody()
  bool stream = true;
  std::optional<SteadyTime> send_at;  // absolute scheduled send; none = as soon as possible
  std::chrono::milliseconds total_timeout{0};  // overrides ClientOptions::total_timeout if > 0
  // Overrides ClientOptions::first_byte_timeout if > 0 (a long prompt's prefill takes longer).
  std::chrono::milliseconds first_byte_timeout{0};
  // Overrides ClientOptions::max_answer_bytes if > 0. The caller knows max_tokens: e.g.
  // 4 * max_tokens * 4 bytes leaves room for long tokens and a server that overshoots a little.
  std::size_t max_answer_bytes = 0;
  // > 0: a stream that delivers more tokens than this is stopped, kProtocol "stream over N
  // tokens ...: the server ignores max_tokens; stopped" (what arrived is kept). A token event
  // counts the tokens the server said it carried (continuous usage), else 1. perf sets
  // 4 * max_tokens + 16. 0 = no cap.
  std::int64_t max_stream_tokens = 0;
  // > 0: answer and reasoning text beyond this many bytes (each) is not kept; the events (token
  // counts and timestamps) still are, and it is no error. For callers that measure speed and do
  // not read the text (perf). 0 = keep all.
  std::size_t keep_text_bytes = 0;
};

// Where hooks run: on the I/O thread that serves the call -- the calling thread when the batch
// has one I/O thread (ClientOptions::io_threads), else any of the batch's threads. Never two at
// once: with several I/O threads every hook call holds one mutex of the batch, so hooks may use
// the caller's state without locking of their own, and everything they did is visible to the
// caller when RunChats returns. A slow hook therefore delays every thread's events; keep them
// quick.
struct RunHooks {
  // Called as each call finishes (success or not), in completion order (per I/O thread; across
  // threads in the order they took the hook mutex), exactly once per call -- calls cancelled
  // before they were sent included.
  std::function<void(const ChatResponse&)> on_done;
  // Called from inside the I/O loop after each token-bearing event (the response so far is
  // passed). Returning false cancels that stream only: outcome kCancelled, reason "cancelled by
  // caller", what arrived is kept. Must be quick and must not call back into the Client.
  // Optional.
  std::function<bool(const ChatResponse&)> on_event;
  // Closed-loop load: at most this many calls in flight (0 = no cap); a call whose send time
  // has come waits for a finished one, then leaves at once (send_ns is when it really left).
  // With several I/O threads each has its share of the cap (ClientOptions::io_threads).
  std::size_t max_in_flight = 0;
  // No call starts at or after this time; those left end kCancelled with reason
  // kNotStartedReason and send_ns 0 (a --duration-s window that closed). None = no limit.
  std::optional<SteadyTime> start_until;
  // Before the first call leaves, open as many connections as the batch holds at once
  // (max_in_flight, else every call) with unmeasured concurrent GET /v1/models requests (any
  // HTTP status will do), so the calls' sends find open connections instead of racing that many
  // TCP/TLS handshakes at once (docs/metrics.md "Connections"). Best effort: a failure only
  // leaves a call to connect itself. Live batches only: a journal replay sends nothing. With
  // several I/O threads each opens its share in its own connection cache, and no call leaves
  // before every thread is done.
  bool preconnect = false;
};

// How long a stream may stay open after its "data: [DONE]" before the client closes it (the
// answer is complete; a server that never ends the body would otherwise hold it until a limit).
inline constexpr std::chrono::milliseconds kDoneGrace{250};

// The reason of a call RunHooks::start_until kept from starting.
inline constexpr const char* kNotStartedReason = "not sent: the load window had closed";

struct HttpResponse {
  int status = 0;
  std::string body;
  std::string content_type;
  std::string server_header;  // the "Server:" response header, "" if absent
  std::string date_header;    // the "Date:" response header (RFC 9110 HTTP-date), "" if absent
};

// The wire under a Client: what sends chat batches and auxiliary requests. The libcurl loop is
// the one servebench uses (Client(ClientOptions)); tests of what sits above it (the journal, the
// perf profiles) give a scripted one (tests/support/scripted_wire.h), as perf_analyzer tests its
// load logic against a mock backend. Semantics as Client's methods of the same names, without
// the journal.
class Wire {
 public:
  virtual ~Wire() = default;
  virtual const std::string& root() const = 0;
  virtual const std::string& query() const = 0;
  virtual Result<void> Validate() const = 0;
  virtual std::vector<ChatResponse> RunChats(std::span<const ChatCall> calls, const RunHooks& hooks,
                                             std::stop_token stop) = 0;
  // CPU time of the I/O threads the last RunChats ran besides the calling thread.
  virtual std::vector<std::int64_t> IoThreadCpuNs() const = 0;
  virtual Result<HttpResponse> Get(std::string_view path, std::chrono::milliseconds timeout) = 0;
  virtual Result<HttpResponse> Post(std::string_view path, std::string_view json_body,
                                    std::chrono::milliseconds timeout) = 0;

  // What carries the requests: "native" or "libcurl" (ClientOptions::transport), else the
  // wire's own name.
  virtual std::string_view transport() const { return "scripted"; }
};

class Client {
 public:
  explicit Client(ClientOptions options);
  // A client over another wire (a scripted one in tests).
  explicit Client(std::unique_ptr<Wire> wire);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // "http://host:port" (no trailing slash, no /v1, no query). Invalid URLs are reported by
  // Validate().
  const std::string& root() const;

  // The endpoint's query with its '?' ("?key=x" of "http://h/v1?key=x"), or "": every request
  // URL ends with it ("http://h/v1/models?key=x"). A client for the same server takes
  // root() + query() as its endpoint.
  const std::string& query() const;

  // "native" or "libcurl": what carries this client's requests (ClientOptions::transport).
  std::string_view transport() const { return wire_->transport(); }

  // Checks the endpoint URL's syntax (scheme http/https, host present) and the options
  // (ValidateOptions). kUsage error if bad.
  Result<void> Validate() const;

  // Runs all calls concurrently (each at its send_at, or at once) and returns one response per
  // call, in the order of calls. Failures are recorded in the responses, never thrown. When stop
  // is requested, unsent calls end as kCancelled ("cancelled before send") without being sent
  // and running streams are aborted (kCancelled, "cancelled"); what was received is kept.
  // A stream that closes without [DONE] is fine if it gave a finish_reason; otherwise it ends as
  // kProtocol "stream ended early: ...". "data: [DONE]" ends a stream: what follows is ignored,
  // and a server that then keeps the connection open has it closed after kDoneGrace (done_ns is
  // when [DONE] arrived). A 2xx stream without a single chunk (only [DONE]) is kProtocol, and so
  // is a usage that disagrees wildly with the events (stream_guard.h). Sends are scheduled with
  // nanosecond timers (timerfd), so a send_at is met to well under a millisecond when the thread is
  // not overloaded.
  std::vector<ChatResponse> RunChats(std::span<const ChatCall> calls, const RunHooks& hooks,
                                     std::stop_token stop);

  // CPU time (CLOCK_THREAD_CPUTIME_ID) of each I/O thread the last RunChats ran besides the
  // calling thread (whose time is the caller's to measure); empty when the batch ran on the
  // calling thread alone or was replayed from a journal.
  const std::vector<std::int64_t>& io_thread_cpu_ns() const { return io_cpu_ns_; }

  // Auxiliary requests, path relative to the root ("/v1/models", "/metrics", "/tokenize").
  // Transport failures are errors (kTransport/kTimeout); any HTTP status is a value. `timeout`
  // limits the whole request; ClientOptions' first-byte and idle limits hold as well.
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

  std::unique_ptr<Wire> wire_;
  Journal* journal_ = nullptr;
  std::vector<std::int64_t> io_cpu_ns_;  // io_thread_cpu_ns()
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
