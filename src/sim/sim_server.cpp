// The simulator's event loops: each one thread, epoll over non-blocking sockets, and one timerfd
// armed at the earliest absolute CLOCK_MONOTONIC deadline of its streams (timer slack 1 ns), so
// each decode step is written within microseconds of its schedule. POST bodies are parsed by a
// helper thread per loop (a 50 MB image body takes tens of milliseconds to parse, which would
// otherwise delay every other stream); everything else runs on the loop thread. With
// SimOptions::threads > 1 every loop listens on its own SO_REUSEPORT socket of the same port, and
// the kernel spreads the connections over them.
#include "sim/sim_impl.h"

namespace sb::sim {

using namespace detail;  // NOLINT(build/namespaces): the loop's private helpers

// ---------------------------------------------------------------------------------------------
// Setup and teardown

namespace {

// A listening socket bound to `addr`: SO_REUSEPORT when several loops share the port.
int Listen(const sockaddr* addr, socklen_t addr_len, int family, bool reuse_port,
           const std::string& where, std::string& error) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = SysError("socket");
    return -1;
  }
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // Each read says when its data arrived (SCM_TIMESTAMPNS): how late the loop read a request.
  // Set here, the accepted sockets inherit it, and the kernel stamps a request's bytes that
  // arrive before accept() returns.
  ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
  if (reuse_port && ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) {
    error = SysError("SO_REUSEPORT");
    ::close(fd);
    return -1;
  }
  if (::bind(fd, addr, addr_len) != 0 || ::listen(fd, 4096) != 0) {
    error = SysError("bind " + where);
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

Result<void> SimServer::Impl::Open() {
  const SimOptions& options = shared.options;
  const bool reuse_port = options.threads > 1;
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
  std::vector<int> fds;
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  // The first socket never has SO_REUSEPORT: a port in use is an error with any number of loops
  // (two simulators with --threads on one port would otherwise split its connections).
  for (addrinfo* ai = res; ai != nullptr && fds.empty(); ai = ai->ai_next) {
    const int fd = Listen(ai->ai_addr, ai->ai_addrlen, ai->ai_family, false,
                          options.host + ":" + port_str, last_error);
    if (fd < 0) {
      continue;
    }
    fds.push_back(fd);
    // The bound address with its port (an ephemeral one when --port 0): the other loops bind
    // the same.
    addr_len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &addr_len);
  }
  ::freeaddrinfo(res);
  if (fds.empty()) {
    return MakeError(ErrorCode::kSetup, "sim: " + last_error);
  }
  if (reuse_port) {
    CloseFd(fds[0]);  // it checked the port (and chose it when --port 0); the loops bind it now
    fds.clear();
  }
  while (static_cast<int>(fds.size()) < options.threads) {
    const int fd =
        Listen(reinterpret_cast<const sockaddr*>(&addr), addr_len, addr.ss_family, reuse_port,
               options.host + " (loop " + std::to_string(fds.size()) + ")", last_error);
    if (fd < 0) {
      for (int& f : fds) {
        CloseFd(f);
      }
      return MakeError(ErrorCode::kSetup, "sim: " + last_error);
    }
    fds.push_back(fd);
  }
  const bool v6 = addr.ss_family == AF_INET6;
  shared.port = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
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
  shared.base_url = "http://" + host + ":" + std::to_string(shared.port) + "/v1";
  shared.created_at = static_cast<std::int64_t>(std::time(nullptr));

  for (std::size_t i = 0; i < fds.size(); ++i) {
    loops.push_back(std::make_unique<Loop>(shared, static_cast<int>(i)));
  }
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (auto opened = loops[i]->Open(fds[i]); !opened) {
      for (std::size_t j = i + 1; j < fds.size(); ++j) {
        CloseFd(fds[j]);
      }
      return opened.error();
    }
  }
  return {};
}

void SimServer::Impl::Shutdown() {
  std::lock_guard<std::mutex> lock(stop_mu);
  for (auto& loop : loops) {
    loop->RequestStop();
  }
  for (auto& loop : loops) {
    loop->Join();
  }
  // Only now: a loop may post to another's wake-up descriptor until it has stopped.
  for (auto& loop : loops) {
    loop->Close();
  }
}

Result<void> Loop::Open(int listening_fd) {
  listen_fd = listening_fd;
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
  worker = std::make_unique<ParseWorker>(options, wake_fd);
  thread = std::thread([this] { Run(); });
  return {};
}

void Loop::RequestStop() {
  stop.store(true);
  if (wake_fd >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd, &one, sizeof one);
  }
}

void Loop::Join() {
  if (thread.joinable()) {
    thread.join();
  }
  if (worker) {
    worker->Stop();
    worker.reset();
  }
}

void Loop::Close() {
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

void Loop::Post(std::uint64_t id, std::int64_t start_ns) {
  {
    std::lock_guard<std::mutex> lock(inbox_mu);
    inbox.emplace_back(id, start_ns);
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd, &one, sizeof one);
}

void Loop::Run() {
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
        OnInbox();
      } else {
        OnConnEvent(tag, evs[i].events);
      }
    }
    RunDueTimers();
  }
}

// ---------------------------------------------------------------------------------------------
// Connections

void Loop::AcceptAll() {
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
    metrics.Update([this](Counters& k) {
      ++k.connections;
      ++k.loop_connections[static_cast<std::size_t>(index)];
    });
  }
}

bool Loop::ShedOne() {
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

void Loop::PauseListening() {
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

void Loop::ResumeListening() {
  if (!listen_paused) {
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenTag;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, listen_fd, &ev);
  listen_paused = false;
}

void Loop::UpdateInterest(Conn& c) {
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

void Loop::OnConnEvent(std::uint64_t id, std::uint32_t ready) {
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

void Loop::OnReadable(Conn& c) {
  const std::uint64_t id = c.id;
  char buf[kReadChunk];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  bool eof = false;
  for (;;) {
    iovec io{buf, sizeof buf};
    msghdr msg{};
    msg.msg_iov = &io;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(c.fd, &msg, 0);
    if (n > 0) {
      for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm != nullptr; cm = CMSG_NXTHDR(&msg, cm)) {
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
          timespec ts{};
          std::memcpy(&ts, CMSG_DATA(cm), sizeof ts);
          c.last_rx_ns = MonotonicOf(ts);
        }
      }
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

bool Loop::Send(Conn& c, std::string_view data) {
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

void Loop::Flush(Conn& c) {
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

void Loop::StartDrain(Conn& c) {
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

void Loop::CloseConn(std::uint64_t id, bool reset, bool client_gone) {
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
    int& log_fd = server->impl_->shared.request_log_fd;
    log_fd = ::open(options.request_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
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
  return impl_->shared.port;
}

std::string SimServer::base_url() const {
  return impl_->shared.base_url;
}

SimServer::Stats SimServer::stats() const {
  const Counters c = impl_->shared.metrics.Snapshot();
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
  s.loop_connections = c.loop_connections;
  return s;
}

void SimServer::Stop() {
  if (impl_) {
    impl_->Shutdown();
  }
}

}  // namespace sb::sim
