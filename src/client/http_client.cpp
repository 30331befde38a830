// libcurl multi-socket driver. One thread runs an epoll loop over curl's sockets, a timerfd
// (precise scheduled sends, curl timers, our own time limits) and an eventfd (stop requests).
// The socket API processes only the sockets that are ready, so thousands of streams cost per
// event, not per stream; curl_multi_perform would touch every transfer on each wakeup. A large
// batch may be split over several such loops (Impl objects), one per I/O thread: io_workers.h.
#include "client/http_client.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include <curl/curl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "client/io_workers.h"
#include "client/sse_parser.h"
#include "client/stream_guard.h"
#include "core/redact.h"

namespace sb::client {

namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
constexpr std::size_t kErrorBodyCap = 64 * 1024;    // kept of a non-2xx body
constexpr std::size_t kBodyCap = 64 * 1024 * 1024;  // a 2xx non-streaming body
// The response head: the bytes of every header line together (curl refuses one line over
// CURL_MAX_HTTP_HEADER, 100 KiB, itself, as "out of memory": see Complete).
constexpr std::size_t kHeaderCap = 256 * 1024;

std::string HeaderOverLimit(std::size_t got) {
  return "response header over the limit: " + std::to_string(got) +
         " bytes (cap: " + std::to_string(kHeaderCap) + " bytes)";
}

constexpr std::int64_t kNanosPerMs = 1'000'000;
constexpr int kMaxEvents = 256;
// How long before a scheduled send the loop stops sleeping and polls (see Drive).
constexpr std::int64_t kSendSpinNs = 300'000;

std::int64_t NowNs() {
  return ToNanos(std::chrono::steady_clock::now());
}

std::int64_t MsToNs(std::chrono::milliseconds ms) {
  return ms.count() * kNanosPerMs;
}

// curl_global_init is not thread-safe on every platform; run it once per process.
bool CurlGlobalInit() {
  static std::once_flag once;
  static CURLcode rc = CURLE_OK;
  std::call_once(once, [] { rc = curl_global_init(CURL_GLOBAL_DEFAULT); });
  return rc == CURLE_OK;
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) {
    return false;
  }
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    const char a = s[i] >= 'A' && s[i] <= 'Z' ? static_cast<char>(s[i] - 'A' + 'a') : s[i];
    if (a != prefix[i]) {
      return false;
    }
  }
  return true;
}

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

// Retry-After: delay-seconds (fractions accepted: some servers send "0.5") or an HTTP date.
// Returns the wait in ns, or -1 when the value is neither.
std::int64_t ParseRetryAfterNs(std::string_view value) {
  value = TrimView(value);
  if (value.empty()) {
    return -1;
  }
  if ((value.front() >= '0' && value.front() <= '9') || value.front() == '.') {
    double seconds = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (ec != std::errc() || end != value.data() + value.size() || !(seconds >= 0) ||
        seconds > 1e9) {
      return -1;
    }
    return static_cast<std::int64_t>(seconds * 1e9);
  }
  const std::string date(value);
  const time_t when = curl_getdate(date.c_str(), nullptr);
  if (when == static_cast<time_t>(-1)) {
    return -1;
  }
  const time_t now = std::time(nullptr);
  return when <= now ? 0 : static_cast<std::int64_t>(when - now) * 1'000'000'000;
}

// "http://h:p/v1/" -> "http://h:p"; "https://h/prefix/v1/chat/completions" -> "https://h/prefix".
// A query ("http://h/v1?key=x") is cut off into `query` ("?key=x"; a fragment is dropped): it
// goes at the end of every URL built from the root, never in the middle of its path.
std::string NormalizeRoot(std::string_view endpoint, std::string& query) {
  std::string s(TrimView(endpoint));
  query.clear();
  if (const std::size_t q = s.find_first_of("?#"); q != std::string::npos) {
    if (s[q] == '?') {
      query = s.substr(q, s.find('#', q) - q);
    }
    s.resize(q);
  }
  const std::size_t scheme_end = s.find("://");
  const std::size_t authority = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const std::size_t path_start = std::min(s.find('/', authority), s.size());
  // Cut at the last "/v1" path segment: everything after it is API path, not the root.
  std::size_t pos = s.size();
  while (true) {
    const std::size_t hit = s.rfind("/v1", pos == 0 ? 0 : pos - 1);
    if (hit == std::string::npos || hit < path_start) {
      break;
    }
    if (hit + 3 == s.size() || s[hit + 3] == '/') {
      s.resize(hit);
      break;
    }
    if (hit == 0) {
      break;
    }
    pos = hit;
  }
  while (s.size() > path_start && !s.empty() && s.back() == '/') {
    s.pop_back();
  }
  return s;
}

}  // namespace

Result<void> ValidateOptions(const ClientOptions& o) {
  const auto bad = [](const std::string& why) { return MakeError(ErrorCode::kUsage, why); };

  const struct {
    const char* name;
    std::chrono::milliseconds value;
  } limits[] = {
      {"connect_timeout", o.connect_timeout},    {"first_byte_timeout", o.first_byte_timeout},
      {"idle_timeout", o.idle_timeout},          {"total_timeout", o.total_timeout},
      {"retry_backoff", o.retry_backoff},        {"retry_wait_cap", o.retry_wait_cap},
      {"retry_wait_budget", o.retry_wait_budget}};

  for (const auto& [name, value] : limits) {
    if (value.count() < 0) {
      return bad(std::string(name) + " must be >= 0 ms (0 = no limit), got " +
                 std::to_string(value.count()) + " ms");
    }
  }
  if (o.retries < 0) {
    return bad("retries must be >= 0, got " + std::to_string(o.retries));
  }
  if (o.max_line_bytes == 0) {
    return bad("max_line_bytes must be > 0");
  }
  if (o.io_threads < 0 || o.io_threads > io::kMaxIoThreads) {
    return bad("io_threads must be between 0 (automatic) and " + std::to_string(io::kMaxIoThreads) +
               ", got " + std::to_string(o.io_threads));
  }
  if (!o.ca_cert.empty()) {
    std::ifstream in(o.ca_cert, std::ios::binary);
    if (!in) {
      return bad("ca_cert '" + o.ca_cert + "': cannot read it: " + std::strerror(errno));
    }
  }
  return {};
}

