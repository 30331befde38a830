// What does reading a token cost with no HTTP library at all? The floor under bench/client_cpu.
// Starts `servebench sim` as a separate process, opens N plain TCP connections, writes one
// streaming chat request on each, and reads the responses with epoll + non-blocking recv on
// this thread: per read, one CLOCK_MONOTONIC timestamp; per SSE event, the chunk scanner the
// client uses (client/chunk_scan.h) on its JSON. No HTTP library, no SSE parser object, no
// records. The figure is this process's CPU (getrusage: user + system) per token received.
// The client (libcurl) pays this plus its own overhead; whatever a client does, it cannot go
// below this on the same machine with one read per token.
//
// With --io-uring (built where Debian's liburing-dev is installed), the same reads go through
// io_uring instead: one multishot receive per connection into a ring of provided buffers, and
// io_uring_enter to wait, so a token costs a wake-up but no recv system call.
//
// With --burst it also prints, per pass, what a burst of N simultaneous requests costs in TTFT
// with no HTTP library: the connections are opened and warmed first (one GET /v1/models each,
// answered, as servebench's preconnect does), the N requests are written in one
// tight loop that starts at t0, and per request the client-added TTFT is (first token read − t0)
// − the simulator's own TTFT (its "sim" object: request read → first token written), split into
// the way there (t0 → the simulator has read the request) and the way back (first token
// written → read here). The floor under bench/client_accuracy's burst figures.
//
// It also prints how late the simulator read the requests, its own TTFT and its largest emission
// lateness (p50/p99 over the streams, from the same "sim" objects): above zero, the configured
// TTFT and zero, the simulator is behind its schedule. --sim-threads N serves with `servebench sim
// --threads N`.
//
//   build/bench/socket_floor [--streams 16] [--tokens 4000] [--itl-ms 0.5] [--ttft-ms 1]
//                            [--repeats 3] [--io-uring] [--burst] [--servebench PATH]
//                            [--sim-threads 1]
//   build/bench/socket_floor --burst --streams 1000 --tokens 8 --itl-ms 200 --ttft-ms 50
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef SB_HAVE_LIBURING
#include <liburing.h>
#include <sys/mman.h>
#endif

#include <nlohmann/json.hpp>

#include "client/chunk_scan.h"
#include "core/stats.h"

extern char** environ;

