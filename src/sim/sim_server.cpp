// The simulator's event loop: one thread, epoll over non-blocking sockets, and one timerfd armed
// at the earliest absolute CLOCK_MONOTONIC deadline of all streams (timer slack 1 ns), so each
// decode step is written within microseconds of its schedule. POST bodies are parsed by a
// helper thread (a 50 MB image body takes tens of milliseconds to parse, which would otherwise
// delay every other stream); everything else runs on the loop thread.
#include "sim/sim_impl.h"

namespace sb::sim {

using namespace detail;  // NOLINT(build/namespaces): the loop's private helpers

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
