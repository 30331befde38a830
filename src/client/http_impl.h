// Private to the client module: the state of one libcurl multi-socket loop (Client::CurlLoop),
// shared by http_client.cpp (set-up and the Client API), http_transfer.cpp (curl callbacks,
// SSE, one transfer's life and retries) and http_loop.cpp (the event loop and the batches
// it runs). One thread runs an epoll loop over curl's sockets, a timerfd (precise scheduled
// sends, curl timers, our own time limits) and an eventfd (stop requests). The socket API
// processes only the sockets that are ready, so thousands of streams cost per event, not per
// stream; curl_multi_perform would touch every transfer on each wakeup. A large batch may be
// split over several such loops (CurlLoop objects), one per I/O thread: io_workers.h.
// A loop for a plain http:// server may run its transfers over its own sockets instead of
// libcurl's (the native transport, http_native.cpp): the same Transfer, callbacks, SSE parsing,
// time limits and retries; only the bytes on the wire are written and framed by our own code.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <curl/curl.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "client/http_client.h"
#include "client/io_workers.h"
#include "client/sse_parser.h"
#include "client/stream_guard.h"
#include "core/clock.h"

struct ssl_st;      // OpenSSL's SSL (http_native_tls.cpp), kept out of this header
struct ssl_ctx_st;  // and its SSL_CTX

namespace sb::client {

namespace detail {

inline constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
inline constexpr std::size_t kErrorBodyCap = 64 * 1024;    // kept of a non-2xx body
inline constexpr std::size_t kBodyCap = 64 * 1024 * 1024;  // a 2xx non-streaming body
// The response head: the bytes of every header line together (curl refuses one line over
// CURL_MAX_HTTP_HEADER, 100 KiB, itself, as "out of memory": see Complete).
inline constexpr std::size_t kHeaderCap = 256 * 1024;

std::string HeaderOverLimit(std::size_t got);

inline constexpr std::int64_t kNanosPerMs = 1'000'000;
inline constexpr int kMaxEvents = 256;
// How long before a scheduled send the loop stops sleeping and polls (see Drive).
inline constexpr std::int64_t kSendSpinNs = 300'000;

inline std::int64_t NowNs() {
  return ToNanos(std::chrono::steady_clock::now());
}

inline std::int64_t MsToNs(std::chrono::milliseconds ms) {
  return ms.count() * kNanosPerMs;
}

// curl_global_init is not thread-safe on every platform; run it once per process.
bool CurlGlobalInit();

bool StartsWithNoCase(std::string_view s, std::string_view prefix);

std::string_view TrimView(std::string_view s);

// Retry-After: delay-seconds (fractions accepted: some servers send "0.5") or an HTTP date.
// Returns the wait in ns, or -1 when the value is neither.
std::int64_t ParseRetryAfterNs(std::string_view value);

// "http://h:p/v1/" -> "http://h:p"; "https://h/prefix/v1/chat/completions" -> "https://h/prefix".
// A query ("http://h/v1?key=x") is cut off into `query` ("?key=x"; a fragment is dropped): it
// goes at the end of every URL built from the root, never in the middle of its path.
std::string NormalizeRoot(std::string_view endpoint, std::string& query);

// Whether a loop for these options runs its transfers natively (ClientOptions::transport):
// http:// or https://, no user:password in the URL, no proxy variable for the scheme set
// (libcurl honours those).
bool NativeTransportFor(const ClientOptions& options, std::string_view root);

}  // namespace detail

// The framing of one HTTP/1.1 response read by the native transport: the head line by line,
// then a body delimited by Content-Length, chunked transfer coding, or the connection's close.
struct NativeFrame {
  enum class State {
    kHead,
    kLength,
    kUntilClose,
    kChunkSize,
    kChunkData,
    kChunkEnd,
    kTrailer,
    kDone
  };
  State state = State::kHead;
  std::string line;             // a head, chunk-size or trailer line not yet complete
  std::uint64_t remaining = 0;  // of the Content-Length body, or of the current chunk
  std::int64_t content_length = -1;
  bool chunked = false;
  bool keep_alive = true;    // the connection may carry the next request once this one is done
  bool status_seen = false;  // the current head's status line was read
  int status = 0;            // the current head's status
};

// zlib's stream for a compressed body (http_native.cpp), kept out of this header.
struct Inflater;

struct InflaterFree {
  void operator()(Inflater* z) const;
};

struct SslCtxFree {
  void operator()(ssl_ctx_st* ctx) const;
};

struct CurlLoop {
  // One request in flight (or about to be).
  struct Transfer {
    CurlLoop* impl = nullptr;
    CURL* easy = nullptr;
    ChatResponse* resp = nullptr;  // outcome, timestamps and (chat) parsed content
    bool chat = false;             // a chat call (parse the answer) vs. a plain Get/Post
    bool stream = false;           // the call asked for SSE
    bool mode_known = false;       // sse decided (at the first body byte)
    bool sse = false;              // body is parsed as an event stream
    bool aborted = false;          // a callback stopped the transfer; resp->outcome is set
    bool hold = false;     // a preconnect GET: pause at its first body byte (see Preconnect)
    bool held = false;     // paused there, keeping its connection in use; counted in CurlLoop::held
    int retries_left = 0;  // further attempts allowed (chat calls)
    std::int64_t waited_ns = 0;        // retry waits so far
    std::size_t max_answer_bytes = 0;  // 0 = no cap
    int status = 0;                    // HTTP status, read when the body starts
    std::size_t index = 0;             // position in the caller's calls (all of the batch's)
    std::size_t active_pos = 0;        // position in CurlLoop::active_
    std::int64_t send_ns = 0;
    std::int64_t first_byte_ns = 0;
    std::int64_t last_rx_ns = 0;
    std::int64_t done_at_ns = 0;           // "data: [DONE]" arrived (then kDoneGrace)
    std::size_t header_bytes = 0;          // of the response head(s) so far
    std::int64_t first_byte_limit_ns = 0;  // 0 = none
    std::int64_t idle_limit_ns = 0;        // 0 = none
    std::int64_t total_limit_ns = 0;       // 0 = none
    std::string body;                      // non-SSE body (capped)
    std::string content_type;
    std::string server_header;
    std::string date_header;
    std::string retry_after;  // the "Retry-After:" header, "" if absent
    std::string post_body;    // owned copy for Post(); chat calls point at ChatCall::body
    SseParser parser;
    detail::StreamGuard guard;        // token cap, kept text, usage and empty-stream checks
    detail::StreamGuard fresh_guard;  // its state before the first event (for a retry)
    char errbuf[CURL_ERROR_SIZE] = {};

