// What does the client cost per streamed token? Starts `servebench sim` as a separate process,
// then runs the concurrency profile (perf::Session::Concurrency: the same path as
// `servebench perf --profile concurrency`, every sample record built and written through the
// run's writer thread) against it, and prints the CPU time of this process (user + system,
// getrusage(RUSAGE_SELF), the writer's thread included) per streamed token. The simulator's CPU
// is its own process's, so it is not in the figure.
//
//   build/bench/client_cpu [--levels 16,64,1000] [--tokens 4000] [--itl-ms 0.5] [--repeats 3]
//                          [--servebench PATH]
//
// Per level: one unmeasured pass (connections opened, caches warm), then --repeats measured
// passes; each prints µs of client CPU per token (user / sys / total) and the median is quoted.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/http_client.h"
#include "core/clock.h"
#include "perf/profiles.h"
#include "perf/sample_writer.h"

extern char** environ;

namespace {

using nlohmann::json;

std::vector<int> ParseList(const char* s) {
  std::vector<int> out;
  std::string str(s);
  std::size_t pos = 0;
  while (pos < str.size()) {
    const std::size_t comma = str.find(',', pos);
    out.push_back(std::atoi(str.substr(pos, comma - pos).c_str()));
    if (comma == std::string::npos) {
      break;
    }
    pos = comma + 1;
  }
  return out;
}

struct Cpu {
  double user_s = 0;
  double sys_s = 0;
};

Cpu ProcessCpu() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const auto secs = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return {secs(ru.ru_utime), secs(ru.ru_stime)};
}

// The simulator as a child process; its first stdout line names the URL.
// Its stdout stays drained by a thread until it exits (a closed pipe would kill it with
// SIGPIPE at its next line).
struct SimProcess {
  pid_t pid = -1;
  std::string url;
  std::thread drain;

  ~SimProcess() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      int status = 0;
      waitpid(pid, &status, 0);
    }
    if (drain.joinable()) {
      drain.join();
    }
  }
};