struct Client::Impl {
  // One request in flight (or about to be).
  struct Transfer {
    Impl* impl = nullptr;
    CURL* easy = nullptr;
    ChatResponse* resp = nullptr;  // outcome, timestamps and (chat) parsed content
    bool chat = false;             // a chat call (parse the answer) vs. a plain Get/Post
    bool stream = false;           // the call asked for SSE
    bool mode_known = false;       // sse decided (at the first body byte)
    bool sse = false;              // body is parsed as an event stream
    bool aborted = false;          // a callback stopped the transfer; resp->outcome is set
    bool hold = false;     // a preconnect GET: pause at its first body byte (see Preconnect)
    bool held = false;     // paused there, keeping its connection in use; counted in Impl::held
    int retries_left = 0;  // further attempts allowed (chat calls)
    std::int64_t waited_ns = 0;        // retry waits so far
    std::size_t max_answer_bytes = 0;  // 0 = no cap
    int status = 0;                    // HTTP status, read when the body starts
    std::size_t index = 0;             // position in the caller's calls (all of the batch's)
    std::size_t active_pos = 0;        // position in Impl::active_
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

    std::int64_t FirstByteOrIdleDeadline() const {
      if (first_byte_ns == 0) {
        return first_byte_limit_ns > 0 ? send_ns + first_byte_limit_ns : kNever;
      }
      return idle_limit_ns > 0 ? last_rx_ns + idle_limit_ns : kNever;
    }

    std::int64_t TotalDeadline() const {
      return total_limit_ns > 0 ? send_ns + total_limit_ns : kNever;
    }

