// Private to the simulator: the state of its event loop (SimServer::Impl) and what it holds
// (connections, streams, timers, the body-parsing helper thread), shared by sim_server.cpp (set-up,
// the loop, connections, the public API) and sim_streams.cpp (requests, admission, decode steps).
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

}  // namespace detail

using detail::Conn;
using detail::ParseWorker;
using detail::StepShape;
using detail::Stream;
using detail::TimerEntry;

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
  std::uint64_t next_conn_id = detail::kFirstConnId;
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

}  // namespace sb::sim