namespace {

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

std::int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct Stream {
  int fd = -1;
  std::string buf;  // bytes not yet consumed (head, chunk framing and SSE lines mixed)
  bool head_done = false;
  bool done = false;
  long long tokens = 0;
  std::int64_t last_ns = 0;   // when the last read returned
  std::int64_t first_ns = 0;  // when the read holding the first content token returned
  std::int64_t sim_recv_ns = 0, sim_first_ns = 0;  // the simulator's "sim" object
  double sim_lag_us = -1;                          // its max_emit_lag_us
  double sim_read_lag_us = -1;                     // its read_lag_us
};

// Consumes complete SSE "data: ..." lines from the (chunked) body in s.buf. Chunk-size lines
// and blank lines are skipped: the simulator writes one event per chunk, so a line that is not
// "data: " is framing.
void Consume(Stream& s) {
  std::size_t pos = 0;
  if (!s.head_done) {
    const std::size_t end = s.buf.find("\r\n\r\n");
    if (end == std::string::npos) {
      return;
    }
    s.head_done = true;
    pos = end + 4;
  }
  for (;;) {
    const std::size_t nl = s.buf.find('\n', pos);
    if (nl == std::string::npos) {
      break;
    }
    std::string_view line(s.buf.data() + pos, nl - pos);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    pos = nl + 1;
    if (line.starts_with("data: ")) {
      const std::string_view data = line.substr(6);
      if (data == "[DONE]") {
        s.done = true;
        continue;
      }
      sb::client::detail::ChunkFields f;
      if (sb::client::detail::ScanChunk(data, f)) {
        ++s.tokens;  // one token per event from the simulator without usage counts
        if (s.first_ns == 0 && f.content.present && !f.content.raw.empty()) {
          s.first_ns = s.last_ns;
        }
      } else {
        ++s.tokens;  // the full parser's case (the final usage chunk): counted the same
        if (data.find("\"sim\"") != std::string_view::npos) {
          const auto j = nlohmann::json::parse(data, nullptr, false);
          if (j.is_object() && j.contains("sim") && j["sim"].is_object()) {
            s.sim_recv_ns = j["sim"].value("recv_ns", std::int64_t{0});
            s.sim_first_ns = j["sim"].value("first_token_ns", std::int64_t{0});
            s.sim_lag_us = j["sim"].value("max_emit_lag_us", -1.0);
            s.sim_read_lag_us = j["sim"].value("read_lag_us", -1.0);
          }
        }
      }
    }
  }
  s.buf.erase(0, pos);
}

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    std::perror("connect");
    std::exit(1);
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// One GET /v1/models over the connection, its answer read whole (blocking): afterwards the
// simulator has accepted the connection and served a request on it, as servebench's preconnect
// leaves it, so neither side's burst pays for the simulator's accept.
void Warm(int fd) {
  static const char kGet[] = "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  if (send(fd, kGet, sizeof kGet - 1, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof kGet - 1)) {
    std::perror("send");
    std::exit(1);
  }
  std::string got;
  char buf[4096];
  std::size_t need = std::string::npos;
  while (got.size() < need) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      std::fprintf(stderr, "socket_floor: the simulator closed a connection being warmed\n");
      std::exit(1);
    }
    got.append(buf, static_cast<std::size_t>(n));
    const std::size_t end = got.find("\r\n\r\n");
    if (need == std::string::npos && end != std::string::npos) {
      const std::size_t cl = got.find("Content-Length: ");
      need = end + 4 + (cl != std::string::npos && cl < end ? std::stoul(got.substr(cl + 16)) : 0);
    }
  }
}

void ReadEpoll(int ep, std::vector<Stream>& ss);
void ReadUring(std::vector<Stream>& ss);

struct PassResult {
  double us_per_token = 0.0;
  // --burst, ms: client-added TTFT, the way there, the way back (p50, p99); streams without the
  // simulator's "sim" object or a content token are left out and counted in `missing`.
  double added_p50 = 0, added_p99 = 0, there_p50 = 0, there_p99 = 0, back_p50 = 0, back_p99 = 0;
  // The same without the simulator's read lag (its requests waiting in its socket: the
  // simulator's share, not the client's), over the requests that have one.
  double net_p50 = 0, net_p99 = 0;
  double send_loop_ms = 0;  // t0 → the last request written
  // The simulator's own TTFT (request read → first token written) and max emission lateness.
  double sim_ttft_p50 = 0, sim_ttft_p99 = 0, sim_lag_p50 = 0, sim_lag_p99 = 0;
  double sim_read_p50 = 0, sim_read_p99 = 0;  // how late it read the requests
  int missing = 0;
};

