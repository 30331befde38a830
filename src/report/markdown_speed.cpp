// The speed sections of report.md (markdown_speed.h).
#include "report/markdown_speed.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/profile_table.h"
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

// Bold when non-zero: errors must catch the eye.
std::string ErrorCount(std::optional<double> n) {
  std::string s = FormatCount(n);
  return n && *n > 0 ? "**" + s + "**" : s;
}

// " (client-bound)" for a row whose self-check found the client the bottleneck: its figures
// include the client's own delays (docs/load.md).
std::string BoundMark(const json& row) {
  const bool bound = BoolAt(row, {"self_check", "client_bound"}).value_or(false);
  return bound ? " (client-bound)" : "";
}

// The note under a table with a client-bound row.
void BoundNote(const std::vector<const json*>& rows, std::string& out) {
  if (std::any_of(rows.begin(), rows.end(), [](const json* r) { return !BoundMark(*r).empty(); })) {
    out +=
        "**client-bound**: in the rows marked so, the client's self-check failed (events or "
        "requests waited in the client longer than `--late-ms` at p99, or token events arrived "
        "coalesced; the warnings say which): the client, not the server, limited those "
        "figures.\n\n";
  }
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
  auto errors = NumberAt(d, {"errors"});
  MarkdownTable t({{"Run"},
                   {"Decode (tok/s)", Align::kRight},
                   {"TTFT (ms)", Align::kRight},
                   {"E2E (s)", Align::kRight},
                   {"Tokens", Align::kRight},
                   {"Status"}});
  int i = 0;
  for (const json* run : ArrayAt(d, {"runs"})) {
    ++i;
    std::string label = StringAt(*run, {"label"}).value_or(fmt::format("run {}", i));
    t.AddRow({Cell(label) + BoundMark(*run), FormatFixed1(NumberAt(*run, {"decode_tok_s"})),
              FormatMs(NumberAt(*run, {"ttft_ms"})), Seconds(NumberAt(*run, {"e2e_ms"})),
              FormatCount(NumberAt(*run, {"completion_tokens"})),
              Cell(StringAt(*run, {"status"}).value_or(std::string(kMissing)))});
  }
  if (!t.empty()) {
    auto e2e = NumberAt(d, {"e2e_ms", "median"});
    t.AddRow({"**Median**", "**" + Median(d, "decode_tok_s") + "**", MedianMs(d, "ttft_ms"),
              Seconds(e2e), "", ""});
    out += t.Render() + "\n";
    BoundNote(ArrayAt(d, {"runs"}), out);
  }
  if (errors && *errors > 0) {
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
  MarkdownTable t({{"Concurrency", Align::kRight},
                   {"OK", Align::kRight},
                   {"Errors", Align::kRight},
                   {"Throughput (tok/s)", Align::kRight},
                   {"Per-stream decode (tok/s, median)", Align::kRight},
                   {"TTFT median (ms)", Align::kRight},
                   {"Wall (s)", Align::kRight}});
  for (const json* l : levels) {
    t.AddRow({FormatCount(NumberAt(*l, {"concurrency"})) + BoundMark(*l),
              FormatCount(NumberAt(*l, {"ok"})), ErrorCount(NumberAt(*l, {"errors"})),
              FormatFixed1(NumberAt(*l, {"throughput_tok_s"})),
              Median(*l, "per_stream_decode_tok_s"), MedianMs(*l, "ttft_ms"),
              FormatSeconds(NumberAt(*l, {"wall_s"}))});
  }
  out += t.Render() + "\n";
  BoundNote(levels, out);
  RenderTails(levels, "concurrency", "Concurrency", out);
}

bool AnyErrors(const std::vector<const json*>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const json* r) {
    auto e = NumberAt(*r, {"errors"});
    return e && *e > 0;
  });
}

