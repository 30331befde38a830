// The simulator's event loop: one thread, epoll over non-blocking sockets, and one timerfd armed
// at the earliest absolute CLOCK_MONOTONIC deadline of all streams (timer slack 1 ns), so each
// decode step is written within microseconds of its schedule. POST bodies are parsed by a
// helper thread (a 50 MB image body takes tens of milliseconds to parse, which would otherwise
// delay every other stream); everything else runs on the loop thread.
#include "sim/sim_server.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "core/clock.h"
#include "sim/api.h"
#include "sim/chunks.h"
#include "sim/engine.h"
#include "sim/gzip.h"
#include "sim/hostile.h"
#include "sim/http.h"
#include "sim/metrics.h"
#include "sim/prefix_cache.h"

namespace sb::sim {
namespace {

std::int64_t NowNs() {
  return ToNanos(std::chrono::steady_clock::now());
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

constexpr std::uint64_t kListenTag = 1;
constexpr std::uint64_t kTimerTag = 2;
constexpr std::uint64_t kWakeTag = 3;
constexpr std::uint64_t kFirstConnId = 16;
constexpr std::size_t kReadChunk = 64 * 1024;
// Unread input above this while a response is in progress pauses reading (back-pressure).
constexpr std::size_t kMaxBufferedInput = kMaxBodyBytes + kMaxHeaderBytes + kReadChunk;
constexpr std::int64_t kDrainTimeoutNs = 2'000'000'000;  // lingering close after "close"
// Out of descriptors without a spare: the listener rests this long (a timer entry with drain set
// and id kListenTag resumes it).
constexpr std::int64_t kListenPauseNs = 100'000'000;

void CloseFd(int& fd) {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
}

Reply JsonReply(int status, std::string body) {
  Reply r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

std::string SysError(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

enum class PostKind { kChat, kTokenize, kDetokenize };

// Parses POST bodies off the loop thread; results come back through `notify_fd` (an eventfd).
class ParseWorker {
 public:
  struct Job {
    std::uint64_t conn_id = 0;
    PostKind kind = PostKind::kChat;
    std::string body;
  };

  struct Done {
    std::uint64_t conn_id = 0;
    PostKind kind = PostKind::kChat;
    std::variant<ChatRequest, Reply> result;
  };

  ParseWorker(const SimOptions& options, int notify_fd)
      : options_(options), notify_fd_(notify_fd), thread_([this] { Run(); }) {}

  ~ParseWorker() { Stop(); }

  void Submit(Job job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
  }

  std::vector<Done> TakeDone() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Done> out;
    out.swap(done_);
    return out;
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) {
      thread_.join();
    }
  }

 private:
  void Run() {
    Vocabulary vocabulary;  // owned by this thread
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
        if (stop_) {
          return;
        }
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      Done done{job.conn_id, job.kind, Reply{}};
      try {
        switch (job.kind) {
          case PostKind::kChat:
            done.result = ParseChatRequest(job.body, options_);
            break;
          case PostKind::kTokenize:
            done.result = Tokenize(job.body, options_, vocabulary);
            break;
          case PostKind::kDetokenize:
            done.result = Detokenize(job.body, options_, vocabulary);
            break;
        }
      } catch (const std::exception& e) {  // a bug: answer it rather than end the process
        done.result = ErrorReply(500, std::string("simulator error: ") + e.what());
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        done_.push_back(std::move(done));
      }
      const std::uint64_t one = 1;
      [[maybe_unused]] const ssize_t n = ::write(notify_fd_, &one, sizeof one);
    }
  }

  const SimOptions options_;
  const int notify_fd_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;    // guarded by mu_
  std::vector<Done> done_;  // guarded by mu_
  bool stop_ = false;       // guarded by mu_
  std::thread thread_;
};

struct Conn {
  std::uint64_t id = 0;
  int fd = -1;
  std::string in;
  RequestParser parser;
  std::string out;
  std::size_t out_off = 0;
  std::uint32_t interest = 0;  // current epoll events
  bool busy = false;           // a request is being answered (parse job or stream)
  bool keep_alive = true;      // of the request being answered
  bool http10 = false;
  bool accepts_gzip = false;  // of the request being answered
  std::uint64_t stream_id = 0;
  bool close_after_flush = false;
  bool peer_closed = false;
  bool read_paused = false;
  bool draining = false;   // response sent, write side shut; discarding input until EOF
  bool held_open = false;  // done_open: the answer was sent, the body is never ended
  bool in_try_process = false;
  std::int64_t recv_ns = 0;  // when the request being answered was complete

  bool OutputPending() const { return out_off < out.size(); }
};

struct Stream {
  std::uint64_t id = 0;
  std::uint64_t conn_id = 0;
  ChatRequest request;
  Plan plan;
  Rng rng{0};
  std::string chat_id;
  std::int64_t created = 0;
  std::optional<ChunkBuilder> chunks;  // streaming only
  std::unique_ptr<GzipStream> gzip;    // streaming with SimOptions::gzip to a gzip client
  bool chunked = true;
  bool running = false;  // admitted to the batch (else waiting)
  std::int64_t deadline = 0;
  int emitted = 0;
  bool fault_done = false;
  Truth truth;
  std::string reasoning_text;  // non-streaming: accumulated text
  std::string content_text;
  std::vector<SimToolCall> tool_calls;  // non-streaming: accumulated scripted tool calls
  std::vector<std::string> tool_ids;
};

struct TimerEntry {
  std::int64_t deadline;
  std::uint64_t id;  // stream id, or conn id when drain is set
  bool drain;

  bool operator>(const TimerEntry& o) const {
    return deadline != o.deadline ? deadline > o.deadline : id > o.id;
  }
};

}  // namespace

struct SimServer::Impl {
  explicit Impl(const SimOptions& o)
      : options(o), metrics(o.spec_tokens), spin_ns(static_cast<std::int64_t>(o.spin_us * 1e3)) {}

