// libFuzzer target: the chunk fast path (client/chunk_scan.h) must agree with the full JSON
// parser. Input: an SSE stream. Each event's data goes through ApplyStreamEvent with the fast
// path allowed and with the full parser only, into two responses; after every event both must
// return the same and hold the same fields (tests/support/chat_response_diff.h), or it aborts.
// Each payload is also applied alone to a fresh pair of responses, so an early malformed event
// does not hide the ones after it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "../tests/support/chat_response_diff.h"
#include "client/chat.h"
#include "client/chunk_scan.h"
#include "client/sse_parser.h"

namespace {

using sb::client::ChatResponse;
using sb::client::detail::ApplyStreamEventImpl;

struct Pair {
  ChatResponse fast, full;
};

// False once the full parser refused an event (the stream would end there).
bool Apply(std::string_view payload, std::int64_t t_ns, Pair& p) {
  const bool fast_ok = ApplyStreamEventImpl(payload, t_ns, p.fast, true);
  const bool full_ok = ApplyStreamEventImpl(payload, t_ns, p.full, false);
  const std::string diff = sb::testing::ChatResponseDiff(p.fast, p.full);
  if (fast_ok != full_ok || !diff.empty()) {
    std::fprintf(stderr, "chunk_fuzz: fast path differs from the full parser (%s) on: %.*s\n",
                 diff.empty() ? "return value" : diff.c_str(), static_cast<int>(payload.size()),
                 payload.data());
    std::abort();
  }
  return full_ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  sb::client::SseParser parser;
  std::vector<sb::client::SseEvent> events;
  parser.Feed(input, events);
  parser.Finish(events);
  Pair stream;
  bool alive = true;
  std::int64_t t = 0;
  for (const auto& ev : events) {
    t += 1000;
    if (alive) {
      alive = Apply(ev.data, t, stream);
    }
    Pair alone;
    Apply(ev.data, t, alone);
  }
  // The whole input as one payload too (mutations that break the SSE framing still test JSON).
  Pair whole;
  Apply(input, 1, whole);
  return 0;
}
