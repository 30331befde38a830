// The HTTP client: its options, its set-up (one libcurl multi handle, epoll, timerfd and
// eventfd per I/O loop) and the Client API. The loop itself is http_loop.cpp; one transfer's
// life (curl callbacks, SSE, retries) http_transfer.cpp; the state they share http_impl.h.
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

#include "client/http_impl.h"
#include "client/io_workers.h"
#include "client/sse_parser.h"
#include "client/stream_guard.h"
#include "core/redact.h"

namespace sb::client {

using namespace detail;  // NOLINT(build/namespaces): this module's private helpers

namespace detail {

std::string HeaderOverLimit(std::size_t got) {
  return "response header over the limit: " + std::to_string(got) +
         " bytes (cap: " + std::to_string(kHeaderCap) + " bytes)";
}

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

}  // namespace detail

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

CurlLoop::CurlLoop(ClientOptions opts) : options(std::move(opts)) {
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
  curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &CurlLoop::OnSocket);
  curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &CurlLoop::OnTimer);
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
  if (NativeTransportFor(options, root)) {
    SetUpNative();
    chat_target = path_prefix + "/v1/chat/completions" + query;
  }
}

CurlLoop::~CurlLoop() {
  for (Transfer* t : active) {
    curl_multi_remove_handle(multi, t->easy);
  }
  for (CURL* e : idle_easies) {
    curl_easy_cleanup(e);
  }
  if (multi != nullptr) {
    curl_multi_cleanup(multi);
  }
  CloseNative();
  curl_slist_free_all(chat_headers);
  curl_slist_free_all(plain_headers);
  curl_slist_free_all(post_headers);
  for (int fd : {epoll_fd, wake_fd, timer_fd}) {
    if (fd >= 0) {
      close(fd);
    }
  }
}

// ---- Client ---------------------------------------------------------------------------------

// The libcurl loop as a Client's wire.
class CurlWire final : public Wire {
 public:
  explicit CurlWire(ClientOptions options)
      : impl_(std::make_unique<CurlLoop>(std::move(options))) {}

  const std::string& root() const override;
  const std::string& query() const override;
  Result<void> Validate() const override;
  std::vector<ChatResponse> RunChats(std::span<const ChatCall> calls, const RunHooks& hooks,
                                     std::stop_token stop) override;

  std::vector<std::int64_t> IoThreadCpuNs() const override { return io_cpu_ns_; }

  std::string_view transport() const override { return impl_->native ? "native" : "libcurl"; }

  Result<HttpResponse> Get(std::string_view path, std::chrono::milliseconds timeout) override;
  Result<HttpResponse> Post(std::string_view path, std::string_view json_body,
                            std::chrono::milliseconds timeout) override;

 private:
  std::unique_ptr<CurlLoop> impl_;
  std::vector<std::int64_t> io_cpu_ns_;
};

const std::string& CurlWire::root() const {
  return impl_->root;
}

const std::string& CurlWire::query() const {
  return impl_->query;
}

Result<void> CurlWire::Validate() const {
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

std::vector<ChatResponse> CurlWire::RunChats(std::span<const ChatCall> calls, const RunHooks& hooks,
                                             std::stop_token stop) {
  io_cpu_ns_.clear();
  CurlLoop& impl = *impl_;
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
    auto helper = std::make_unique<CurlLoop>(impl.options);
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
          CurlLoop& w =
              s.worker == 0 ? impl : *impl.helpers[static_cast<std::size_t>(s.worker - 1)];
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

Result<HttpResponse> CurlWire::Get(std::string_view path, std::chrono::milliseconds timeout) {
  return impl_->Plain(false, path, {}, timeout);
}

Result<HttpResponse> CurlWire::Post(std::string_view path, std::string_view json_body,
                                    std::chrono::milliseconds timeout) {
  return impl_->Plain(true, path, json_body, timeout);
}

Client::Client(ClientOptions options) : wire_(std::make_unique<CurlWire>(std::move(options))) {}

Client::Client(std::unique_ptr<Wire> wire) : wire_(std::move(wire)) {}

Client::~Client() = default;

const std::string& Client::root() const {
  return wire_->root();
}

const std::string& Client::query() const {
  return wire_->query();
}

Result<void> Client::Validate() const {
  return wire_->Validate();
}

std::vector<ChatResponse> Client::RunChatsLive(std::span<const ChatCall> calls,
                                               const RunHooks& hooks, std::stop_token stop) {
  std::vector<ChatResponse> out = wire_->RunChats(calls, hooks, std::move(stop));
  io_cpu_ns_ = wire_->IoThreadCpuNs();
  return out;
}

Result<HttpResponse> Client::GetLive(std::string_view path, std::chrono::milliseconds timeout) {
  return wire_->Get(path, timeout);
}

Result<HttpResponse> Client::PostLive(std::string_view path, std::string_view json_body,
                                      std::chrono::milliseconds timeout) {
  return wire_->Post(path, json_body, timeout);
}

}  // namespace sb::client
