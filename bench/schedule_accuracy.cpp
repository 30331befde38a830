// How exactly does the open-loop scheduler send on time? Runs the rate profile (the product's
// own code path: Session::Rate, samples through the run's writer thread) against the in-process
// simulator at high arrival rates with 1-token outputs, and reports how late each request left
// relative to its scheduled time.
//
//   build/bench/schedule_accuracy [--rates 100,1000,5000] [--seconds 2] [--arrival poisson]
//
// Per rate it prints: requests sent and ok, the achieved send rate, late sends (more than 1 ms
// behind schedule), the schedule lag (actual send − scheduled) p50 / p99 / max in µs, the
// event-processing delay p99, the cost of building and writing each sample, and the client
// thread's CPU use. Simulator and client share the machine; the simulator runs on its own
// threads.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sys/resource.h>

#include "client/http_client.h"
#include "core/clock.h"
#include "perf/profiles.h"
#include "perf/sample_writer.h"
#include "perf/schedule.h"
#include "sim/sim_server.h"

namespace {

using nlohmann::json;

std::vector<double> ParseList(const char* s) {
  std::vector<double> out;
  std::string str(s);
  std::size_t pos = 0;
  while (pos < str.size()) {
    std::size_t comma = str.find(',', pos);
    out.push_back(std::atof(str.substr(pos, comma - pos).c_str()));
    if (comma == std::string::npos) {
      break;
    }
    pos = comma + 1;
  }
  return out;
}

double Get(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : -1.0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> rates = {100, 1000, 5000};
  double seconds = 2;
  std::string arrival = "poisson";
  for (int i = 1; i < argc; i += 2) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf(
          "usage: schedule_accuracy [--rates 100,1000,5000] [--seconds 2] [--arrival poisson]\n");
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n", argv[i]);
      return 2;
    }
    if (std::strcmp(argv[i], "--rates") == 0) {
      rates = ParseList(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--seconds") == 0) {
      seconds = std::atof(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--arrival") == 0) {
      arrival = argv[i + 1];
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  auto process = sb::perf::ParseArrival(arrival);
  if (!process) {
    std::fprintf(stderr, "--arrival: constant, poisson or gamma\n");
    return 2;
  }
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);

  sb::sim::SimOptions so;
  so.ttft_ms = 1;
  so.prefill_us_per_token = 0;
  so.itl_ms = 1;
  so.jitter_ms = 0;
  so.concurrency_slowdown = 0;
  so.max_batch = 4096;
  auto sim = sb::sim::SimServer::Start(so);
  if (!sim) {
    std::fprintf(stderr, "cannot start simulator: %s\n", sim.error().message.c_str());
    return 3;
  }
  sb::client::ClientOptions co;
  co.endpoint = sim.value()->base_url();
  sb::client::Client client(co);
  // Samples go where a run directory's would, minus the disk: through the run's writer thread,
  // dumped, written and flushed.
  std::FILE* sink = std::fopen("/dev/null", "w");
  if (sink == nullptr) {
    return 3;
  }
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
      client, {so.model, sb::client::ServerKind::kSim},
      [&writer](sb::perf::Sample s) { writer.Post(std::move(s)); }, nullptr, stop.get_token(),
      sb::ToNanos(std::chrono::steady_clock::now()));

  std::printf(
      "| Rate (req/s) | Arrival | Sent | OK | Achieved (req/s) | Late sends (> 1 ms) | "
      "Schedule lag p50 / p99 / max (µs) | Event delay p99 (µs) | Sample cost (µs/req) | "
      "Client CPU (%% of a core) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (double rate : rates) {
    sb::perf::ProfileOptions o;
    o.warmup = 1;
    o.rate.rates = {rate};
    o.rate.arrival = *process;
    o.rate.duration_s = seconds;
    o.rate.tokens = 1;
    if (auto ok = sb::perf::ValidateRateOptions(o.rate); !ok) {
      std::fprintf(stderr, "%s\n", ok.error().message.c_str());
      return 2;
    }
    json r = session.Rate(o);
    const json& p = r["rates"][0];
    const json& lag = p["self_check"]["schedule_lag_us"];
    std::printf(
        "| %.0f | %s | %lld | %lld | %.1f | %lld | %.0f / %.0f / %.0f | %.0f | %.1f | %.0f |\n",
        rate, arrival.c_str(), p["sent"].get<long long>(), p["ok"].get<long long>(),
        Get(p, "achieved_rate_rps"), p["late_sends"].get<long long>(), Get(lag, "p50"),
        Get(lag, "p99"), Get(lag, "max"), Get(p["self_check"]["event_delay_us"], "p99"),
        Get(p["self_check"], "sample_cost_us"), Get(p["self_check"], "client_cpu_pct"));
    std::fflush(stdout);
  }
  for (const auto& w : session.warnings()) {
    std::printf("warning: %s\n", w.c_str());
  }
  writer.Drain();  // nothing left to write to the file closed next
  std::fclose(sink);
  return 0;
}
