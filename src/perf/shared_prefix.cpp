// --shared-prefix (shared_prefix.h): parsing, the group prefixes fitted to the server's
// tokenizer, and the profile's "shared_prefix" summary.
#include "perf/shared_prefix.h"

#include <charconv>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "perf/profiles.h"

namespace sb::perf {

using nlohmann::json;

Result<SharedPrefix> ParseSharedPrefix(std::string_view text) {
  const auto bad = [&text] {
    return Error{ErrorCode::kUsage,
                 fmt::format("--shared-prefix must be GROUPS:TOKENS with whole numbers > 0 "
                             "(e.g. 4:512), got '{}'",
                             text)};
  };
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) {
    return bad();
  }
  auto number = [](std::string_view s, long long max) -> std::optional<int> {
    long long v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty() || v <= 0 || v > max) {
      return std::nullopt;
    }
    return static_cast<int>(v);
  };
  const auto groups = number(text.substr(0, colon), 100000);
  const auto tokens = number(text.substr(colon + 1), 10000000);
  if (!groups || !tokens) {
    return bad();
  }
  return SharedPrefix{*groups, *tokens};
}

void Session::ApplySharedPrefix(const ProfileOptions& options, std::string& content) {
  const SharedPrefix& sp = options.shared_prefix;
  if (!prefix_active_ || sp.groups <= 0) {
    return;
  }
  const auto group = static_cast<int>(prefix_next_++ % static_cast<std::size_t>(sp.groups));
  last_prefix_group_ = group;
  if (prefix_texts_.size() != static_cast<std::size_t>(sp.groups)) {
    prefix_texts_.assign(static_cast<std::size_t>(sp.groups), std::string());
    prefix_counts_.assign(static_cast<std::size_t>(sp.groups), -1);
  }
  std::string& text = prefix_texts_[static_cast<std::size_t>(group)];
  if (text.empty()) {
    // The template's tokens around one message's text ("x" is one token on every tokenizer).
    const auto one = CountPromptTokens("x");
    const int overhead = one ? std::max(0, *one - 1) : -1;
    // A head unique to the session and group: no two groups (nor two runs) share a token.
    const std::string head = fmt::format("[prefix {:x}-{}] ", session_nonce_, group + 1);
    auto [fitted, count] = FitText(head, sp.tokens, Mix64(session_nonce_ * 131 + group), overhead);
    text = std::move(fitted);
    prefix_counts_[static_cast<std::size_t>(group)] = count;
    if (count < 0) {
      Warn(
          fmt::format("--shared-prefix: the server has no tokenizer, so each prefix is about {} "
                      "tokens (estimated).",
                      sp.tokens));
    } else if (count != sp.tokens) {
      Warn(
          fmt::format("--shared-prefix: the closest prefix the server's tokenizer allows is {} "
                      "tokens (asked {}).",
                      count, sp.tokens));
    }
  }
  content = text + "\n" + content;
}

void Session::NotePrefixGroup(std::uint64_t id, const client::ChatParams& params) {
  if (!prefix_active_ || params.messages.empty()) {
    return;
  }
  // "[prefix <nonce>-<group>] ...", as ApplySharedPrefix wrote it.
  const std::string& content = params.messages.front().content;
  if (!content.starts_with("[prefix ")) {
    return;
  }
  const auto dash = content.find('-');
  const auto end = content.find(']');
  if (dash == std::string::npos || end == std::string::npos || end <= dash + 1) {
    return;
  }
  int group = 0;
  const char* first = content.data() + dash + 1;
  if (std::from_chars(first, content.data() + end, group).ptr == content.data() + end) {
    prefix_group_by_id_[id] = group;
  }
}

json Session::SharedPrefixJson(const ProfileOptions& options) const {
  json counts = json::array();
  for (int c : prefix_counts_) {
    counts.push_back(c >= 0 ? json(c) : json(nullptr));
  }
  return {{"groups", options.shared_prefix.groups},
          {"tokens", options.shared_prefix.tokens},
          {"requests", prefix_next_},
          {"prefix_tokens", counts}};
}

}  // namespace sb::perf
