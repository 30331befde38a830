// Private to the simulator: the state of one event loop (Loop) and what it holds (connections,
// streams, timers, the body-parsing helper thread), and what every loop shares (Shared: the
// options, the counters, the prefix cache and the batch). Used by sim_server.cpp (set-up, the
// loop, connections, the public API) and sim_streams.cpp (requests, admission, decode steps).
// SimOptions::threads loops each accept on their own SO_REUSEPORT socket; a stream lives on the
// loop that accepted its connection; the batch, the prefix cache and the counters are shared.
#pragma once

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
#include <unordered_set>
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
#include "sim/sim_server.h"

namespace sb::sim {

namespace detail {

inline std::int64_t NowNs() {
  return ToNanos(std::chrono::steady_clock::now());
}

// CLOCK_MONOTONIC ns of a CLOCK_REALTIME time (a kernel receive timestamp) a moment ago.
inline std::int64_t MonotonicOf(const timespec& realtime) {
  timespec real_now{};
  ::clock_gettime(CLOCK_REALTIME, &real_now);
  const std::int64_t mono_now = NowNs();
  const std::int64_t age =
      (static_cast<std::int64_t>(real_now.tv_sec) - realtime.tv_sec) * 1'000'000'000 +
      (real_now.tv_nsec - realtime.tv_nsec);
  return mono_now - age;
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

inline void CloseFd(int& fd) {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
}

inline Reply JsonReply(int status, std::string body) {
  Reply r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

inline std::string SysError(const std::string& what) {
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
  // The kernel's receive time (CLOCK_MONOTONIC ns) of the data of the latest read, and how long
  // the request being answered waited before the loop read it (Truth::read_lag_ns).
  std::int64_t last_rx_ns = 0;
  std::int64_t read_lag_ns = -1;

  bool OutputPending() const { return out_off < out.size(); }
};

// One decode step's shape (OnStep): where its tokens begin, whether a fault fires now, and
// whether the stream is cut or ends with it.
struct StepShape {
  int begin = 0;
  int reasoning_end = 0;
  bool fault_now = false;
  bool cut = false;        // reset or malformed: the stream stops short
  bool last = false;       // the last step of a stream that finishes normally
  std::string fault_text;  // giant / badutf8: an extra content event before the step's own
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

struct Loop;

// The engine's batch, shared by every loop: at most max_batch streams run (prefill or decode),
// the others wait in one FIFO in arrival order, whichever loop they arrived on. A stream is named
// by its loop and its id there. Thread safety: every member may be called from any loop.
class Batch {
 public:
  struct Waiter {
    Loop* loop = nullptr;
    std::uint64_t id = 0;
  };

  explicit Batch(int max_batch) : max_batch_(max_batch) {}

  // A new stream: true when it runs now (a slot is free and nobody waits before it); else it
  // waits, and a later Leave hands it a slot.
  bool Arrive(Loop* loop, std::uint64_t id);
  // A running stream ended: its slot goes to the streams that waited longest; those are appended
  // to `admitted` (each now counted as running) for their loops to start.
  void Leave(std::vector<Waiter>& admitted);
  // A stream that had not started went away: true when it was still waiting (it is forgotten);
  // false when a Leave had already handed it a slot, which the caller must now give back (Leave).
  bool Withdraw(Loop* loop, std::uint64_t id);

  int running() const { return running_.load(std::memory_order_relaxed); }

  int waiting() const { return waiting_.load(std::memory_order_relaxed); }

 private:
  struct KeyHash {
    std::size_t operator()(const std::pair<Loop*, std::uint64_t>& k) const {
      return std::hash<std::uint64_t>()(k.second) ^ (std::hash<Loop*>()(k.first) << 1);
    }
  };

  const int max_batch_;
  std::mutex mu_;
  std::deque<Waiter> queue_;  // guarded by mu_; entries no longer in queued_ are skipped
  std::unordered_set<std::pair<Loop*, std::uint64_t>, KeyHash> queued_;  // guarded by mu_
  std::atomic<int> running_{0};                                          // written under mu_
  std::atomic<int> waiting_{0};                                          // written under mu_
};

// What the loops share. The options are read-only once the loops run.
struct Shared {
  explicit Shared(const SimOptions& o)
      : options(o),
        metrics(o.spec_tokens, o.threads),
        batch(o.max_batch),
        prefix_cache(
            static_cast<std::size_t>(o.prefix_cache_tokens / std::max(1, o.block_tokens))) {}

  ~Shared() {
    if (request_log_fd >= 0) {
      ::close(request_log_fd);
    }
  }

  const SimOptions options;
  Metrics metrics;
  Batch batch;
  std::mutex prefix_mu;
  PrefixCache prefix_cache;  // guarded by prefix_mu
  int request_log_fd = -1;   // SimOptions::request_log, opened for appending (O_APPEND writes)
  std::atomic<std::uint64_t> chat_count{0};  // numbers chat requests: their seed and id
  std::int64_t created_at = 0;
  int port = 0;
  std::string base_url;
};

}  // namespace detail

using detail::Conn;
using detail::ParseWorker;
using detail::StepShape;
using detail::Stream;
using detail::TimerEntry;

namespace detail {

// One event loop: its thread, its listening socket, the connections it accepted and their
// streams. Everything here is touched only by its thread, except `inbox` (mutex) and `stop`.
struct Loop {
  Loop(Shared& s, int loop_index)
      : shared(s),
        options(s.options),
        metrics(s.metrics),
        index(loop_index),
        spin_ns(static_cast<std::int64_t>(s.options.spin_us * 1e3)) {}

  ~Loop() { Close(); }

  // Takes the listening socket, sets up epoll, the timer and the wake-up, starts the thread.
  Result<void> Open(int listening_fd);
  void RequestStop();  // any thread; the thread ends at its next wake-up
  void Join();         // joins the thread and the parse worker
  void Close();        // after Join (of every loop): closes every descriptor
  // Another loop's Leave handed this loop's waiting stream `id` a slot at `start_ns`.
  void Post(std::uint64_t id, std::int64_t start_ns);

  void Run();

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
  // A running stream left the batch: starts the streams given its slot (here, or posts them to
  // their loops).
  void LeaveBatch();
  void OnInbox();
  void RunDueTimers();
  void OnStep(Stream& s);
  void BuildStepText(Stream& s, int begin, int end);
  void CountStep(Stream& s, int tokens, int accepted, std::int64_t write_ns);
  bool SendStreamedStep(Stream& s, Conn& c, StepShape& step);
  bool SendWholeStep(Stream& s, Conn& c, StepShape& step);
  bool ApplyFault(Stream& s, bool last);
  void EndStream(Stream& s, std::string_view finish_reason);
  void HoldOpen(Stream& s);  // done_open: the stream ends, its connection stays busy
  void DropStream(std::uint64_t stream_id, bool client_gone);
  void ArmTimer();

  void Push(std::int64_t deadline, std::uint64_t id, bool drain) {
    timers.push(TimerEntry{deadline, id, drain});
  }

  void PublishGauges() {
    const int running = shared.batch.running();
    const int waiting = shared.batch.waiting();
    metrics.Update([running, waiting](Counters& c) {
      c.running = running;
      c.waiting = waiting;
      c.max_running = std::max(c.max_running, running);
    });
  }

  Shared& shared;
  const SimOptions& options;  // shared.options
  Metrics& metrics;           // shared.metrics
  const int index;            // 0 .. threads-1
  int listen_fd = -1;
  int epoll_fd = -1;
  int timer_fd = -1;
  int wake_fd = -1;
  int spare_fd = -1;           // released to accept-and-close when out of file descriptors
  bool listen_paused = false;  // out of descriptors: the listener is not polled for a while
  std::atomic<bool> stop{false};
  std::unique_ptr<ParseWorker> worker;
  std::thread thread;
  std::mutex inbox_mu;
  std::vector<std::pair<std::uint64_t, std::int64_t>> inbox;  // guarded by inbox_mu
  std::vector<Batch::Waiter> admitted;                        // scratch of LeaveBatch

  std::unordered_map<std::uint64_t, std::unique_ptr<Conn>> conns;
  std::unordered_map<std::uint64_t, std::unique_ptr<Stream>> streams;
  std::priority_queue<TimerEntry, std::vector<TimerEntry>, std::greater<>> timers;
  std::int64_t armed_deadline = -1;
  std::int64_t spin_ns = 0;  // options.spin_us
  std::uint64_t next_conn_id = detail::kFirstConnId;
  std::uint64_t next_stream_id = 1;
  std::string frame;   // scratch: the bytes of one write
  std::string events;  // scratch: SSE events before chunk framing
  std::string reasoning_scratch;
  std::string content_scratch;
  std::string escaped_scratch;  // scripted answers: content_scratch JSON-escaped
  std::string tool_scratch;     // scripted tool-call deltas of one step (JSON array items)
  std::string gzip_scratch;     // compressed bytes of one write
};

}  // namespace detail

using detail::Loop;
using detail::Shared;

// The server: what the loops share, and the loops.
struct SimServer::Impl {
  explicit Impl(const SimOptions& o) : shared(o) {}

  ~Impl() { Shutdown(); }

  Result<void> Open();  // binds threads sockets (SO_REUSEPORT when more than one), starts loops
  void Shutdown();      // idempotent

  Shared shared;
  std::vector<std::unique_ptr<Loop>> loops;
  std::mutex stop_mu;
};

}  // namespace sb::sim
