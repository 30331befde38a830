// How exactly does the client measure, and what does it cost? Runs streams against the
// simulator on loopback and compares what the client measured with the simulator's own record
// of what it did (its socket write times), at several concurrency levels.
//
//   build/bench/client_accuracy [--levels 1,64,1000] [--tokens 128] [--itl-ms X]
//
// Per level it prints, over all requests:
//   TTFT error       client TTFT − simulator TTFT (request received -> first token written)
//   delivery lag     client read time of the first token − simulator write time of it
//   decode error     client decode tok/s / simulator decode tok/s − 1 (same definition, both sides)
//   client CPU       CPU time of the client thread per 1,000 streamed tokens (= µs per token)
// Simulator and client share the machine; the simulator runs on its own thread.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#include "client/http_client.h"
#include "core/stats.h"
#include "perf/metrics.h"
#include "sim/sim_server.h"

namespace {

using nlohmann::json;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::vector<int> ParseList(const char* s) {
  std::vector<int> out;
  std::string str(s);
  std::size_t pos = 0;
  while (pos < str.size()) {
    std::size_t comma = str.find(',', pos);
    out.push_back(std::atoi(str.substr(pos, comma - pos).c_str()));
    if (comma == std::string::npos) {
      break;
    }
    pos = comma + 1;
  }
  return out;
}

struct Row {
  int concurrency = 0;
  int ok = 0;
  int failed = 0;
  double itl_ms = 0;
  sb::Summary ttft_err_ms, lag_ms, decode_err_pct;
  double cpu_ms_per_1k_tokens = 0;
  long long tokens = 0;
  double max_emit_lag_us = 0;
};

Row Measure(int concurrency, int tokens, double itl_ms) {
  sb::sim::SimOptions so;
  so.ttft_ms = 20;
  so.prefill_us_per_token = 0;
  // Keep the simulator's event rate within one core: 1,000 streams at 20 ms per step is
  // 50,000 events/s.
  so.itl_ms = itl_ms > 0 ? itl_ms : concurrency >= 500 ? 20 : 5;
  so.jitter_ms = 0;
  so.concurrency_slowdown = 0;
  so.max_batch = concurrency;
  auto sim = sb::sim::SimServer::Start(so);
  if (!sim) {
    std::fprintf(stderr, "cannot start simulator: %s\n", sim.error().message.c_str());
    std::exit(3);
  }
  sb::client::ClientOptions co;
  co.endpoint = sim.value()->base_url();
  sb::client::Client client(co);

  sb::client::ChatParams p;
  p.model = so.model;
  p.messages.push_back({"user", "Count sheep.", ""});
  p.max_tokens = tokens;
  p.force_length = true;
  std::string body = sb::client::BuildChatBody(p, sb::client::ServerKind::kSim);
  std::vector<sb::client::ChatCall> calls(static_cast<std::size_t>(concurrency));
  for (std::size_t i = 0; i < calls.size(); ++i) {
    calls[i].id = i;
    calls[i].body = body;
  }
  // Warm the connection pool so every level measures streams, not TCP handshakes.
  {
    std::stop_source s;
    client.RunChats(calls, {}, s.get_token());
  }
  std::stop_source stop;
  double cpu0 = ThreadCpuSeconds();
  auto rs = client.RunChats(calls, {}, stop.get_token());
  double cpu = ThreadCpuSeconds() - cpu0;

  Row row;
  row.concurrency = concurrency;
  row.itl_ms = so.itl_ms;
  std::vector<double> ttft_err, lag, derr;
  for (const auto& r : rs) {
    if (r.outcome != sb::client::Outcome::kOk || r.sim_json.empty()) {
      ++row.failed;
      continue;
    }
    ++row.ok;
    auto m = sb::perf::ComputeMetrics(r);
    json truth = json::parse(r.sim_json);
    row.tokens += m.completion_tokens;
    ttft_err.push_back(*m.ttft_ms - truth["ttft_ms"].get<double>());
    lag.push_back(
        static_cast<double>(r.events.front().t_ns - truth["first_token_ns"].get<std::int64_t>()) /
        1e6);
    if (m.decode_tok_s) {
      derr.push_back(100.0 * (*m.decode_tok_s / truth["decode_tok_s"].get<double>() - 1.0));
    }
    row.max_emit_lag_us = std::max(row.max_emit_lag_us, truth.value("max_emit_lag_us", 0.0));
  }
  row.ttft_err_ms = sb::Summarize(ttft_err);
  row.lag_ms = sb::Summarize(lag);
  std::vector<double> abs_derr;
  for (double d : derr) {
    abs_derr.push_back(std::fabs(d));
  }
  row.decode_err_pct = sb::Summarize(abs_derr);
  row.cpu_ms_per_1k_tokens =
      row.tokens > 0 ? cpu * 1e3 / (static_cast<double>(row.tokens) / 1e3) : 0;
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> levels = {1, 64, 1000};
  int tokens = 128;
  double itl_ms = 0;  // 0: 5 ms, 20 ms from 500 streams
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--levels") == 0) {
      levels = ParseList(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--tokens") == 0) {
      tokens = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--itl-ms") == 0) {
      itl_ms = std::atof(argv[i + 1]);
    }
  }
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);

  std::printf(
      "| Streams | ITL (ms) | OK | TTFT error median / p99 / max (ms) | "
      "first-token delivery lag median / p99 (ms) | |decode error| median / max (%%) | "
      "client CPU per 1k tokens (ms) | sim max emit lag (µs) |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (int c : levels) {
    Row r = Measure(c, tokens, itl_ms);
    std::printf(
        "| %d | %g | %d/%d | %.3f / %.3f / %.3f | %.3f / %.3f | %.3f / %.3f | %.2f | %.0f |\n",
        r.concurrency, r.itl_ms, r.ok, r.ok + r.failed, r.ttft_err_ms.median, r.ttft_err_ms.p99,
        r.ttft_err_ms.max, r.lag_ms.median, r.lag_ms.p99, r.decode_err_pct.median,
        r.decode_err_pct.max, r.cpu_ms_per_1k_tokens, r.max_emit_lag_us);
    std::fflush(stdout);
  }
  return 0;
}