    // ---- the native transport (http_native.cpp) ----
    bool native = false;        // this transfer's bytes go over our own socket, not curl's
    bool fresh = false;         // this attempt opened its connection
    bool connecting = false;    // connect() in progress
    bool any_rx = false;        // a byte of the response arrived on this attempt
    bool resent = false;        // a kept connection died unused: sent once more on a fresh one
    bool watching_out = false;  // its descriptor is watched for writing too
    bool handshaking = false;   // https: the TLS handshake is under way
    int fd = -1;
    std::size_t addr_index = 0;  // which of the resolved addresses the connection tried
    const char* method = "GET";  // request line
    std::string target;          // "/v1/models?..." (path and query); chat calls: chat_target
    std::string_view req_body;   // POST body (the ChatCall's, or post_body)
    std::string req_head;        // request line and headers (not chat calls: see head)
    // What is written: head (the loop's chat_head, or req_head), then for a POST the value of
    // its Content-Length and the head's end (tail), then req_body.
    std::string_view head;
    char tail[32] = {};
    std::size_t tail_len = 0;
    std::size_t sent = 0;  // bytes of head + tail + req_body written

    std::size_t RequestBytes() const { return head.size() + tail_len + req_body.size(); }

    // What is written, in order: head, tail, body.
    std::array<std::string_view, 3> RequestParts() const {
      return {head, std::string_view(tail, tail_len), req_body};
    }

    std::int64_t connect_limit_ns = 0;  // 0 = none (curl applies its own for curl transfers)
    NativeFrame frame;
    std::unique_ptr<Inflater, InflaterFree> inflater;  // a gzip/deflate body's decoder

    std::int64_t FirstByteOrIdleDeadline() const {
      if (first_byte_ns == 0) {
        return first_byte_limit_ns > 0 ? send_ns + first_byte_limit_ns : detail::kNever;
      }
      return idle_limit_ns > 0 ? last_rx_ns + idle_limit_ns : detail::kNever;
    }

