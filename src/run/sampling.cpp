#include "run/sampling.h"

#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "client/http_client.h"
#include "resources/sources.h"

namespace sb::run {

Result<void> CheckResourceArgs(const ResourceArgs& args) {
  if (args.period_ms < 10 || args.period_ms > 60'000) {
    return MakeError(
        ErrorCode::kUsage,
        fmt::format("--sample-period-ms must be in 10..60000 (got {})", args.period_ms));
  }
  return {};
}

std::unique_ptr<resources::Sampler> StartSampler(const ResourceArgs& args,
                                                 const TargetOptions& target_options,
                                                 const Target& target,
                                                 const launch::ServerProcess* server, Clock& clock,
                                                 std::vector<std::string>& notes) {
  auto sampler =
      std::make_unique<resources::Sampler>(clock, std::chrono::milliseconds(args.period_ms));
  std::string nvml_note;
  if (auto nvml = resources::OpenNvml(args.nvml_lib, &nvml_note)) {
    sampler->Add(std::move(nvml.value()));
    if (!nvml_note.empty()) {
      notes.push_back(nvml_note + ".");
    }
  } else {
    sampler->AddUnavailable("nvml", nvml.error().message);
  }
  if (server != nullptr) {
    if (auto proc = resources::OpenProcessTree(server->pid())) {
      sampler->Add(std::move(proc.value()));
    } else {
      sampler->AddUnavailable("process", proc.error().message);
    }
  } else {
    sampler->AddUnavailable(
        "process", target.sim ? "the built-in simulator runs inside servebench, not as a server "
                                "process (start one with --serve to measure it)"
                              : "servebench did not start the server (--serve, launch): its "
                                "processes are not known");
  }
  // The gauges come through a client of their own: the run's client is used by the measuring
  // thread, and these scrapes must not enter the run's journal. The sampler serialises reads,
  // so this client is never used by two threads at once.
  auto key = ResolveApiKey(target_options);
  std::shared_ptr<client::Client> scraper = std::make_shared<client::Client>(MakeClientOptions(
      target_options, target.client->root() + target.client->query(), key ? key.value() : ""));
  auto fetch = [scraper]() -> Result<std::string> {
    auto resp = scraper->Get("/metrics", std::chrono::milliseconds(2000));  // no journal
    if (!resp) {
      return resp.error();
    }
    if (resp->status != 200) {
      return MakeError(ErrorCode::kHttp, fmt::format("GET /metrics: HTTP {}", resp->status));
    }
    return std::move(resp->body);
  };
  if (auto gauges = resources::OpenPrometheusGauges(fetch)) {
    sampler->Add(std::move(gauges.value()));
  } else {
    sampler->AddUnavailable("prometheus", gauges.error().message);
  }
  if (!args.power_cmd.empty()) {
    if (auto cmd = resources::OpenPowerCommand(args.power_cmd)) {
      sampler->Add(std::move(cmd.value()));
    } else {
      sampler->AddUnavailable("power-cmd", cmd.error().message);
    }
  } else {
    sampler->AddUnavailable("power-cmd", "no --power-cmd given");
  }
  sampler->Start();
  return sampler;
}

}  // namespace sb::run
