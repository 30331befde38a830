#include "sim/engine.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <vector>

namespace sb::sim {
namespace {

constexpr std::array<std::string_view, 64> kFillerWords = {
    " the",    " model",  " of",   " and",   " a",       " to",      " in",    " is",
    " that",   " for",    " it",   " with",  " as",      " on",      " was",   " be",
    " by",     " this",   " are",  " from",  " at",      " or",      " an",    " which",
    " data",   " system", " time", " can",   " more",    " one",     " first", " new",
    " token",  " server", " test", " value", " result",  " each",    " when",  " other",
    " number", " into",   " some", " these", " two",     " may",     " then",  " used",
    " only",   " over",   " also", " after", " most",    " through", " where", " much",
    " before", " well",   " such", " under", " between", " both",    " same",  " while",
};

// [[sim:loop]] answers cycle through this phrase (indices into kFillerWords):
// " the model is the same as the model is the same as"...
constexpr std::array<int, 6> kLoopPhrase = {0, 1, 7, 0, 62, 12};

}  // namespace

std::optional<Fault> ParseFault(std::string_view name) {
  if (name == "reset") {
    return Fault::kReset;
  }
  if (name == "stall") {
    return Fault::kStall;
  }
  if (name == "malformed") {
    return Fault::kMalformed;
  }
  if (name == "500") {
    return Fault::kHttp500;
  }
  if (name == "429") {
    return Fault::kHttp429;
  }
  if (name == "503") {
    return Fault::kHttp503;
  }
  if (name == "giant") {
    return Fault::kGiant;
  }
  if (name == "badutf8") {
    return Fault::kBadUtf8;
  }
  for (const Fault f : {Fault::kEndless, Fault::kDoneOpen, Fault::kDoneOnly, Fault::kHugeUsage,
                        Fault::kHugeHeader}) {
    if (name == FaultName(f)) {
      return f;
    }
  }
  return std::nullopt;
}

std::string_view FaultName(Fault fault) {
  switch (fault) {
    case Fault::kNone:
      return "none";
    case Fault::kReset:
      return "reset";
    case Fault::kStall:
      return "stall";
    case Fault::kMalformed:
      return "malformed";
    case Fault::kHttp500:
      return "500";
    case Fault::kHttp429:
      return "429";
    case Fault::kHttp503:
      return "503";
    case Fault::kGiant:
      return "giant";
    case Fault::kBadUtf8:
      return "badutf8";
    case Fault::kEndless:
      return "endless";
    case Fault::kDoneOpen:
      return "done_open";
    case Fault::kDoneOnly:
      return "done_only";
    case Fault::kHugeUsage:
      return "huge_usage";
    case Fault::kHugeHeader:
      return "huge_header";
  }
  return "none";
}

Plan PlanChat(const ChatRequest& request, const SimOptions& options, Rng& rng) {
  Plan plan;
  const std::uint64_t text_key = Mix64(options.seed) ^ request.text_hash;
  plan.text_seed = Mix64(text_key ^ 0x5bd1e995ULL);

  int natural_answer = 0;
  if (request.loop && request.scripted) {
    natural_answer = 1 << 30;  // a scripted loop never ends by itself
  } else if (request.forced_tokens) {
    natural_answer = std::max(1, *request.forced_tokens);
  } else {
    const int hi = std::max(1, options.default_output_tokens);
    const int lo = std::max(1, (hi + 1) / 2);
    Rng length_rng(text_key);
    natural_answer = static_cast<int>(length_rng.Between(lo, hi));
  }
  int reasoning_budget =
      request.thinking ? std::max(0, request.reasoning_tokens.value_or(options.thinking_tokens))
                       : 0;
  if (request.thinking && request.loop && request.scripted) {
    reasoning_budget = 1 << 30;  // the thinking loops
  }
  const long long natural_total = static_cast<long long>(reasoning_budget) + natural_answer;

  // The context window bounds everything; vLLM's default max_tokens is the room left.
  const int room = std::max(1, options.max_model_len - request.prompt_tokens);
  const int limit = std::min(request.max_tokens.value_or(room), room);
  if (request.ignore_eos) {
    plan.completion_tokens = limit;
    plan.finish_reason = "length";
  } else {
    const long long wanted = std::max<long long>(natural_total, request.min_tokens);
    if (wanted > limit) {
      plan.completion_tokens = limit;
      plan.finish_reason = "length";
    } else {
      plan.completion_tokens = static_cast<int>(wanted);
      plan.finish_reason = request.tool_tokens.empty() ? "stop" : "tool_calls";
    }
  }
  plan.reasoning_tokens = std::min(reasoning_budget, plan.completion_tokens);

  if (request.forced_fault) {
    plan.fault = *request.forced_fault;
  } else if (options.fault_rate > 0.0 && rng.Uniform() < options.fault_rate) {
    std::vector<Fault> kinds;
    for (const auto& name : options.fault_kinds) {
      if (auto f = ParseFault(name)) {
        kinds.push_back(*f);
      }
    }
    if (kinds.empty()) {
      kinds.assign(std::begin(kDefaultRandomFaults), std::end(kDefaultRandomFaults));
    }
    plan.fault = kinds[rng.Below(kinds.size())];
  }
  // Reset and malformed strike after a few tokens (before the stream could end normally);
  // a stall needs a later token to delay, so it strikes before the last one (or before the
  // first when there is only one).
  plan.fault_after_tokens = plan.fault == Fault::kStall ? std::min(3, plan.completion_tokens - 1)
                                                        : std::min(3, plan.completion_tokens);
  return plan;
}

std::int64_t FirstTokenDelayNs(const SimOptions& options, int prompt_tokens) {
  const double ns = options.ttft_ms * 1e6 + options.prefill_us_per_token * 1e3 * prompt_tokens;
  return static_cast<std::int64_t>(std::llround(std::max(0.0, ns)));
}

std::int64_t StepNs(const SimOptions& options, int running, Rng& rng) {
  double ms = options.itl_ms * (1.0 + options.concurrency_slowdown * std::max(0, running - 1));
  if (options.jitter_ms > 0.0) {
    ms += (2.0 * rng.Uniform() - 1.0) * options.jitter_ms;
  }
  return static_cast<std::int64_t>(std::llround(std::max(0.0, ms) * 1e6));
}

int DraftAccepted(const SimOptions& options, Rng& rng) {
  int accepted = 0;
  double previous = 1.0;
  for (int i = 0; i < options.spec_tokens; ++i) {
    const double rate =
        i < static_cast<int>(options.spec_accept.size()) ? options.spec_accept[i] : 0.0;
    const double conditional = previous > 0.0 ? rate / previous : 0.0;
    if (rng.Uniform() >= conditional) {
      break;
    }
    ++accepted;
    previous = rate;
  }
  return accepted;
}

std::string_view TokenText(std::uint64_t text_seed, int index, bool loop) {
  if (loop) {
    return kFillerWords[kLoopPhrase[static_cast<std::size_t>(index) % kLoopPhrase.size()]];
  }
  const std::uint64_t h = Mix64(text_seed + static_cast<std::uint64_t>(index));
  return kFillerWords[h & 63U];
}

std::optional<long long> ArithmeticAnswer(std::string_view text) {
  constexpr std::string_view kWhat = "What is ";
  std::optional<long long> answer;
  auto number = [&](std::size_t& i, long long& out) {
    std::size_t start = i;
    out = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - start < 9) {
      out = out * 10 + (text[i] - '0');
      ++i;
    }
    return i > start;
  };
  auto skip_spaces = [&](std::size_t& i) {
    while (i < text.size() && text[i] == ' ') {
      ++i;
    }
  };
  for (std::size_t pos = text.find(kWhat); pos != std::string_view::npos;
       pos = text.find(kWhat, pos + 1)) {
    std::size_t i = pos + kWhat.size();
    long long a = 0, b = 0;
    if (!number(i, a)) {
      continue;
    }
    skip_spaces(i);
    if (text.substr(i, 2) == "\xc3\x97") {  // U+00D7 MULTIPLICATION SIGN in UTF-8
      i += 2;
    } else if (i < text.size() && (text[i] == 'x' || text[i] == '*')) {
      ++i;
    } else {
      continue;
    }
    skip_spaces(i);
    if (number(i, b)) {
      answer = a * b;
    }
  }
  return answer;
}

std::span<const std::string_view> FillerWords() {
  return kFillerWords;
}

std::string RequestId(std::uint64_t seed, std::uint64_t request_number) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "chatcmpl-";
  const std::uint64_t parts[2] = {Mix64(seed ^ Mix64(request_number)),
                                  Mix64(request_number ^ Mix64(seed + 1))};
  for (const std::uint64_t part : parts) {
    for (int shift = 60; shift >= 0; shift -= 4) {
      id.push_back(kHex[(part >> shift) & 0xF]);
    }
  }
  return id;
}

}  // namespace sb::sim
