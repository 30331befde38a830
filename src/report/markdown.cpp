#include "report/markdown.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/profile_table.h"
#include "report/failed_requests.h"
#include "report/format.h"
#include "report/markdown_gates.h"
#include "report/markdown_speed.h"
#include "report/suite_sections.h"
#include "report/table.h"

namespace sb::report {

namespace {

using md::HasSpecDecode;
using md::RenderOtherProfiles;
using md::RenderSpeed;
using nlohmann::json;

// The order statuses are listed in wherever a breakdown is printed (docs/suites.md "Statuses").
constexpr std::array<std::string_view, 6> kNonPassStatuses = {"FAIL",        "EMPTY", "LOOP",
                                                              "UNSUPPORTED", "ERROR", "TIMEOUT"};

std::string Upper(std::string s) {
  for (char& c : s) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return s;
}

std::string Cell(std::string_view text) {
  return MarkdownCell(text);
}

// Escapes free text outside tables ('<' would start an HTML tag) without truncating it.
std::string Text(std::string_view text) {
  return MarkdownCell(text, std::string::npos);
}

// A test's display name: "name" when present, else "id".
std::string TestName(const json& t) {
  if (auto name = StringAt(t, {"name"})) {
    return *name;
  }
  if (auto id = StringAt(t, {"id"})) {
    return *id;
  }
  if (auto id = NumberAt(t, {"id"})) {
    return FormatCount(id);
  }
  return "(unnamed test)";
}

std::string TestStatus(const json& t) {
  return Upper(StringAt(t, {"status"}).value_or(""));
}

// A test's time: its wall time (time_ms: send to the end of the response) when recorded, else
// its E2E time.
std::optional<double> TestTimeMs(const json& t) {
  if (auto ms = NumberAt(t, {"time_ms"})) {
    return ms;
  }
  return NumberAt(t, {"e2e_ms"});
}

// attempts is a count or the list of attempts; 0 when absent.
std::size_t Attempts(const json& t) {
  const json* a = Find(t, {"attempts"});
  if (a == nullptr) {
    return 0;
  }
  if (a->is_array()) {
    return a->size();
  }
  if (a->is_number()) {
    double d = a->get<double>();
    return d > 0 ? static_cast<std::size_t>(d) : 0;
  }
  return 0;
}

// ---- Tests grouped by category ---------------------------------------------------------------

struct Category {
  std::string name;  // as in results.json
  std::vector<const json*> tests;
  int pass = 0;
  std::map<std::string, int> other;  // non-PASS statuses -> count
  std::optional<double> tokens;      // Σ of the known completion_tokens
  std::optional<double> time_s;      // Σ of the known e2e times
};

void AddTest(Category& c, const json& t) {
  c.tests.push_back(&t);
  std::string status = TestStatus(t);
  if (status == "PASS") {
    ++c.pass;
  } else {
    ++c.other[status.empty() ? "NO STATUS" : status];
  }
  if (auto tok = NumberAt(t, {"completion_tokens"})) {
    c.tokens = c.tokens.value_or(0) + *tok;
  }
  if (auto ms = TestTimeMs(t)) {
    c.time_s = c.time_s.value_or(0) + *ms / 1000.0;
  }
}

std::vector<Category> GroupTests(const json& results) {
  std::vector<Category> cats;
  for (const json* t : ArrayAt(results, {"tests"})) {
    std::string name = StringAt(*t, {"category"}).value_or("uncategorised");
    auto it =
        std::find_if(cats.begin(), cats.end(), [&](const Category& c) { return c.name == name; });
    if (it == cats.end()) {
      cats.push_back(Category{name, {}, 0, {}, std::nullopt, std::nullopt});
      it = cats.end() - 1;
    }
    AddTest(*it, *t);
  }
  return cats;
}

// "1 FAIL, 2 EMPTY" in the fixed status order (unknown statuses last), "0" when none.
std::string StatusBreakdown(const std::map<std::string, int>& other) {
  std::vector<std::string> parts;
  for (std::string_view s : kNonPassStatuses) {
    auto it = other.find(std::string(s));
    if (it != other.end()) {
      parts.push_back(fmt::format("{} {}", it->second, s));
    }
  }
  for (const auto& [status, n] : other) {
    if (std::find(kNonPassStatuses.begin(), kNonPassStatuses.end(), status) ==
        kNonPassStatuses.end()) {
      parts.push_back(fmt::format("{} {}", n, Cell(status)));
    }
  }
  return parts.empty() ? "0" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string PassCell(int pass, std::size_t total) {
  std::string s = fmt::format("{}/{}", pass, total);
  if (total > 0 && static_cast<std::size_t>(pass) == total) {
    s += " ✅";
  } else if (pass == 0 && total > 0) {
    s += " ❌";
  }
  return s;
}

// ---- Sections --------------------------------------------------------------------------------

// A merged run's shards (servebench merge, docs/scale-out.md), and a server servebench started.
void RenderShardsAndServer(const json& r, std::string& out) {
  // A merged run (servebench merge, docs/scale-out.md): how many shards and their clocks.
  if (const json* sh = Find(r, {"shards"}); sh != nullptr && sh->is_object()) {
    const auto count = NumberAt(*sh, {"count"});
    std::set<std::string> hosts;
    for (const json* s : ArrayAt(*sh, {"shards"})) {
      hosts.insert(StringAt(*s, {"host"}).value_or("?"));
    }
    std::string line = fmt::format(
        "Shards: {} shards on {} host{}, merged (counts summed, "
        "percentiles over the union of samples)",
        FormatCount(count), hosts.size(), hosts.size() == 1 ? "" : "s");
    if (auto at = StringAt(*sh, {"start_at"})) {
      line += "; started together at " + Text(*at);
    }
    if (auto spread = NumberAt(*sh, {"clock_spread_s"})) {
      line += fmt::format(
          "; clock spread {:.1f} ms (each offset to the server measured to ±{:.1f} "
          "ms)",
          *spread * 1e3, NumberAt(*sh, {"clock_uncertainty_s"}).value_or(0) * 1e3);
    } else {
      line += "; clock spread unknown (the server sent no Date header)";
    }
    out += line + ".\n\n";
  }
  if (const json* sp = Find(r, {"server_process"}); sp != nullptr && sp->is_object()) {
    std::string line = "Server: started by servebench";
    if (auto cmd = StringAt(*sp, {"command"})) {
      line += " (`" + Text(*cmd) + "`)";
    }
    if (auto ready = NumberAt(*sp, {"time_to_ready_s"})) {
      line += fmt::format(", ready after {}s", FormatSeconds(ready));
    }
    if (auto sig = StringAt(*sp, {"stop", "signal"})) {
      line += fmt::format(", stopped ({})", Text(*sig));
    } else if (auto code = NumberAt(*sp, {"stop", "exit_code"})) {
      line += fmt::format(", exited with code {}", FormatCount(code));
    }
    if (BoolAt(*sp, {"stop", "killed"}).value_or(false)) {
      line += " after SIGKILL";
    }
    if (auto log = StringAt(*sp, {"log_file"})) {
      line += "; its log: " + Text(*log);
    }
    out += line + ".\n\n";
  }
}

// The run's status when it is not complete, and what --resume replayed.
void RenderStatus(const json& r, std::string& out) {
  std::string status = StringAt(r, {"status"}).value_or("complete");
  const std::string reason = StringAt(r, {"stop_reason"}).value_or("");
  const std::string why = reason.empty() ? "" : " Reason: " + Text(reason) + ".";
  if (status == "interrupted") {
    out +=
        "**Interrupted: partial results.** The run was stopped before it finished; the tables "
        "show only what was measured." +
        why + "\n\n";
  } else if (status == "failed") {
    out +=
        "**Failed: partial results.** The run stopped on an error; the tables show only what "
        "was measured." +
        why + "\n\n";
  } else if (status == "running") {
    out +=
        "**Incomplete: partial results.** results.json was last written while the run was still "
        "going (it is still running, or it crashed); the tables show only what was measured.\n\n";
  } else if (status != "complete") {
    out += fmt::format("**Status: {}.**\n\n", Text(status));
  }
  // A run continued with --resume (docs/resume.md) says so, and what was replayed.
  for (const json* res : ArrayAt(r, {"resumed"})) {
    const auto units = NumberAt(*res, {"units_replayed"});
    const auto superseded = NumberAt(*res, {"superseded_samples"});
    const auto unfinished = StringAt(*res, {"unfinished_unit"});
    out += fmt::format(
        "Resumed at {}: {} finished unit{} replayed from the journal (not sent again){}.\n\n",
        Text(StringAt(*res, {"at"}).value_or("?")), FormatCount(units),
        units && *units == 1 ? "" : "s",
        unfinished
            ? fmt::format("; \"{}\" was cut off and measured again from its start{}",
                          Text(*unfinished),
                          superseded && *superseded > 0
                              ? fmt::format(" (its {} earlier sample{} kept apart in "
                                            "samples.jsonl, marked superseded)",
                                            FormatCount(superseded), *superseded == 1 ? "" : "s")
                              : std::string())
            : std::string());
  }
}

void RenderHeader(const json& r, std::string& out) {
  std::string model = StringAt(r, {"target", "model"}).value_or("unknown model");
  out += fmt::format("# servebench report: {}\n\n", Text(model));
  out += "Target: " + Text(DescribeTarget(r));
  if (auto len = NumberAt(r, {"target", "max_model_len"})) {
    out += fmt::format("; max model length {} tokens", FormatCount(len));
  }
  out += ".\n\n";
  std::vector<std::string> run;
  auto started = StringAt(r, {"started_at"});
  auto finished = StringAt(r, {"finished_at"});
  if (started) {
    run.push_back(finished ? fmt::format("{} to {}", Text(*started), Text(*finished))
                           : fmt::format("started {}", Text(*started)));
  }
  if (auto command = StringAt(r, {"command"})) {
    run.push_back("`" + Text(*command) + "`");
  }
  if (auto version = StringAt(r, {"tool", "version"})) {
    run.push_back("servebench " + Text(*version));
  }
  if (!run.empty()) {
    out += fmt::format("Run: {}\n\n", fmt::join(run, " · "));
  }
  if (const RunLabels labels = LabelsOf(r); !labels.empty()) {
    std::vector<std::string> parts;
    if (labels.label) {
      parts.push_back("**" + MarkdownInline(*labels.label) + "**");
    }
    for (const std::string& tag : labels.tags) {
      parts.push_back(MarkdownCode(tag));
    }
    out += fmt::format("Label: {}\n\n", fmt::join(parts, " · "));
  }
  RenderShardsAndServer(r, out);
  RenderStatus(r, out);
}

void RenderWarnings(const json& r, std::string& out) {
  std::vector<std::string> items;
  for (const json* w : ArrayAt(r, {"warnings"})) {
    if (w->is_string()) {
      items.push_back(Text(w->get<std::string>()));
    }
  }
  if (items.empty()) {
    return;
  }
  out += "## Warnings\n\n";
  for (const std::string& w : items) {
    out += "- " + w + "\n";
  }
  out += "\n";
}

void RenderSummary(const json& r, bool has_tests, std::string& out) {
  auto n = [&](std::string_view key) { return NumberAt(r, {"summary", key}); };
  MarkdownTable t({{"Metric"}, {"Value", Align::kRight}});
  if (has_tests) {
    auto pass_rate = n("pass_rate");
    t.AddRow({"Total tests", FormatCount(n("total"))});
    t.AddRow({"Passed",
              pass_rate ? fmt::format("{} ({})", FormatCount(n("pass")), FormatPercent(pass_rate))
                        : FormatCount(n("pass"))});
    t.AddRow({"Failed", FormatCount(n("fail"))});
    t.AddRow({"Empty (token budget exhausted)", FormatCount(n("empty"))});
    t.AddRow({"Loop (repeating output)", FormatCount(n("loop"))});
    t.AddRow({"Unsupported (refused by the server)", FormatCount(n("unsupported"))});
    t.AddRow({"Errors", FormatCount(n("error"))});
    t.AddRow({"Timeouts", FormatCount(n("timeout"))});
    std::string effective = FormatPercent(n("effective_pass_rate"));
    auto pass = n("pass");
    auto total = n("total");
    auto unsupported = n("unsupported");
    if (pass && total && unsupported && n("effective_pass_rate")) {
      effective = fmt::format("{}/{} = {}", FormatCount(pass), FormatCount(*total - *unsupported),
                              effective);
    }
    t.AddRow({"Effective pass rate (excl. unsupported)", effective});
  }
  t.AddRow({"Requests", FormatCount(n("requests"))});
  t.AddRow({"Failed requests", FormatCount(n("failed_requests"))});
  t.AddRow({"Total tokens generated", FormatCount(n("completion_tokens"))});
  auto wall = n("wall_time_s");
  t.AddRow({"Total wall time", wall ? FormatSeconds(wall) + "s" : std::string(kMissing)});
  auto avg = n("avg_tok_s");
  t.AddRow({"Average throughput", avg ? FormatFixed1(avg) + " tok/s" : std::string(kMissing)});
  out += "## Results summary\n\n" + t.Render() + "\n";
}

void RenderCategories(const std::vector<Category>& cats, std::string& out) {
  MarkdownTable t({{"Category"},
                   {"Pass", Align::kRight},
                   {"Error"},
                   {"Total", Align::kRight},
                   {"Tokens", Align::kRight},
                   {"Time (s)", Align::kRight}});
  Category all;
  for (const Category& c : cats) {
    t.AddRow({Cell(CategoryName(c.name)), PassCell(c.pass, c.tests.size()),
              StatusBreakdown(c.other), std::to_string(c.tests.size()), FormatCount(c.tokens),
              FormatSeconds(c.time_s)});
    all.pass += c.pass;
    for (const auto& [status, count] : c.other) {
      all.other[status] += count;
    }
    all.tests.insert(all.tests.end(), c.tests.begin(), c.tests.end());
    if (c.tokens) {
      all.tokens = all.tokens.value_or(0) + *c.tokens;
    }
    if (c.time_s) {
      all.time_s = all.time_s.value_or(0) + *c.time_s;
    }
  }
  t.AddRow({"**Total**", fmt::format("{}/{}", all.pass, all.tests.size()),
            StatusBreakdown(all.other), std::to_string(all.tests.size()), FormatCount(all.tokens),
            FormatSeconds(all.time_s)});
  out += "## Results by category\n\n" + t.Render() + "\n";
  out +=
      "Error lists every test that did not pass, by status. Tokens and time are sums over the "
      "tests that report them.\n\n";
}

std::string TestTokens(const json& t) {
  auto tokens = NumberAt(t, {"completion_tokens"});
  std::string s = FormatCount(tokens);
  auto reasoning = NumberAt(t, {"reasoning_tokens"});
  if (tokens && reasoning && *reasoning > 0) {
    s += fmt::format(" ({} reasoning)", FormatCount(reasoning));
  }
  return s;
}

std::string TestNotes(const json& t) {
  std::string notes = Cell(StringAt(t, {"reason"}).value_or(""));
  std::size_t attempts = Attempts(t);
  if (attempts > 1) {
    notes += fmt::format("{}after {} attempts", notes.empty() ? "" : "; ", attempts);
  }
  return notes;
}

void RenderTests(const std::vector<Category>& cats, std::string& out) {
  for (const Category& c : cats) {
    out +=
        fmt::format("### {}: {}/{} passed\n\n", Text(CategoryName(c.name)), c.pass, c.tests.size());
    // Sub-groups of the category (the full suite's sections), in order of appearance.
    std::vector<std::pair<std::string, std::pair<int, int>>> sections;
    for (const json* test : c.tests) {
      auto section = StringAt(*test, {"section"});
      if (!section || section->empty()) {
        continue;
      }
      auto it = std::find_if(sections.begin(), sections.end(),
                             [&](const auto& p) { return p.first == *section; });
      if (it == sections.end()) {
        sections.push_back({*section, {0, 0}});
        it = sections.end() - 1;
      }
      ++it->second.second;
      it->second.first += TestStatus(*test) == "PASS" ? 1 : 0;
    }
    if (sections.size() > 1) {
      MarkdownTable st({{"Section"}, {"Tests", Align::kRight}, {"Passed", Align::kRight}});
      for (const auto& [name, counts] : sections) {
        st.AddRow({Cell(CategoryName(name)), std::to_string(counts.second),
                   PassCell(counts.first, static_cast<std::size_t>(counts.second))});
      }
      out += st.Render() + "\n";
    }
    MarkdownTable t(
        {{"Test"}, {"Time", Align::kRight}, {"Tokens", Align::kRight}, {"Status"}, {"Notes"}});
    for (const json* test : c.tests) {
      auto ms = TestTimeMs(*test);
      std::string status = TestStatus(*test);
      t.AddRow({Cell(TestName(*test)),
                ms ? FormatSeconds(*ms / 1000.0) + "s" : std::string(kMissing), TestTokens(*test),
                status.empty() ? std::string(kMissing) : Cell(status), TestNotes(*test)});
    }
    out += t.Render() + "\n";
  }
}

void RenderErrors(const json& r, bool has_tests, std::string& out) {
  std::vector<FailedRequest> failed = FailedRequests(r);
  auto total_failed = NumberAt(r, {"summary", "failed_requests"});
  bool unlisted = total_failed && *total_failed > static_cast<double>(failed.size());
  // With tests, failures outside the speed profiles are the tests' own, shown in their tables.
  if (failed.empty() && (!unlisted || has_tests)) {
    return;
  }
  out += "## Errors\n\n";
  if (!failed.empty()) {
    MarkdownTable t({{"Profile"}, {"Request"}, {"Status"}, {"HTTP", Align::kRight}, {"Reason"}});
    for (const FailedRequest& f : failed) {
      t.AddRow({f.profile, Cell(f.request), Cell(StringAt(*f.record, {"status"}).value_or("")),
                FormatCount(NumberAt(*f.record, {"http_status"})),
                Cell(StringAt(*f.record, {"reason"}).value_or(std::string(kMissing)))});
    }
    out += t.Render() + "\n";
  }
  if (unlisted) {
    out += fmt::format(
        "These are the speed profiles' failed requests, {} of the {} in the summary{}; "
        "samples.jsonl holds every request.\n\n",
        failed.size(), FormatCount(total_failed),
        has_tests ? "; failed tests are in the tables above" : "");
  }
}

void RenderDefinitions(const json& r, bool has_tests, std::string& out) {
  const json* perf = Find(r, {"perf"});
  auto has = [&](std::string_view p) {
    const json* v = perf == nullptr ? nullptr : Find(*perf, {p});
    return v != nullptr && v->is_object();
  };
  std::vector<std::string> d;
  const std::string_view max_tokens = Profile(ProfileId::kMaxTokens).key;
  if (has("decode") || has("concurrency") || has(max_tokens)) {
    d.push_back(
        "**Decode tok/s** excludes TTFT: (completion tokens − 1) / (last token − first token) "
        "of one request.");
  }
  d.push_back(
      "**TTFT**: from sending the request to the first event carrying a generated token "
      "(answer, reasoning or tool call). **E2E**: from sending to the last token.");
  if (has("concurrency")) {
    d.push_back(
        "**Throughput** at concurrency N: Σ completion tokens of the N streams / (last token of "
        "any stream − first send).");
  }
  if (has(max_tokens)) {
    d.push_back(
        "**Tok/s** by output length: completion tokens / request wall time, TTFT included.");
  }
  d.push_back(
      "**Total wall time**: time with measured requests in flight (send to last token; requests "
      "sent together count once, from the first send to the last token); "
      "**average throughput**: Σ completion tokens / total wall time.");
  if (has_tests) {
    d.push_back("**Effective pass rate**: PASS / (total − UNSUPPORTED).");
  }
  if (HasSpecDecode(r)) {
    d.push_back(
        "**Acceptance rate**: accepted / drafted tokens over the measurement window; **mean "
        "acceptance length**: 1 + accepted / drafts.");
  }
  d.push_back("**—**: not measured (null in results.json), never a zero.");
  out += "## Definitions\n\n";
  for (const std::string& line : d) {
    out += "- " + line + "\n";
  }
  out += "\nFull definitions: docs/metrics.md in the servebench sources.\n";
}

}  // namespace

std::string RenderMarkdown(const json& results) {
  std::string out;
  std::vector<Category> cats = GroupTests(results);
  auto total = NumberAt(results, {"summary", "total"});
  bool has_tests = !cats.empty() || (total && *total > 0);
  RenderHeader(results, out);
  RenderDemoScenario(results, out);
  RenderWarnings(results, out);
  RenderSummary(results, has_tests, out);
  out += RenderGatesMarkdown(results);
  RenderSuiteNotes(results, out);
  if (!cats.empty()) {
    RenderCategories(cats, out);
    RenderTests(cats, out);
  }
  RenderRepeats(results, out);
  RenderSpeed(results, out);
  RenderSpecByInput(results, out);
  RenderOtherProfiles(results, out);
  RenderErrors(results, has_tests, out);
  RenderDefinitions(results, has_tests, out);
  return out;
}

namespace {

// One line per rate point: the nominal rate with the rate the drawn schedule offered and the
// sends achieved beside it (a short Poisson draw can offer 20% more than nominal), then what
// came back: requests ok, throughput and, under --slo, goodput. Then the search's answer.
std::string ConsoleRateLines(const json& r) {
  std::string out;
  auto line = [&](const json& p, std::string_view what) {
    auto goodput = NumberAt(p, {"goodput", "goodput_rps"});
    out += fmt::format(
        "{} {} req/s (offered {}, achieved {}): {}/{} ok, throughput {} req/s{}\n", what,
        FormatFixed2(NumberAt(p, {"rate_rps"})), FormatFixed2(NumberAt(p, {"offered_rate_rps"})),
        FormatFixed2(NumberAt(p, {"achieved_rate_rps"})), FormatCount(NumberAt(p, {"ok"})),
        FormatCount(NumberAt(p, {"scheduled"})), FormatFixed2(NumberAt(p, {"throughput_rps"})),
        goodput ? fmt::format(", goodput {} req/s ({} good)", FormatFixed2(goodput),
                              FormatPercent(NumberAt(p, {"goodput", "fraction"})))
                : std::string());
  };
  for (const json* p : ArrayAt(r, {"perf", "rate", "rates"})) {
    line(*p, "rate");
  }
  for (const json* p : ArrayAt(r, {"perf", "rate", "search", "points"})) {
    line(*p, "rate search probe");
  }
  if (auto best = NumberAt(r, {"perf", "rate", "search", "best_rps"})) {
    out += fmt::format("highest rate meeting the SLOs: {} req/s ({})\n", FormatFixed2(best),
                       StringAt(r, {"perf", "rate", "search", "result"}).value_or("?"));
  }
  return out;
}

}  // namespace

std::string RenderConsoleSummary(const json& r) {
  // A run that failed or was stopped says so before any figure.
  std::string out;
  std::string status = StringAt(r, {"status"}).value_or("complete");
  const std::string reason = StringAt(r, {"stop_reason"}).value_or("");
  if (status == "failed") {
    out += fmt::format("RUN FAILED: {} (partial results below)\n",
                       reason.empty() ? "see the warnings" : reason);
  } else if (status != "complete") {
    out += fmt::format("status: {}{} (partial results)\n", status,
                       reason.empty() ? "" : ": " + reason);
  }
  out += "target: " + DescribeTarget(r) + "\n";
  auto n = [&](std::string_view key) { return NumberAt(r, {"summary", key}); };
  if (auto total = n("total"); total && *total > 0) {
    std::vector<std::string> other;
    for (std::string_view key : {"fail", "empty", "loop", "unsupported", "error", "timeout"}) {
      if (auto v = n(key); v && *v > 0) {
        other.push_back(fmt::format("{} {}", FormatCount(v), key));
      }
    }
    out += fmt::format("tests: {}/{} passed ({}), effective {}", FormatCount(n("pass")),
                       FormatCount(total), FormatPercent(n("pass_rate")),
                       FormatPercent(n("effective_pass_rate")));
    out += other.empty() ? "\n" : fmt::format("; {}\n", fmt::join(other, ", "));
  }
  if (const json* d = Find(r, {"perf", "decode"}); d != nullptr && d->is_object()) {
    std::vector<std::string> runs;
    for (double v : NumbersAt(*d, {"decode_tok_s", "values"})) {
      runs.push_back(FormatFixed1(v));
    }
    out +=
        fmt::format("decode: {} tok/s (median of {}; runs {}), TTFT {} ms",
                    FormatFixed1(NumberAt(*d, {"decode_tok_s", "median"})),
                    FormatCount(NumberAt(*d, {"decode_tok_s", "n"})),
                    runs.empty() ? std::string(kMissing) : fmt::format("{}", fmt::join(runs, ", ")),
                    FormatMs(NumberAt(*d, {"ttft_ms", "median"})));
    auto errors = NumberAt(*d, {"errors"});
    out += errors && *errors > 0 ? fmt::format("; {} failed\n", FormatCount(errors)) : "\n";
  }
  if (auto levels = ArrayAt(r, {"perf", "concurrency", "levels"}); !levels.empty()) {
    std::vector<std::string> parts;
    double errors = 0;
    for (const json* l : levels) {
      parts.push_back(fmt::format("{}: {}", FormatCount(NumberAt(*l, {"concurrency"})),
                                  FormatFixed1(NumberAt(*l, {"throughput_tok_s"}))));
      errors += NumberAt(*l, {"errors"}).value_or(0);
    }
    out += fmt::format("throughput by concurrency: {} tok/s; {} errors\n", fmt::join(parts, " · "),
                       FormatCount(errors));
  }
  const json* perf = Find(r, {"perf"});
  if (auto lengths =
          perf != nullptr ? ProfileRows(*perf, ProfileId::kMaxTokens) : std::vector<const json*>{};
      !lengths.empty()) {
    std::vector<std::string> parts;
    for (const json* l : lengths) {
      parts.push_back(fmt::format("{}: {}", FormatCount(RowLevel(*l, ProfileId::kMaxTokens)),
                                  FormatFixed1(NumberAt(*l, {"tok_s", "median"}))));
    }
    out += fmt::format("tok/s by max_tokens: {}\n", fmt::join(parts, " · "));
  }
  if (auto prompts = ArrayAt(r, {"perf", "ttft", "prompts"}); !prompts.empty()) {
    std::vector<std::string> parts;
    for (const json* p : prompts) {
      parts.push_back(fmt::format("{} {} ms", StringAt(*p, {"name"}).value_or("?"),
                                  FormatMs(NumberAt(*p, {"ttft_ms", "median"}))));
    }
    out += fmt::format("TTFT by prompt (median): {}\n", fmt::join(parts, " · "));
  }
  out += ConsoleRateLines(r);
  if (HasSpecDecode(r)) {
    out += fmt::format("spec decode: acceptance {}, mean acceptance length {}\n",
                       FormatPercent(NumberAt(r, {"spec_decode", "acceptance_rate"})),
                       FormatFixed2(NumberAt(r, {"spec_decode", "mean_acceptance_length"})));
  }
  // wall_time_s is the time with measured requests in flight (docs/metrics.md), not the run's
  // duration: say so. Requests a stop (Ctrl-C) cut short are counted apart from failures.
  auto wall = n("wall_time_s");
  auto interrupted = n("interrupted_requests");
  auto tokens = n("completion_tokens");
  out += fmt::format(
      "requests: {} ({} failed{}), {} {} in {} with requests in flight, {} tok/s "
      "average\n",
      FormatCount(n("requests")), FormatCount(n("failed_requests")),
      interrupted && *interrupted > 0 ? fmt::format(", {} interrupted", FormatCount(interrupted))
                                      : "",
      FormatCount(tokens), tokens == 1.0 ? "token" : "tokens",
      wall ? FormatSeconds(wall) + "s" : std::string(kMissing), FormatFixed1(n("avg_tok_s")));
  for (const json* w : ArrayAt(r, {"warnings"})) {
    if (w->is_string()) {
      out += "warning: " + w->get<std::string>() + "\n";
    }
  }
  return out;
}

}  // namespace sb::report
