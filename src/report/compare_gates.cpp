#include "report/compare_gates.h"

#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <fnmatch.h>
#include <nlohmann/json.hpp>

#include "report/compare_charts.h"
#include "report/compare_stats.h"
#include "report/html_frontier.h"

namespace sb::report {

namespace {

using nlohmann::json;

Result<double> ParsePct(std::string_view item, std::string_view value) {
  std::string v(value);
  if (!v.empty() && v.back() == '%') {
    v.pop_back();
  }
  double pct = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), pct);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || !std::isfinite(pct) ||
      pct < 0 || pct >= 1000) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("--max-regression '{}': expected PCT (e.g. 5%) or "
                                 "METRIC=PCT (e.g. decode=3%)",
                                 item));
  }
  return pct;
}

bool Matches(const std::string& pattern, const std::string& key) {
  return fnmatch(pattern.c_str(), key.c_str(), 0) == 0;
}

// Rounded as the Advantage column prints an interval: a bound that prints 1.00 holds 1.
double Round2(double x) {
  return std::round(x * 100.0) / 100.0;
}

// The row's interval of base vs `other`, oriented and seeded as the Advantage column's (so with
// two runs the gate and the table agree): the better run over the worse, >= 1.
struct Pair {
  bool base_better = false;
  std::optional<stats::RatioInterval> ci;
};

Pair Orient(const CompareRow& row, std::size_t other) {
  Pair p;
  const double b = *row.cells[0].value;
  const double o = *row.cells[other].value;
  p.base_better = row.better == Better::kLower ? b < o : b > o;
  const std::size_t best = p.base_better ? 0 : other;
  const std::size_t worse = p.base_better ? other : 0;
  const auto& sb = row.cells[best].samples;
  const auto& sw = row.cells[worse].samples;
  const std::uint64_t seed = stats::SeedFor(fmt::format("{}|{}|{}", row.key, best, worse));
  p.ci = row.better == Better::kLower ? stats::BootstrapRatio(sw, sb, row.quantile, seed)
                                      : stats::BootstrapRatio(sb, sw, row.quantile, seed);
  return p;
}

std::optional<double> LimitFor(const CompareRow& row, const RegressionGate& gate, bool& named) {
  named = false;
  for (auto it = gate.per_metric.rbegin(); it != gate.per_metric.rend(); ++it) {
    if (Matches(MetricPattern(it->first), row.key)) {
      named = true;
      return it->second;
    }
  }
  return gate.all_pct;
}

GateCheck Check(const CompareRow& row, std::size_t other, double limit, bool named,
                double equivalence_pct) {
  GateCheck g;
  g.key = row.key;
  g.metric = row.metric;
  g.other = other;
  g.limit_pct = limit;
  const double b = *row.cells[0].value;
  const double o = *row.cells[other].value;
  if (b != 0) {
    g.worse_pct = 100.0 * (row.better == Better::kLower ? (o - b) / b : (b - o) / b);
  }
  const Pair p = Orient(row, other);
  g.has_interval = p.ci.has_value();
  if (p.ci) {
    g.outside_noise = !(Round2(p.ci->lo) <= 1.0 && 1.0 <= Round2(p.ci->hi));
  } else {
    g.outside_noise = named;  // a named row without an interval: the point decides
  }
  // A difference judged "same" (its interval inside the equivalence margin) never fails.
  const bool same = p.ci && WithinEquivalence(p.ci->lo, p.ci->hi, equivalence_pct);
  g.failed = p.base_better && !same && g.outside_noise && g.worse_pct && *g.worse_pct > limit;
  return g;
}

}  // namespace

Result<RegressionGate> ParseMaxRegression(std::string_view text) {
  RegressionGate gate;
  gate.text = std::string(text);
  std::string_view rest = text;
  if (rest.empty()) {
    return MakeError(ErrorCode::kUsage, "--max-regression: empty (expected e.g. 5%)");
  }
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      auto pct = ParsePct(item, item);
      if (!pct) {
        return pct.error();
      }
      if (gate.all_pct) {
        return MakeError(ErrorCode::kUsage, "--max-regression: a bare PCT is given twice");
      }
      gate.all_pct = *pct;
      continue;
    }
    const std::string name(item.substr(0, eq));
    auto pct = ParsePct(item, item.substr(eq + 1));
    if (!pct) {
      return pct.error();
    }
    if (name.empty()) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("--max-regression '{}': the metric name is empty", item));
    }
    gate.per_metric.emplace_back(name, *pct);
  }
  return gate;
}

