// The resource section of report.md: sources with their reasons, figures, dashes for nulls.
#include "resources/report.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace sb::resources {
namespace {

using nlohmann::json;

json Results() {
  return json::parse(R"({
    "perf": {"decode": {"runs": [{"label": "run 1", "resources": {
        "memory_bytes": {"peak": 2147483648, "mean": 1073741824}, "memory_source": "gpu",
        "power_w": {"mean": 250.0, "peak": 260.0}, "j_per_token": 0.125, "tokens_per_j": 8.0,
        "kv_cache_usage": {"peak": 0.42, "mean": 0.2},
        "server_rss_bytes": null, "server_cpu_pct": null}}]},
      "concurrency": {"levels": [{"concurrency": 4, "resources": {
        "memory_bytes": {"peak": 52428800, "mean": 41943040}, "memory_source": "server_rss",
        "power_w": null, "j_per_token": null, "tokens_per_j": null, "kv_cache_usage": null,
        "server_rss_bytes": {"peak": 52428800, "mean": 41943040},
        "server_cpu_pct": {"peak": 80.0, "mean": 55.5}}}]}},
    "resources": {"period_ms": 250, "samples": 40,
      "sampler_cost": {"cpu_ms_per_s": 0.31},
      "sources": [
        {"name": "process", "available": true, "detail": "the server's process tree",
         "reads": 40, "failed_reads": 0},
        {"name": "nvml", "available": false,
         "reason": "libnvidia-ml.so.1 could not be loaded (no such file): no NVIDIA driver"}],
      "run": {"memory_bytes": {"peak": 52428800}, "memory_source": "server_rss",
              "server_rss_bytes": {"peak": 52428800}, "server_cpu_pct": {"mean": 12.25}}}
  })");
}

TEST(ResourcesReport, ListsSourcesWithReasonsAndEveryRowsFigures) {
  const std::string md = RenderResourcesMarkdown(Results());
  EXPECT_NE(md.find("## Resources"), std::string::npos);
  EXPECT_NE(md.find("| nvml | not available | libnvidia-ml.so.1 could not be loaded"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| process | available |"), std::string::npos) << md;
  EXPECT_NE(md.find("| decode | run 1 | 2.00 GiB | 1.00 GiB | 250.0 W | 0.125 | 8.00 | 42.0% |"),
            std::string::npos)
      << md;
  // Nulls print as dashes, never as 0; RSS stands in for memory and says so.
  EXPECT_NE(md.find("| concurrency | c4 | 50.0 MiB (RSS) | 40.0 MiB (RSS) | — | — | — | — | "
                    "50.0 MiB | 55.5% |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("0.31 ms of CPU per second"), std::string::npos);
}

// A run where no source measured anything (the embedded simulator, no GPU): no table of dashes,
// one sentence instead; columns no row has are left out.
TEST(ResourcesReport, NoFigureAnywhereGivesASentenceNotATableOfDashes) {
  json results = Results();
  json empty = {{"memory_bytes", nullptr}, {"power_w", nullptr}, {"j_per_token", nullptr}};
  results["perf"]["decode"]["runs"][0]["resources"] = empty;
  results["perf"]["concurrency"]["levels"][0]["resources"] = empty;
  results["resources"]["run"] = empty;
  const std::string md = RenderResourcesMarkdown(results);
  EXPECT_EQ(md.find("| Profile | Row |"), std::string::npos) << md;
  EXPECT_NE(md.find("None of the 2 speed rows has a resource figure"), std::string::npos) << md;
  EXPECT_NE(md.find("Whole run: no figure"), std::string::npos) << md;

  // Only the server-process columns exist: the table has exactly those.
  results["perf"]["concurrency"]["levels"][0]["resources"] =
      Results()["perf"]["concurrency"]["levels"][0]["resources"];
  const std::string md2 = RenderResourcesMarkdown(results);
  EXPECT_NE(md2.find("| Profile | Row | Peak memory | Mean memory | Peak server RSS | Mean server "
                     "CPU |"),
            std::string::npos)
      << md2;
  EXPECT_NE(md2.find("| decode | run 1 | — | — | — | — |"), std::string::npos) << md2;
  EXPECT_EQ(md2.find("J/token"), std::string::npos) << md2;
}

TEST(ResourcesReport, ConsoleLineNamesWhatWasMeasuredAndWhatWasNot) {
  const std::string line = RenderResourcesConsole(Results());
  EXPECT_NE(line.find("server peak RSS 50.0 MiB, mean CPU 12.2%"), std::string::npos) << line;
  EXPECT_NE(line.find("not available: nvml"), std::string::npos) << line;
  EXPECT_EQ(RenderResourcesMarkdown(json::object()), "");
  EXPECT_EQ(RenderResourcesConsole(json::object()), "");
}

}  // namespace
}  // namespace sb::resources