    std::int64_t TotalDeadline() const {
      return total_limit_ns > 0 ? send_ns + total_limit_ns : detail::kNever;
    }

    // A native connection still being opened (TLS handshake included, as libcurl counts it)
    // gets the connect limit (curl keeps its own).
    std::int64_t ConnectDeadline() const {
      return (connecting || handshaking) && connect_limit_ns > 0 ? send_ns + connect_limit_ns
                                                                 : detail::kNever;
    }

    std::int64_t NextDeadline() const {
      if (done_at_ns != 0) {  // the answer is complete: only the grace is left
        return done_at_ns + detail::MsToNs(kDoneGrace);
      }
      return std::min({FirstByteOrIdleDeadline(), TotalDeadline(), ConnectDeadline()});
    }
  };

  ClientOptions options;
  std::string root;
  std::string query;  // the endpoint's "?..." (with its '?'), appended to every URL; or ""
  std::string chat_url;
  std::string init_error;  // non-empty: the client could not be set up (reported per call)
  CURLM* multi = nullptr;
  int epoll_fd = -1;
  int wake_fd = -1;   // eventfd: stop requested
  int timer_fd = -1;  // timerfd: absolute CLOCK_MONOTONIC wake-ups
  curl_slist* chat_headers = nullptr;
  curl_slist* plain_headers = nullptr;
  curl_slist* post_headers = nullptr;
  std::vector<CURL*> idle_easies;  // reused easy handles (connections live in the multi cache)
  std::int64_t curl_deadline_ns = detail::kNever;  // from curl's timer callback
  std::int64_t armed_ns = detail::kNever;          // what timer_fd is armed to
  std::int64_t launch_ns = 0;  // while Drive starts the calls due: when it found them due
  // No transfer's time limit falls before this (a lower bound: idle deadlines move later as
  // bytes arrive; the first byte may move a transfer's deadline earlier, see NoteFirstByte).
  std::int64_t next_check_ns = detail::kNever;
  std::vector<Transfer*> active;  // added to the multi handle
  // Transfers waiting to be sent again: (when, transfer), a min-heap on when.
  std::vector<std::pair<std::int64_t, Transfer*>> retry_queue;
  std::vector<SseEvent> scratch;    // the events of a stream's end (Finish)
  const RunHooks* hooks = nullptr;  // during RunChats: this worker's (io_workers.h)
  std::size_t max_connects = 64;    // idle connections the multi handle keeps
  // Preconnect's GETs pause at their first body byte while this is set; `held` of the active
  // transfers are paused there. Drive lets them all finish once every active one is held.
  bool holding = false;
  std::size_t held = 0;
  // Inside RunChats (hooks must not re-enter the Client); read from the I/O threads' hooks.
  std::atomic<bool> driving{false};
  // The I/O workers besides this one (the Client's own), made when a batch first needs them
  // and kept with their connections for later batches.
  std::vector<std::unique_ptr<CurlLoop>> helpers;

  // ---- the native transport (http_native.cpp) ----
  bool native = false;  // this loop's transfers are native (NativeTransportFor)
  bool tls = false;     // https://: every connection speaks TLS (http_native_tls.cpp)
  std::unique_ptr<ssl_ctx_st, SslCtxFree> ssl_ctx;  // made at the first connection
  std::vector<ssl_st*> ssl_by_fd;                   // a connection's TLS state, by descriptor
  std::string host_header;                          // "host:port" as the URL wrote it
  std::string host_name;                            // for messages: "127.0.0.1"
  int port = 80;
  std::string path_prefix;  // the root's path ("" or "/prefix")
  std::string chat_target;  // path_prefix + "/v1/chat/completions" + query
  std::string chat_head;    // a chat call's request line and headers to "Content-Length: "
  std::string auth_line;    // "Authorization: Bearer ...\r\n" or ""
  std::vector<std::pair<sockaddr_storage, socklen_t>> addrs;  // the host's, at the first launch
  std::size_t addr_pref = 0;                                  // the address that last connected
  std::vector<int> idle_fds;     // kept-alive connections, each watched for the server's close
  std::vector<Transfer*> by_fd;  // the transfer using a descriptor
  std::vector<std::uint32_t> fd_serial;  // tells a descriptor's events from a reused number's
  std::uint32_t next_serial = 1;
  std::vector<std::pair<Transfer*, CURLcode>> native_done;  // ended, for Reap
  std::vector<std::pair<Transfer*, CURLcode>> reaping;      // Reap's batch of them
  std::vector<char> rx;                                     // one read buffer for every connection