  ~Impl() {
    Shutdown();
    if (request_log_fd >= 0) {
      ::close(request_log_fd);
    }
  }

  Result<void> Open();
  void Shutdown();
  void Loop();

  // I/O
  void AcceptAll();
  // Out of descriptors (EMFILE/ENFILE): accept and close one pending connection with the spare
  // descriptor; false when none was pending or the spare is gone (then listening pauses).
  bool ShedOne();
  void PauseListening();
  void ResumeListening();
  void OnConnEvent(std::uint64_t id, std::uint32_t ready);
  void OnReadable(Conn& c);
  void Flush(Conn& c);
  bool Send(Conn& c, std::string_view data);  // false: the connection was closed
  void UpdateInterest(Conn& c);
  void CloseConn(std::uint64_t id, bool reset, bool client_gone);
  void StartDrain(Conn& c);

  Conn* FindConn(std::uint64_t id) {
    const auto it = conns.find(id);
    return it == conns.end() ? nullptr : it->second.get();
  }

  // Requests
  void TryProcess(std::uint64_t conn_id);
  void Dispatch(Conn& c, HttpRequest& req);
  void WriteReply(Conn& c, const Reply& reply);
  void FinishResponse(Conn& c);
  void OnWorkerDone();
  void StartChat(Conn& c, const ChatRequest& req);
  // A complete response with a Content-Length body, gzip-compressed when the options and the
  // request allow it (non-empty bodies only).
  std::string BodyResponse(const Conn& c, int status, std::string_view content_type,
                           std::string_view body, std::string extra_headers = {});
  std::string RetryAfterHeader() const;

  // Streams
  void Admit(Stream& s, std::int64_t start_ns);
  void AdmitFromQueue();
  void RunDueTimers();
  void OnStep(Stream& s);
  void EndStream(Stream& s, std::string_view finish_reason);
  void HoldOpen(Stream& s);  // done_open: the stream ends, its connection stays busy
  void DropStream(std::uint64_t stream_id, bool client_gone);
  void ArmTimer();

  void Push(std::int64_t deadline, std::uint64_t id, bool drain) {
    timers.push(TimerEntry{deadline, id, drain});
  }

  void PublishGauges() {
    metrics.Update([this](Counters& c) {
      c.running = running;
      c.waiting = waiting;
      c.max_running = std::max(c.max_running, running);
    });
  }

  SimOptions options;
  int request_log_fd = -1;  // SimOptions::request_log, opened for appending
  Metrics metrics;
  PrefixCache prefix_cache{
      static_cast<std::size_t>(options.prefix_cache_tokens / std::max(1, options.block_tokens))};
  int listen_fd = -1;
  int epoll_fd = -1;
  int timer_fd = -1;
  int wake_fd = -1;
  int spare_fd = -1;           // released to accept-and-close when out of file descriptors
  bool listen_paused = false;  // out of descriptors: the listener is not polled for a while
  int port = 0;
  std::string base_url;
  std::int64_t created_at = 0;
  std::atomic<bool> stop{false};
  std::unique_ptr<ParseWorker> worker;
  std::thread loop;
  std::mutex stop_mu;

  std::unordered_map<std::uint64_t, std::unique_ptr<Conn>> conns;
  std::unordered_map<std::uint64_t, std::unique_ptr<Stream>> streams;
  std::deque<std::uint64_t> wait_queue;
  std::priority_queue<TimerEntry, std::vector<TimerEntry>, std::greater<>> timers;
  std::int64_t armed_deadline = -1;
  std::int64_t spin_ns = 0;  // options.spin_us
  std::uint64_t next_conn_id = kFirstConnId;
  std::uint64_t next_stream_id = 1;
  std::uint64_t chat_count = 0;
  int running = 0;
  int waiting = 0;
  std::string frame;   // scratch: the bytes of one write
  std::string events;  // scratch: SSE events before chunk framing
  std::string reasoning_scratch;
  std::string content_scratch;
  std::string escaped_scratch;  // scripted answers: content_scratch JSON-escaped
  std::string tool_scratch;     // scripted tool-call deltas of one step (JSON array items)
  std::string gzip_scratch;     // compressed bytes of one write
};

// ---------------------------------------------------------------------------------------------
// Setup and teardown

Result<void> SimServer::Impl::Open() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port_str = std::to_string(options.port);
  if (const int rc = ::getaddrinfo(options.host.c_str(), port_str.c_str(), &hints, &res);
      rc != 0 || res == nullptr) {
    return MakeError(ErrorCode::kSetup,
                     "sim: cannot resolve host '" + options.host + "': " + ::gai_strerror(rc));
  }
  std::string last_error;
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    const int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = SysError("socket");
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 4096) != 0) {
      last_error = SysError("bind " + options.host + ":" + port_str);
      ::close(fd);
      continue;
    }
    listen_fd = fd;
    break;
  }
  ::freeaddrinfo(res);
  if (listen_fd < 0) {
    return MakeError(ErrorCode::kSetup, "sim: " + last_error);
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const bool v6 = addr.ss_family == AF_INET6;
  port = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                  : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  std::string host = options.host;
  if (host == "0.0.0.0") {
    host = "127.0.0.1";
  } else if (host == "::") {
    host = "::1";
  }
  if (host.find(':') != std::string::npos) {
    host = "[" + host + "]";
  }
  base_url = "http://" + host + ":" + std::to_string(port) + "/v1";

  epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  timer_fd = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (epoll_fd < 0 || timer_fd < 0 || wake_fd < 0) {
    return MakeError(ErrorCode::kSetup, SysError("sim: epoll/timerfd/eventfd"));
  }
  for (const auto& [fd, tag] : {std::pair{listen_fd, kListenTag}, std::pair{timer_fd, kTimerTag},
                                std::pair{wake_fd, kWakeTag}}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
      return MakeError(ErrorCode::kSetup, SysError("sim: epoll_ctl"));
    }
  }
  created_at = static_cast<std::int64_t>(std::time(nullptr));
  worker = std::make_unique<ParseWorker>(options, wake_fd);
  loop = std::thread([this] { Loop(); });
  return {};
}