void RenderMaxTokens(const json& m, std::string& out) {
  const ProfileSpec& spec = Profile(ProfileId::kMaxTokens);
  auto lengths = ArrayAt(m, {spec.rows});
  if (lengths.empty()) {
    return;
  }
  out += "### Speed vs output length\n\n";
  out += "Medians over each length's runs. Tok/s includes TTFT; decode tok/s excludes it.\n\n";
  bool errors = AnyErrors(lengths);
  std::vector<Column> cols = {{"Max tokens", Align::kRight},
                              {"Wall (s)", Align::kRight},
                              {"Tok/s", Align::kRight},
                              {"Decode tok/s", Align::kRight}};
  if (errors) {
    cols.push_back({"Errors", Align::kRight});
  }
  MarkdownTable t(cols);
  for (const json* l : lengths) {
    std::vector<std::string> row = {FormatCount(NumberAt(*l, {spec.dim})),
                                    FormatSeconds(NumberAt(*l, {"wall_s", "median"})),
                                    Median(*l, "tok_s"), Median(*l, "decode_tok_s")};
    if (errors) {
      row.push_back(ErrorCount(NumberAt(*l, {"errors"})));
    }
    t.AddRow(std::move(row));
  }
  out += t.Render() + "\n";
  RenderTails(lengths, spec.dim, "Max tokens", out);
}

void RenderTtft(const json& tt, std::string& out) {
  auto prompts = ArrayAt(tt, {"prompts"});
  if (prompts.empty()) {
    return;
  }
  out += "### Time to first token by prompt\n\n";
  bool errors = AnyErrors(prompts);
  std::vector<Column> cols = {{"Prompt"},
                              {"Prompt tokens", Align::kRight},
                              {"TTFT median (ms)", Align::kRight},
                              {"min", Align::kRight},
                              {"max", Align::kRight}};
  if (errors) {
    cols.push_back({"Errors", Align::kRight});
  }
  MarkdownTable t(cols);
  for (const json* p : prompts) {
    std::vector<std::string> row = {
        Cell(StringAt(*p, {"name"}).value_or(std::string(kMissing))),
        FormatCount(NumberAt(*p, {"prompt_tokens"})), MedianMs(*p, "ttft_ms"),
        FormatMs(NumberAt(*p, {"ttft_ms", "min"})), FormatMs(NumberAt(*p, {"ttft_ms", "max"}))};
    if (errors) {
      row.push_back(ErrorCount(NumberAt(*p, {"errors"})));
    }
    t.AddRow(std::move(row));
  }
  out += t.Render() + "\n";
  for (const json* p : prompts) {
    if (auto why = StringAt(*p, {"skipped"})) {
      out += fmt::format("- {}: not sent, {}.\n",
                         Cell(StringAt(*p, {"name"}).value_or(std::string(kMissing))), Cell(*why));
    }
  }
  if (std::any_of(prompts.begin(), prompts.end(),
                  [](const json* p) { return StringAt(*p, {"skipped"}).has_value(); })) {
    out += "\n";
  }
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
  bool cached = false;
  for (const json* r : rows) {
    cached = cached || Find(*r, {"cached"}) != nullptr;
  }
  std::vector<Column> cols = {{"Input size", Align::kRight},
                              {"Prompt tokens", Align::kRight},
                              {"Correct"},
                              {"TTFT (ms)", Align::kRight},
                              {"Prefill tok/s", Align::kRight},
                              {"Decode tok/s", Align::kRight}};
  if (cached) {
    cols.push_back({"Cached TTFT (ms)", Align::kRight});
  }
  cols.push_back({"Notes"});
  MarkdownTable t(cols);
  for (const json* r : rows) {
    std::string size = "~" + FormatCount(NumberAt(*r, {"size"}));
    std::vector<std::string> row;
    if (auto skipped = StringAt(*r, {"skipped"})) {
      row = {size,
             std::string(kMissing),
             std::string(kMissing),
             std::string(kMissing),
             std::string(kMissing),
             std::string(kMissing)};
      if (cached) {
        row.push_back(std::string(kMissing));
      }
      row.push_back(Cell("skipped: " + *skipped));
      t.AddRow(std::move(row));
      continue;
    }
    const json* correct = Find(*r, {"correct"});
    std::string status = StringAt(*r, {"status"}).value_or("ok");
    std::string note;
    if (status != "ok") {
      note = status;
    } else if (correct != nullptr && correct->is_boolean() && !correct->get<bool>()) {
      note = "expected " + StringAt(*r, {"expected"}).value_or("?") + ", answered \"" +
             StringAt(*r, {"answer"}).value_or("").substr(0, 40) + "\"";
    }
    row = {size,
           FormatCount(NumberAt(*r, {"prompt_tokens"})),
           correct == nullptr || !correct->is_boolean() ? std::string(kMissing)
           : correct->get<bool>()                       ? std::string("✅")
                                                        : std::string("❌"),
           FormatMs(NumberAt(*r, {"ttft_ms"})),
           FormatFixed1(NumberAt(*r, {"prefill_tok_s"})),
           FormatFixed1(NumberAt(*r, {"decode_tok_s"}))};
    if (cached) {
      row.push_back(FormatMs(NumberAt(*r, {"cached", "ttft_ms"})));
    }
    row.push_back(Cell(note));
    t.AddRow(std::move(row));
  }
  out += t.Render() + "\n";
}

