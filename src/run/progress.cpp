#include "run/progress.h"

#include <cstdio>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/profile_table.h"

namespace sb::run {

using nlohmann::json;

long long PlannedRequests(const Plan& plan, std::size_t tests) {
  const perf::ProfileOptions& o = plan.profile;
  long long n = static_cast<long long>(tests) * std::max(1, plan.suite.repeat);
  for (const std::string& name : plan.profiles) {
    const ProfileSpec* spec = FindProfile(name);
    if (spec == nullptr) {
      continue;
    }
    switch (spec->id) {
      case ProfileId::kDecode:
        n += o.runs;
        break;
      case ProfileId::kConcurrency:
        if (o.level_duration_s > 0) {
          return 0;
        }
        for (int level : o.args.Ints("--levels")) {
          n += o.level_requests > 0 ? o.level_requests : level;
        }
        break;
      case ProfileId::kMaxTokens:
        n += static_cast<long long>(o.args.Ints("--lengths").size()) * o.args.Int("--length-runs");
        break;
      case ProfileId::kTtft:
        n += 3LL * o.runs;  // short, medium and long prompts
        break;
      case ProfileId::kContext:
        n += static_cast<long long>(o.args.Ints("--sizes").size()) * (o.context_cached ? 2 : 1);
        break;
      case ProfileId::kRate:
        if (o.rate.duration_s > 0) {
          return 0;
        }
        n += static_cast<long long>(o.rate.rates.size()) * o.rate.requests;
        break;
      default:
        return 0;  // replay and any profile whose count depends on its input
    }
  }
  return n;
}

RunProgress::RunProgress(const Plan& plan, std::size_t tests, Clock& clock) : clock_(clock) {
  auto mode = ParseProgressMode(plan.progress, isatty(fileno(stderr)) != 0);
  mode_ = mode ? *mode : ProgressMode::kPlain;
  state_.AddTotal(PlannedRequests(plan, tests));
  if (mode_ != ProgressMode::kOff) {
    reporter_ = std::make_unique<ProgressReporter>(mode_, state_, clock_, stderr);
  }
}

RunProgress::~RunProgress() {
  Stop();
}

void RunProgress::OnFinished(bool ok, long long tokens) {
  state_.Finished(ok, tokens, "", ToNanos(clock_.Now()));
}

void RunProgress::SetCurrent(std::string_view unit) {
  // A batch is named after its first request ("concurrency c8 stream 1"): the level is the item.
  for (std::string_view tail : {" stream 1", " request 1"}) {
    if (unit.ends_with(tail)) {
      unit.remove_suffix(tail.size());
    }
  }
  state_.SetCurrent(unit);
}

void RunProgress::Print(const std::string& line) {
  if (reporter_) {
    reporter_->PrintAbove(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

void RunProgress::Stop() {
  reporter_.reset();
}

}  // namespace sb::run
