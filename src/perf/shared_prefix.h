// Shared prompt prefixes for the concurrency and rate profiles (`--shared-prefix GROUPS:TOKENS`,
// docs/workloads.md "Shared prefixes"): request k's prompt starts with prefix k mod GROUPS, a
// text of TOKENS tokens by the server's own count (fitted once per group and session), then
// the request's unique nonce and the rest of its prompt, so a server's prefix cache can serve
// the prefix and nothing after it. The runner side is Session::ApplySharedPrefix
// (shared_prefix.cpp).
#pragma once

#include <string_view>

#include "core/result.h"

namespace sb::perf {

struct SharedPrefix {
  int groups = 0;  // 0 = off
  int tokens = 0;
};

// "GROUPS:TOKENS" (both whole numbers > 0, GROUPS <= 100000, TOKENS <= 10000000); kUsage error
// naming --shared-prefix otherwise.
Result<SharedPrefix> ParseSharedPrefix(std::string_view text);

}  // namespace sb::perf
