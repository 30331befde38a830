// Test support for the speed profiles: a simulator started in-process with a client and a
// session aimed at it, collecting every sample.
#pragma once

#include <memory>
#include <stop_token>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "core/clock.h"
#include "perf/profiles.h"
#include "sim/sim_server.h"

namespace sb::perf::fixture {

using nlohmann::json;

struct Fixture {
  std::unique_ptr<sim::SimServer> sim;
  std::unique_ptr<client::Client> client;
  std::vector<json> samples;
  std::stop_source stop;

  explicit Fixture(sim::SimOptions o) {
    auto s = sim::SimServer::Start(o);
    EXPECT_TRUE(s.has_value());
    sim = std::move(s.value());
    client::ClientOptions co;
    co.endpoint = sim->base_url();
    client = std::make_unique<client::Client>(co);
  }

  Session MakeSession() {
    return Session(
        *client, {"sim-model", client::ServerKind::kSim},
        [this](const json& j) { samples.push_back(j); }, nullptr, stop.get_token(),
        ToNanos(std::chrono::steady_clock::now()));
  }
};

inline sim::SimOptions Quiet() {
  sim::SimOptions o;
  o.ttft_ms = 20;
  o.prefill_us_per_token = 0;
  o.itl_ms = 2;
  o.jitter_ms = 0;
  o.concurrency_slowdown = 0.5;
  return o;
}

}  // namespace sb::perf::fixture
