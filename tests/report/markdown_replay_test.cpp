// The trace replay's section of report.md: the cache share as the server reported it, or "not
// reported" (never 0%), the late sends, and one row per request class.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/markdown.h"

namespace sb::report {
namespace {

using nlohmann::json;

json ReplayRun(bool reported) {
  json stats = {{"n", 3}, {"p50", 10.0}, {"p90", 20.0}, {"p99", 30.0}};
  json cache = reported ? json{{"reported", true},        {"share", 0.25},
                               {"cached_tokens", 512},    {"prompt_tokens", 2048},
                               {"ttft_cached_ms", stats}, {"ttft_uncached_ms", {{"n", 0}}}}
                        : json{{"reported", false}, {"share", "not reported"}};
  json cls = {{"class", "trace:mooncake"},
              {"count", 3},
              {"input_tokens", {{"p50", 700.0}, {"p99", 1000.0}}},
              {"output_tokens", {{"p50", 40.0}, {"p99", 64.0}}},
              {"ttft_ms", stats},
              {"itl_ms", stats},
              {"e2e_ms", stats}};
  return json{{"schema", "servebench.results/1"},
              {"status", "complete"},
              {"target", {{"endpoint", "http://h:8000/v1"}, {"model", "m"}}},
              {"summary", {{"requests", 3}}},
              {"tests", json::array()},
              {"warnings", json::array()},
              {"perf",
               {{"replay",
                 {{"format", "mooncake"},
                  {"trace", "t.jsonl"},
                  {"time_scale", 1.0},
                  {"scheduled", 3},
                  {"sent", 3},
                  {"failed", 0},
                  {"late", 1},
                  {"late_ms", 1.0},
                  {"send_lag_ms", {{"p50", 0.01}, {"p99", 1.5}}},
                  {"trace_rate_rps", 2.0},
                  {"achieved_rate_rps", 2.0},
                  {"cache", cache},
                  {"classes", json::array({cls})}}}}}};
}

TEST(MarkdownReplayTest, ShowsTheCacheShareLateSendsAndClasses) {
  const std::string md = RenderMarkdown(ReplayRun(true));
  EXPECT_NE(md.find("### Trace replay"), std::string::npos) << md;
  // The table groups each request twice: by class and by cache outcome.
  EXPECT_NE(md.find("each request is counted once under its class and once under its cache "
                    "outcome"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Sent 3 of 3 (0 failed, 1 late by more than 1.0 ms"), std::string::npos) << md;
  EXPECT_NE(md.find("**25%** (512 of 2,048)"), std::string::npos) << md;
  // Each tail on its own: none measured without cached tokens reads "—" three times.
  EXPECT_NE(md.find("TTFT p50 / p90 / p99 with cached tokens 10 / 20 / 30 ms, without — / — / — "
                    "ms."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| trace:mooncake | 3 | 700 / 1,000 | 40 / 64 | 10 / 20 / 30 | 10 / 20 / 30 |"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("not drawn by this report: `perf.replay`"), std::string::npos) << md;
}

TEST(MarkdownReplayTest, ACacheTheServerSaysNothingAboutIsNotReportedNeverZero) {
  const std::string md = RenderMarkdown(ReplayRun(false));
  EXPECT_NE(md.find("served from the server's cache: not reported"), std::string::npos) << md;
  EXPECT_EQ(md.find("0%"), std::string::npos) << md;
}

}  // namespace
}  // namespace sb::report
