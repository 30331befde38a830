// The hostile-server faults of the simulator (docs/simulator.md "Faults"): the answers that
// break a client in ways other than an error status, built off the per-token path.
#pragma once

#include <string>

#include "sim/api.h"
#include "sim/engine.h"

namespace sb::sim {

// The planned length of an endless stream: more than any client asks for; it never ends on its
// own in practice (at 1 µs a token it would take 18 minutes).
inline constexpr int kEndlessTokens = 1 << 30;

// The complete answer of a fault that is one reply: done_only (a 200 text/event-stream body of
// only "data: [DONE]") and huge_header (a 200 whose head carries one kHugeHeaderBytes header
// line). REQUIRES: fault is kDoneOnly or kHugeHeader.
Reply HostileReply(Fault fault);

// Replaces the value of the first "completion_tokens" field of a JSON body by `tokens` (the
// huge_usage fault of a non-streaming answer). No change when the body has none.
void ReplaceCompletionTokens(std::string& body, long long tokens);

}  // namespace sb::sim
