// The simulator's generated tool calls (`servebench sim --tool-call-probability P`,
// docs/simulator.md "Tool calls"): a request that offers `tools` and has no scripted answer
// calls one of them with probability P instead of answering in words. The draw is a function of
// the seed and the request's message text only, so the same conversation gets the same call on
// every run; a request without tools never gets one.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json_fwd.hpp>

#include "sim/sim_server.h"

namespace sb::sim {

// The call a request offering `tools` (its "tools" field, any JSON) makes, or nullopt: no tools
// with a function name, probability 0, or the draw said no. text_hash: FNV-1a over the
// request's messages (ChatRequest::text_hash).
std::optional<SimToolCall> DrawToolCall(const nlohmann::json& tools, double probability,
                                        std::uint64_t seed, std::uint64_t text_hash);

}  // namespace sb::sim