void SimServer::Impl::Shutdown() {
  std::lock_guard<std::mutex> lock(stop_mu);
  stop.store(true);
  if (wake_fd >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd, &one, sizeof one);
  }
  if (loop.joinable()) {
    loop.join();
  }
  if (worker) {
    worker->Stop();
    worker.reset();
  }
  for (auto& [id, c] : conns) {
    CloseFd(c->fd);
  }
  conns.clear();
  streams.clear();
  CloseFd(listen_fd);
  CloseFd(timer_fd);
  CloseFd(wake_fd);
  CloseFd(spare_fd);
  CloseFd(epoll_fd);
}

void SimServer::Impl::Loop() {
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // wake within ~µs of each deadline
  std::vector<epoll_event> evs(256);
  while (!stop.load(std::memory_order_relaxed)) {
    ArmTimer();
    const int n = ::epoll_wait(epoll_fd, evs.data(), static_cast<int>(evs.size()), -1);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    RunDueTimers();
    for (int i = 0; i < n; ++i) {
      const std::uint64_t tag = evs[i].data.u64;
      if (tag == kListenTag) {
        AcceptAll();
      } else if (tag == kTimerTag) {
        std::uint64_t expirations = 0;
        [[maybe_unused]] const ssize_t r = ::read(timer_fd, &expirations, sizeof expirations);
        armed_deadline = -1;
      } else if (tag == kWakeTag) {
        std::uint64_t count = 0;
        [[maybe_unused]] const ssize_t r = ::read(wake_fd, &count, sizeof count);
        if (stop.load()) {
          return;
        }
        OnWorkerDone();
      } else {
        OnConnEvent(tag, evs[i].events);
      }
    }
    RunDueTimers();
  }
}

// ---------------------------------------------------------------------------------------------
// Connections

void SimServer::Impl::AcceptAll() {
  // A bounded batch: the other connections' events (a peer that closed, a request) are served
  // between batches, and Stop is heard.
  for (int budget = 256; budget > 0; --budget) {
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) {
        continue;
      }
      if (errno == EMFILE || errno == ENFILE) {
        // accept reports EMFILE before it looks at the queue: it says nothing about pending
        // connections, so one is shed at most per pass, and none pending ends the batch.
        if (ShedOne()) {
          continue;
        }
        return;
      }
      return;  // EAGAIN, or an error to retry on the next readiness
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Conn>();
    c->id = next_conn_id++;
    c->fd = fd;
    c->interest = EPOLLIN | EPOLLRDHUP;
    epoll_event ev{};
    ev.events = c->interest;
    ev.data.u64 = c->id;
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
      ::close(fd);
      continue;
    }
    conns.emplace(c->id, std::move(c));
    metrics.Update([](Counters& k) { ++k.connections; });
  }
}

bool SimServer::Impl::ShedOne() {
  if (spare_fd < 0) {
    spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  if (spare_fd < 0) {
    PauseListening();  // not even the spare: wait for descriptors to come back
    return false;
  }
  CloseFd(spare_fd);
  // The client hears a close instead of waiting in the backlog of a server that cannot serve it.
  const int victim = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (victim >= 0) {
    ::close(victim);
  }
  spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (spare_fd < 0) {
    PauseListening();  // another thread took the descriptor
    return false;
  }
  return victim >= 0;
}

void SimServer::Impl::PauseListening() {
  if (listen_paused) {
    return;
  }
  epoll_event ev{};
  ev.events = 0;
  ev.data.u64 = kListenTag;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, listen_fd, &ev);
  listen_paused = true;
  Push(NowNs() + kListenPauseNs, kListenTag, true);
}

void SimServer::Impl::ResumeListening() {
  if (!listen_paused) {
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenTag;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, listen_fd, &ev);
  listen_paused = false;
}

void SimServer::Impl::UpdateInterest(Conn& c) {
  std::uint32_t want = 0;
  if (!c.peer_closed && !c.read_paused) {
    want |= EPOLLIN | EPOLLRDHUP;
  }
  if (c.OutputPending()) {
    want |= EPOLLOUT;
  }
  if (want == c.interest) {
    return;
  }
  c.interest = want;
  epoll_event ev{};
  ev.events = want;
  ev.data.u64 = c.id;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &ev);
}

void SimServer::Impl::OnConnEvent(std::uint64_t id, std::uint32_t ready) {
  Conn* c = FindConn(id);
  if (c == nullptr) {
    return;  // closed earlier in this batch
  }
  if ((ready & EPOLLERR) != 0) {
    CloseConn(id, false, true);
    return;
  }
  if ((ready & EPOLLOUT) != 0) {
    Flush(*c);
    c = FindConn(id);
    if (c == nullptr) {
      return;
    }
  }
  if ((ready & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) != 0) {
    OnReadable(*c);
  }
}

void SimServer::Impl::OnReadable(Conn& c) {
  const std::uint64_t id = c.id;
  char buf[kReadChunk];
  bool eof = false;
  for (;;) {
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n > 0) {
      if (!c.draining) {
        c.in.append(buf, static_cast<std::size_t>(n));
      }
      if (c.in.size() > kMaxBufferedInput) {
        c.read_paused = true;
        UpdateInterest(c);
        break;
      }
      if (static_cast<std::size_t>(n) < sizeof buf) {
        break;
      }
      continue;
    }
    if (n == 0) {
      eof = true;
      break;
    }
    if (errno == EINTR) {
      continue;
    }
    if (errno == EAGAIN) {
      break;
    }
    CloseConn(id, false, true);  // ECONNRESET and friends
    return;
  }
  if (c.draining) {
    if (eof) {
      CloseConn(id, false, false);
    }
    return;
  }
  if (eof) {
    // The client shut its side. A request in progress can no longer be delivered reliably:
    // treat it as a disconnect (as uvicorn does). Requests already buffered that can be
    // answered right away still are, then the connection closes.
    c.peer_closed = true;
    if (c.busy) {
      CloseConn(id, false, true);
      return;
    }
    UpdateInterest(c);
  }
  TryProcess(id);
  if (Conn* still = FindConn(id); still != nullptr && still->peer_closed && !still->busy) {
    if (still->OutputPending()) {
      still->close_after_flush = true;
    } else {
      CloseConn(id, false, false);
    }
  }
}