void RenderRatePoints(const std::vector<const json*>& points, bool slo, std::string& out) {
  // The nominal rate, the rate the drawn schedule offered ((n − 1) / its span: a short Poisson
  // draw can be 20% off) and the rate the sends achieved, side by side.
  std::vector<Column> cols = {{"Rate (req/s)", Align::kRight},
                              {"Offered", Align::kRight},
                              {"Achieved", Align::kRight},
                              {"OK", Align::kRight},
                              {"Failed", Align::kRight},
                              {"Late sends", Align::kRight},
                              {"TTFT p50 / p99 (ms)", Align::kRight},
                              {"E2E p99 (ms)", Align::kRight},
                              {"E2E p99 from send (ms)", Align::kRight},
                              {"TPOT p50 / p99 (ms)", Align::kRight},
                              {"Output tok/s", Align::kRight}};
  if (slo) {
    cols.push_back({"Good", Align::kRight});
    cols.push_back({"Meets SLO"});
  }
  MarkdownTable t(cols);
  for (const json* p : points) {
    std::vector<std::string> row = {
        FormatFixed2(NumberAt(*p, {"rate_rps"})) + BoundMark(*p),
        FormatFixed2(NumberAt(*p, {"offered_rate_rps"})),
        FormatFixed2(NumberAt(*p, {"achieved_rate_rps"})),
        FormatCount(NumberAt(*p, {"ok"})),
        ErrorCount(NumberAt(*p, {"failed"})),
        FormatCount(NumberAt(*p, {"late_sends"})),
        FormatMs(NumberAt(*p, {"from_scheduled", "ttft_ms", "p50"})) + " / " +
            FormatMs(NumberAt(*p, {"from_scheduled", "ttft_ms", "p99"})),
        FormatMs(NumberAt(*p, {"from_scheduled", "e2e_ms", "p99"})),
        FormatMs(NumberAt(*p, {"from_send", "e2e_ms", "p99"})),
        FormatMs(NumberAt(*p, {"tpot_ms", "p50"})) + " / " +
            FormatMs(NumberAt(*p, {"tpot_ms", "p99"})),
        FormatFixed1(NumberAt(*p, {"output_tok_s"}))};
    if (slo) {
      auto frac = NumberAt(*p, {"goodput", "fraction"});
      row.push_back(frac ? FormatFixed1(*frac * 100) + "%" : std::string(kMissing));
      const json* meets = Find(*p, {"goodput", "meets_slo"});
      row.push_back(meets != nullptr && meets->is_boolean() ? (meets->get<bool>() ? "yes" : "no")
                                                            : std::string(kMissing));
    }
    t.AddRow(std::move(row));
  }
  out += t.Render() + "\n";
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
