#include "report/compare.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "report/compare_charts.h"
#include "report/compare_internal.h"
#include "report/compare_stats.h"
#include "report/format.h"
#include "report/html_frontier.h"
#include "report/run_dir.h"

namespace sb::report {

namespace compare_detail {

std::string MethodText(double equivalence_pct) {
  return fmt::format(
      "Advantage names the better run and its ratio over the runner-up. For a figure that is a "
      "median or percentile of per-request values, the bracket is the 95% confidence interval of "
      "that ratio from a percentile bootstrap (2000 resamples of each run's raw samples from "
      "samples.jsonl, fixed seed); when the interval lies inside ±{0:g}% (--equivalence) the row "
      "says \"same (within {0:g}%)\", and when it holds 1 \"≈ within noise\", instead of a "
      "ratio. \"n=1, no CI\" marks a figure with one value per run (a throughput level, an "
      "acceptance rate): its ratio has no interval. Scores and failed requests are counts, "
      "compared exactly; the paired quality test is the exact McNemar test on the tests both "
      "runs ran. — means a run has no such figure. Method: docs/compare.md.",
      equivalence_pct);
}

namespace {

// How many times better `best` is than `other` (>= 1; infinity when other is 0).
double RatioOf(Better better, double best, double other) {
  bool lower = better == Better::kLower;
  double num = lower ? other : best;
  double den = lower ? best : other;
  if (num == den) {
    return 1.0;
  }
  return den > 0 ? num / den : INFINITY;
}

std::string RatioText(double r) {
  return FormatRatio(r);
}

// A ratio and its interval are printed with the same two decimals, so the point never shows
// outside its own bracket through rounding ("1.3× (95% CI 1.34–1.45×)").
double Round2(double x) {
  return std::round(x * 100.0) / 100.0;
}

// An interval "holds 1" as it is printed: 0.996–1.004 reads 1.00–1.00, and a row that reads
// so is within noise, never "1.00× faster".
bool HoldsOne(const stats::RatioInterval& ci) {
  return Round2(ci.lo) <= 1.0 && 1.0 <= Round2(ci.hi);
}

// The bootstrap interval of the ratio of `best` over `other` (as RatioOf orients it).
std::optional<stats::RatioInterval> Interval(const CompareRow& row, std::size_t best,
                                             std::size_t other) {
  const auto& sb = row.cells[best].samples;
  const auto& so = row.cells[other].samples;
  std::uint64_t seed = stats::SeedFor(fmt::format("{}|{}|{}", row.key, best, other));
  if (row.better == Better::kLower) {
    return stats::BootstrapRatio(so, sb, row.quantile, seed);
  }
  return stats::BootstrapRatio(sb, so, row.quantile, seed);
}

Judgement JudgeCounts(const CompareRow& row, std::vector<std::size_t> idx,
                      const std::vector<std::string>& labels) {
  Judgement j;
  const bool scores = row.cells[idx[0]].total.has_value();
  bool same_totals = scores && std::all_of(idx.begin(), idx.end(), [&](std::size_t i) {
                       return row.cells[i].total == row.cells[idx[0]].total;
                     });
  auto key = [&](std::size_t i) { return same_totals ? *row.cells[i].pass : *row.cells[i].value; };
  bool lower = row.better == Better::kLower;
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return lower ? key(a) < key(b) : key(a) > key(b);
  });
  std::size_t best = idx[0];
  std::size_t runner = idx[1];
  j.runner_up = runner;
  if (key(best) == key(runner)) {
    j.verdict = Verdict::kEqual;
    for (std::size_t i : idx) {
      if (key(i) == key(best)) {
        j.within_noise.push_back(i);
      }
    }
    std::sort(j.within_noise.begin(), j.within_noise.end());
    if (j.within_noise.size() == row.cells.size() || row.cells.size() == 2) {
      j.text = "Equal";
    } else {
      std::vector<std::string> names;
      for (std::size_t i : j.within_noise) {
        names.push_back(labels[i]);
      }
      j.text = fmt::format("Equal: {}", fmt::join(names, ", "));
    }
    return j;
  }
  j.winner = best;
  if (same_totals) {
    j.verdict = Verdict::kCountDiff;
    j.text = fmt::format("{} +{} passed", labels[best], FormatCount(key(best) - key(runner)));
  } else if (!scores) {
    j.verdict = Verdict::kCountDiff;
    j.text = fmt::format("{} {} fewer", labels[best], FormatCount(key(runner) - key(best)));
  } else {
    // Different suites: pass rates, one value each.
    double r = RatioOf(row.better, key(best), key(runner));
    j.verdict = Verdict::kNoInterval;
    if (std::isfinite(r)) {
      j.ratio = r;
      j.text = fmt::format("{} {} better", labels[best], RatioText(r));
    } else {
      j.text = fmt::format("{} better (vs 0)", labels[best]);
    }
  }
  return j;
}

// Single values (no interval) that lie within their measuring resolution of the best (idx[0])
// tie: "≈ tie (within the 0.02 s resolution)". False, and j untouched, when the runner-up lies
// outside it.
bool TieWithin(const CompareRow& row, const std::vector<std::size_t>& idx, Judgement& j,
               const std::vector<std::string>& labels) {
  const CompareCell& best = row.cells[idx[0]];
  auto within = [&](std::size_t i) {
    const double res = std::max(best.resolution, row.cells[i].resolution);
    return res > 0 && std::abs(*row.cells[i].value - *best.value) <= res;
  };
  if (!within(idx[1])) {
    return false;
  }
  double res = 0;
  std::vector<std::size_t> tied;
  for (std::size_t i : idx) {
    if (i == idx[0] || within(i)) {
      tied.push_back(i);
      res = std::max(res, row.cells[i].resolution);
    }
  }
  std::sort(tied.begin(), tied.end());
  j.verdict = Verdict::kEqual;
  j.within_noise = tied;
  const std::string unit = row.unit.empty() ? "" : " " + row.unit;
  if (row.cells.size() == 2 || tied.size() == idx.size()) {
    j.text = fmt::format("≈ tie (within the {:.3g}{} resolution)", res, unit);
  } else {
    std::vector<std::string> names;
    for (std::size_t i : tied) {
      names.push_back(labels[i]);
    }
    j.text = fmt::format("≈ tie: {} (within the {:.3g}{} resolution)", fmt::join(names, ", "), res,
                         unit);
  }
  return true;
}

}  // namespace