bool SimServer::Impl::Send(Conn& c, std::string_view data) {
  if (c.draining || data.empty()) {
    return true;
  }
  if (c.OutputPending()) {
    c.out.append(data);
    return true;
  }
  c.out.clear();
  c.out_off = 0;
  std::size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(c.fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && errno == EAGAIN) {
      break;
    }
    CloseConn(c.id, false, true);  // EPIPE, ECONNRESET: the client went away
    return false;
  }
  if (off < data.size()) {
    c.out.assign(data.substr(off));
    UpdateInterest(c);
  }
  return true;
}

void SimServer::Impl::Flush(Conn& c) {
  while (c.OutputPending()) {
    const ssize_t n =
        ::send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
    if (n > 0) {
      c.out_off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && errno == EAGAIN) {
      // Reclaim the sent prefix now and then so the buffer does not grow without bound.
      if (c.out_off > (1U << 20) && c.out_off * 2 > c.out.size()) {
        c.out.erase(0, c.out_off);
        c.out_off = 0;
      }
      return;
    }
    CloseConn(c.id, false, true);
    return;
  }
  c.out.clear();
  c.out_off = 0;
  if (c.out.capacity() > (std::size_t{1} << 20)) {
    std::string().swap(c.out);
  }
  UpdateInterest(c);
  if (c.close_after_flush && !c.draining) {
    StartDrain(c);
  }
}

void SimServer::Impl::StartDrain(Conn& c) {
  // A lingering close: shut our side, read (and discard) until the client closes, so unread
  // request bytes cannot turn our FIN into an RST that destroys the response in flight.
  if (c.peer_closed) {
    CloseConn(c.id, false, false);
    return;
  }
  ::shutdown(c.fd, SHUT_WR);
  c.draining = true;
  c.in.clear();
  c.read_paused = false;
  UpdateInterest(c);
  Push(NowNs() + kDrainTimeoutNs, c.id, true);
}

void SimServer::Impl::CloseConn(std::uint64_t id, bool reset, bool client_gone) {
  const auto it = conns.find(id);
  if (it == conns.end()) {
    return;
  }
  std::unique_ptr<Conn> c = std::move(it->second);
  conns.erase(it);
  if (reset) {
    const linger lg{1, 0};  // close() now sends RST
    ::setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  }
  ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, nullptr);
  CloseFd(c->fd);
  if (c->stream_id != 0) {
    DropStream(c->stream_id, client_gone);
  }
}

// ---------------------------------------------------------------------------------------------
// Requests

void SimServer::Impl::TryProcess(std::uint64_t conn_id) {
  Conn* c = FindConn(conn_id);
  if (c == nullptr || c->in_try_process) {
    return;
  }
  c->in_try_process = true;
  while (c != nullptr && !c->busy && !c->close_after_flush && !c->draining) {
    ParseResult r = c->parser.Parse(c->in);
    if (r.kind == ParseResult::Kind::kIncomplete) {
      break;
    }
    if (r.kind == ParseResult::Kind::kContinue) {
      if (!Send(*c, "HTTP/1.1 100 Continue\r\n\r\n")) {
        return;
      }
      break;
    }
    if (r.kind == ParseResult::Kind::kError) {
      metrics.Update([](Counters& k) { ++k.requests; });
      const Reply reply = ErrorReply(r.error_status, r.error_message);
      c->close_after_flush = true;
      if (!Send(*c, Response(reply.status, reply.content_type, reply.body, false))) {
        return;
      }
      if (!c->OutputPending()) {
        StartDrain(*c);
      }
      c = FindConn(conn_id);
      break;
    }
    metrics.Update([](Counters& k) { ++k.requests; });
    if (c->in.empty() && c->in.capacity() > (std::size_t{1} << 20)) {
      std::string().swap(c->in);  // give back the memory of a large body
    }
    c->busy = true;
    c->keep_alive = r.request.keep_alive;
    c->http10 = r.request.http10;
    c->accepts_gzip = r.request.accepts_gzip;
    c->recv_ns = NowNs();
    Dispatch(*c, r.request);
    c = FindConn(conn_id);
  }
  if (c != nullptr) {
    c->in_try_process = false;
    if (c->read_paused && c->in.size() <= kMaxBufferedInput) {
      c->read_paused = false;
      UpdateInterest(*c);
    }
  }
}