  void SetUpNative();
  // A request's line and headers (a POST's end at "Content-Length: ").
  std::string RequestHead(std::string_view method, std::string_view target, bool post) const;
  void CloseNative();
  // Starts t over a kept connection or a new one; false (outcome set): it could not start.
  bool LaunchNative(Transfer& t);
  // Gives t's connection back (kept when its response ended cleanly) or closes it.
  void DetachNative(Transfer& t);
  void OnNativeEvent(std::uint64_t data, std::uint32_t events);
  // Opens a connection for t to addrs[t.addr_index]; false (t queued as failed): none.
  bool OpenNative(Transfer& t);
  // connect() finished with err (0: connected, then the request is sent).
  void NativeConnected(Transfer& t, int err);
  void WatchNative(int fd, std::uint32_t events, bool add);
  void SendNative(Transfer& t);
  void ReadNative(Transfer& t);
  // Parses bytes of t's response; false when the transfer ended (queued in native_done).
  bool FeedNative(Transfer& t, const char* p, std::size_t n);
  bool NativeHeadLine(Transfer& t, std::string_view line);
  // The line of a chunk's size or end, or of the trailer; false: t ended (malformed).
  bool NativeChunkLine(Transfer& t, std::string_view line);
  // A line over its cap (head, chunk size, trailer): t ends with the reason; returns false.
  bool NativeLineOverCap(Transfer& t, std::size_t pending);
  // Hands body bytes to OnWrite, decoded when the body is compressed; false: t ended.
  bool NativeBody(Transfer& t, const char* p, std::size_t n);
  // The connection died before any byte of the answer: on a kept connection, send again once
  // on a new one (as libcurl does); else t fails with rc and msg.
  void NativeLost(Transfer& t, CURLcode rc, const std::string& msg);
  void NativeFail(Transfer& t, CURLcode rc, const std::string& msg);
  int ResponseCode(const Transfer& t) const;
  // The server closed t's connection: the body's end, or an early close (by the frame's state).
  void NativeEof(Transfer& t);
  // Closes a connection (its TLS state too).
  void CloseConn(int fd);
  // ---- TLS (http_native_tls.cpp) ----
  bool TlsContext(Transfer& t);  // false: t failed (the CA file, OpenSSL)
  void StartTls(Transfer& t);    // on a connected socket: the handshake, then the request
  void ContinueTls(Transfer& t);
  void SendTls(Transfer& t);
  void ReadTls(Transfer& t);

  explicit CurlLoop(ClientOptions opts);
  ~CurlLoop();

  CurlLoop(const CurlLoop&) = delete;
  CurlLoop& operator=(const CurlLoop&) = delete;

  // One worker's part of a batch: calls first, first + stride, ... (all of them: 0, 1), each
  // one's result in results[i] (id and scheduled_ns already set), hooks called as they finish.
  // With a gate, waits there after preconnecting (so no worker sends before all have).
  void RunShare(std::span<const ChatCall> calls, std::span<ChatResponse> results, std::size_t first,
                std::size_t stride, const RunHooks& hooks, io::StartGate* preconnected,
                std::stop_token stop);

  // n concurrent GET /v1/models through the multi handle, unmeasured (RunHooks::preconnect):
  // afterwards n connections wait in the connection cache. Returns how many got a response.
  std::size_t Preconnect(std::size_t n, std::stop_token stop);

  // One auxiliary request through the same multi handle (and connection cache).
  Result<HttpResponse> Plain(bool post, std::string_view path, std::string_view body,
                             std::chrono::milliseconds timeout);

  // ---- curl callbacks -------------------------------------------------------------------------

  static int OnSocket(CURL* /*easy*/, curl_socket_t s, int what, void* userp, void* /*socketp*/);

  static int OnTimer(CURLM* /*multi*/, long timeout_ms, void* userp);  // NOLINT(runtime/int)

  // Just before curl writes the request (connected, TLS done): ChatResponse::written_ns.
  static int OnPrereq(void* userdata, char* /*conn_primary_ip*/, char* /*conn_local_ip*/,
                      int /*conn_primary_port*/, int /*conn_local_port*/);