// One pass: N streams of `tokens` tokens.
PassResult Pass(int port, int streams, int tokens, bool uring) {
  const std::string body =
      "{\"model\":\"sim-model\",\"stream\":true,\"max_tokens\":" + std::to_string(tokens) +
      ",\"min_tokens\":" + std::to_string(tokens) +
      ",\"ignore_eos\":true,\"messages\":[{\"role\":\"user\",\"content\":"
      "\"Count.\"}]}";
  const std::string req =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  std::vector<Stream> ss(static_cast<std::size_t>(streams));
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  for (int i = 0; i < streams; ++i) {
    ss[i].fd = Connect(port);
  }
  for (int i = 0; i < streams; ++i) {
    Warm(ss[i].fd);
    if (!uring) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u32 = static_cast<std::uint32_t>(i);
      epoll_ctl(ep, EPOLL_CTL_ADD, ss[i].fd, &ev);
    }
  }
  const double cpu0 = CpuSeconds();
  const std::int64_t t0 = NowNs();
  for (int i = 0; i < streams; ++i) {
    if (send(ss[i].fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
      std::perror("send");
      std::exit(1);
    }
  }
  const std::int64_t sent = NowNs();
  if (uring) {
    ReadUring(ss);
  } else {
    ReadEpoll(ep, ss);
  }
  const double cpu = CpuSeconds() - cpu0;
  long long total = 0;
  PassResult r;
  std::vector<double> added, there, back, sim_ttft, sim_lag, sim_read, net;
  for (Stream& s : ss) {
    total += s.tokens;
    close(s.fd);
    if (s.first_ns == 0 || s.sim_recv_ns == 0 || s.sim_first_ns == 0) {
      ++r.missing;
      continue;
    }
    there.push_back(static_cast<double>(s.sim_recv_ns - t0) / 1e6);
    back.push_back(static_cast<double>(s.first_ns - s.sim_first_ns) / 1e6);
    added.push_back(there.back() + back.back());
    sim_ttft.push_back(static_cast<double>(s.sim_first_ns - s.sim_recv_ns) / 1e6);
    if (s.sim_lag_us >= 0) {
      sim_lag.push_back(s.sim_lag_us / 1e3);
    }
    if (s.sim_read_lag_us >= 0) {
      sim_read.push_back(s.sim_read_lag_us / 1e3);
      net.push_back(added.back() - sim_read.back());
    }
  }
  close(ep);
  r.us_per_token = cpu / static_cast<double>(total) * 1e6;
  const sb::Summary a = sb::Summarize(added), th = sb::Summarize(there), b = sb::Summarize(back);
  r.added_p50 = a.p50;
  r.added_p99 = a.p99;
  r.there_p50 = th.p50;
  r.there_p99 = th.p99;
  r.back_p50 = b.p50;
  r.back_p99 = b.p99;
  r.send_loop_ms = static_cast<double>(sent - t0) / 1e6;
  const sb::Summary n = sb::Summarize(net);
  r.net_p50 = n.p50;
  r.net_p99 = n.p99;
  const sb::Summary st = sb::Summarize(sim_ttft), sl = sb::Summarize(sim_lag);
  r.sim_ttft_p50 = st.p50;
  r.sim_ttft_p99 = st.p99;
  r.sim_lag_p50 = sl.p50;
  r.sim_lag_p99 = sl.p99;
  const sb::Summary sr = sb::Summarize(sim_read);
  r.sim_read_p50 = sr.p50;
  r.sim_read_p99 = sr.p99;
  return r;
}