void SimServer::Impl::Dispatch(Conn& c, HttpRequest& req) {
  std::string_view path = req.path;
  if (path == "/v1") {
    path = "/";
  } else if (path.starts_with("/v1/")) {
    path.remove_prefix(3);
  }
  const bool get = req.method == "GET";
  const bool post = req.method == "POST";
  Reply reply;
  if (path == "/health") {
    if (get) {
      reply.content_type.clear();
    } else {
      reply = JsonReply(405, R"({"detail":"Method Not Allowed"})");
    }
  } else if (path == "/models") {
    reply = get ? JsonReply(200, ModelsBody(options, created_at))
                : JsonReply(405, R"({"detail":"Method Not Allowed"})");
  } else if (path == "/version") {
    reply = get ? JsonReply(200, std::string(R"({"version":")") + std::string(kServerName) + "\"}")
                : JsonReply(405, R"({"detail":"Method Not Allowed"})");
  } else if (path == "/metrics") {
    if (get) {
      reply.body = RenderPrometheus(metrics.Snapshot(), options);
      reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
    } else {
      reply = JsonReply(405, R"({"detail":"Method Not Allowed"})");
    }
  } else if (path == "/chat/completions" || path == "/tokenize" || path == "/detokenize") {
    if (!post) {
      reply = JsonReply(405, R"({"detail":"Method Not Allowed"})");
    } else if (c.peer_closed && path == "/chat/completions") {
      CloseConn(c.id, false, true);  // nobody left to stream to
      return;
    } else {
      const PostKind kind = path == "/chat/completions" ? PostKind::kChat
                            : path == "/tokenize"       ? PostKind::kTokenize
                                                        : PostKind::kDetokenize;
      worker->Submit(ParseWorker::Job{c.id, kind, std::move(req.body)});
      return;  // answered in OnWorkerDone
    }
  } else {
    reply = JsonReply(404, R"({"detail":"Not Found"})");
  }
  WriteReply(c, reply);
}

std::string SimServer::Impl::BodyResponse(const Conn& c, int status, std::string_view content_type,
                                          std::string_view body, std::string extra_headers) {
  if (!options.gzip || !c.accepts_gzip || body.empty()) {
    return Response(status, content_type, body, c.keep_alive, extra_headers);
  }
  metrics.Update([](Counters& k) { ++k.compressed_responses; });
  extra_headers += "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n";
  return Response(status, content_type, Gzip(body), c.keep_alive, extra_headers);
}

std::string SimServer::Impl::RetryAfterHeader() const {
  // Whole seconds as RFC 9110 says; a fraction (for fast tests) as a short decimal.
  const double s = options.retry_after_s;
  std::string value;
  if (s == std::floor(s)) {
    value = std::to_string(static_cast<long long>(s));
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", s);
    value = buf;
    while (value.back() == '0') {
      value.pop_back();
    }
  }
  return "Retry-After: " + value + "\r\n";
}

void SimServer::Impl::WriteReply(Conn& c, const Reply& reply) {
  const std::uint64_t id = c.id;
  if (!Send(c,
            BodyResponse(c, reply.status, reply.content_type, reply.body, reply.extra_headers))) {
    return;
  }
  if (Conn* still = FindConn(id)) {
    FinishResponse(*still);
  }
}

void SimServer::Impl::FinishResponse(Conn& c) {
  if (c.held_open) {
    c.stream_id = 0;
    return;  // busy until the client closes
  }
  c.busy = false;
  c.stream_id = 0;
  if (!c.keep_alive) {
    c.close_after_flush = true;
    if (!c.OutputPending()) {
      StartDrain(c);
    }
    return;
  }
  if (!c.in_try_process) {
    TryProcess(c.id);
  }
}

void SimServer::Impl::OnWorkerDone() {
  for (auto& done : worker->TakeDone()) {
    Conn* c = FindConn(done.conn_id);
    if (c == nullptr) {
      continue;  // the client left while its body was parsed
    }
    if (auto* reply = std::get_if<Reply>(&done.result)) {
      WriteReply(*c, *reply);
    } else {
      StartChat(*c, std::get<ChatRequest>(done.result));
    }
  }
}

void SimServer::Impl::StartChat(Conn& c, const ChatRequest& req) {
  const std::uint64_t number = ++chat_count;
  if (request_log_fd >= 0) {
    char hash[24];
    std::snprintf(hash, sizeof hash, "%016llx\t", static_cast<unsigned long long>(req.text_hash));
    const std::string line = hash + req.log_text + "\n";
    [[maybe_unused]] ssize_t n = ::write(request_log_fd, line.data(), line.size());
  }
  Rng rng(Mix64(options.seed ^ Mix64(number)));
  const Plan plan = PlanChat(req, options, rng);
  metrics.Update([&plan](Counters& k) {
    ++k.chat_requests;
    if (plan.fault != Fault::kNone) {
      ++k.faults[static_cast<int>(plan.fault)];
    }
  });
  if (plan.fault == Fault::kHttp500) {
    WriteReply(c, ErrorReply(500, "simulated internal error"));
    return;
  }
  if (plan.fault == Fault::kHttp429 || plan.fault == Fault::kHttp503) {
    Reply r = plan.fault == Fault::kHttp429
                  ? ErrorReply(429, "simulated rate limit: too many requests")
                  : ErrorReply(503, "simulated overload: service unavailable");
    r.extra_headers = RetryAfterHeader();
    WriteReply(c, r);
    return;
  }
  if (plan.fault == Fault::kDoneOnly || plan.fault == Fault::kHugeHeader) {
    WriteReply(c, HostileReply(plan.fault));
    return;
  }
  auto s = std::make_unique<Stream>();
  s->id = next_stream_id++;
  s->conn_id = c.id;
  s->request = req;
  s->plan = plan;
  if (plan.fault == Fault::kEndless) {  // ignores max_tokens (and the context window)
    s->plan.completion_tokens =
        req.stream ? kEndlessTokens : 16 * std::min(plan.completion_tokens, 1 << 16);
    s->plan.finish_reason = "length";
  }
  s->rng = rng;
  s->chat_id = RequestId(options.seed, number);
  s->created = static_cast<std::int64_t>(std::time(nullptr));
  s->chunked = !c.http10;
  s->truth.recv_ns = c.recv_ns;
  s->truth.prompt_tokens = req.prompt_tokens;
  const bool stream = req.stream;
  std::string stream_headers = "Cache-Control: no-cache\r\n";
  if (stream) {
    s->chunks.emplace(s->chat_id, s->created, options.model, options.reasoning_field,
                      req.continuous_usage, req.prompt_tokens);
    if (options.gzip && c.accepts_gzip) {
      s->gzip = std::make_unique<GzipStream>();
      stream_headers += "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n";
      metrics.Update([](Counters& k) { ++k.compressed_responses; });
    }
    if (c.http10) {
      c.keep_alive = false;
    }
  }
  const bool chunked = s->chunked;
  c.stream_id = s->id;
  Stream& ref = *s;
  streams.emplace(s->id, std::move(s));
  if (running < options.max_batch && wait_queue.empty()) {
    Admit(ref, ref.truth.recv_ns);
  } else {
    wait_queue.push_back(ref.id);
    ++waiting;
  }
  PublishGauges();
  if (stream) {
    // Headers go out at once (as vLLM's do), before the first token; if the client is gone
    // already, Send closes the connection and drops the stream.
    Send(c, ResponseHead(200, "text/event-stream; charset=utf-8",
                         chunked ? kChunkedBody : kUntilCloseBody, c.keep_alive, stream_headers));
  }
}