bool StartSim(const std::string& exe, double itl_ms, int max_batch, SimProcess& sim) {
  int fds[2];
  if (pipe(fds) != 0) {
    return false;
  }
  const std::string itl = std::to_string(itl_ms);
  const std::string batch = std::to_string(max_batch);
  std::vector<std::string> args = {
      exe,        "sim", "--port",      "0", "--model",    "sim-model", "--ttft-ms",   "20",
      "--itl-ms", itl,   "--jitter-ms", "0", "--slowdown", "0",         "--max-batch", batch};
  std::vector<char*> argv;
  for (auto& a : args) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  const int rc = posix_spawn(&sim.pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    std::fprintf(stderr, "cannot start %s: %s\n", exe.c_str(), std::strerror(rc));
    sim.pid = -1;
    close(fds[0]);
    return false;
  }
  std::string line;
  char c = 0;
  while (read(fds[0], &c, 1) == 1 && c != '\n') {
    line.push_back(c);
  }
  const int out = fds[0];
  sim.drain = std::thread([out] {
    char buf[4096];
    while (read(out, buf, sizeof buf) > 0) {
    }
    close(out);
  });
  const std::string prefix = "listening on ";
  if (line.rfind(prefix, 0) != 0) {
    std::fprintf(stderr, "simulator said: '%s'\n", line.c_str());
    return false;
  }
  sim.url = line.substr(prefix.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> levels = {16, 64, 1000};
  int tokens = 4000;
  double itl_ms = 0.5;
  int repeats = 3;
  std::string exe = SB_SERVEBENCH_PATH;
  for (int i = 1; i < argc; i += 2) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf(
          "usage: client_cpu [--levels 16,64,1000] [--tokens 4000] [--itl-ms 0.5] "
          "[--repeats 3] [--servebench PATH]\n");
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n", argv[i]);
      return 2;
    }
    if (std::strcmp(argv[i], "--levels") == 0) {
      levels = ParseList(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--tokens") == 0) {
      tokens = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--itl-ms") == 0) {
      itl_ms = std::atof(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--repeats") == 0) {
      repeats = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--servebench") == 0) {
      exe = argv[i + 1];
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (levels.empty() || tokens < 1 || repeats < 1 || !(itl_ms >= 0)) {
    std::fprintf(stderr, "bad --levels, --tokens, --repeats or --itl-ms\n");
    return 2;
  }
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);

  const int max_level = *std::max_element(levels.begin(), levels.end());
  SimProcess sim;
  if (!StartSim(exe, itl_ms, max_level, sim)) {
    return 3;
  }
  sb::client::ClientOptions co;
  co.endpoint = sim.url;
  sb::client::Client client(co);
  // Samples go where a run directory's would, minus the disk: through the run's writer thread
  // (its CPU counts: the figures are the whole process's), dumped, written and flushed.
  std::FILE* sink = std::fopen("/dev/null", "w");
  if (sink == nullptr) {
    return 3;
  }
  long long tokens_seen = 0;
  sb::perf::SampleWriter writer(
      [sink](const sb::perf::Sample& s) -> sb::Result<void> {
        std::string line = s.ToJson().dump();
        line.push_back('\n');
        std::fwrite(line.data(), 1, line.size(), sink);
        std::fflush(sink);
        return {};
      },
      [](const std::string&) {});
  std::stop_source stop;
  sb::perf::Session session(
      client, {"sim-model", sb::client::ServerKind::kSim},
      [&](sb::perf::Sample s) {
        tokens_seen += s.record.completion_tokens.value_or(0);
        writer.Post(std::move(s));
      },
      nullptr, stop.get_token(), sb::ToNanos(std::chrono::steady_clock::now()));

  std::printf("simulator: %s (separate process), ITL %g ms, %d tokens per stream\n",
              sim.url.c_str(), itl_ms, tokens);
  std::printf("| Streams | Tokens | µs CPU per token: user / sys / total (each pass) | median |\n");
  std::printf("|---|---|---|---|\n");
  int failures = 0;
  for (int n : levels) {
    sb::perf::ProfileOptions o;
    o.warmup = 0;
    o.args.SetInts("--levels", {n});
    o.tokens = std::min(tokens, 64);
    session.Concurrency(o);  // opens n connections; not measured
    o.tokens = tokens;
    std::vector<double> totals;
    std::string passes;
    long long pass_tokens = 0;
    for (int k = 0; k < repeats; ++k) {
      tokens_seen = 0;
      const Cpu c0 = ProcessCpu();
      const json r = session.Concurrency(o);
      writer.Drain();  // the pass's records written inside its own CPU figure
      const Cpu c1 = ProcessCpu();
      pass_tokens = tokens_seen;
      const long long expected = static_cast<long long>(n) * tokens;
      if (tokens_seen != expected) {
        std::fprintf(stderr, "level %d: %lld tokens, expected %lld\n", n, tokens_seen, expected);
        ++failures;
      }
      const double per = tokens_seen > 0 ? 1e6 / static_cast<double>(tokens_seen) : 0;
      const double user = (c1.user_s - c0.user_s) * per;
      const double sys = (c1.sys_s - c0.sys_s) * per;
      totals.push_back(user + sys);
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%.2f / %.2f / %.2f", k == 0 ? "" : "; ", user, sys,
                    user + sys);
      passes += buf;
    }
    std::sort(totals.begin(), totals.end());
    std::printf("| %d | %lld | %s | %.2f |\n", n, pass_tokens, passes.c_str(),
                totals[totals.size() / 2]);
    std::fflush(stdout);
  }
  for (const auto& w : session.warnings()) {
    std::printf("warning: %s\n", w.c_str());
  }
  writer.Drain();  // nothing left to write to the file closed next
  std::fclose(sink);
  return failures == 0 ? 0 : 1;
}