Judgement Judge(const CompareRow& row, const std::vector<std::string>& labels,
                double equivalence_pct) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < row.cells.size(); ++i) {
    if (row.cells[i].value) {
      idx.push_back(i);
    }
  }
  if (idx.size() < 2) {
    return Judgement{};
  }
  if (row.counts) {
    return JudgeCounts(row, idx, labels);
  }
  Judgement j;
  bool lower = row.better == Better::kLower;
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return lower ? *row.cells[a].value < *row.cells[b].value
                 : *row.cells[a].value > *row.cells[b].value;
  });
  std::size_t best = idx[0];
  std::size_t runner = idx[1];
  j.runner_up = runner;
  double ratio = RatioOf(row.better, *row.cells[best].value, *row.cells[runner].value);
  auto ci = Interval(row, best, runner);
  if (ci) {
    j.ci_low = ci->lo;
    j.ci_high = ci->hi;
  }
  if (ci && WithinEquivalence(ci->lo, ci->hi, equivalence_pct)) {
    j.verdict = Verdict::kWithinNoise;
    j.same = true;
    j.ratio = ratio;
    j.within_noise.push_back(best);
    for (std::size_t k = 1; k < idx.size(); ++k) {
      auto other = Interval(row, best, idx[k]);
      if (other && WithinEquivalence(other->lo, other->hi, equivalence_pct)) {
        j.within_noise.push_back(idx[k]);
      }
    }
    std::sort(j.within_noise.begin(), j.within_noise.end());
    if (row.cells.size() == 2 || j.within_noise.size() == idx.size()) {
      j.text = fmt::format("same (within {:g}%)", equivalence_pct);
    } else {
      std::vector<std::string> names;
      for (std::size_t i : j.within_noise) {
        names.push_back(labels[i]);
      }
      j.text = fmt::format("same: {} (within {:g}%)", fmt::join(names, ", "), equivalence_pct);
    }
    return j;
  }
  if (ci && HoldsOne(*ci)) {
    j.verdict = Verdict::kWithinNoise;
    j.within_noise.push_back(best);
    for (std::size_t k = 1; k < idx.size(); ++k) {
      auto other = Interval(row, best, idx[k]);
      if (other && HoldsOne(*other)) {
        j.within_noise.push_back(idx[k]);
      }
    }
    std::sort(j.within_noise.begin(), j.within_noise.end());
    j.ratio = ratio;
    std::string range = fmt::format("95% CI {:.2f}–{:.2f}×", ci->lo, ci->hi);
    if (row.cells.size() == 2 || j.within_noise.size() == idx.size()) {
      j.text = fmt::format("≈ within noise ({})", range);
    } else {
      std::vector<std::string> names;
      for (std::size_t i : j.within_noise) {
        names.push_back(labels[i]);
      }
      j.text = fmt::format("≈ within noise: {} ({})", fmt::join(names, ", "), range);
    }
    return j;
  }
  const std::string& who = labels[best];
  if (!std::isfinite(ratio)) {
    j.winner = best;
    j.verdict = ci ? Verdict::kBetter : Verdict::kNoInterval;
    j.text = fmt::format("{} {} (vs 0)", who, row.word);
    return j;
  }
  j.ratio = ratio;
  if (!ci && TieWithin(row, idx, j, labels)) {
    return j;
  }
  // "n=1": each figure is one value; "no CI": a figure summarises values this run did not keep.
  const std::string no_ci =
      std::max(row.cells[best].n, row.cells[runner].n) > 1 ? "no CI" : "n=1, no CI";
  if (!ci && ratio == 1.0) {
    j.verdict = Verdict::kNoInterval;
    j.text = fmt::format("Equal ({})", no_ci);
    return j;
  }
  j.winner = best;
  if (ci) {
    j.verdict = Verdict::kBetter;
    const PrintedRatio p = PrintRatioInterval(ratio, ci->lo, ci->hi);
    j.text = fmt::format("{} {}× {} (95% CI {}–{}×)", who, p.point, row.word, p.lo, p.hi);
  } else {
    j.verdict = Verdict::kNoInterval;
    j.text = fmt::format("{} {} {} ({})", who, RatioText(ratio), row.word, no_ci);
  }
  return j;
}

}  // namespace compare_detail