// ---------------------------------------------------------------------------------------------
// Streams

void SimServer::Impl::Admit(Stream& s, std::int64_t start_ns) {
  s.running = true;
  ++running;
  s.truth.start_ns = start_ns;
  int cached = 0;
  if (options.prefix_cache_tokens > 0) {
    cached =
        static_cast<int>(prefix_cache.LookupAndInsert(s.request.block_keys)) * options.block_tokens;
    s.truth.cached_tokens = cached;
    if (s.chunks) {
      s.chunks->set_cached_tokens(cached);
    }
    metrics.Update([&](Counters& k) {
      k.prefix_cache_queries += static_cast<std::uint64_t>(s.request.prompt_tokens);
      k.prefix_cache_hits += static_cast<std::uint64_t>(cached);
    });
  }
  s.deadline = start_ns + FirstTokenDelayNs(options, s.request.prompt_tokens - cached);
  if (s.plan.fault == Fault::kStall && s.plan.fault_after_tokens == 0) {
    s.deadline += static_cast<std::int64_t>(options.stall_ms * 1e6);
    s.fault_done = true;
  }
  Push(s.deadline, s.id, false);
}

void SimServer::Impl::AdmitFromQueue() {
  const std::int64_t now = NowNs();
  while (running < options.max_batch && !wait_queue.empty()) {
    const std::uint64_t id = wait_queue.front();
    wait_queue.pop_front();
    const auto it = streams.find(id);
    if (it == streams.end() || it->second->running) {
      continue;  // dropped while waiting (already uncounted)
    }
    --waiting;
    Admit(*it->second, now);
  }
  PublishGauges();
}

