#include "report/suite_sections.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/format.h"
#include "report/table.h"

namespace sb::report {

namespace {

using nlohmann::json;

std::string Text(std::string_view s) {
  return MarkdownCell(s, std::string::npos);
}

}  // namespace

void RenderDemoScenario(const json& r, std::string& out) {
  std::vector<const json*> lines = ArrayAt(r, {"demo"});
  if (lines.empty()) {
    return;
  }
  out += "**Demo scenario.** The simulator was configured to show every test status:\n\n";
  for (const json* l : lines) {
    if (l->is_string()) {
      out += "- " + Text(l->get<std::string>()) + "\n";
    }
  }
  out += "\n";
}

void RenderSuiteNotes(const json& r, std::string& out) {
  const json* suite = Find(r, {"suite"});
  if (suite == nullptr || !suite->is_object()) {
    return;
  }
  std::vector<std::string> notes;
  const auto ci = NumbersAt(r, {"summary", "pass_rate_ci95"});
  if (ci.size() == 2) {
    notes.push_back(
        fmt::format("Pass rate {} (95% confidence interval {} to {}, Wilson score over "
                    "{} test runs).",
                    FormatPercent(NumberAt(r, {"summary", "pass_rate"})), FormatPercent(ci[0]),
                    FormatPercent(ci[1]), FormatCount(NumberAt(r, {"summary", "total"}))));
  }
  auto tokens = NumberAt(*suite, {"completion_tokens"});
  auto wall = NumberAt(*suite, {"wall_time_s"});
  auto requests = NumberAt(*suite, {"requests"});
  auto all_requests = NumberAt(r, {"summary", "requests"});
  if (tokens && wall && requests && all_requests && *all_requests > *requests) {
    notes.push_back(fmt::format(
        "The suite alone: {} tokens in {}s, {} tok/s over {} requests (the rest of the totals "
        "above are the speed profiles).",
        FormatCount(tokens), FormatSeconds(wall), FormatFixed1(NumberAt(*suite, {"avg_tok_s"})),
        FormatCount(requests)));
  }
  // How each modality went to the server, from the probes.
  std::vector<std::string> inputs;
  if (const json* probes = Find(*suite, {"probes"}); probes != nullptr && probes->is_object()) {
    for (auto it = probes->begin(); it != probes->end(); ++it) {
      const std::string key = it.key();
      const std::string modality = key.substr(0, key.find(':'));
      const std::string how = StringAt(*it, {"transport"}).value_or("");
      const auto supported = BoolAt(*it, {"supported"});
      const std::string reason = StringAt(*it, {"reason"}).value_or("");
      if (!supported) {
        inputs.push_back(
            fmt::format("{} probe failed ({}), tests sent anyway", modality, Text(reason)));
      } else if (*supported) {
        inputs.push_back(fmt::format("{} accepted as {}", modality, how));
      } else {
        inputs.push_back(fmt::format("{} refused as {} ({})", modality, how, Text(reason)));
      }
    }
  }
  if (auto video = StringAt(*suite, {"transports", "video"}); video && *video == "frames") {
    inputs.push_back("videos sent as frames (images)");
  }
  if (!inputs.empty()) {
    notes.push_back(fmt::format("Inputs, probed once per run: {}.", fmt::join(inputs, "; ")));
  }
  if (auto sandbox = StringAt(*suite, {"sandbox"})) {
    notes.push_back(fmt::format("Model-written code ran in the sandbox ({}).", Text(*sandbox)));
  }
  if (auto budgets = NumbersAt(*suite, {"rerun_budgets"}); !budgets.empty()) {
    std::vector<std::string> b;
    for (double v : budgets) {
      b.push_back(FormatCount(v));
    }
    notes.push_back(
        fmt::format("EMPTY tests were retried with {} tokens; every attempt is in "
                    "results.json.",
                    fmt::join(b, ", then ")));
  }
  if (auto not_run = ArrayAt(*suite, {"not_run"}); !not_run.empty()) {
    notes.push_back(fmt::format("{} tests were not run (the run stopped).",
                                FormatCount(static_cast<double>(not_run.size()))));
  }
  for (const std::string& n : notes) {
    out += n + "\n\n";
  }
}

void RenderRepeats(const json& r, std::string& out) {
  const json* pk = Find(r, {"suite", "pass_at_k"});
  if (pk == nullptr || !pk->is_object()) {
    return;
  }
  std::vector<double> ks = NumbersAt(*pk, {"k"});
  std::vector<Column> cols = {{"Test"}, {"Runs", Align::kRight}, {"Passed", Align::kRight}};
  for (double k : ks) {
    cols.push_back({fmt::format("pass@{}", FormatCount(k)), Align::kRight});
  }
  MarkdownTable t(cols);
  for (const json* row : ArrayAt(*pk, {"tests"})) {
    std::vector<std::string> cells = {
        MarkdownCell(StringAt(*row, {"name"}).value_or(StringAt(*row, {"id"}).value_or(""))),
        FormatCount(NumberAt(*row, {"n"})), FormatCount(NumberAt(*row, {"c"}))};
    for (double k : ks) {
      cells.push_back(FormatPercent(NumberAt(*row, {"pass_at", FormatCount(k)})));
    }
    t.AddRow(cells);
  }
  std::vector<std::string> mean = {"**Mean**", "", ""};
  for (double k : ks) {
    mean.push_back("**" + FormatPercent(NumberAt(*pk, {"mean", FormatCount(k)})) + "**");
  }
  t.AddRow(mean);
  out += "## Repeats\n\n";
  out +=
      "Each test ran several times. pass@k is the chance that at least one of k runs "
      "passes (the unbiased estimator of Chen et al. 2021); UNSUPPORTED tests are left "
      "out.\n\n";
  out += t.Render() + "\n";
}

void RenderSpecByInput(const json& r, std::string& out) {
  const json* by = Find(r, {"suite", "spec_decode_by_input"});
  if (by == nullptr || !by->is_object() || by->empty()) {
    return;
  }
  MarkdownTable t({{"Input"},
                   {"Acceptance rate", Align::kRight},
                   {"Mean acceptance length", Align::kRight},
                   {"Per position", Align::kRight},
                   {"Draft tokens", Align::kRight}});
  for (auto it = by->begin(); it != by->end(); ++it) {
    std::vector<std::string> pos;
    for (double p : NumbersAt(*it, {"per_position"})) {
      pos.push_back(FormatFixed2(p));
    }
    auto len = NumberAt(*it, {"mean_acceptance_length"});
    t.AddRow({CategoryName(it.key()), FormatPercent(NumberAt(*it, {"acceptance_rate"})),
              len ? FormatFixed2(len) : std::string(kMissing),
              pos.empty() ? std::string(kMissing) : fmt::format("{}", fmt::join(pos, " / ")),
              FormatCount(NumberAt(*it, {"num_draft_tokens"}))});
  }
  out += "### Speculative decoding by input (quality tests)\n\n";
  out +=
      "Counters read around each test request: does the draft stay useful for image and "
      "video requests?\n\n";
  out += t.Render() + "\n";
}

}  // namespace sb::report
