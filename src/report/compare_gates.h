// The regression gate of `servebench compare BASE NEW --max-regression PCT` (docs/compare.md
// "Gates in CI"): each gated row of the comparison where a run is worse than the first (the base)
// by more than its limit, and outside the noise (the bootstrap 95% interval of the ratio excludes
// 1, as the Advantage column prints it), fails the gate. Direction comes from each row's
// `better` (compare_rows.cpp), the one place that says whether higher or lower is better.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "report/compare.h"

namespace sb::report {

// --max-regression "5%" (every row with an interval), "decode=3%,ttft_p99=10%" (those rows,
// each judged even without an interval), or both ("5%,decode=3%": the named limit wins).
struct RegressionGate {
  std::optional<double> all_pct;                           // a bare PCT
  std::vector<std::pair<std::string, double>> per_metric;  // NAME=PCT, as given, in order
  std::string text;                                        // the flag's value, as given
};

// kUsage error naming --max-regression for a bad item.
Result<RegressionGate> ParseMaxRegression(std::string_view text);

// The row keys a metric name means: a row key itself (docs/compare.md), a pattern with '*', or a
// short name: decode, throughput, ttft, ttft_p50|p90|p99, itl_p50|p99, goodput, output_tok_s,
// avg_tok_s, wall_time.
std::string MetricPattern(const std::string& name);

// One gated row, base vs one other run.
struct GateCheck {
  std::string key, metric;
  std::size_t other = 1;  // the run compared with the base (run 0)
  double limit_pct = 0;
  std::optional<double> worse_pct;  // how much worse than the base (negative: better)
  bool outside_noise = false;       // the interval excludes 1 (or no interval: the point decides)
  bool has_interval = false;
  bool failed = false;
};

struct GateResult {
  std::vector<GateCheck> checks;
  bool failed = false;
  std::string text;     // the --max-regression value, as given
  std::string summary;  // one line: "Regression gate (--max-regression 5%): FAILED ..."
};

// Judges `c` (built with the base first), marks each failed row's Advantage text ("✗ gate: ...")
// and adds the summary line to c.notes. kUsage error when a named metric matches no row.
Result<GateResult> ApplyRegressionGate(Comparison& c, const RegressionGate& gate);

// JUnit XML (the Ant schema) of the gate: one <testcase> per check (a gated row against one run),
// a <failure> with the message for each failed one; one failing testcase when nothing could be
// gated (compare_junit.cpp).
std::string RenderGateJunit(const Comparison& c, const GateResult& gate);

// The renderer of `format` over an already built (and gated) comparison; junit needs `gate`.
std::string RenderComparison(const std::vector<CompareRun>& runs, const Comparison& c,
                             OutputFormat format, const GateResult* gate);

}  // namespace sb::report