void SimServer::Impl::ArmTimer() {
  while (!timers.empty()) {
    const TimerEntry& top = timers.top();
    // Drop stale entries so the timer is not armed for nothing.
    if (top.drain) {
      if (top.id == kListenTag ? listen_paused : FindConn(top.id) != nullptr) {
        break;
      }
    } else {
      const auto it = streams.find(top.id);
      if (it != streams.end() && it->second->running && it->second->deadline == top.deadline) {
        break;
      }
    }
    timers.pop();
  }
  const std::int64_t want = timers.empty() ? 0 : timers.top().deadline;
  if (want == armed_deadline || (want == 0 && armed_deadline < 0)) {
    return;
  }
  // Wake spin_ns early; RunDueTimers busy-waits the rest (timer wake-ups run late by tens of
  // microseconds on virtual machines).
  const std::int64_t wake = want == 0 ? 0 : std::max<std::int64_t>(1, want - spin_ns);
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(wake / 1'000'000'000);
  spec.it_value.tv_nsec = static_cast<long>(wake % 1'000'000'000);
  ::timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &spec, nullptr);  // 0 disarms
  armed_deadline = want == 0 ? -1 : want;
}

void SimServer::Impl::RunDueTimers() {
  // A bounded batch, so streams with itl_ms 0 cannot starve the sockets: what is left is due
  // already and fires again right after the next epoll_wait.
  int budget = 4096;
  std::int64_t now = NowNs();
  while (!timers.empty() && budget-- > 0) {
    const std::int64_t due = timers.top().deadline;
    if (due > now) {
      if (due - now > spin_ns) {
        break;
      }
      while ((now = NowNs()) < due) {
        CpuRelax();
      }
    }
    const TimerEntry e = timers.top();
    timers.pop();
    if (e.drain && e.id == kListenTag) {
      ResumeListening();
      continue;
    }
    if (e.drain) {
      if (Conn* c = FindConn(e.id); c != nullptr && c->draining) {
        CloseConn(e.id, false, false);
      }
      continue;
    }
    const auto it = streams.find(e.id);
    if (it == streams.end() || !it->second->running || it->second->deadline != e.deadline) {
      continue;
    }
    OnStep(*it->second);
    now = NowNs();
  }
}

void SimServer::Impl::OnStep(Stream& s) {
  Conn* c = FindConn(s.conn_id);
  if (c == nullptr) {
    DropStream(s.id, true);
    return;
  }
  const int total = s.plan.completion_tokens;
  int tokens = 1;
  int accepted = -1;
  if (s.truth.steps > 0 && options.spec_tokens > 0) {
    accepted = DraftAccepted(options, s.rng);
    tokens = 1 + accepted;
    ++s.truth.drafts;
    s.truth.draft_tokens += options.spec_tokens;
    s.truth.accepted_tokens += accepted;
  }
  tokens = std::min(tokens, total - s.emitted);
  const int begin = s.emitted;
  const int end = begin + tokens;
  const int reasoning_end = s.plan.reasoning_tokens;
  ++s.truth.steps;

  // Text of this step, split at the reasoning/answer boundary; scripted tool calls follow the
  // answer words.
  reasoning_scratch.clear();
  content_scratch.clear();
  tool_scratch.clear();
  const std::vector<std::string>& words = s.request.answer_words;
  const auto& tools = s.request.tool_tokens;
  for (int i = begin; i < end; ++i) {
    if (i < reasoning_end) {
      reasoning_scratch += TokenText(s.plan.text_seed, i, s.request.loop);
      continue;
    }
    const std::size_t answer_index = static_cast<std::size_t>(i - reasoning_end);
    if (answer_index < words.size()) {
      content_scratch += words[answer_index];
    } else if (answer_index - words.size() < tools.size()) {
      const ChatRequest::ToolToken& t = tools[answer_index - words.size()];
      if (!tool_scratch.empty()) {
        tool_scratch += ',';
      }
      tool_scratch += "{\"index\":" + std::to_string(t.call);
      if (!t.name.empty()) {
        tool_scratch += ",\"id\":";
        AppendJsonString(tool_scratch, t.id);
        tool_scratch += ",\"type\":\"function\",\"function\":{\"name\":";
        AppendJsonString(tool_scratch, t.name);
        tool_scratch += ",\"arguments\":\"\"}}";
        if (!s.chunks) {
          s.tool_calls.push_back({t.name, ""});
          s.tool_ids.push_back(t.id);
        }
      } else {
        tool_scratch += ",\"function\":{\"arguments\":";
        AppendJsonString(tool_scratch, t.arguments);
        tool_scratch += "}}";
        if (!s.chunks && !s.tool_calls.empty()) {
          s.tool_calls.back().arguments += t.arguments;
        }
      }
    } else {
      content_scratch += TokenText(s.plan.text_seed, i, s.request.loop);
    }
  }
  s.emitted = end;
  s.truth.completion_tokens = end;
  s.truth.reasoning_tokens = std::min(end, reasoning_end);

  const bool fault_now =
      s.plan.fault != Fault::kNone && !s.fault_done && s.emitted >= s.plan.fault_after_tokens;
  // giant / badutf8: one extra content event before this step's own.
  std::string fault_text;
  if (fault_now && s.plan.fault == Fault::kGiant) {
    fault_text.assign(options.giant_event_bytes, 'x');
  } else if (fault_now && s.plan.fault == Fault::kBadUtf8) {
    fault_text.assign(kBadUtf8Text);
  }
  // Reset and malformed cut the stream before it could finish normally.
  const bool cut =
      fault_now && (s.plan.fault == Fault::kReset || s.plan.fault == Fault::kMalformed);
  const bool last = s.emitted >= total && !cut;

  // The write time is read just before the bytes are built and handed to the kernel; the sim
  // object of the final chunk carries it.
  const std::int64_t write_ns = NowNs();
  const std::int64_t lag = std::max<std::int64_t>(0, write_ns - s.deadline);
  if (s.truth.steps == 1) {
    s.truth.first_token_ns = write_ns;
  }
  s.truth.last_token_ns = write_ns;
  s.truth.max_emit_lag_ns = std::max(s.truth.max_emit_lag_ns, lag);
  const int prompt = s.request.prompt_tokens;
  const int spec_k = options.spec_tokens;
  metrics.Update([&](Counters& k) {
    if (s.truth.steps == 1) {
      k.prompt_tokens += static_cast<std::uint64_t>(prompt);
    }
    k.generation_tokens += static_cast<std::uint64_t>(tokens);
    ++k.emits;
    k.emit_lag_sum_ns += lag;
    k.emit_lag_max_ns = std::max(k.emit_lag_max_ns, lag);
    if (accepted >= 0) {
      ++k.drafts;
      k.draft_tokens += static_cast<std::uint64_t>(spec_k);
      k.accepted_tokens += static_cast<std::uint64_t>(accepted);
      for (int i = 0; i < accepted; ++i) {
        ++k.accepted_per_pos[static_cast<std::size_t>(i)];
      }
    }
  });

  const std::uint64_t stream_id = s.id;
  if (s.chunks) {
    events.clear();
    if (s.truth.steps == 1) {
      s.chunks->AppendRole(events);
    }
    if (!fault_text.empty()) {  // counts no tokens: usage (if continuous) as before this step
      s.chunks->AppendDelta(events, {}, fault_text, {}, begin, std::min(begin, reasoning_end), {});
      std::string().swap(fault_text);
    }
    const bool usage_chunk = last && s.request.include_usage;
    const std::string sim_json = last && !usage_chunk ? TruthJson(s.truth) : std::string();
    const long long usage_tokens =
        last && s.plan.fault == Fault::kHugeUsage ? kHugeUsageTokens : s.truth.completion_tokens;
    std::string_view content = content_scratch;
    if (s.request.scripted) {
      escaped_scratch.clear();
      AppendJsonString(escaped_scratch, content_scratch);
      content = std::string_view(escaped_scratch).substr(1, escaped_scratch.size() - 2);
    }
    s.chunks->AppendDelta(events, reasoning_scratch, content,
                          last ? s.plan.finish_reason : std::string_view(), usage_tokens,
                          s.truth.reasoning_tokens, sim_json, tool_scratch);
    if (usage_chunk) {
      s.chunks->AppendUsageChunk(events, usage_tokens, s.truth.reasoning_tokens,
                                 TruthJson(s.truth));
    }
    if (last) {
      ChunkBuilder::AppendDone(events);
    }
    if (cut && s.plan.fault == Fault::kMalformed) {
      ChunkBuilder::AppendMalformed(events);
    }
    const bool body_ends = last || (cut && s.plan.fault == Fault::kMalformed);
    if (s.gzip) {
      gzip_scratch.clear();
      s.gzip->Write(events, body_ends, gzip_scratch);
      events.swap(gzip_scratch);
    }
    // done_open: [DONE] is sent, but the body never ends (no last chunk, no close).
    const bool hold_open = last && s.plan.fault == Fault::kDoneOpen;
    frame.clear();
    if (s.chunked) {
      AppendChunk(frame, events);
      if ((last && !hold_open) || (cut && s.plan.fault == Fault::kMalformed)) {
        frame += kLastChunk;
      }
    } else {
      frame.swap(events);
    }
    if (!Send(*c, frame)) {
      return;  // the client went away; the stream was dropped
    }
    if (hold_open) {
      HoldOpen(s);
      return;
    }
  } else {
    s.reasoning_text += reasoning_scratch;
    // The JSON serialiser would repair invalid UTF-8: badutf8 goes in as a placeholder that is
    // swapped for the raw bytes afterwards.
    constexpr std::string_view kBadUtf8Placeholder = "@@sim-badutf8@@";
    s.content_text += fault_now && s.plan.fault == Fault::kBadUtf8
                          ? std::string(kBadUtf8Placeholder)
                          : fault_text;
    s.content_text += content_scratch;
    if (last || (cut && s.plan.fault == Fault::kMalformed)) {
      std::string body =
          cut ? std::string("{\"choices\": [")
              : CompletionBody(s.chat_id, s.created, options, s.reasoning_text, s.content_text,
                               s.plan.finish_reason, s.truth, s.tool_calls, s.tool_ids);
      if (const std::size_t at = body.find(kBadUtf8Placeholder); at != std::string::npos) {
        body.replace(at, kBadUtf8Placeholder.size(), kBadUtf8Text);
      }
      if (s.plan.fault == Fault::kHugeUsage) {
        ReplaceCompletionTokens(body, kHugeUsageTokens);
      }
      if (!Send(*c, BodyResponse(*c, 200, "application/json", body))) {
        return;
      }
    }
  }

  if (fault_now) {
    s.fault_done = true;
    switch (s.plan.fault) {
      case Fault::kReset:
        CloseConn(s.conn_id, true, false);  // RST; drops the stream
        metrics.Update([](Counters& k) { ++k.success_abort; });
        return;
      case Fault::kMalformed:
        EndStream(s, "abort");
        return;
      case Fault::kStall:
        if (!last) {
          s.deadline += static_cast<std::int64_t>(options.stall_ms * 1e6);
        }
        break;
      default:
        break;
    }
  }
  if (last) {
    EndStream(s, s.plan.finish_reason);
    return;
  }
  // Next decode step: its duration uses the batch size now (absolute schedule, no drift). The
  // schedule is anchored at the first token's actual write: a late first token (a busy machine)
  // must not make the following steps catch up, which would inflate decode speed excl. TTFT.
  if (s.truth.steps == 1) {
    s.deadline = std::max(s.deadline, write_ns);
  }
  s.deadline += StepNs(options, running, s.rng);
  Push(s.deadline, stream_id, false);
}

void SimServer::Impl::EndStream(Stream& s, std::string_view finish_reason) {
  metrics.Update([finish_reason](Counters& k) {
    if (finish_reason == "stop") {
      ++k.success_stop;
    } else if (finish_reason == "length") {
      ++k.success_length;
    } else {
      ++k.success_abort;
    }
  });
  const std::uint64_t conn_id = s.conn_id;
  const std::uint64_t stream_id = s.id;
  s.running = false;
  --running;
  streams.erase(stream_id);  // s is gone from here on
  AdmitFromQueue();
  if (Conn* c = FindConn(conn_id)) {
    FinishResponse(*c);
  }
}

void SimServer::Impl::HoldOpen(Stream& s) {
  if (Conn* c = FindConn(s.conn_id)) {
    c->held_open = true;
  }
  EndStream(s, s.plan.finish_reason);
}

void SimServer::Impl::DropStream(std::uint64_t stream_id, bool client_gone) {
  const auto it = streams.find(stream_id);
  if (it == streams.end()) {
    return;
  }
  const bool was_running = it->second->running;
  if (was_running) {
    --running;
  } else {
    --waiting;
  }
  streams.erase(it);
  metrics.Update([client_gone](Counters& k) {
    if (client_gone) {
      ++k.disconnects;
      ++k.success_abort;
    }
  });
  AdmitFromQueue();
}

// ---------------------------------------------------------------------------------------------
// Public API

SimServer::SimServer() = default;

SimServer::~SimServer() {
  Stop();
}

Result<std::unique_ptr<SimServer>> SimServer::Start(const SimOptions& options) {
  if (auto valid = Validate(options); !valid) {
    return valid.error().WithContext("sim options");
  }
  std::unique_ptr<SimServer> server(new SimServer());
  server->impl_ = std::make_unique<Impl>(options);
  if (!options.request_log.empty()) {
    server->impl_->request_log_fd =
        ::open(options.request_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (server->impl_->request_log_fd < 0) {
      return MakeError(ErrorCode::kIo, "cannot open --request-log " + options.request_log + ": " +
                                           std::strerror(errno));
    }
  }
  if (auto opened = server->impl_->Open(); !opened) {
    server->impl_->Shutdown();
    return opened.error();
  }
  return server;
}

int SimServer::port() const {
  return impl_->port;
}

std::string SimServer::base_url() const {
  return impl_->base_url;
}

SimServer::Stats SimServer::stats() const {
  const Counters c = impl_->metrics.Snapshot();
  Stats s;
  s.requests = c.requests;
  s.chat_requests = c.chat_requests;
  s.running = c.running;
  s.waiting = c.waiting;
  s.streams_active = c.running + c.waiting;
  s.max_concurrent = c.max_running;
  s.emits = c.emits;
  s.emit_lag_max_us = static_cast<double>(c.emit_lag_max_ns) / 1e3;
  s.emit_lag_mean_us =
      c.emits == 0 ? 0.0
                   : static_cast<double>(c.emit_lag_sum_ns) / static_cast<double>(c.emits) / 1e3;
  for (const std::uint64_t f : c.faults) {
    s.faults_injected += f;
  }
  s.disconnects = c.disconnects;
  s.compressed_responses = c.compressed_responses;
  s.connections = c.connections;
  return s;
}

void SimServer::Stop() {
  if (impl_) {
    impl_->Shutdown();
  }
}

}  // namespace sb::sim