  static size_t OnHeader(char* buffer, size_t size, size_t nitems, void* userdata);

  static size_t OnWrite(char* ptr, size_t size, size_t nmemb, void* userdata);

  // The first byte switches a transfer from the first-byte limit to the (often shorter) idle
  // limit, which can move its deadline earlier than the loop's next check.
  void NoteFirstByte(Transfer& t, std::int64_t t_ns);

  // ---- SSE --------------------------------------------------------------------------------------

  // Applies one event's data; false when the stream must stop (outcome set).
  bool HandleEvent(Transfer& t, std::string_view data, std::int64_t t_ns);

  // False (outcome set) when the text of t's response has gone over its max_answer_bytes.
  bool WithinAnswerCap(Transfer& t);

  bool OnSseBytes(Transfer& t, std::string_view bytes, std::int64_t t_ns);

  // ---- transfers --------------------------------------------------------------------------------

  CURL* AcquireEasy();

  void ReleaseEasy(CURL* e);

  void ConfigureEasy(Transfer& t, const std::string& url);

  // Hands t to curl, or to the native transport. send_ns is the moment the loop found it due
  // (launch_ns: every call due at once shares it), so its send wait and TTFT include the loop's
  // work for the calls started before it in the same turn, and connection setup on a fresh
  // connection (as vLLM's bench does). false: could not be started.
  bool Launch(Transfer& t);

  void Deactivate(Transfer& t);

  // Ends a transfer that has not finished on its own (time limit, cancellation).
  void Abort(Transfer& t, Outcome outcome, std::string reason, std::int64_t now);

  // Classifies a transfer curl has finished (successfully or not).
  void Complete(Transfer& t, CURLcode rc);

  // ---- retries ----------------------------------------------------------------------------------

  // Whether a finished attempt may be sent again (ClientOptions::retries): HTTP 429/503, or a
  // connection refused, reset or closed before the first response byte.
  static bool Retryable(const Transfer& t, CURLcode rc);

  // Queues t for another attempt if it may have one; false: its result stands.
  bool ScheduleRetry(Transfer& t, CURLcode rc);

  // Clears what the failed attempt left in t and its response, then sends it again.
  bool Relaunch(Transfer& t);

  void FinishStream(Transfer& t);

  // A stream whose [DONE] came kDoneGrace ago and whose body has not ended (a server that keeps
  // the connection open): the answer is complete; the connection is closed.
  void EndAfterDone(Transfer& t);

  // ---- the loop --------------------------------------------------------------------------------

  void ArmTimer(std::int64_t at_ns);

  void SocketAction(curl_socket_t s, int ev_mask);

  template <typename Finished>
  void Reap(Finished& finished);

  // Ends transfers whose time limit has passed; returns the earliest remaining deadline.
  template <typename Finished>
  std::int64_t ExpireLimits(std::int64_t now, Finished& finished);

  void DrainFd(int fd);

  // Runs transfers to completion. order: (send time ns, 0 = now; index), sorted by time.
  // start(index) creates and launches a transfer (nullptr if it failed at once: then it has
  // already been reported). finished(t) is called once per transfer that ends; unsent(index,
  // reason) once per call never started (stop requested, or RunHooks::start_until passed).
  template <typename Start, typename Finished, typename Unsent>
  void Drive(std::span<const std::pair<std::int64_t, std::size_t>> order, Start& start,
             Finished& finished, Unsent& unsent, std::stop_token stop);

  // Every active transfer is a preconnect GET paused on its answer, each holding its own
  // connection: let them finish (their connections go back to the cache, all idle at once).
  void ReleaseHeld();

  // Drive's steps. On a stop request: every active transfer and queued retry ends cancelled,
  // every call not yet sent is reported unsent.
  template <typename Finished, typename Unsent>
  void CancelAll(std::span<const std::pair<std::int64_t, std::size_t>> order, std::size_t& next,
                 Finished& finished, Unsent& unsent);

  // Relaunches the retries that are due; those that cannot be relaunched end.
  template <typename Finished>
  void RelaunchDue(std::int64_t now, Finished& finished);

  // Hands each epoll event to its owner: a native transfer, the timer or wake-up fd, or curl.
  void DispatchEvents(const epoll_event* events, int n);
};

}  // namespace sb::client
