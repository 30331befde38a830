// The table's options (core/profile_table.h) into the option structs the runners read.
#include <fmt/format.h>

#include "perf/profiles.h"

namespace sb::perf {

namespace {

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
  if (a.Given("--burstiness")) {
    r.burstiness = a.Number("--burstiness");
  }
  if (a.Given("--rate-tokens")) {
    r.tokens = a.Int("--rate-tokens");
  }
  if (a.Given("--slo-fraction")) {
    r.slo_fraction = a.Number("--slo-fraction");
  }
  if (a.Given("--search-steps")) {
    r.search_steps = a.Int("--search-steps");
  }
  if (a.Given("--max-concurrency")) {
    r.max_concurrency = a.Int("--max-concurrency");
  }
}

void ReadReplay(const ProfileArgs& a, ReplayOptions& r) {
  if (a.Given("--trace")) {
    r.trace = a.Value("--trace");
  }
  if (a.Given("--trace-format")) {
    r.format = a.Value("--trace-format");
  }
  if (a.Given("--time-scale")) {
    r.time_scale = a.Number("--time-scale");
  }
  if (a.Given("--block-tokens")) {
    r.block_tokens = a.Int("--block-tokens");
  }
}

Result<void> ReadSessions(const ProfileArgs& a, SessionsOptions& s) {
  if (a.Given("--sessions")) {
    s.file = a.Value("--sessions");
  }
  if (a.Given("--turns")) {
    s.turns = a.Int("--turns");
  }
  if (a.Given("--system-prompt-tokens")) {
    s.system_prompt_tokens = a.Int("--system-prompt-tokens");
  }
  if (a.Given("--session-concurrency")) {
    s.concurrency = a.Int("--session-concurrency");
  }
  if (a.Given("--session-rate")) {
    s.rate = a.Number("--session-rate");
  }
  if (a.Given("--max-sessions")) {
    s.max_sessions = a.Int("--max-sessions");
  }
  if (a.Given("--max-tool-rounds")) {
    s.max_tool_rounds = a.Int("--max-tool-rounds");
  }
  if (a.Given("--tool-result-tokens")) {
    s.tool_result_tokens = a.Int("--tool-result-tokens");
  }
  if (a.Flag("--keep-reasoning")) {
    s.keep_reasoning = true;
  }
  if (auto ok = ReadLengthSpec(a, "--turn-input-tokens", s.turn_input); !ok) {
    return ok;
  }
  return ReadLengthSpec(a, "--think-ms", s.think_ms);
}

void ReadDataset(const ProfileArgs& a, DatasetOptions& d) {
  if (a.Given("--dataset")) {
    d.path = a.Value("--dataset");
  }
  if (a.Given("--dataset-format")) {
    d.format = a.Value("--dataset-format");
  }
  if (a.Given("--dataset-order")) {
    d.order = a.Value("--dataset-order");
  }
  if (a.Flag("--skip-bad-lines")) {
    d.skip_bad = true;
  }
}

// The load's shape: output budget, repetitions, GPUs, images, prompt and answer lengths, the
// sustained loop's size.
Result<void> ReadLoad(const ProfileArgs& a, ProfileOptions& o) {
  if (a.Given("--tokens")) {
    o.tokens = a.Int("--tokens");
  }
  if (a.Given("--runs")) {
    o.runs = a.Int("--runs");
  }
  if (a.Given("--gpus")) {
    o.gpus = a.Int("--gpus");
  }
  if (a.Given("--images-per-request")) {
    o.images.per_request = a.Int("--images-per-request");
  }
  if (a.Given("--image-size")) {
    o.images.size = a.Value("--image-size");  // checked as the images are made (plan.cpp)
  }
  if (a.Given("--requests")) {
    o.rate.requests = a.Int("--requests");
    o.level_requests = o.rate.requests;
  }
  if (a.Given("--duration-s")) {
    o.rate.duration_s = a.Number("--duration-s");
    o.level_duration_s = o.rate.duration_s;
    o.sessions.duration_s = o.rate.duration_s;
  }
  if (a.Given("--max-requests")) {
    o.replay.max_requests = a.Int("--max-requests");
  }
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
  if (a.Flag("--context-cached")) {
    o.context_cached = true;
  }
  return {};
}

}  // namespace sb::perf
