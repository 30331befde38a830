// Test support: a client::Wire that answers from a script instead of a socket, on a virtual
// clock. Each call is answered at once with the TTFT, token gaps and outcome the script gives,
// so what sits above the wire (the perf profiles, the journal) is tested against exact truths
// with no server, no sleeping and no scheduling noise; the loopback tests keep the transport.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "core/clock.h"

namespace sb::testing {

class ScriptedWire : public client::Wire {
 public:
  // How the scripted server answers one call.
  struct Answer {
    double ttft_ms = 100;  // send -> first token
    double itl_ms = 10;    // between tokens
    int tokens = -1;       // -1: the request's max_tokens
    int prompt_tokens = 100;
    int http_status = 200;  // anything else: the call fails with this status, no tokens
  };

  // index: the call's position among every call this wire has answered.
  using Script = std::function<Answer(const nlohmann::json& request, std::size_t index)>;

  explicit ScriptedWire(Script script) : script_(std::move(script)) {}

  // The request bodies in the order they were answered.
  std::vector<nlohmann::json> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

  const std::string& root() const override { return root_; }

  const std::string& query() const override { return query_; }

  Result<void> Validate() const override { return {}; }

  std::vector<std::int64_t> IoThreadCpuNs() const override { return {}; }

  std::vector<client::ChatResponse> RunChats(std::span<const client::ChatCall> calls,
                                             const client::RunHooks& hooks,
                                             std::stop_token /*stop*/) override {
    std::vector<client::ChatResponse> out;
    // Calls without a send time leave together, at the wire's clock; it then moves past the
    // batch so that the next batch starts later.
    const std::int64_t batch_start = clock_ns_;
    std::int64_t batch_end = batch_start;
    for (const client::ChatCall& call : calls) {
      const nlohmann::json request = nlohmann::json::parse(call.body);
      std::size_t index = 0;
      {
        std::lock_guard<std::mutex> lock(mu_);
        index = requests_.size();
        requests_.push_back(request);
      }
      const Answer a = script_(request, index);
      client::ChatResponse r;
      r.id = call.id;
      r.scheduled_ns = call.send_at ? ToNanos(*call.send_at) : 0;
      r.send_ns = call.send_at ? ToNanos(*call.send_at) : batch_start;
      r.first_send_ns = r.send_ns;
      r.written_ns = r.send_ns;
      r.http_status = a.http_status;
      if (a.http_status != 200) {
        r.outcome = client::Outcome::kHttpError;
        r.reason = "HTTP " + std::to_string(a.http_status) + ": scripted failure";
        r.done_ns = r.send_ns + Ns(a.ttft_ms);
      } else {
        const int n = a.tokens >= 0 ? a.tokens : request.value("max_tokens", 16);
        r.first_byte_ns = r.send_ns + Ns(a.ttft_ms);
        for (int k = 0; k < n; ++k) {
          client::TokenEvent e;
          e.t_ns = r.first_byte_ns + static_cast<std::int64_t>(k) * Ns(a.itl_ms);
          e.tokens = 1;
          e.kinds = client::TokenEvent::kAnswer;
          r.answer += "x ";
          e.answer_end = static_cast<std::uint32_t>(r.answer.size());
          r.events.push_back(e);
        }
        r.done_ns = (r.events.empty() ? r.first_byte_ns : r.events.back().t_ns) + 1'000'000;
        r.usage.prompt_tokens = a.prompt_tokens;
        r.usage.completion_tokens = n;
        r.finish_reason = "length";
        r.streamed = true;
        r.stream_done = true;
      }
      batch_end = std::max(batch_end, r.done_ns);
      if (hooks.on_done) {
        hooks.on_done(r);
      }
      out.push_back(std::move(r));
    }
    clock_ns_ = batch_end + 1'000'000'000;
    return out;
  }

  Result<client::HttpResponse> Get(std::string_view /*path*/,
                                   std::chrono::milliseconds /*timeout*/) override {
    return client::HttpResponse{404, "{}", "application/json", "", ""};
  }

  Result<client::HttpResponse> Post(std::string_view /*path*/, std::string_view /*json_body*/,
                                    std::chrono::milliseconds /*timeout*/) override {
    return client::HttpResponse{404, "{}", "application/json", "", ""};
  }

 private:
  static std::int64_t Ns(double ms) { return static_cast<std::int64_t>(ms * 1e6 + 0.5); }

  Script script_;
  std::string root_ = "http://scripted.invalid";
  std::string query_;
  std::int64_t clock_ns_ = 1'000'000'000'000;  // the virtual clock, ns
  mutable std::mutex mu_;
  std::vector<nlohmann::json> requests_;
};

}  // namespace sb::testing
