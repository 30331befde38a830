#include "perf/server_watch.h"

#include <algorithm>

#include <fmt/format.h>

namespace sb::perf {

bool Silent(const client::ChatResponse& r) {
  if (r.replayed || r.send_ns == 0) {
    return false;
  }
  switch (r.outcome) {
    case client::Outcome::kTransport:
      return r.first_byte_ns == 0;
    case client::Outcome::kTimeout:
      return r.first_byte_ns == 0 || r.reason.starts_with("idle gap");
    default:
      return false;
  }
}

std::string_view TimeoutFlag(std::string_view reason) {
  if (reason.starts_with("no connection within")) {
    return "--connect-timeout-s";
  }
  if (reason.starts_with("no first byte")) {
    return "--first-byte-timeout-s";
  }
  if (reason.starts_with("idle gap")) {
    return "--idle-timeout-s";
  }
  if (reason.starts_with("total time")) {
    return "--request-timeout-s";
  }
  return "";
}

std::string FailureNote(const client::ChatResponse& r) {
  std::string_view name = client::OutcomeName(r.outcome);
  std::string note = r.reason.empty() || r.reason == name ? std::string(name)
                                                          : fmt::format("{}: {}", name, r.reason);
  if (r.outcome == client::Outcome::kTimeout) {
    if (const std::string_view flag = TimeoutFlag(r.reason); !flag.empty()) {
      note += fmt::format(" (raise with {})", flag);
    }
  }
  return note;
}

Result<void> ProbeModels(client::Client& client, std::chrono::milliseconds limit) {
  auto r = client.Get("/v1/models", limit);
  if (r) {
    return {};
  }
  const std::string& message = r.error().message;  // "GET <url>: <why>"
  const std::size_t at = message.find("/v1/models: ");
  return MakeError(
      r.error().code,
      "GET /v1/models: " + (at == std::string::npos
                                ? message
                                : message.substr(at + std::string_view("/v1/models: ").size())));
}

std::chrono::milliseconds ServerWatch::ProbeLimit(std::chrono::milliseconds first_byte) {
  using std::chrono::milliseconds;
  if (first_byte.count() <= 0) {
    return milliseconds(5'000);
  }
  return std::clamp(first_byte / 4, milliseconds(500), milliseconds(5'000));
}

bool ServerWatch::Observe(const client::ChatResponse& r) {
  if (gone_ || r.replayed || r.send_ns == 0 || r.outcome == client::Outcome::kCancelled) {
    return false;
  }
  if (!Silent(r)) {
    silent_ = 0;
    return false;
  }
  if (++silent_ < kSilentInARow) {
    return false;
  }
  const std::string silence =
      fmt::format("{} requests in a row got no answer (last: {})", silent_, r.reason);
  if (probe_) {
    auto answered = probe_();
    if (answered) {
      silent_ = 0;  // alive: slow or failing, not gone
      return false;
    }
    reason_ =
        fmt::format("{}, and the health probe got none: {}", silence, answered.error().message);
  } else {
    reason_ = silence;
  }
  gone_ = true;
  return true;
}

}  // namespace sb::perf