    std::int64_t NextDeadline() const {
      if (done_at_ns != 0) {  // the answer is complete: only the grace is left
        return done_at_ns + MsToNs(kDoneGrace);
      }
      return std::min(FirstByteOrIdleDeadline(), TotalDeadline());
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
  std::int64_t curl_deadline_ns = kNever;  // from curl's timer callback
  std::int64_t armed_ns = kNever;          // what timer_fd is armed to
  // No transfer's time limit falls before this (a lower bound: idle deadlines move later as
  // bytes arrive; the first byte may move a transfer's deadline earlier, see NoteFirstByte).
  std::int64_t next_check_ns = kNever;
  std::vector<Transfer*> active;  // added to the multi handle
  // Transfers waiting to be sent again: (when, transfer), a min-heap on when.
  std::vector<std::pair<std::int64_t, Transfer*>> retry_queue;
  std::vector<SseEvent> scratch;    // events of the chunk being parsed
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
  std::vector<std::unique_ptr<Impl>> helpers;

  explicit Impl(ClientOptions opts) : options(std::move(opts)) {
    root = NormalizeRoot(options.endpoint, query);
    chat_url = root + "/v1/chat/completions" + query;
    if (auto valid = ValidateOptions(options); !valid) {
      // Never run with a limit silently disabled: every request reports this instead.
      init_error = "invalid client options: " + valid.error().message;
      return;
    }
    if (!CurlGlobalInit()) {
      init_error = "curl_global_init failed";
      return;
    }
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (epoll_fd < 0 || wake_fd < 0 || timer_fd < 0) {
      init_error = std::string("cannot create event descriptors: ") + std::strerror(errno);
      return;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wake_fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev);
    ev.data.fd = timer_fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, timer_fd, &ev);

    multi = curl_multi_init();
    if (multi == nullptr) {
      init_error = "curl_multi_init failed";
      return;
    }
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &Impl::OnSocket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &Impl::OnTimer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, this);
    // HTTP/1.1, one stream per connection, no cap per host or in total.
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, static_cast<long>(CURLPIPE_NOTHING));
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
    curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, 0L);
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, 64L);

    std::string auth;
    if (!options.api_key.empty()) {
      auth = "Authorization: Bearer " + options.api_key;
    }
    const auto add = [](curl_slist*& list, const char* h) { list = curl_slist_append(list, h); };
    add(chat_headers, "Content-Type: application/json");
    add(chat_headers, "Expect:");  // no 100-continue round trip before the body
    add(post_headers, "Content-Type: application/json");
    add(post_headers, "Expect:");
    if (!auth.empty()) {
      add(chat_headers, auth.c_str());
      add(post_headers, auth.c_str());
      add(plain_headers, auth.c_str());
    }
    // Wipe our copy of the key; curl_slist holds its own.
    std::fill(auth.begin(), auth.end(), '\0');
  }

  ~Impl() {
    for (Transfer* t : active) {
      curl_multi_remove_handle(multi, t->easy);
    }
    for (CURL* e : idle_easies) {
      curl_easy_cleanup(e);
    }
    if (multi != nullptr) {
      curl_multi_cleanup(multi);
    }
    curl_slist_free_all(chat_headers);
    curl_slist_free_all(plain_headers);
    curl_slist_free_all(post_headers);
    for (int fd : {epoll_fd, wake_fd, timer_fd}) {
      if (fd >= 0) {
        close(fd);
      }
    }
  }

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

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

  static int OnSocket(CURL* /*easy*/, curl_socket_t s, int what, void* userp, void* /*socketp*/) {
    auto* self = static_cast<Impl*>(userp);
    if (what == CURL_POLL_REMOVE) {
      epoll_ctl(self->epoll_fd, EPOLL_CTL_DEL, s, nullptr);  // may already be gone: fine
      return 0;
    }
    epoll_event ev{};
    ev.events =
        ((what & CURL_POLL_IN) != 0 ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) != 0 ? EPOLLOUT : 0u);
    ev.data.fd = s;
    if (epoll_ctl(self->epoll_fd, EPOLL_CTL_MOD, s, &ev) != 0 && errno == ENOENT) {
      epoll_ctl(self->epoll_fd, EPOLL_CTL_ADD, s, &ev);
    }
    return 0;
  }

  static int OnTimer(CURLM* /*multi*/, long timeout_ms, void* userp) {  // NOLINT(runtime/int)
    auto* self = static_cast<Impl*>(userp);
    self->curl_deadline_ns = timeout_ms < 0 ? kNever : NowNs() + timeout_ms * kNanosPerMs;
    return 0;
  }

  // Just before curl writes the request (connected, TLS done): ChatResponse::written_ns.
  static int OnPrereq(void* userdata, char* /*conn_primary_ip*/, char* /*conn_local_ip*/,
                      int /*conn_primary_port*/, int /*conn_local_port*/) {
    auto* t = static_cast<Transfer*>(userdata);
    t->resp->written_ns = NowNs();
    return CURL_PREREQFUNC_OK;
  }

  static size_t OnHeader(char* buffer, size_t size, size_t nitems, void* userdata) {
    const std::int64_t t_ns = NowNs();
    auto* t = static_cast<Transfer*>(userdata);
    const size_t n = size * nitems;
    t->last_rx_ns = t_ns;
    if (t->first_byte_ns == 0) {
      t->impl->NoteFirstByte(*t, t_ns);
    }
    t->header_bytes += n;
    if (t->header_bytes > kHeaderCap) {
      t->aborted = true;
      t->resp->outcome = Outcome::kProtocol;
      t->resp->reason = HeaderOverLimit(t->header_bytes);
      return 0;
    }
    const std::string_view line(buffer, n);
    if (StartsWithNoCase(line, "http/")) {  // a new response (after a 1xx): forget the last
      t->content_type.clear();
      t->server_header.clear();
      t->date_header.clear();
      t->retry_after.clear();
    } else if (StartsWithNoCase(line, "retry-after:")) {
      t->retry_after.assign(TrimView(line.substr(12)));
    } else if (StartsWithNoCase(line, "content-type:")) {
      t->content_type.assign(TrimView(line.substr(13)));
    } else if (StartsWithNoCase(line, "server:")) {
      t->server_header.assign(TrimView(line.substr(7)));
    } else if (StartsWithNoCase(line, "date:")) {
      t->date_header.assign(TrimView(line.substr(5)));
    }
    return n;
  }

  static size_t OnWrite(char* ptr, size_t size, size_t nmemb, void* userdata) {
    // The bytes were read from the socket just now: stamp them before any parsing.
    const std::int64_t t_ns = NowNs();
    auto* t = static_cast<Transfer*>(userdata);
    const size_t n = size * nmemb;
    t->last_rx_ns = t_ns;
    if (t->first_byte_ns == 0) {
      t->impl->NoteFirstByte(*t, t_ns);
    }
    if (t->hold && t->impl->holding) {  // keep the connection in use (Preconnect)
      t->hold = false;
      t->held = true;
      ++t->impl->held;
      return CURL_WRITEFUNC_PAUSE;  // curl keeps these bytes and hands them over again
    }
    if (!t->mode_known) {
      long status = 0;  // NOLINT(runtime/int)
      curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
      t->status = static_cast<int>(status);
      const bool ok = status >= 200 && status < 300;
      // A server that ignores stream=true answers with one JSON body: by its Content-Type, or,
      // when that says neither JSON nor event stream, by a body that starts with '{'.
      bool json_body = StartsWithNoCase(t->content_type, "application/json");
      if (!json_body && !StartsWithNoCase(t->content_type, "text/event-stream")) {
        const std::string_view head(ptr, n);
        const std::size_t first = head.find_first_not_of(" \t\r\n");
        json_body = first != std::string_view::npos && head[first] == '{';
      }
      t->sse = t->chat && t->stream && ok && !json_body;
      t->resp->streamed = t->sse;
      t->mode_known = true;
    }
    if (t->sse) {
      return t->impl->OnSseBytes(*t, std::string_view(ptr, n), t_ns) ? n : 0;
    }
    const bool error_status = t->chat && (t->status < 200 || t->status >= 300);
    const std::size_t cap = error_status ? kErrorBodyCap : kBodyCap;
    if (t->body.size() + n > cap) {
      if (error_status) {  // keep the first 64 KiB, keep reading so the connection survives
        t->body.append(ptr, cap - t->body.size());
        return n;
      }
      t->aborted = true;
      t->resp->outcome = Outcome::kProtocol;
      t->resp->reason = "response body over " + std::to_string(kBodyCap >> 20) + " MiB";
      return 0;
    }
    t->body.append(ptr, n);
    return n;
  }

  // The first byte switches a transfer from the first-byte limit to the (often shorter) idle
  // limit, which can move its deadline earlier than the loop's next check.
  void NoteFirstByte(Transfer& t, std::int64_t t_ns) {
    t.first_byte_ns = t_ns;
    t.resp->first_byte_ns = t_ns;
    next_check_ns = std::min(next_check_ns, t.NextDeadline());
  }

  // ---- SSE --------------------------------------------------------------------------------------

  // Applies one event's data; false when the stream must stop (outcome set).
  bool HandleEvent(Transfer& t, std::string_view data, std::int64_t t_ns) {
    ChatResponse& r = *t.resp;
    if (r.stream_done) {
      return true;  // [DONE] ended the answer: nothing after it is part of it
    }
    const std::size_t before = r.events.size();
    if (!ApplyStreamEvent(data, t_ns, r)) {
      return false;
    }
    if (r.stream_done) {  // the answer is complete: the body's end gets kDoneGrace at most
      t.done_at_ns = t_ns;
      next_check_ns = std::min(next_check_ns, t.NextDeadline());
      return true;
    }
    if (!t.guard.AfterEvent(r, data, before)) {
      return false;
    }
    if (!WithinAnswerCap(t)) {
      return false;
    }
    if (r.events.size() != before && hooks != nullptr && hooks->on_event && !hooks->on_event(r)) {
      r.outcome = Outcome::kCancelled;
      r.reason = "cancelled by caller";
      return false;
    }
    return true;
  }

  // False (outcome set) when the text of t's response has gone over its max_answer_bytes.
  bool WithinAnswerCap(Transfer& t) {
    if (t.max_answer_bytes == 0) {
      return true;
    }
    ChatResponse& r = *t.resp;
    std::size_t bytes = r.answer.size() + r.reasoning.size();
    for (const ToolCall& call : r.tool_calls) {
      bytes += call.name.size() + call.arguments.size();
    }
    if (bytes <= t.max_answer_bytes) {
      return true;
    }
    r.outcome = Outcome::kProtocol;
    r.reason = "answer over " + std::to_string(t.max_answer_bytes) +
               " bytes (max_answer_bytes); got " + std::to_string(bytes);
    return false;
  }

  bool OnSseBytes(Transfer& t, std::string_view bytes, std::int64_t t_ns) {
    scratch.clear();
    const bool fed = t.parser.Feed(bytes, scratch);
    for (const SseEvent& ev : scratch) {
      if (!HandleEvent(t, ev.data, t_ns)) {
        scratch.clear();
        t.aborted = true;
        return false;
      }
    }
    scratch.clear();
    if (!fed) {  // a line or event over the cap: stop before buffering any more of it
      t.resp->outcome = Outcome::kProtocol;
      t.resp->reason = t.parser.error();
      t.aborted = true;
      return false;
    }
    return true;
  }

  // ---- transfers --------------------------------------------------------------------------------

  CURL* AcquireEasy() {
    if (!idle_easies.empty()) {
      CURL* e = idle_easies.back();
      idle_easies.pop_back();
      curl_easy_reset(e);
      return e;
    }
    return curl_easy_init();
  }

  void ReleaseEasy(CURL* e) {
    if (e != nullptr) {
      idle_easies.push_back(e);
    }
  }

  void ConfigureEasy(Transfer& t, const std::string& url) {
    CURL* e = t.easy;
    curl_easy_setopt(e, CURLOPT_URL, url.c_str());
    curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Impl::OnWrite);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Impl::OnHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, &Impl::OnPrereq);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, &t);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    curl_easy_setopt(e, CURLOPT_USERAGENT, "servebench/0.1");
    if (options.connect_timeout.count() > 0) {
      curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                       static_cast<long>(options.connect_timeout.count()));  // NOLINT
    }
    // "": every encoding this libcurl decodes (gzip, deflate, ...), decoded as bytes arrive.
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    if (!options.ca_cert.empty()) {
      curl_easy_setopt(e, CURLOPT_CAINFO, options.ca_cert.c_str());
    }
    if (options.insecure) {
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
  }

  // Hands t to curl. send_ns is taken immediately before curl_multi_add_handle, so it includes
  // connection setup on a fresh connection (as vLLM's bench does). false: could not be added.
  bool Launch(Transfer& t) {
    t.send_ns = NowNs();
    t.last_rx_ns = t.send_ns;
    t.resp->send_ns = t.send_ns;
    t.resp->written_ns = 0;
    if (t.resp->first_send_ns == 0) {
      t.resp->first_send_ns = t.send_ns;
    }
    const CURLMcode mc = curl_multi_add_handle(multi, t.easy);
    if (mc != CURLM_OK) {
      t.resp->outcome = Outcome::kTransport;
      t.resp->reason = std::string("cannot start request: ") + curl_multi_strerror(mc);
      t.resp->done_ns = NowNs();
      return false;
    }
    t.active_pos = active.size();
    active.push_back(&t);
    return true;
  }

  void Deactivate(Transfer& t) {
    if (t.held) {
      t.held = false;
      --held;
    }
    curl_multi_remove_handle(multi, t.easy);
    Transfer* last = active.back();
    active[t.active_pos] = last;
    last->active_pos = t.active_pos;
    active.pop_back();
  }

  // Ends a transfer that has not finished on its own (time limit, cancellation).
  void Abort(Transfer& t, Outcome outcome, std::string reason, std::int64_t now) {
    Deactivate(t);
    ChatResponse& r = *t.resp;
    r.outcome = outcome;
    r.reason = std::move(reason);
    r.done_ns = now;
    if (t.chat) {
      long status = 0;  // NOLINT(runtime/int)
      curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
      r.http_status = static_cast<int>(status);
      if (!t.sse && (status < 200 || status >= 300)) {
        r.error_body = std::move(t.body);
      }
    }
  }

  // Classifies a transfer curl has finished (successfully or not).
  void Complete(Transfer& t, CURLcode rc) {
    const std::int64_t now = NowNs();
    Deactivate(t);
    ChatResponse& r = *t.resp;
    r.done_ns = now;
    long status = 0;  // NOLINT(runtime/int)
    curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
    r.http_status = static_cast<int>(status);
    long connects = 0;  // NOLINT(runtime/int)
    curl_easy_getinfo(t.easy, CURLINFO_NUM_CONNECTS, &connects);
    r.new_connection = connects > 0;
    if (t.aborted) {
      return;  // the write callback already decided (malformed, error event, cancelled)
    }
    if (rc != CURLE_OK) {
      const std::string msg = t.errbuf[0] != '\0' ? t.errbuf : curl_easy_strerror(rc);
      if (t.sse && r.stream_done) {
        FinishStream(t);  // the stream was complete; the connection failed afterwards
        return;
      }
      if (rc == CURLE_OPERATION_TIMEDOUT) {  // only the connect limit is left to curl
        r.outcome = Outcome::kTimeout;
        r.reason = "no connection within " + std::to_string(options.connect_timeout.count()) +
                   " ms: " + msg;
      } else if (rc == CURLE_PEER_FAILED_VERIFICATION) {
        r.outcome = Outcome::kTransport;
        r.reason = "TLS certificate not trusted: " + msg +
                   " (trust its CA with ca_cert, or skip verification with insecure)";
      } else if (rc == CURLE_SSL_CACERT_BADFILE) {
        r.outcome = Outcome::kTransport;
        r.reason = "cannot use CA certificate file '" + options.ca_cert + "': " + msg;
      } else if (rc == CURLE_OUT_OF_MEMORY && !t.mode_known) {
        // Before the body, curl says "Out of memory" for a header line over its own limit
        // (CURL_MAX_HTTP_HEADER): its message would mislead, so it is not repeated.
        r.outcome = Outcome::kProtocol;
        r.reason = "response header over the limit: a header line over libcurl's 100 KiB";
      } else {
        r.outcome = Outcome::kTransport;
        r.reason = msg;
      }
      if (t.chat && !t.sse && (status < 200 || status >= 300) && status != 0) {
        r.error_body = std::move(t.body);
      }
      return;
    }
    if (!t.chat) {
      return;  // Get/Post: any status is a value
    }
    if (status < 200 || status >= 300) {
      r.outcome = Outcome::kHttpError;
      r.reason = HttpErrorReason(static_cast<int>(status), t.body);
      r.error_body = std::move(t.body);
      return;
    }
    if (t.sse) {
      FinishStream(t);
      return;
    }
    if (!t.mode_known) {  // 2xx without a single body byte
      r.outcome = Outcome::kProtocol;
      r.reason = t.stream ? "stream ended early: empty response" : "empty response body";
      return;
    }
    if (ApplyCompletionBody(t.body, t.last_rx_ns, r) && t.guard.AfterBody(r)) {
      WithinAnswerCap(t);
    }
  }

  // ---- retries ----------------------------------------------------------------------------------

  // Whether a finished attempt may be sent again (ClientOptions::retries): HTTP 429/503, or a
  // connection refused, reset or closed before the first response byte.
  static bool Retryable(const Transfer& t, CURLcode rc) {
    if (!t.chat || t.aborted) {
      return false;
    }
    if (rc == CURLE_OK) {
      return t.resp->http_status == 429 || t.resp->http_status == 503;
    }
    if (t.first_byte_ns != 0) {
      return false;  // the server answered something: sending again could duplicate it
    }
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
           rc == CURLE_GOT_NOTHING;
  }

  // Queues t for another attempt if it may have one; false: its result stands.
  bool ScheduleRetry(Transfer& t, CURLcode rc) {
    if (t.retries_left <= 0 || !Retryable(t, rc)) {
      return false;
    }
    ChatResponse& r = *t.resp;
    const int k = options.retries - t.retries_left;  // retries made so far
    std::int64_t wait = -1;
    if (rc == CURLE_OK && !t.retry_after.empty()) {
      wait = ParseRetryAfterNs(t.retry_after);
    }
    if (wait < 0) {
      wait = MsToNs(options.retry_backoff) << std::min(k, 20);
    }
    wait = std::min(wait, MsToNs(options.retry_wait_cap));
    if (t.waited_ns + wait > MsToNs(options.retry_wait_budget)) {
      return false;
    }
    --t.retries_left;
    t.waited_ns += wait;
    r.retry_reasons.push_back(r.reason);
    const std::int64_t when = NowNs() + wait;
    retry_queue.emplace_back(when, &t);
    std::push_heap(retry_queue.begin(), retry_queue.end(), std::greater<>{});
    return true;
  }

  // Clears what the failed attempt left in t and its response, then sends it again.
  bool Relaunch(Transfer& t) {
    ChatResponse& r = *t.resp;
    ChatResponse fresh;
    fresh.id = r.id;
    fresh.scheduled_ns = r.scheduled_ns;
    fresh.first_send_ns = r.first_send_ns;
    fresh.retries = r.retries + 1;
    fresh.retry_reasons = std::move(r.retry_reasons);
    r = std::move(fresh);
    t.mode_known = false;
    t.sse = false;
    t.aborted = false;
    t.status = 0;
    t.first_byte_ns = 0;
    t.body.clear();
    t.content_type.clear();
    t.server_header.clear();
    t.date_header.clear();
    t.retry_after.clear();
    t.parser = SseParser(options.max_line_bytes);
    t.guard = t.fresh_guard;
    t.done_at_ns = 0;
    t.header_bytes = 0;
    t.errbuf[0] = '\0';
    return Launch(t);
  }

  void FinishStream(Transfer& t) {
    ChatResponse& r = *t.resp;
    scratch.clear();
    const bool clean = t.parser.Finish(scratch) || r.stream_done;
    for (const SseEvent& ev : scratch) {
      if (!HandleEvent(t, ev.data, t.last_rx_ns)) {
        if (!clean && r.outcome == Outcome::kProtocol) {
          r.reason = "stream ended early: connection closed mid-event (" + r.reason + ")";
        }
        scratch.clear();
        return;
      }
    }
    scratch.clear();
    if (!r.stream_done && r.finish_reason.empty()) {
      r.outcome = Outcome::kProtocol;
      r.reason = clean ? "stream ended early: no finish_reason and no [DONE]"
                       : "stream ended early: connection closed mid-event";
      return;
    }
    t.guard.AtStreamEnd(r);
  }

  // A stream whose [DONE] came kDoneGrace ago and whose body has not ended (a server that keeps
  // the connection open): the answer is complete; the connection is closed.
  void EndAfterDone(Transfer& t) {
    Deactivate(t);
    ChatResponse& r = *t.resp;
    r.done_ns = t.done_at_ns;
    long status = 0;  // NOLINT(runtime/int)
    curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
    r.http_status = static_cast<int>(status);
    FinishStream(t);
  }

  // ---- the loop --------------------------------------------------------------------------------

  void ArmTimer(std::int64_t at_ns) {
    if (at_ns == armed_ns) {
      return;
    }
    itimerspec its{};
    if (at_ns != kNever) {
      its.it_value.tv_sec = static_cast<time_t>(at_ns / 1'000'000'000);
      its.it_value.tv_nsec = static_cast<long>(at_ns % 1'000'000'000);  // NOLINT(runtime/int)
    }
    timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &its, nullptr);
    armed_ns = at_ns;
  }

  void SocketAction(curl_socket_t s, int ev_mask) {
    int running = 0;
    curl_multi_socket_action(multi, s, ev_mask, &running);
  }

  template <typename Finished>
  void Reap(Finished& finished) {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg != CURLMSG_DONE) {
        continue;
      }
      Transfer* t = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
      const CURLcode rc = msg->data.result;
      Complete(*t, rc);
      if (ScheduleRetry(*t, rc)) {
        continue;
      }
      finished(*t);
    }
  }

  // Ends transfers whose time limit has passed; returns the earliest remaining deadline.
  template <typename Finished>
  std::int64_t ExpireLimits(std::int64_t now, Finished& finished) {
    std::int64_t next = kNever;
    for (std::size_t i = 0; i < active.size();) {
      Transfer& t = *active[i];
      if (t.held) {  // answered: it keeps its connection until ReleaseHeld, whatever the time
        ++i;
        continue;
      }
      if (t.done_at_ns != 0) {  // [DONE] arrived: no other limit applies
        if (now < t.NextDeadline()) {
          next = std::min(next, t.NextDeadline());
          ++i;
          continue;
        }
        EndAfterDone(t);  // swaps another transfer into i
        finished(t);
        continue;
      }
      const std::int64_t fb_idle = t.FirstByteOrIdleDeadline();
      const std::int64_t total = t.TotalDeadline();
      if (now < fb_idle && now < total) {
        next = std::min(next, std::min(fb_idle, total));
        ++i;
        continue;
      }
      std::string reason;
      if (fb_idle <= total) {
        reason = t.first_byte_ns == 0
                     ? "no first byte within " +
                           std::to_string(t.first_byte_limit_ns / kNanosPerMs) + " ms"
                     : "idle gap over " + std::to_string(t.idle_limit_ns / kNanosPerMs) + " ms";
      } else {
        reason = "total time over " + std::to_string(t.total_limit_ns / kNanosPerMs) + " ms";
      }
      Abort(t, Outcome::kTimeout, std::move(reason), now);  // swaps another transfer into i
      finished(t);
    }
    return next;
  }

  void DrainFd(int fd) {
    std::uint64_t value = 0;
    while (read(fd, &value, sizeof value) > 0) {
    }
  }

  // Runs transfers to completion. order: (send time ns, 0 = now; index), sorted by time.
  // start(index) creates and launches a transfer (nullptr if it failed at once: then it has
  // already been reported). finished(t) is called once per transfer that ends; unsent(index,
  // reason) once per call never started (stop requested, or RunHooks::start_until passed).
  template <typename Start, typename Finished, typename Unsent>
  void Drive(std::span<const std::pair<std::int64_t, std::size_t>> order, Start& start,
             Finished& finished, Unsent& unsent, std::stop_token stop) {
    std::stop_callback on_stop(stop, [this] {
      const std::uint64_t one = 1;
      [[maybe_unused]] const ssize_t w = write(wake_fd, &one, sizeof one);
    });
    std::size_t next = 0;
    // Closed loop (RunHooks::max_in_flight, start_until).
    const std::size_t cap = hooks != nullptr ? hooks->max_in_flight : 0;
    const std::int64_t start_until_ns =
        hooks != nullptr && hooks->start_until ? ToNanos(*hooks->start_until) : kNever;
    const auto room = [&] { return cap == 0 || active.size() + retry_queue.size() < cap; };
    next_check_ns = kNever;
    // Preconnect: once every active transfer is a GET held at its answer, let them all finish.
    const auto release_held = [&] {
      if (holding && next >= order.size() && held > 0 && held == active.size()) {
        ReleaseHeld();
        Reap(finished);
      }
    };
    epoll_event events[kMaxEvents];
    while (next < order.size() || !active.empty() || !retry_queue.empty()) {
      if (stop.stop_requested()) {
        const std::int64_t now = NowNs();
        while (!active.empty()) {
          Transfer& t = *active.back();
          Abort(t, Outcome::kCancelled, "cancelled", now);
          finished(t);
        }
        for (auto& [when, t] : retry_queue) {
          ChatResponse& r = *t->resp;
          r.outcome = Outcome::kCancelled;
          r.reason = "cancelled while waiting to retry (after: " + r.reason + ")";
          r.done_ns = now;
          finished(*t);
        }
        retry_queue.clear();
        for (; next < order.size(); ++next) {
          unsent(order[next].second, "cancelled before send");
        }
        break;
      }
      std::int64_t now = NowNs();
      if (start_until_ns != kNever && now >= start_until_ns) {
        for (; next < order.size(); ++next) {
          unsent(order[next].second, kNotStartedReason);
        }
      }
      while (next < order.size() && order[next].first <= now && room()) {
        if (Transfer* t = start(order[next].second)) {
          next_check_ns = std::min(next_check_ns, t->NextDeadline());
        }
        ++next;
      }
      while (!retry_queue.empty() && retry_queue.front().first <= now) {
        std::pop_heap(retry_queue.begin(), retry_queue.end(), std::greater<>{});
        Transfer& t = *retry_queue.back().second;
        retry_queue.pop_back();
        if (Relaunch(t)) {
          next_check_ns = std::min(next_check_ns, t.NextDeadline());
        } else {
          finished(t);
        }
      }
      if (curl_deadline_ns <= NowNs()) {
        curl_deadline_ns = kNever;
        SocketAction(CURL_SOCKET_TIMEOUT, 0);
        Reap(finished);
      }
      now = NowNs();
      if (now >= next_check_ns) {
        next_check_ns = ExpireLimits(now, finished);
      }
      // Before sleeping: the last GET may have been answered inside the SocketAction above
      // (curl reads right after sending), or the last unanswered one just timed out.
      release_held();
      if (next >= order.size() && active.empty() && retry_queue.empty()) {
        break;
      }
      // Sleep on the timerfd (ns resolution, unlike curl_multi_poll's ms) until shortly before
      // the next send, then poll without blocking -- still servicing sockets -- until it is due:
      // a scheduled send then leaves within microseconds, not a wake-up latency late.
      std::int64_t wake_at = std::min(curl_deadline_ns, next_check_ns);
      if (next < order.size() && room()) {
        wake_at = std::min(wake_at, order[next].first - kSendSpinNs);
      }
      if (next < order.size()) {
        wake_at = std::min(wake_at, start_until_ns);
      }
      if (!retry_queue.empty()) {
        wake_at = std::min(wake_at, retry_queue.front().first);
      }
      int timeout_ms = -1;
      if (wake_at <= NowNs()) {
        timeout_ms = 0;
      } else {
        ArmTimer(wake_at);
      }
      const int n = epoll_wait(epoll_fd, events, kMaxEvents, timeout_ms);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == timer_fd || fd == wake_fd) {
          DrainFd(fd);
          if (fd == timer_fd) {
            armed_ns = kNever;
          }
          continue;
        }
        int mask = 0;
        if ((events[i].events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) != 0) {
          mask |= CURL_CSELECT_IN;
        }
        if ((events[i].events & EPOLLOUT) != 0) {
          mask |= CURL_CSELECT_OUT;
        }
        if ((events[i].events & EPOLLERR) != 0) {
          mask |= CURL_CSELECT_ERR;
        }
        SocketAction(fd, mask);
      }
      Reap(finished);
      release_held();
    }
    holding = false;
    DrainFd(wake_fd);
  }

  // Every active transfer is a preconnect GET paused on its answer, each holding its own
  // connection: let them finish (their connections go back to the cache, all idle at once).
  void ReleaseHeld() {
    holding = false;
    const std::vector<Transfer*> now_active = active;  // unpausing may complete transfers
    for (Transfer* t : now_active) {
      if (t->held) {
        t->held = false;
        --held;
        next_check_ns = std::min(next_check_ns, t->NextDeadline());
        curl_easy_pause(t->easy, CURLPAUSE_CONT);
      }
    }
  }
};

