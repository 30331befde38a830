// The speed sections of report.md (markdown_speed.h).
#include "report/markdown_speed.h"

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/profile_table.h"
#include "report/columns.h"
#include "report/format.h"
#include "report/markdown_classes.h"
#include "report/markdown_replay.h"
#include "report/markdown_sessions.h"
#include "report/markdown_tails.h"
#include "report/profile_rows.h"
#include "report/table.h"

namespace sb::report::md {

namespace {

using nlohmann::json;

std::string Cell(std::string_view text) {
  return MarkdownCell(text);
}

// Escapes free text outside tables ('<' would start an HTML tag) without truncating it.
std::string Text(std::string_view text) {
  return MarkdownCell(text, std::string::npos);
}

std::string Median(const json& parent, std::string_view stats_key) {
  return FormatFixed1(NumberAt(parent, {stats_key, "median"}));
}

std::string MedianMs(const json& parent, std::string_view stats_key) {
  return FormatMs(NumberAt(parent, {stats_key, "median"}));
}

std::string Seconds(std::optional<double> ms) {
  return ms ? FormatSeconds(*ms / 1000.0) : std::string(kMissing);
}

// ---- The profiles' tables, as columns (columns.h) --------------------------------------------

constexpr ColumnSpec kDecodeColumns[] = {
    {.header = "Run",
     .align = Align::kLeft,
     .cell =
         [](const json& run, std::size_t i) {
           return Cell(StringAt(run, {"label"}).value_or(fmt::format("run {}", i + 1)));
         }},
    {"Decode (tok/s)", {"decode_tok_s"}, CellFormat::kFixed1},
    {"TTFT (ms)", {"ttft_ms"}, CellFormat::kMs},
    {.header = "E2E (s)",
     .cell = [](const json& run, std::size_t) { return Seconds(NumberAt(run, {"e2e_ms"})); }},
    {"Tokens", {"completion_tokens"}},
    {.header = "Status", .path = {"status"}, .format = CellFormat::kText, .align = Align::kLeft},
};

constexpr ColumnSpec kConcurrencyColumns[] = {
    {.header = "Concurrency", .format = CellFormat::kLevel},
    {"OK", {"ok"}},
    {"Errors", {"errors"}, CellFormat::kErrors},
    {"Throughput (tok/s)", {"throughput_tok_s"}, CellFormat::kFixed1},
    {"Per-stream decode (tok/s, median)",
     {"per_stream_decode_tok_s"},
     CellFormat::kFixed1,
     {"median"}},
    {"TTFT median (ms)", {"ttft_ms"}, CellFormat::kMs, {"median"}},
    {"Wall (s)", {"wall_s"}, CellFormat::kSeconds},
};

constexpr ColumnSpec kMaxTokensColumns[] = {
    {.header = "Max tokens", .format = CellFormat::kLevel},
    {"Wall (s)", {"wall_s"}, CellFormat::kSeconds, {"median"}},
    {"Tok/s", {"tok_s"}, CellFormat::kFixed1, {"median"}},
    {"Decode tok/s", {"decode_tok_s"}, CellFormat::kFixed1, {"median"}},
    {"Errors", {"errors"}, CellFormat::kErrors, {}, Show::kAnyNonZero},
};

constexpr ColumnSpec kTtftColumns[] = {
    {.header = "Prompt", .format = CellFormat::kPlace, .align = Align::kLeft},
    {"Prompt tokens", {"prompt_tokens"}},
    {"TTFT median (ms)", {"ttft_ms"}, CellFormat::kMs, {"median"}},
    {"min", {"ttft_ms"}, CellFormat::kMs, {"min"}},
    {"max", {"ttft_ms"}, CellFormat::kMs, {"max"}},
    {"Errors", {"errors"}, CellFormat::kErrors, {}, Show::kAnyNonZero},
};

// Why a context row has no answer to show, or what it answered when that was wrong.
std::string ContextNote(const json& r, std::size_t) {
  if (auto skipped = StringAt(r, {"skipped"})) {
    return Cell("skipped: " + *skipped);
  }
  const std::string status = StringAt(r, {"status"}).value_or("ok");
  if (status != "ok") {
    return Cell(status);
  }
  if (BoolAt(r, {"correct"}) == false) {
    return Cell("expected " + StringAt(r, {"expected"}).value_or("?") + ", answered \"" +
                StringAt(r, {"answer"}).value_or("").substr(0, 40) + "\"");
  }
  return "";
}

constexpr ColumnSpec kContextColumns[] = {
    {.header = "Input size",
     .cell = [](const json& r, std::size_t) { return "~" + FormatCount(NumberAt(r, {"size"})); }},
    {"Prompt tokens", {"prompt_tokens"}},
    {.header = "Correct",
     .align = Align::kLeft,
     .cell =
         [](const json& r, std::size_t) {
           auto correct = BoolAt(r, {"correct"});
           return !correct ? std::string(kMissing) : *correct ? std::string("✅") : std::string("❌");
         }},
    {"TTFT (ms)", {"ttft_ms"}, CellFormat::kMs},
    {"Prefill tok/s", {"prefill_tok_s"}, CellFormat::kFixed1},
    {"Decode tok/s", {"decode_tok_s"}, CellFormat::kFixed1},
    {.header = "Cached TTFT (ms)",
     .path = {"cached"},
     .show = Show::kAnyPresent,
     .cell =
         [](const json& r, std::size_t) {
           return FormatMs(NumberAt(r, {"cached", "ttft_ms"}));
         }},
    {.header = "Notes", .align = Align::kLeft, .cell = ContextNote},
};

// The nominal rate, the rate the drawn schedule offered ((n − 1) / its span: a short Poisson
// draw can be 20% off) and the rate the sends achieved, side by side; the last two columns only
// when SLOs were given.
constexpr ColumnSpec kRateColumns[] = {
    {"Rate (req/s)", {"rate_rps"}, CellFormat::kFixed2},
    {"Offered", {"offered_rate_rps"}, CellFormat::kFixed2},
    {"Achieved", {"achieved_rate_rps"}, CellFormat::kFixed2},
    {"OK", {"ok"}},
    {"Failed", {"failed"}, CellFormat::kErrors},
    {"Late sends", {"late_sends"}},
    {"TTFT p50 / p99 (ms)", {"from_scheduled", "ttft_ms"}, CellFormat::kMs, {"p50", "p99"}},
    {"E2E p99 (ms)", {"from_scheduled", "e2e_ms"}, CellFormat::kMs, {"p99"}},
    {"E2E p99 from send (ms)", {"from_send", "e2e_ms"}, CellFormat::kMs, {"p99"}},
    {"TPOT p50 / p99 (ms)", {"tpot_ms"}, CellFormat::kMs, {"p50", "p99"}},
    {"Output tok/s", {"output_tok_s"}, CellFormat::kFixed1},
    {.header = "Good",
     .cell =
         [](const json& p, std::size_t) {
           auto frac = NumberAt(p, {"goodput", "fraction"});
           return frac ? FormatFixed1(*frac * 100) + "%" : std::string(kMissing);
         }},
    {.header = "Meets SLO",
     .align = Align::kLeft,
     .cell =
         [](const json& p, std::size_t) {
           auto meets = BoolAt(p, {"goodput", "meets_slo"});
           return meets ? std::string(*meets ? "yes" : "no") : std::string(kMissing);
         }},
};
constexpr std::size_t kRateSloColumns = 2;  // Good, Meets SLO

// The table and what follows it: the client-bound note, the rows not sent.
void RenderTable(ProfileId id, const std::vector<const json*>& rows,
                 std::span<const ColumnSpec> columns, std::string& out) {
  const ProfileSpec& p = Profile(id);
  out += ColumnsTable(p, rows, columns).Render() + "\n";
  out += ClientBoundNote(rows);
  out += SkippedList(p, rows);
}

void RenderDecode(const json& d, std::string& out) {
  out += "### Decode speed (single stream)\n\n";
  auto n = NumberAt(d, {"decode_tok_s", "n"});
  auto median = NumberAt(d, {"decode_tok_s", "median"});
  auto tokens = NumberAt(d, {"tokens"});
  std::string setup = tokens ? fmt::format("{} tokens requested per run", FormatCount(tokens))
                             : std::string("tokens per run not recorded");
  if (median && n) {
    out +=
        fmt::format("Median of {} runs: **{} tok/s** decode (excl. TTFT), TTFT **{} ms**; {}.\n\n",
                    FormatCount(n), FormatFixed1(median), MedianMs(d, "ttft_ms"), setup);
  } else {
    out += fmt::format("No run produced a decode speed; {}.\n\n", setup);
  }
  const auto runs = ArrayAt(d, {"runs"});
  if (!runs.empty()) {
    MarkdownTable t = ColumnsTable(Profile(ProfileId::kDecode), runs, kDecodeColumns);
    t.AddRow({"**Median**", "**" + Median(d, "decode_tok_s") + "**", MedianMs(d, "ttft_ms"),
              Seconds(NumberAt(d, {"e2e_ms", "median"})), "", ""});
    out += t.Render() + "\n";
    out += ClientBoundNote(runs);
  }
  if (auto errors = NumberAt(d, {"errors"}); errors && *errors > 0) {
    out += fmt::format("**{} failed run{}**, listed under Errors; the medians cover the rest.\n\n",
                       FormatCount(errors), *errors == 1 ? "" : "s");
  }
}

void RenderConcurrency(const json& c, std::string& out) {
  auto levels = ArrayAt(c, {"levels"});
  if (levels.empty()) {
    return;
  }
  out += "### Throughput vs concurrency\n\n";
  const json* loop = Find(c, {"closed_loop"});
  if (auto tokens = NumberAt(c, {"tokens"}); tokens && loop != nullptr) {
    auto m = NumberAt(*loop, {"requests"});
    auto d = NumberAt(*loop, {"duration_s"});
    out += fmt::format(
        "Each level keeps N requests in flight (a finished one is replaced at once) {}, {} "
        "tokens each.\n\n",
        d ? fmt::format("for {:g} s", *d) : fmt::format("until {} were sent", FormatCount(m)),
        FormatCount(tokens));
  } else if (tokens) {
    out += fmt::format("Each level sends N requests at once, {} tokens each.\n\n",
                       FormatCount(tokens));
  }
  RenderTable(ProfileId::kConcurrency, levels, kConcurrencyColumns, out);
  RenderTails(levels, "concurrency", "Concurrency", out);
}

void RenderMaxTokens(const json& m, std::string& out) {
  const ProfileSpec& spec = Profile(ProfileId::kMaxTokens);
  auto lengths = ArrayAt(m, {spec.rows});
  if (lengths.empty()) {
    return;
  }
  out += "### Speed vs output length\n\n";
  out += "Medians over each length's runs. Tok/s includes TTFT; decode tok/s excludes it.\n\n";
  RenderTable(ProfileId::kMaxTokens, lengths, kMaxTokensColumns, out);
  RenderTails(lengths, spec.dim, "Max tokens", out);
}

void RenderTtft(const json& tt, std::string& out) {
  auto prompts = ArrayAt(tt, {"prompts"});
  if (prompts.empty()) {
    return;
  }
  out += "### Time to first token by prompt\n\n";
  RenderTable(ProfileId::kTtft, prompts, kTtftColumns, out);
}

void RenderContext(const json& ctx, std::string& out) {
  auto rows = ArrayAt(ctx, {"rows"});
  if (rows.empty()) {
    return;
  }
  out += "### Context length scaling\n\n";
  out += fmt::format(
      "A question with a known answer (\"What is 7 × 8?\") buried in filler text; prompt sizes "
      "counted by the server's tokenizer ({}).\n\n",
      Cell(StringAt(ctx, {"counted_by"}).value_or(std::string(kMissing))));
  out += ColumnsTable(Profile(ProfileId::kContext), rows, kContextColumns).Render() + "\n";
  out += ClientBoundNote(rows);
}

void RenderRatePoints(const std::vector<const json*>& points, bool slo, std::string& out) {
  std::span<const ColumnSpec> columns = kRateColumns;
  RenderTable(ProfileId::kRate, points,
              slo ? columns : columns.first(columns.size() - kRateSloColumns), out);
}

void RenderRate(const json& rate, std::string& out) {
  auto points = ArrayAt(rate, {"rates"});
  auto search = ArrayAt(rate, {"search", "points"});
  if (points.empty() && search.empty()) {
    return;
  }
  const json* slo_obj = Find(rate, {"slo"});
  bool slo = slo_obj != nullptr && slo_obj->is_object() && !slo_obj->empty();
  out += "### Open-loop load\n\n";
  out += fmt::format(
      "{} arrivals; latency counted from the scheduled send (no coordinated omission), the "
      "from-send figure beside it. Percentiles over successful requests.\n\n",
      Cell(StringAt(rate, {"arrival"}).value_or("?")));
  if (!points.empty()) {
    RenderRatePoints(points, slo, out);
  }
  if (!search.empty()) {
    auto best = NumberAt(rate, {"search", "best_rps"});
    out += fmt::format("Highest rate meeting the SLOs: **{}** req/s ({}).\n\n",
                       best ? FormatFixed1(*best) : std::string(kMissing),
                       Cell(StringAt(rate, {"search", "result"}).value_or("?")));
    RenderRatePoints(search, slo, out);
  }
}

void RenderSpecDecode(const json& s, std::string& out) {
  out += "### Speculative decoding\n\n";
  MarkdownTable t({{"Metric"}, {"Value", Align::kRight}});
  t.AddRow({"Acceptance rate", FormatPercent(NumberAt(s, {"acceptance_rate"}))});
  auto len = NumberAt(s, {"mean_acceptance_length"});
  t.AddRow({"Mean acceptance length", len ? FormatFixed2(len) + " tokens" : std::string(kMissing)});
  if (Find(s, {"num_drafts"}) != nullptr) {
    t.AddRow({"Drafts", FormatCount(NumberAt(s, {"num_drafts"}))});
  }
  if (Find(s, {"num_draft_tokens"}) != nullptr) {
    t.AddRow({"Draft tokens", FormatCount(NumberAt(s, {"num_draft_tokens"}))});
  }
  if (Find(s, {"num_accepted_tokens"}) != nullptr) {
    t.AddRow({"Accepted tokens", FormatCount(NumberAt(s, {"num_accepted_tokens"}))});
  }
  out += t.Render() + "\n";
  auto per_pos = ArrayAt(s, {"per_position"});
  if (!per_pos.empty()) {
    MarkdownTable p({{"Draft position", Align::kRight}, {"Acceptance", Align::kRight}});
    int i = 0;
    for (const json* v : per_pos) {
      ++i;
      p.AddRow(
          {std::to_string(i),
           FormatPercent(v->is_number() ? std::optional<double>(v->get<double>()) : std::nullopt)});
    }
    out +=
        "Acceptance per draft position (share of drafts whose token at that position was "
        "accepted):\n\n" +
        p.Render() + "\n";
  }
}

}  // namespace

bool HasSpecDecode(const json& r) {
  const json* s = Find(r, {"spec_decode"});
  return s != nullptr && s->is_object();
}

// A profile's section of report.md: drawn from its rows through the table (profile_rows.h), or
// by its own writer.
void RenderProfile(ProfileId id, const json& s, std::string& out) {
  if (const ProfileSpec& p = Profile(id); DrawnFromRows(p)) {
    return RenderRows(p, s, out);
  }
  switch (id) {
    case ProfileId::kDecode:
      return RenderDecode(s, out);
    case ProfileId::kConcurrency:
      return RenderConcurrency(s, out);
    case ProfileId::kMaxTokens:
      return RenderMaxTokens(s, out);
    case ProfileId::kTtft:
      return RenderTtft(s, out);
    case ProfileId::kContext:
      return RenderContext(s, out);
    case ProfileId::kRate:
      return RenderRate(s, out);
    case ProfileId::kReplay:
      return RenderReplay(s, out);
    case ProfileId::kSessions:
      return RenderSessions(s, out);
    default:
      return;  // drawn from its rows above (tests/core/profile_table_test.cpp checks it)
  }
}

void RenderSpeed(const json& r, std::string& out) {
  const json* perf = Find(r, {"perf"});
  bool any = HasSpecDecode(r);
  if (perf != nullptr && perf->is_object()) {
    for (const ProfileSpec& p : Profiles()) {
      const json* prof = Find(*perf, {p.key});
      any = any || (prof != nullptr && prof->is_object());
    }
  }
  if (!any) {
    return;
  }
  out += "## Speed\n\n";
  if (perf != nullptr && perf->is_object()) {
    for (const ProfileSpec& p : Profiles()) {  // the table's order
      if (const json* s = Find(*perf, {p.key}); s != nullptr && s->is_object()) {
        RenderProfile(p.id, *s, out);
        RenderWorkload(*s, out);  // --dataset, --shared-prefix (markdown_classes.cpp)
      }
    }
  }
  if (HasSpecDecode(r)) {
    RenderSpecDecode(*Find(r, {"spec_decode"}), out);
  }
}

void RenderOtherProfiles(const json& r, std::string& out) {
  const json* perf = Find(r, {"perf"});
  if (perf == nullptr || !perf->is_object()) {
    return;
  }
  std::vector<std::string> other;
  for (const auto& [key, value] : perf->items()) {
    if (!value.is_null() && FindProfile(key) == nullptr) {
      other.push_back("`perf." + Text(key) + "`");
    }
  }
  if (!other.empty()) {
    out += fmt::format("Also measured, in results.json but not drawn by this report: {}.\n\n",
                       fmt::join(other, ", "));
  }
}

}  // namespace sb::report::md
