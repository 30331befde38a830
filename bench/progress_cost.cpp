// What the live progress line costs (issue 23 item 3, docs/performance.md "What live progress
// costs"): the CPU time of one redraw (read the counters, format the status line, write it to
// /dev/null) on this thread, and that time at the terminal's 2 redraws a second as a share of
// one core.
#include <cstdio>

#include "core/clock.h"
#include "core/progress.h"

int main() {
  using namespace sb;
  ProgressState state;
  state.AddTotal(100000);
  state.SetCurrent("concurrency c64");
  ProgressLine line(ProgressMode::kTty, 0);
  std::FILE* out = std::fopen("/dev/null", "w");
  if (out == nullptr) {
    return 1;
  }
  constexpr int kRedraws = 200000;
  constexpr std::int64_t kEveryNs = 500'000'000;  // ProgressReporter's tty period
  const std::int64_t cpu0 = ThreadCpuNs();
  for (int i = 0; i < kRedraws; ++i) {
    state.Finished(true, 100, "", i * kEveryNs);
    const std::string text = line.Tick(state.Read(), i * kEveryNs);
    std::fputs(text.c_str(), out);
    std::fflush(out);
  }
  const double per_ns = static_cast<double>(ThreadCpuNs() - cpu0) / kRedraws;
  std::printf("%.2f us CPU per redraw; at 2 redraws/s: %.4f%% of one core\n", per_ns / 1e3,
              per_ns * 2 / 1e9 * 100);
  std::fclose(out);
  return 0;
}