void ReadEpoll(int ep, std::vector<Stream>& ss) {
  const int streams = static_cast<int>(ss.size());
  int open = streams;
  char buf[65536];
  std::vector<epoll_event> evs(static_cast<std::size_t>(streams));
  while (open > 0) {
    const int n = epoll_wait(ep, evs.data(), streams, 10'000);
    if (n <= 0) {
      std::fprintf(stderr, "socket_floor: no data for 10 s\n");
      std::exit(1);
    }
    for (int k = 0; k < n; ++k) {
      Stream& s = ss[evs[k].data.u32];
      const ssize_t got = recv(s.fd, buf, sizeof buf, 0);
      if (got <= 0) {
        std::fprintf(stderr, "socket_floor: stream closed early\n");
        std::exit(1);
      }
      s.last_ns = NowNs();
      s.buf.append(buf, static_cast<std::size_t>(got));
      Consume(s);
      if (s.done) {
        epoll_ctl(ep, EPOLL_CTL_DEL, s.fd, nullptr);
        --open;
      }
    }
  }
}

#ifdef SB_HAVE_LIBURING
// One multishot receive per connection, buffers picked by the kernel from a provided-buffer
// ring; io_uring_submit_and_wait blocks until at least one completion. Per token: a wake-up,
// one CQE, one timestamp, the same Consume as the epoll path.
void ReadUring(std::vector<Stream>& ss) {
  constexpr unsigned kBufs = 256;
  constexpr unsigned kBufSize = 4096;
  io_uring ring{};
  io_uring_params params{};
  params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  if (const int e = io_uring_queue_init_params(256, &ring, &params); e < 0) {
    std::fprintf(stderr, "socket_floor: io_uring_queue_init: %s\n", std::strerror(-e));
    std::exit(1);
  }
  const std::size_t ring_bytes = kBufs * sizeof(io_uring_buf);
  void* mem = mmap(nullptr, ring_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  auto* br = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_ring_init(br);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<std::uint64_t>(br);
  reg.ring_entries = kBufs;
  reg.bgid = 0;
  if (const int e = io_uring_register_buf_ring(&ring, &reg, 0); e < 0) {
    std::fprintf(stderr, "socket_floor: io_uring_register_buf_ring: %s\n", std::strerror(-e));
    std::exit(1);
  }
  std::vector<char> bufs(static_cast<std::size_t>(kBufs) * kBufSize);
  const int mask = io_uring_buf_ring_mask(kBufs);
  for (unsigned i = 0; i < kBufs; ++i) {
    io_uring_buf_ring_add(br, bufs.data() + static_cast<std::size_t>(i) * kBufSize, kBufSize,
                          static_cast<unsigned short>(i), mask, static_cast<int>(i));
  }
  io_uring_buf_ring_advance(br, static_cast<int>(kBufs));
  auto arm = [&](std::size_t i) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    io_uring_prep_recv_multishot(sqe, ss[i].fd, nullptr, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = 0;
    io_uring_sqe_set_data64(sqe, i);
  };
  for (std::size_t i = 0; i < ss.size(); ++i) {
    arm(i);
  }
  std::size_t open = ss.size();
  while (open > 0) {
    if (const int e = io_uring_submit_and_wait(&ring, 1); e < 0 && e != -EINTR) {
      std::fprintf(stderr, "socket_floor: io_uring_submit_and_wait: %s\n", std::strerror(-e));
      std::exit(1);
    }
    io_uring_cqe* cqe = nullptr;
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      ++seen;
      const std::size_t i = io_uring_cqe_get_data64(cqe);
      Stream& s = ss[i];
      if (cqe->res == -ENOBUFS) {
        if (!s.done) {
          arm(i);
        }
        continue;
      }
      if (cqe->res <= 0) {
        if (s.done) {
          continue;
        }
        std::fprintf(stderr, "socket_floor: stream closed early (%d)\n", cqe->res);
        std::exit(1);
      }
      const unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
      char* b = bufs.data() + static_cast<std::size_t>(bid) * kBufSize;
      s.last_ns = NowNs();
      s.buf.append(b, static_cast<std::size_t>(cqe->res));
      io_uring_buf_ring_add(br, b, kBufSize, static_cast<unsigned short>(bid), mask, 0);
      io_uring_buf_ring_advance(br, 1);
      const bool was_done = s.done;
      Consume(s);
      if (s.done && !was_done) {
        --open;
      } else if (!s.done && (cqe->flags & IORING_CQE_F_MORE) == 0) {
        arm(i);
      }
    }
    io_uring_cq_advance(&ring, seen);
  }
  io_uring_queue_exit(&ring);
  munmap(mem, ring_bytes);
}
#else
void ReadUring(std::vector<Stream>&) {
  std::fprintf(stderr, "socket_floor: built without liburing (install liburing-dev)\n");
  std::exit(2);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  int streams = 16, tokens = 4000, repeats = 3;
  bool uring = false;
  bool burst = false;
  std::string ttft = "1";
  std::string itl = "0.5";
  std::string bin = SB_SERVEBENCH_PATH;
  std::string sim_threads = "1";
  for (int i = 1; i < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--io-uring" || k == "--burst") {
      (k == "--burst" ? burst : uring) = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n", argv[i]);
      return 2;
    }
    if (k == "--streams") {
      streams = std::atoi(argv[i + 1]);
    } else if (k == "--tokens") {
      tokens = std::atoi(argv[i + 1]);
    } else if (k == "--itl-ms") {
      itl = argv[i + 1];
    } else if (k == "--ttft-ms") {
      ttft = argv[i + 1];
    } else if (k == "--repeats") {
      repeats = std::atoi(argv[i + 1]);
    } else if (k == "--servebench") {
      bin = argv[i + 1];
    } else if (k == "--sim-threads") {
      sim_threads = argv[i + 1];
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  rlimit nofile{};  // 10,000 connections need more descriptors than the usual soft limit
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  int pipefd[2];
  if (pipe(pipefd) != 0) {
    return 1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_addclose(&fa, pipefd[0]);
  const std::string batch = std::to_string(std::max(64, streams));
  std::vector<std::string> args = {bin,         "sim",      "--port",     "0", "--itl-ms",    itl,
                                   "--ttft-ms", ttft,       "--slowdown", "0", "--max-batch", batch,
                                   "--threads", sim_threads};
  std::vector<char*> av;
  for (auto& a : args) {
    av.push_back(a.data());
  }
  av.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, bin.c_str(), &fa, nullptr, av.data(), environ) != 0) {
    std::fprintf(stderr, "cannot start %s\n", bin.c_str());
    return 1;
  }
  close(pipefd[1]);
  std::string line;
  char c = 0;
  while (read(pipefd[0], &c, 1) == 1 && c != '\n') {
    line += c;
  }
  const std::size_t colon = line.rfind(':');
  const int port = colon == std::string::npos ? 0 : std::atoi(line.c_str() + colon + 1);
  if (port == 0) {
    std::fprintf(stderr, "the simulator said: %s\n", line.c_str());
    return 1;
  }
  Pass(port, streams, std::min(tokens, 200), uring);  // warm-up: caches, the simulator's first runs
  std::vector<double> us;
  for (int r = 0; r < repeats; ++r) {
    const PassResult p = Pass(port, streams, tokens, uring);
    us.push_back(p.us_per_token);
    std::printf("streams %d × %d tokens, pass %d: %.2f µs CPU per token\n", streams, tokens, r + 1,
                us.back());
    if (burst) {
      std::printf(
          "  burst: client-added TTFT p50 %.3f / p99 %.3f ms = there (t0 → request read) p50 "
          "%.3f / p99 %.3f ms + back (first token written → read) p50 %.3f / p99 %.3f ms; "
          "send loop %.3f ms%s\n",
          p.added_p50, p.added_p99, p.there_p50, p.there_p99, p.back_p50, p.back_p99,
          p.send_loop_ms,
          p.missing > 0 ? (", " + std::to_string(p.missing) + " streams without figures").c_str()
                        : "");
      std::printf(
          "  simulator (%s loop%s): read lag p50 %.3f / p99 %.3f ms, TTFT p50 %.3f / p99 %.3f ms "
          "(configured %s), max emit lag p50 %.3f / p99 %.3f ms\n",
          sim_threads.c_str(), sim_threads == "1" ? "" : "s", p.sim_read_p50, p.sim_read_p99,
          p.sim_ttft_p50, p.sim_ttft_p99, ttft.c_str(), p.sim_lag_p50, p.sim_lag_p99);
      std::printf("  net of the simulator's read lag: client-added TTFT p50 %.3f / p99 %.3f ms\n",
                  p.net_p50, p.net_p99);
    }
  }
  std::sort(us.begin(), us.end());
  std::printf("median %.2f µs CPU per token (no HTTP library; %s + chunk scan)\n",
              us[us.size() / 2], uring ? "io_uring multishot recv" : "epoll + recv");
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  return 0;
}
