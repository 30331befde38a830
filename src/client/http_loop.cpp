// The libcurl loop (http_impl.h): epoll over curl's sockets, the timerfd and the eventfd;
// scheduled sends, time limits, and the batches it runs (RunShare, Preconnect, Plain).
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

void CurlLoop::ArmTimer(std::int64_t at_ns) {
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

void CurlLoop::SocketAction(curl_socket_t s, int ev_mask) {
  int running = 0;
  curl_multi_socket_action(multi, s, ev_mask, &running);
}

template <typename Finished>
void CurlLoop::Reap(Finished& finished) {
  // Native transfers that ended (http_native.cpp), taken out as a batch (completing one only
  // removes its own entry, which is already out; the two vectors keep their capacity).
  reaping.swap(native_done);
  for (const auto& [t, rc] : reaping) {
    Complete(*t, rc);
    if (ScheduleRetry(*t, rc)) {
      continue;
    }
    finished(*t);
  }
  reaping.clear();
  if (native) {
    return;
  }
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

template <typename Finished>
std::int64_t CurlLoop::ExpireLimits(std::int64_t now, Finished& finished) {
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
    const std::int64_t connect = t.ConnectDeadline();
    if (now < fb_idle && now < total && now < connect) {
      next = std::min({next, fb_idle, total, connect});
      ++i;
      continue;
    }
    std::string reason;
    if (connect <= fb_idle && connect <= total) {  // a native connection (curl keeps its own)
      const std::string ms = std::to_string(t.connect_limit_ns / kNanosPerMs);
      reason =
          "no connection within " + ms + " ms: Connection timed out after " + ms + " milliseconds";
    } else if (fb_idle <= total) {
      reason = t.first_byte_ns == 0
                   ? "no first byte within " + std::to_string(t.first_byte_limit_ns / kNanosPerMs) +
                         " ms"
                   : "idle gap over " + std::to_string(t.idle_limit_ns / kNanosPerMs) + " ms";
    } else {
      reason = "total time over " + std::to_string(t.total_limit_ns / kNanosPerMs) + " ms";
    }
    Abort(t, Outcome::kTimeout, std::move(reason), now);  // swaps another transfer into i
    finished(t);
  }
  return next;
}

void CurlLoop::DrainFd(int fd) {
  std::uint64_t value = 0;
  while (read(fd, &value, sizeof value) > 0) {
  }
}

template <typename Finished, typename Unsent>
void CurlLoop::CancelAll(std::span<const std::pair<std::int64_t, std::size_t>> order,
                         std::size_t& next, Finished& finished, Unsent& unsent) {
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
}

template <typename Finished>
void CurlLoop::RelaunchDue(std::int64_t now, Finished& finished) {
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
}

void CurlLoop::DispatchEvents(const epoll_event* events, int n) {
  for (int i = 0; i < n; ++i) {
    if ((events[i].data.u64 >> 63) != 0) {
      OnNativeEvent(events[i].data.u64, events[i].events);
      continue;
    }
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
}

template <typename Start, typename Finished, typename Unsent>
void CurlLoop::Drive(std::span<const std::pair<std::int64_t, std::size_t>> order, Start& start,
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
      CancelAll(order, next, finished, unsent);
      break;
    }
    std::int64_t now = NowNs();
    if (start_until_ns != kNever && now >= start_until_ns) {
      for (; next < order.size(); ++next) {
        unsent(order[next].second, kNotStartedReason);
      }
    }
    // Every call due now is handed over at this moment: the time the loop then spends writing
    // them one after another is the client's own queue, inside each one's send wait and TTFT,
    // not before its send (docs/metrics.md "send").
    launch_ns = now;
    while (next < order.size() && order[next].first <= now && room()) {
      if (Transfer* t = start(order[next].second)) {
        next_check_ns = std::min(next_check_ns, t->NextDeadline());
      }
      ++next;
    }
    launch_ns = 0;
    RelaunchDue(now, finished);
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
    if (wake_at <= NowNs() || !native_done.empty()) {
      timeout_ms = 0;
    } else {
      ArmTimer(wake_at);
    }
    DispatchEvents(events, epoll_wait(epoll_fd, events, kMaxEvents, timeout_ms));
    Reap(finished);
    release_held();
  }
  holding = false;
  DrainFd(wake_fd);
}

void CurlLoop::ReleaseHeld() {
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

void CurlLoop::RunShare(std::span<const ChatCall> calls, std::span<ChatResponse> results,
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
  // Keep enough idle connections for the next run to reuse them (and for preconnect to open one
  // per stream). libcurl's connection cache is searched one entry at a time, so it stays at
  // 8,192; the native transport's kept connections cost nothing until used.
  const std::size_t want = std::clamp<std::size_t>(order.size(), 64, native ? 65'536 : 8192);
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
    if (native) {
      t->native = true;
      t->method = "POST";
      t->req_body = call.body;
    } else {
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
    }
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

std::size_t CurlLoop::Preconnect(std::size_t n, std::stop_token stop) {
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
    // Native: every GET starts before any answer is read (all are due at once), so none can
    // take a connection another GET has just given back: nothing to hold.
    if (native) {
      t->native = true;
      t->target = path_prefix + "/v1/models" + query;
    } else {
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
  holding = !native;
  held = 0;
  Drive(order, start, finished, unsent, std::move(stop));
  return answered;
}

Result<HttpResponse> CurlLoop::Plain(bool post, std::string_view path, std::string_view body,
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
  if (post) {
    t.post_body.assign(body);
  }
  if (native) {
    t.native = true;
    t.target = path_prefix + std::string(path) + query;
    if (post) {
      t.method = "POST";
      t.req_body = t.post_body;
    }
  } else {
    t.easy = AcquireEasy();
    if (t.easy == nullptr) {
      return MakeError(ErrorCode::kTransport, what + ": curl_easy_init failed");
    }
    ConfigureEasy(t, url);
    if (post) {
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

}  // namespace sb::client
