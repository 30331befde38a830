#include "run/target.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "core/redact.h"

namespace sb::run {

namespace {

using nlohmann::json;

}  // namespace

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(std::llround(seconds * 1e3)));
}

// The client's options for the server root or API base `endpoint`.
client::ClientOptions MakeClientOptions(const TargetOptions& o, const std::string& endpoint,
                                        const std::string& api_key) {
  client::ClientOptions co;
  co.endpoint = endpoint;
  co.api_key = api_key;
  co.connect_timeout = Millis(o.connect_timeout_s);
  co.first_byte_timeout = Millis(o.first_byte_timeout_s);
  co.idle_timeout = Millis(o.idle_timeout_s);
  co.total_timeout = Millis(o.request_timeout_s);
  co.retries = o.retries;
  co.ca_cert = o.ca_cert;
  co.insecure = o.insecure;
  co.io_threads = o.io_threads;
  co.transport = o.http_transport == "native" ? client::ClientOptions::Transport::kNative
                 : o.http_transport == "curl" ? client::ClientOptions::Transport::kCurl
                                              : client::ClientOptions::Transport::kAuto;
  return co;
}

// A limit must be a finite number of seconds above 0 (or exactly 0 where `zero_means_none`)
// and at most kMaxLimitS: 0, negative or NaN silently turning a limit off is how a run hangs,
// and infinity or 1e16 overflow the clock's nanoseconds into a limit in the past.
Result<void> CheckSeconds(const char* flag, double v, bool zero_means_none) {
  if (std::isfinite(v) && v <= kMaxLimitS && (v > 0 || (zero_means_none && v == 0))) {
    return {};
  }
  return MakeError(ErrorCode::kUsage,
                   fmt::format("{} must be a number of seconds above 0 and at most {:.0f}{} "
                               "(got {})",
                               flag, kMaxLimitS, zero_means_none ? ", or 0 for no limit" : "", v));
}

Result<void> CheckTimeouts(const TargetOptions& o) {
  for (auto [flag, v] : {std::pair{"--connect-timeout-s", o.connect_timeout_s},
                         {"--first-byte-timeout-s", o.first_byte_timeout_s},
                         {"--idle-timeout-s", o.idle_timeout_s}}) {
    if (auto ok = CheckSeconds(flag, v, false); !ok) {
      return ok;
    }
  }
  return CheckSeconds("--request-timeout-s", o.request_timeout_s, true);
}

// Settings of the simulator that `run` and `perf` start when no --endpoint is given: a fast,
// plausible server, so the whole product can be shown on a machine without a model.
sim::SimOptions EmbeddedSimOptions() {
  sim::SimOptions o;
  o.ttft_ms = 40;
  o.prefill_us_per_token = 20;
  o.itl_ms = 4;
  o.jitter_ms = 0.5;
  o.concurrency_slowdown = 0.05;
  o.max_batch = 64;
  o.seed = 1;
  return o;
}

// `embedded`: the simulator to start when no --endpoint is given; `what` says what it plays.
Result<Target> OpenTarget(const TargetOptions& o, const sim::SimOptions& embedded,
                          const std::string& what) {
  Target t;
  std::string endpoint = o.endpoint;
  if (endpoint.empty()) {
    auto started = sim::SimServer::Start(embedded);
    if (!started) {
      return started.error().WithContext("starting the built-in simulator");
    }
    t.sim = std::move(started.value());
    endpoint = t.sim->base_url();
    std::printf(
        "servebench: no --endpoint given: running against the built-in simulator at %s "
        "(figures show the harness, not a model%s)\n",
        endpoint.c_str(), what.c_str());
    std::fflush(stdout);
  }
  auto key = ResolveApiKey(o);
  if (!key) {
    return key.error();
  }
  AddSecret(key.value());
  AddUrlSecrets(endpoint);
  t.client = std::make_unique<client::Client>(MakeClientOptions(o, endpoint, key.value()));
  if (auto valid = t.client->Validate(); !valid) {
    return valid.error();
  }
  // As shown and recorded: credentials in the URL (user:password@) never leave the client.
  t.endpoint = RedactUrl(t.client->root() + "/v1");
  auto info = client::DetectServer(*t.client);
  if (!info) {
    return info.error();
  }
  t.info = info.value();
  auto model = client::ChooseModel(t.info, o.model);
  if (!model) {
    return model.error();
  }
  t.model = model.value();
  return t;
}

json TargetJson(const Target& t) {
  return json{
      {"endpoint", t.endpoint},
      {"model", t.model},
      {"simulated", t.sim != nullptr},
      {"http_transport",
       t.client != nullptr ? json(std::string(t.client->transport())) : json(nullptr)},
      {"server",
       {{"kind", std::string(client::ServerKindName(t.info.kind))},
        {"version", t.info.version.empty() ? json(nullptr) : json(t.info.version)}}},
      {"models", t.info.models},
      {"max_model_len", t.info.max_model_len > 0 ? json(t.info.max_model_len) : json(nullptr)}};
}

}  // namespace sb::run
