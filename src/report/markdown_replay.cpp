#include "report/markdown_replay.h"

#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/columns.h"
#include "report/format.h"
#include "report/markdown_classes.h"
#include "report/markdown_tails.h"
#include "report/table.h"

namespace sb::report::md {

using nlohmann::json;

namespace {

constexpr ColumnSpec kClassColumns[] = {
    {.header = "Class",
     .align = Align::kLeft,
     .cell = [](const json& c,
                std::size_t) { return MarkdownCell(StringAt(c, {"class"}).value_or("?")); }},
    {"Requests", {"count"}},
    {"Input p50 / p99", {"input_tokens"}, CellFormat::kCount, {"p50", "p99"}},
    {"Output p50 / p99", {"output_tokens"}, CellFormat::kCount, {"p50", "p99"}},
    {"TTFT p50 / p90 / p99 (ms)", {"ttft_ms"}, CellFormat::kMs, kTailStats},
    {"ITL p50 / p90 / p99 (ms)", {"itl_ms"}, CellFormat::kMs, kTailStats},
    {"E2E p50 / p90 / p99 (ms)", {"e2e_ms"}, CellFormat::kMs, kTailStats},
};

}  // namespace

void RenderReplay(const json& replay, std::string& out) {
  out += "### Trace replay\n\n";
  out += fmt::format(
      "{} trace `{}`, each request sent at its trace time x {}; latency from the scheduled send "
      "(no coordinated omission). Sent {} of {} ({} failed, {} late by more than {} ms; send lag "
      "p50 / p99 {} / {} ms); trace rate {} req/s, achieved {} req/s.\n\n",
      MarkdownCell(StringAt(replay, {"format"}).value_or("?")),
      MarkdownCell(StringAt(replay, {"trace"}).value_or("?")),
      FormatFixed2(NumberAt(replay, {"time_scale"})), FormatCount(NumberAt(replay, {"sent"})),
      FormatCount(NumberAt(replay, {"scheduled"})), FormatCount(NumberAt(replay, {"failed"})),
      FormatCount(NumberAt(replay, {"late"})), FormatFixed1(NumberAt(replay, {"late_ms"})),
      FormatFixed2(NumberAt(replay, {"send_lag_ms", "p50"})),
      FormatFixed2(NumberAt(replay, {"send_lag_ms", "p99"})),
      FormatFixed1(NumberAt(replay, {"trace_rate_rps"})),
      FormatFixed1(NumberAt(replay, {"achieved_rate_rps"})));
  if (BoolAt(replay, {"cache", "reported"}).value_or(false)) {
    out += fmt::format(
        "Prompt tokens served from the server's cache (as it reports them): **{}** ({} of {}). "
        "TTFT p50 / p90 / p99 with cached tokens {} ms, without {} ms.\n\n",
        FormatPercent(NumberAt(replay, {"cache", "share"})),
        FormatCount(NumberAt(replay, {"cache", "cached_tokens"})),
        FormatCount(NumberAt(replay, {"cache", "prompt_tokens"})),
        ThreeMs(*Find(replay, {"cache"}), "ttft_cached_ms"),
        ThreeMs(*Find(replay, {"cache"}), "ttft_uncached_ms"));
  } else {
    out +=
        "Prompt tokens served from the server's cache: not reported (the server's answers "
        "carry no cached-token field).\n\n";
  }
  if (const json* cache = Find(replay, {"cache"}); cache != nullptr) {
    out += ServerCacheSentence(*cache);
  }
  out +=
      "Requests by class and by cache outcome: each request is counted once under its class "
      "and once under its cache outcome.\n\n";
  const ProfileSpec& p = Profile(ProfileId::kReplay);
  const MarkdownTable t = ColumnsTable(p, ArrayAt(replay, {p.rows}), kClassColumns);
  out += t.Render() + "\n";
}

}  // namespace sb::report::md