bool WithinEquivalence(double lo, double hi, double pct) {
  const double m = pct / 100.0;
  return lo >= 1.0 - m && hi <= 1.0 + m;
}

PrintedRatio PrintRatioInterval(double ratio, double lo, double hi) {
  const double p = compare_detail::Round2(ratio);
  const double l = std::min(compare_detail::Round2(lo), p);
  const double h = std::max(compare_detail::Round2(hi), p);
  return {fmt::format("{:.2f}", p), fmt::format("{:.2f}", l), fmt::format("{:.2f}", h)};
}

namespace {

using nlohmann::json;
using namespace compare_detail;

std::string DirName(const std::filesystem::path& source) {
  std::filesystem::path p = source;
  if (!p.has_filename()) {  // "runs/x/"
    p = p.parent_path();
  }
  if (p.filename() == std::filesystem::path(kResultsFile)) {
    p = p.parent_path();
  }
  return p.filename().string();
}

std::string ServerText(const json& r) {
  if (BoolAt(r, {"target", "simulated"}).value_or(false)) {
    return "built-in simulator";
  }
  std::string s = ServerKindName(StringAt(r, {"target", "server", "kind"}).value_or("unknown"));
  if (auto v = StringAt(r, {"target", "server", "version"})) {
    s += " " + *v;
  }
  return s;
}

// Things a reader must know about each run before trusting the tables.
std::vector<std::string> Notes(const std::vector<CompareRun>& runs,
                               const std::vector<std::string>& labels) {
  std::vector<std::string> notes;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const json& r = runs[i].results;
    if (BoolAt(r, {"target", "simulated"}).value_or(false)) {
      notes.push_back(fmt::format(
          "{} ran against the built-in simulator (no model server): its figures show the "
          "harness, not a model.",
          labels[i]));
    }
    std::string status = StringAt(r, {"status"}).value_or("complete");
    if (status != "complete") {
      notes.push_back(fmt::format("{} has partial results (status: {}).", labels[i], status));
    }
    if (auto w = ArrayAt(r, {"warnings"}); !w.empty()) {
      notes.push_back(fmt::format("{} has {} warning{} in its report.", labels[i], w.size(),
                                  w.size() == 1 ? "" : "s"));
    }
    if (!runs[i].has_samples && !runs[i].source.empty()) {
      notes.push_back(fmt::format(
          "{} has no samples.jsonl: intervals use the raw values in its results.json.", labels[i]));
    }
  }
  return notes;
}

std::optional<std::string> Str(const json& r, std::initializer_list<std::string_view> path) {
  return StringAt(r, path);
}

}  // namespace

Result<CompareRun> LoadCompareRun(const std::filesystem::path& run_dir_or_file) {
  auto doc = LoadResults(run_dir_or_file);
  if (!doc) {
    return doc.error();
  }
  CompareRun run;
  run.results = std::move(doc.value());
  run.source = run_dir_or_file;
  std::error_code ec;
  std::filesystem::path dir = run_dir_or_file;
  if (!std::filesystem::is_directory(dir, ec)) {
    dir = dir.parent_path();
  }
  std::filesystem::path samples = dir / std::string(kSamplesFile);
  if (!std::filesystem::exists(samples, ec)) {
    return run;
  }
  std::ifstream in(samples, std::ios::binary);
  if (!in) {
    return MakeError(ErrorCode::kIo, fmt::format("cannot read {}", samples.string()));
  }
  run.has_samples = true;
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) {
      continue;
    }
    json rec = json::parse(line, nullptr, false);
    if (rec.is_discarded() || !rec.is_object()) {
      if (in.eof()) {  // a last line without its newline: cut off by a crash; skipped
        continue;
      }
      return MakeError(ErrorCode::kSetup,
                       fmt::format("{} line {} is not a JSON object", samples.string(), n));
    }
    if (BoolAt(rec, {"warmup"}).value_or(false) || BoolAt(rec, {"superseded"}).value_or(false)) {
      continue;
    }
    run.samples.push_back(std::move(rec));
  }
  return run;
}