std::string MetricPattern(const std::string& name) {
  static const std::pair<const char*, const char*> kShort[] = {
      {"decode", "decode_tok_s"},
      {"throughput", "throughput_tok_s.*"},
      {"ttft", "ttft_ms.*"},
      {"ttft_p50", "rate.*.ttft_ms.p50"},
      {"ttft_p90", "rate.*.ttft_ms.p90"},
      {"ttft_p99", "rate.*.ttft_ms.p99"},
      {"itl_p50", "rate.*.itl_ms.p50"},
      {"itl_p99", "rate.*.itl_ms.p99"},
      {"goodput", "rate.*.goodput_rps"},
      {"output_tok_s", "rate.*.output_tok_s"},
      {"avg_tok_s", "summary.avg_tok_s"},
      {"wall_time", "summary.wall_time_s"},
  };
  for (const auto& [s, pattern] : kShort) {
    if (name == s) {
      return pattern;
    }
  }
  return name;
}

Result<GateResult> ApplyRegressionGate(Comparison& c, const RegressionGate& gate) {
  GateResult r;
  r.text = gate.text;
  std::vector<bool> used(gate.per_metric.size(), false);
  for (CompareSection& s : c.sections) {
    for (CompareRow& row : s.rows) {
      for (std::size_t i = 0; i < gate.per_metric.size(); ++i) {
        used[i] = used[i] || Matches(MetricPattern(gate.per_metric[i].first), row.key);
      }
      if (row.counts || row.better == Better::kNone || row.cells.empty() || !row.cells[0].value) {
        continue;
      }
      bool named = false;
      const std::optional<double> limit = LimitFor(row, gate, named);
      if (!limit) {
        continue;
      }
      std::vector<std::string> marks;
      for (std::size_t k = 1; k < row.cells.size(); ++k) {
        if (!row.cells[k].value) {
          continue;
        }
        GateCheck g = Check(row, k, *limit, named, c.equivalence_pct);
        if (!g.has_interval && !named) {
          continue;  // a bare PCT gates the rows that have an interval
        }
        if (g.failed) {
          marks.push_back(fmt::format("✗ gate: {} {:.1f}% worse (limit {:g}%)", c.runs[k].label,
                                      *g.worse_pct, *limit));
        }
        r.failed = r.failed || g.failed;
        r.checks.push_back(std::move(g));
      }
      for (const std::string& m : marks) {
        row.judgement.text += " — " + m;
      }
    }
  }
  for (std::size_t i = 0; i < used.size(); ++i) {
    if (!used[i]) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("--max-regression: '{}' names no row of this comparison "
                                   "(row keys and short names: docs/compare.md)",
                                   gate.per_metric[i].first));
    }
  }
  std::vector<std::string> failed;
  for (const GateCheck& g : r.checks) {
    if (g.failed) {
      failed.push_back(fmt::format("{} ({} {:.1f}% worse, limit {:g}%)", g.metric,
                                   c.runs[g.other].label, *g.worse_pct, g.limit_pct));
    }
  }
  if (r.checks.empty()) {
    r.summary = fmt::format(
        "Regression gate (--max-regression {}): no row could be gated (none has an interval)",
        gate.text);
    r.failed = true;
  } else if (r.failed) {
    r.summary = fmt::format("Regression gate (--max-regression {}): FAILED, {} of {} check{}: {}",
                            gate.text, failed.size(), r.checks.size(),
                            r.checks.size() == 1 ? "" : "s", fmt::join(failed, "; "));
  } else {
    r.summary = fmt::format(
        "Regression gate (--max-regression {}): passed, {} check{} against {} (none worse "
        "beyond its limit and the noise)",
        gate.text, r.checks.size(), r.checks.size() == 1 ? "" : "s", c.runs[0].label);
  }
  c.notes.push_back(r.summary);
  return r;
}

std::string RenderComparison(const std::vector<CompareRun>& runs, const Comparison& c,
                             OutputFormat format, const GateResult* gate) {
  switch (format) {
    case OutputFormat::kMarkdown:
      return RenderCompareMarkdown(c);
    case OutputFormat::kHtml:
      return AddCompareFrontier(
          AddCompareCharts(RenderCompareHtml(c), json::parse(RenderCompareJson(c))), runs, c);
    case OutputFormat::kJunit:
      if (gate != nullptr) {
        return RenderGateJunit(c, *gate);
      }
      break;
    default:  // json (the caller admits md, html, json and junit only)
      break;
  }
  if (gate == nullptr) {
    return RenderCompareJson(c);
  }
  using ojson = nlohmann::ordered_json;
  ojson doc = ojson::parse(RenderCompareJson(c));
  ojson checks = ojson::array();
  for (const GateCheck& g : gate->checks) {
    checks.push_back({{"key", g.key},
                      {"run", c.runs[g.other].label},
                      {"worse_pct", g.worse_pct ? ojson(*g.worse_pct) : ojson(nullptr)},
                      {"limit_pct", g.limit_pct},
                      {"outside_noise", g.outside_noise},
                      {"interval", g.has_interval},
                      {"failed", g.failed}});
  }
  doc["gate"] = {{"failed", gate->failed}, {"summary", gate->summary}, {"checks", checks}};
  return doc.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

}  // namespace sb::report
