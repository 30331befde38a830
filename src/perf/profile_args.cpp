// The table's options (core/profile_table.h) into the option structs the runners read.
#include <fmt/format.h>

#include "perf/profiles.h"

namespace sb::perf {

namespace {

// The field takes the flag's value when the flag was given, and stays as it is otherwise.
void Read(const ProfileArgs& a, std::string_view flag, int& into) {
  if (a.Given(flag)) {
    into = a.Int(flag);
  }
}

void Read(const ProfileArgs& a, std::string_view flag, double& into) {
  if (a.Given(flag)) {
    into = a.Number(flag);
  }
}

void Read(const ProfileArgs& a, std::string_view flag, std::string& into) {
  if (a.Given(flag)) {
    into = a.Value(flag);
  }
}

void Read(const ProfileArgs& a, std::string_view flag, bool& into) {
  if (a.Flag(flag)) {
    into = true;
  }
}

// A length distribution flag (N, uniform:A-B, normal:MEAN,SD, lognormal:MEDIAN,SIGMA, file:PATH).
Result<void> ReadLengthSpec(const ProfileArgs& a, std::string_view flag,
                            std::optional<workload::LengthSpec>& into) {
  if (!a.Given(flag)) {
    return {};
  }
  auto spec = workload::ParseLengthSpec(a.Value(flag));
  if (!spec) {
    return MakeError(ErrorCode::kUsage, fmt::format("{}: {}", flag, spec.error().message));
  }
  into = std::move(spec).value();
  return {};
}

void ReadRate(const ProfileArgs& a, RateOptions& r) {
  if (a.Given("--rates")) {
    r.rates = a.Numbers("--rates");
  }
  if (auto arrival = ParseArrival(a.Value("--arrival")); a.Given("--arrival") && arrival) {
    r.arrival = *arrival;
  }
  Read(a, "--burstiness", r.burstiness);
  Read(a, "--rate-tokens", r.tokens);
  Read(a, "--slo-fraction", r.slo_fraction);
  Read(a, "--search-steps", r.search_steps);
  Read(a, "--max-concurrency", r.max_concurrency);
}

void ReadReplay(const ProfileArgs& a, ReplayOptions& r) {
  Read(a, "--trace", r.trace);
  Read(a, "--trace-format", r.format);
  Read(a, "--time-scale", r.time_scale);
  Read(a, "--block-tokens", r.block_tokens);
}

Result<void> ReadSessions(const ProfileArgs& a, SessionsOptions& s) {
  Read(a, "--sessions", s.file);
  Read(a, "--turns", s.turns);
  Read(a, "--system-prompt-tokens", s.system_prompt_tokens);
  Read(a, "--session-concurrency", s.concurrency);
  Read(a, "--session-rate", s.rate);
  Read(a, "--max-sessions", s.max_sessions);
  Read(a, "--max-tool-rounds", s.max_tool_rounds);
  Read(a, "--tool-result-tokens", s.tool_result_tokens);
  Read(a, "--keep-reasoning", s.keep_reasoning);
  if (auto ok = ReadLengthSpec(a, "--turn-input-tokens", s.turn_input); !ok) {
    return ok;
  }
  return ReadLengthSpec(a, "--think-ms", s.think_ms);
}

void ReadDataset(const ProfileArgs& a, DatasetOptions& d) {
  Read(a, "--dataset", d.path);
  Read(a, "--dataset-format", d.format);
  Read(a, "--dataset-order", d.order);
  Read(a, "--skip-bad-lines", d.skip_bad);
}

// The load's shape: output budget, repetitions, GPUs, images, prompt and answer lengths, the
// sustained loop's size.
Result<void> ReadLoad(const ProfileArgs& a, ProfileOptions& o) {
  Read(a, "--tokens", o.tokens);
  Read(a, "--runs", o.runs);
  Read(a, "--gpus", o.gpus);
  Read(a, "--images-per-request", o.images.per_request);
  Read(a, "--image-size", o.images.size);  // checked as the images are made (plan.cpp)
  if (a.Given("--requests")) {
    o.rate.requests = a.Int("--requests");
    o.level_requests = o.rate.requests;
  }
  if (a.Given("--duration-s")) {
    o.rate.duration_s = a.Number("--duration-s");
    o.level_duration_s = o.rate.duration_s;
    o.sessions.duration_s = o.rate.duration_s;
  }
  Read(a, "--max-requests", o.replay.max_requests);
  if (a.Given("--input-tokens")) {
    std::optional<workload::LengthSpec> spec;
    if (a.Value("--input-tokens") != "0") {  // 0: a short prompt, as without the flag
      if (auto ok = ReadLengthSpec(a, "--input-tokens", spec); !ok) {
        return ok;
      }
    }
    o.input_tokens = 0;
    o.input_lengths.reset();
    if (spec && spec->kind == workload::LengthSpec::Kind::kFixed) {
      o.input_tokens = static_cast<int>(spec->a);
    } else if (spec) {
      o.input_lengths = std::move(spec);
    }
  }
  return ReadLengthSpec(a, "--output-tokens", o.output_lengths);
}

}  // namespace

Result<void> ApplyProfileArgs(ProfileOptions& o) {
  const ProfileArgs& a = o.args;
  if (auto ok = ReadLoad(a, o); !ok) {
    return ok;
  }
  ReadRate(a, o.rate);
  if (a.Given("--slo")) {
    auto slo = ParseSlo(a.Texts("--slo"));
    if (!slo) {
      return slo.error();
    }
    o.rate.slo = slo.value();
  }
  if (a.Given("--search-rate")) {
    auto range = ParseRateRange(a.Value("--search-rate"));
    if (!range) {
      return range.error();
    }
    o.rate.search = range.value();
  }
  ReadReplay(a, o.replay);
  if (auto ok = ReadSessions(a, o.sessions); !ok) {
    return ok;
  }
  ReadDataset(a, o.dataset);
  if (a.Given("--shared-prefix")) {
    auto sp = ParseSharedPrefix(a.Value("--shared-prefix"));
    if (!sp) {
      return sp.error();
    }
    o.shared_prefix = sp.value();
  }
  Read(a, "--context-cached", o.context_cached);
  return {};
}

}  // namespace sb::perf