// ---- Client ---------------------------------------------------------------------------------

Client::Client(ClientOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Client::~Client() = default;

const std::string& Client::root() const {
  return impl_->root;
}

const std::string& Client::query() const {
  return impl_->query;
}

Result<void> Client::Validate() const {
  const std::string& endpoint = impl_->options.endpoint;
  const auto bad = [&](const std::string& why) {
    // As shown everywhere: a password in the URL (even one written without its scheme) and the
    // query's values never reach the message.
    return MakeError(ErrorCode::kUsage, "bad endpoint URL '" + RedactUrl(endpoint) + "': " + why);
  };
  const std::string& root = impl_->root;
  if (root.empty()) {
    return bad("empty");
  }
  if (!StartsWithNoCase(root, "http://") && !StartsWithNoCase(root, "https://")) {
    return bad("expected http://host:port or https://host:port");
  }
  if (!CurlGlobalInit()) {
    return bad("curl_global_init failed");
  }
  CURLU* url = curl_url();
  if (url == nullptr) {
    return bad("out of memory");
  }
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> guard(url, &curl_url_cleanup);
  const CURLUcode rc = curl_url_set(url, CURLUPART_URL, root.c_str(), 0);
  if (rc != CURLUE_OK) {
    return bad(curl_url_strerror(rc));
  }
  char* host = nullptr;
  if (curl_url_get(url, CURLUPART_HOST, &host, 0) != CURLUE_OK || host == nullptr ||
      host[0] == '\0') {
    curl_free(host);
    return bad("no host");
  }
  curl_free(host);
  return ValidateOptions(impl_->options);
}

std::vector<ChatResponse> Client::RunChatsLive(std::span<const ChatCall> calls,
                                               const RunHooks& hooks, std::stop_token stop) {
  Impl& impl = *impl_;
  std::vector<ChatResponse> results(calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    results[i].id = calls[i].id;
    if (calls[i].send_at) {
      results[i].scheduled_ns = ToNanos(*calls[i].send_at);
    }
  }
  if (!impl.init_error.empty() || impl.driving) {
    for (ChatResponse& r : results) {
      r.outcome = Outcome::kTransport;
      r.reason =
          impl.driving ? "RunChats called from a hook of a running RunChats" : impl.init_error;
      r.done_ns = NowNs();
      if (hooks.on_done) {
        hooks.on_done(r);
      }
    }
    return results;
  }

  impl.driving = true;

  struct ClearOnExit {
    std::atomic<bool>& flag;

    ~ClearOnExit() { flag = false; }
  } clear_driving{impl.driving};

  const bool scheduled = std::any_of(calls.begin(), calls.end(),
                                     [](const ChatCall& c) { return c.send_at.has_value(); });
  int workers =
      io::WorkerCount(impl.options.io_threads, calls.size(), hooks.max_in_flight, scheduled);
  while (impl.helpers.size() < static_cast<std::size_t>(workers - 1)) {
    auto helper = std::make_unique<Impl>(impl.options);
    if (!helper->init_error.empty()) {  // out of descriptors: fewer threads, as many as there are
      workers = static_cast<int>(impl.helpers.size()) + 1;
      break;
    }
    impl.helpers.push_back(std::move(helper));
  }
  if (workers > 1) {
    std::vector<std::int64_t> cpu;
    const bool ran = io::RunWorkers(
        workers, hooks, stop,
        [&](const io::Share& s, std::stop_token worker_stop) {
          Impl& w = s.worker == 0 ? impl : *impl.helpers[static_cast<std::size_t>(s.worker - 1)];
          w.RunShare(calls, results, static_cast<std::size_t>(s.worker),
                     static_cast<std::size_t>(s.workers), s.hooks, s.preconnected,
                     std::move(worker_stop));
        },
        &cpu);
    if (ran) {
      io_cpu_ns_.assign(cpu.begin() + 1, cpu.end());
      return results;
    }
    // No thread could be started: the batch (untouched) runs on this thread.
  }
  impl.RunShare(calls, results, 0, 1, hooks, nullptr, std::move(stop));
  return results;
}

void Client::Impl::RunShare(std::span<const ChatCall> calls, std::span<ChatResponse> results,
                            std::size_t first, std::size_t stride, const RunHooks& batch_hooks,
                            io::StartGate* preconnected, std::stop_token stop) {
  std::vector<std::pair<std::int64_t, std::size_t>> order;
  order.reserve(io::CallShare(calls.size(), static_cast<int>(stride), static_cast<int>(first)));
  for (std::size_t i = first; i < calls.size(); i += stride) {
    order.emplace_back(results[i].scheduled_ns, i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });

  const auto report = [&](ChatResponse& r) {
    if (batch_hooks.on_done) {
      batch_hooks.on_done(r);
    }
  };
  // Keep enough idle connections for the next run to reuse them.
  const std::size_t want = std::clamp<std::size_t>(order.size(), 64, 8192);
  if (want > max_connects) {
    max_connects = want;
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(want));  // NOLINT
  }
  if (batch_hooks.preconnect && !order.empty() && !stop.stop_requested()) {
    const std::size_t at_once = batch_hooks.max_in_flight > 0
                                    ? std::min(batch_hooks.max_in_flight, order.size())
                                    : order.size();
    Preconnect(std::min(at_once, max_connects), stop);
  }
  if (preconnected != nullptr) {
    preconnected->ArriveAndWait(stop);
  }

  // Indexed by i / stride: this worker's calls are first + j * stride, first < stride.
  std::vector<std::unique_ptr<Transfer>> transfers(order.size());
  hooks = &batch_hooks;
  auto finished = [&](Transfer& t) {
    const std::size_t i = t.index;
    ReleaseEasy(t.easy);
    report(results[i]);
    transfers[i / stride].reset();
  };
  auto start = [&](std::size_t i) -> Transfer* {
    const ChatCall& call = calls[i];
    auto t = std::make_unique<Transfer>();
    t->impl = this;
    t->resp = &results[i];
    t->chat = true;
    t->stream = call.stream;
    t->index = i;
    t->first_byte_limit_ns = MsToNs(
        call.first_byte_timeout.count() > 0 ? call.first_byte_timeout : options.first_byte_timeout);
    t->idle_limit_ns = MsToNs(options.idle_timeout);
    t->total_limit_ns =
        MsToNs(call.total_timeout.count() > 0 ? call.total_timeout : options.total_timeout);
    t->max_answer_bytes =
        call.max_answer_bytes > 0 ? call.max_answer_bytes : options.max_answer_bytes;
    t->retries_left = options.retries;
    t->parser = SseParser(options.max_line_bytes);
    t->fresh_guard = detail::StreamGuard(call.max_stream_tokens, call.keep_text_bytes);
    t->guard = t->fresh_guard;
    if (call.total_timeout.count() < 0) {
      results[i].outcome = Outcome::kTransport;
      results[i].reason =
          "invalid ChatCall::total_timeout: " + std::to_string(call.total_timeout.count()) +
          " ms (must be >= 0)";
      results[i].done_ns = NowNs();
      report(results[i]);
      return nullptr;
    }
    t->easy = AcquireEasy();
    if (t->easy == nullptr) {
      results[i].outcome = Outcome::kTransport;
      results[i].reason = "curl_easy_init failed";
      results[i].done_ns = NowNs();
      report(results[i]);
      return nullptr;
    }
    ConfigureEasy(*t, chat_url);
    curl_easy_setopt(t->easy, CURLOPT_POST, 1L);
    curl_easy_setopt(t->easy, CURLOPT_POSTFIELDS, call.body.data());
    curl_easy_setopt(t->easy, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(call.body.size()));
    curl_easy_setopt(t->easy, CURLOPT_HTTPHEADER, chat_headers);
    Transfer* raw = t.get();
    transfers[i / stride] = std::move(t);
    if (!Launch(*raw)) {
      ReleaseEasy(raw->easy);
      report(results[i]);
      transfers[i / stride].reset();
      return nullptr;
    }
    return raw;
  };
  auto unsent = [&](std::size_t i, const char* reason) {
    results[i].outcome = Outcome::kCancelled;
    results[i].reason = reason;
    results[i].done_ns = NowNs();
    report(results[i]);
  };
  Drive(order, start, finished, unsent, std::move(stop));
  hooks = nullptr;
}