std::vector<std::string> DefaultLabels(const std::vector<json>& runs,
                                       const std::vector<std::filesystem::path>& sources) {
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    // The run's own --label (results.json "labels"), else its model.
    auto own = StringAt(runs[i], {"labels", "label"});
    labels.push_back(
        own && !own->empty()
            ? *own
            : StringAt(runs[i], {"target", "model"}).value_or(fmt::format("run {}", i + 1)));
  }
  auto duplicated = [&](std::size_t i) {
    return std::count(labels.begin(), labels.end(), labels[i]) > 1;
  };
  std::vector<bool> dup(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    dup[i] = duplicated(i);
  }
  if (sources.size() == runs.size()) {
    for (std::size_t i = 0; i < labels.size(); ++i) {
      std::string dir = DirName(sources[i]);
      if (dup[i] && !dir.empty()) {
        labels[i] += " (" + dir + ")";
      }
    }
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    dup[i] = duplicated(i);
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (dup[i]) {
      labels[i] += fmt::format(" #{}", i + 1);
    }
  }
  return labels;
}

Result<Comparison> BuildComparison(const std::vector<CompareRun>& runs,
                                   const std::vector<std::string>& labels, double equivalence_pct) {
  if (runs.size() < 2) {
    return MakeError(ErrorCode::kUsage, "compare needs at least two runs");
  }
  if (!labels.empty() && labels.size() != runs.size()) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("{} labels given for {} runs", labels.size(), runs.size()));
  }
  std::vector<std::string> names = labels;
  if (names.empty()) {
    std::vector<json> docs;
    std::vector<std::filesystem::path> sources;
    for (const CompareRun& r : runs) {
      docs.push_back(r.results);
      sources.push_back(r.source);
    }
    bool all_sources =
        std::all_of(sources.begin(), sources.end(), [](const auto& s) { return !s.empty(); });
    names = DefaultLabels(docs, all_sources ? sources : std::vector<std::filesystem::path>{});
  }
  Comparison c;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const json& r = runs[i].results;
    c.runs.push_back(CompareRunInfo{
        names[i], Str(r, {"target", "model"}), Str(r, {"target", "endpoint"}),
        Str(r, {"target", "server", "kind"}), Str(r, {"target", "server", "version"}),
        Str(r, {"status"}), Str(r, {"started_at"}), ServerText(r),
        BoolAt(r, {"target", "simulated"}).value_or(false), runs[i].has_samples});
  }
  c.notes = Notes(runs, names);
  c.warnings = Warnings(runs, names);
  std::vector<CompareRow> glance = GlanceRows(runs);
  std::vector<CompareSection> extra = ExtraSections(runs, glance);
  c.sections.push_back(CompareSection{"glance", "At a glance", "", std::move(glance)});
  for (CompareSection& s : extra) {
    c.sections.push_back(std::move(s));
  }
  for (CompareSection& s : c.sections) {
    for (CompareRow& row : s.rows) {
      row.judgement = Judge(row, names, equivalence_pct);
    }
  }
  CompareQuality(runs, names, c);
  c.method = MethodText(equivalence_pct);
  c.equivalence_pct = equivalence_pct;
  return c;
}

Result<std::string> Compare(const std::vector<CompareRun>& runs,
                            const std::vector<std::string>& labels, OutputFormat format) {
  auto c = BuildComparison(runs, labels);
  if (!c) {
    return c.error();
  }
  switch (format) {
    case OutputFormat::kMarkdown:
      return RenderCompareMarkdown(*c);
    case OutputFormat::kJson:
      return RenderCompareJson(*c);
    case OutputFormat::kHtml:
      return AddCompareFrontier(
          AddCompareCharts(RenderCompareHtml(*c), nlohmann::json::parse(RenderCompareJson(*c))),
          runs, *c);
    case OutputFormat::kCsv:
    case OutputFormat::kJsonl:
    case OutputFormat::kJunit:
      break;
  }
  return MakeError(ErrorCode::kUsage, fmt::format("compare writes md, html or json, not {}",
                                                  OutputFormatName(format)));
}

Result<std::string> Compare(const std::vector<json>& runs, const std::vector<std::string>& labels,
                            OutputFormat format) {
  std::vector<CompareRun> rs;
  for (const json& r : runs) {
    rs.push_back(CompareRun{r, {}, false, {}});
  }
  if (labels.empty()) {
    return Compare(rs, DefaultLabels(runs), format);
  }
  return Compare(rs, labels, format);
}

}  // namespace sb::report
