#include "core/profile_table.h"

#include <array>

namespace sb {

namespace {

// clang-format off
constexpr std::array<ProfileSpec, 8> kProfiles = {{
    {ProfileId::kDecode, "decode", "decode", "runs", "", "",
     true, true, "single-stream decode speed, TTFT excluded (median of --runs)", ""},
    {ProfileId::kConcurrency, "concurrency", "concurrency", "levels", "concurrency", "streams",
     true, true, "throughput at each of --levels parallel streams (closed loop)", "--levels,--dataset,--dataset-format,--dataset-order,--skip-bad-lines,--shared-prefix"},
    {ProfileId::kMaxTokens, "max-tokens", "max_tokens", "lengths", "max_tokens", "tokens",
     true, true, "decode speed at each output length of --lengths", "--lengths,--length-runs"},
    {ProfileId::kTtft, "ttft", "ttft", "prompts", "name", "prompt",
     true, true, "time to first token for a short and a long prompt", ""},
    {ProfileId::kContext, "context", "context", "rows", "size", "tokens",
     true, true, "prefill and decode at each prompt size of --sizes",
     "--sizes,--depth,--context-cached"},
    {ProfileId::kRate, "rate", "rate", "rates", "rate_rps", "req/s",
     false, false, "open-loop load at each of --rates, goodput against --slo, --search-rate",
     "--rates,--arrival,--burstiness,--rate-tokens,--slo,--slo-fraction,--search-rate,"
     "--search-steps,--max-concurrency,--dataset,--dataset-format,--dataset-order,"
     "--skip-bad-lines,--shared-prefix"},
    {ProfileId::kReplay, "replay", "replay", "classes", "class", "class",
     false, false, "a request trace (Mooncake, BurstGPT, Azure, JSONL) replayed on its own clock",
     "--trace,--trace-format,--time-scale,--block-tokens"},
    {ProfileId::kSessions, "sessions", "sessions", "turns", "turn", "turn",
     false, false, "multi-turn conversations and tool-calling agent loops with think time",
     "--sessions,--turns,--turn-input-tokens,--system-prompt-tokens,--think-ms,"
     "--session-concurrency,--session-rate,--max-sessions,--max-tool-rounds,"
     "--tool-result-tokens,--keep-reasoning"},
}};
// clang-format on

}  // namespace

std::span<const ProfileSpec> Profiles() {
  return kProfiles;
}

const ProfileSpec* FindProfile(std::string_view name) {
  for (const ProfileSpec& p : kProfiles) {
    if (p.name == name || p.key == name) {
      return &p;
    }
  }
  return nullptr;
}

const ProfileSpec& Profile(ProfileId id) {
  for (const ProfileSpec& p : kProfiles) {
    if (p.id == id) {
      return p;
    }
  }
  return kProfiles[0];  // unreachable: every id has an entry (tests/core/profile_table_test)
}

std::string ProfileDisplayName(std::string_view name) {
  const ProfileSpec* p = FindProfile(name);
  return std::string(p != nullptr ? p->name : name);
}

std::string ProfileNameList(bool suites_only) {
  std::string out;
  for (const ProfileSpec& p : kProfiles) {
    if (suites_only && !p.in_suites) {
      continue;
    }
    out += out.empty() ? "" : ", ";
    out += p.name;
  }
  return out;
}

}  // namespace sb