std::size_t Client::Impl::Preconnect(std::size_t n, std::stop_token stop) {
  const std::string url = root + "/v1/models" + query;
  std::vector<ChatResponse> status(n);
  std::vector<std::unique_ptr<Transfer>> transfers(n);
  std::vector<std::pair<std::int64_t, std::size_t>> order;
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    order.emplace_back(0, i);
  }
  // At most 5 s in all (they run together): a server that serves a connection per thread and
  // has fewer threads than n leaves some unanswered; those are dropped and their calls connect
  // themselves, as without preconnect.
  const std::int64_t limit_ns = MsToNs(std::chrono::milliseconds(5'000));
  auto start = [&](std::size_t i) -> Transfer* {
    auto t = std::make_unique<Transfer>();
    t->impl = this;
    t->resp = &status[i];
    t->index = i;
    t->total_limit_ns = limit_ns;
    t->hold = true;
    t->easy = AcquireEasy();
    if (t->easy == nullptr) {
      return nullptr;
    }
    ConfigureEasy(*t, url);
    curl_easy_setopt(t->easy, CURLOPT_HTTPGET, 1L);
    if (plain_headers != nullptr) {
      curl_easy_setopt(t->easy, CURLOPT_HTTPHEADER, plain_headers);
    }
    Transfer* raw = t.get();
    transfers[i] = std::move(t);
    if (!Launch(*raw)) {
      ReleaseEasy(raw->easy);
      transfers[i].reset();
      return nullptr;
    }
    return raw;
  };
  std::size_t answered = 0;
  auto finished = [&](Transfer& t) {
    answered += t.resp->outcome == Outcome::kOk ? 1 : 0;
    ReleaseEasy(t.easy);
    transfers[t.index].reset();
  };
  auto unsent = [](std::size_t, const char*) {};
  // A fast server answers a GET before curl has started the next one, which would then reuse
  // that connection: 128 GETs went one after another over one connection, and the batch's
  // calls opened the other 127 as they were sent. So each GET keeps its connection in use
  // (paused at its answer) until every GET is answered or has failed. A GET never answered (a
  // server with fewer connection threads than n) ends at the 5 s limit; the answered ones are
  // not timed out while they wait, so their connections are kept, as before.
  holding = true;
  held = 0;
  Drive(order, start, finished, unsent, std::move(stop));
  return answered;
}

Result<HttpResponse> Client::Impl::Plain(bool post, std::string_view path, std::string_view body,
                                         std::chrono::milliseconds timeout) {
  const std::string url = root + std::string(path) + query;
  const std::string what = std::string(post ? "POST " : "GET ") + root + std::string(path);
  if (!init_error.empty()) {
    return MakeError(ErrorCode::kTransport, what + ": " + init_error);
  }
  if (driving) {  // a RunChats hook calling back: the loop is not reentrant
    return MakeError(ErrorCode::kInternal,
                     what + ": called from a RunChats hook; use a second Client");
  }
  ChatResponse status;  // outcome, reason and timestamps
  Transfer t;
  t.impl = this;
  t.resp = &status;
  t.total_limit_ns = MsToNs(timeout);
  // The client's first-byte and idle limits hold here too: a frozen server costs an auxiliary
  // request (GET /metrics, POST /tokenize) no more than a chat call.
  t.first_byte_limit_ns = MsToNs(options.first_byte_timeout);
  t.idle_limit_ns = MsToNs(options.idle_timeout);
  t.easy = AcquireEasy();
  if (t.easy == nullptr) {
    return MakeError(ErrorCode::kTransport, what + ": curl_easy_init failed");
  }
  ConfigureEasy(t, url);
  if (post) {
    t.post_body.assign(body);
    curl_easy_setopt(t.easy, CURLOPT_POST, 1L);
    curl_easy_setopt(t.easy, CURLOPT_POSTFIELDS, t.post_body.data());
    curl_easy_setopt(t.easy, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(t.post_body.size()));
    curl_easy_setopt(t.easy, CURLOPT_HTTPHEADER, post_headers);
  } else {
    curl_easy_setopt(t.easy, CURLOPT_HTTPGET, 1L);
    if (plain_headers != nullptr) {
      curl_easy_setopt(t.easy, CURLOPT_HTTPHEADER, plain_headers);
    }
  }
  const std::pair<std::int64_t, std::size_t> order[] = {{0, 0}};
  auto start = [&](std::size_t) -> Transfer* { return Launch(t) ? &t : nullptr; };
  auto finished = [](Transfer&) {};
  auto unsent = [](std::size_t, const char*) {};
  Drive(order, start, finished, unsent, std::stop_token{});
  ReleaseEasy(t.easy);
  if (status.outcome != Outcome::kOk) {
    const ErrorCode code =
        status.outcome == Outcome::kTimeout ? ErrorCode::kTimeout : ErrorCode::kTransport;
    return MakeError(code, what + ": " + status.reason);
  }
  HttpResponse out;
  out.status = status.http_status;
  out.body = std::move(t.body);
  out.content_type = std::move(t.content_type);
  out.server_header = std::move(t.server_header);
  out.date_header = std::move(t.date_header);
  return out;
}

Result<HttpResponse> Client::GetLive(std::string_view path, std::chrono::milliseconds timeout) {
  return impl_->Plain(false, path, {}, timeout);
}

Result<HttpResponse> Client::PostLive(std::string_view path, std::string_view json_body,
                                      std::chrono::milliseconds timeout) {
  return impl_->Plain(true, path, json_body, timeout);
}

}  // namespace sb::client
