// `compare --format html` with charts (docs/compare.md "--format html"): the page Compare()
// writes, plus a Charts section drawn from Compare()'s own JSON document, so the charts show
// exactly the figures of the table. Built only on compare.h's public interface.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sb::report {

// `page` (RenderCompareHtml's output) with the Charts section of `compare_doc` (the
// RenderCompareJson document of the same comparison) before </body> (the page carries the
// stylesheet that draws them); `page` unchanged when no chart can be drawn.
std::string AddCompareCharts(std::string page, const nlohmann::json& compare_doc);

// The charts of a compare JSON document ({"runs": [...], "sections": [{"rows": [...]}]},
// schema servebench.compare/2) as a <section>, "" when no row can be drawn; `charts` counts them.
//   compare-speed    grouped bars: every tok/s row (decode, throughput per concurrency level,
//                    tok/s per max_tokens, average), one bar per run (row values as given)
//   compare-ttft     grouped bars: every TTFT row (ms)
//   compare-score    grouped bars: pass rate (fraction) of the total and of each category
//   compare-spec     stacked "bare + speculative uplift" bars, when exactly two runs are
//                    compared and exactly one measured speculative decoding (its
//                    spec_decode.acceptance_rate row has a value): per tok/s row, the bare
//                    run's value, and on top of it the speculative run's gain (its value minus
//                    the bare one; no segment when it is not faster)
std::string CompareCharts(const nlohmann::json& compare_doc, int& charts);

}  // namespace sb::report
