// What does reading a token cost with no HTTP library at all? The floor under bench/client_cpu.
// Starts `servebench sim` as a separate process, opens N plain TCP connections, writes one
// streaming chat request on each, and reads the responses with epoll + non-blocking recv on
// this thread: per read, one CLOCK_MONOTONIC timestamp; per SSE event, the chunk scanner the
// client uses (client/chunk_scan.h) on its JSON. No HTTP library, no SSE parser object, no
// records. The figure is this process's CPU (getrusage: user + system) per token received.
// The client (libcurl) pays this plus its own overhead; whatever a client does, it cannot go
// below this on the same machine with one read per token.
//
//   build/bench/socket_floor [--streams 16] [--tokens 4000] [--itl-ms 0.5] [--repeats 3]
//                            [--servebench PATH]
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

#include "client/chunk_scan.h"

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
  std::int64_t last_ns = 0;
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
      } else {
        ++s.tokens;  // the full parser's case (the final usage chunk): counted the same
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

// One pass: N streams of `tokens` tokens; returns µs of CPU per token.
double Pass(int port, int streams, int tokens) {
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
  const double cpu0 = CpuSeconds();
  for (int i = 0; i < streams; ++i) {
    if (send(ss[i].fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
      std::perror("send");
      std::exit(1);
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<std::uint32_t>(i);
    epoll_ctl(ep, EPOLL_CTL_ADD, ss[i].fd, &ev);
  }
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
  const double cpu = CpuSeconds() - cpu0;
  long long total = 0;
  for (Stream& s : ss) {
    total += s.tokens;
    close(s.fd);
  }
  close(ep);
  return cpu / static_cast<double>(total) * 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  int streams = 16, tokens = 4000, repeats = 3;
  std::string itl = "0.5";
  std::string bin = SB_SERVEBENCH_PATH;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--streams") {
      streams = std::atoi(argv[i + 1]);
    } else if (k == "--tokens") {
      tokens = std::atoi(argv[i + 1]);
    } else if (k == "--itl-ms") {
      itl = argv[i + 1];
    } else if (k == "--repeats") {
      repeats = std::atoi(argv[i + 1]);
    } else if (k == "--servebench") {
      bin = argv[i + 1];
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
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
  std::vector<std::string> args = {bin,         "sim", "--port",     "0", "--itl-ms",    itl,
                                   "--ttft-ms", "1",   "--slowdown", "0", "--max-batch", batch};
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
  Pass(port, streams, std::min(tokens, 200));  // warm-up: caches, the simulator's first runs
  std::vector<double> us;
  for (int r = 0; r < repeats; ++r) {
    us.push_back(Pass(port, streams, tokens));
    std::printf("streams %d × %d tokens, pass %d: %.2f µs CPU per token\n", streams, tokens, r + 1,
                us.back());
  }
  std::sort(us.begin(), us.end());
  std::printf("median %.2f µs CPU per token (no HTTP library; epoll + recv + chunk scan)\n",
              us[us.size() / 2]);
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  return 0;
}
