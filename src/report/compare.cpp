#include "report/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/format.h"
#include "report/run_dir.h"
#include "report/table.h"

namespace sb::report {

namespace {

using nlohmann::json;
// The JSON output keeps its keys in a readable order.
using ojson = nlohmann::ordered_json;

// The smallest difference compare reports as a difference (docs/compare.md): 3 %.
constexpr double kMinNoise = 0.03;
// Slack for floating-point rounding at the tie boundary (100 vs 103 must be exactly 3 %).
constexpr double kEpsilon = 1e-9;

// How a metric is judged and worded.
enum class Kind {
  kSpeed,     // higher is better: "A 3.9× faster" (tok/s, throughput)
  kTime,      // lower is better: "A 2.7× faster" (TTFT, wall time; the seeds' wording)
  kRate,      // higher is better: "A 1.4× better" (acceptance)
  kScore,     // pass/total counts: equal passes tie; "A +3 passed" or a rate ratio
  kFailures,  // a count, lower is better: "A 3 fewer"
  kNeutral,   // no better direction: "A 1.7× more" (tokens generated)
};

std::string_view BetterName(Kind k) {
  switch (k) {
    case Kind::kSpeed:
    case Kind::kRate:
    case Kind::kScore:
      return "higher";
    case Kind::kTime:
    case Kind::kFailures:
      return "lower";
    case Kind::kNeutral:
      return "none";
  }
  return "none";
}

bool LowerIsBetter(Kind k) {
  return k == Kind::kTime || k == Kind::kFailures;
}

struct Value {
  std::optional<double> v;       // the compared figure (a pass rate for scores)
  std::string text;              // what the table shows
  std::optional<double> spread;  // (max − min) / median of the raw values, when n >= 2
  std::optional<double> pass;    // kScore only
  std::optional<double> total;   // kScore only
};

struct Advantage {
  std::string text = std::string(kMissing);
  std::optional<std::size_t> winner;
  std::optional<double> ratio;
  bool tie = false;
  std::optional<double> noise;  // the tie threshold used (fraction)
};

struct Row {
  std::string metric;
  std::string key;
  std::string unit;
  Kind kind = Kind::kSpeed;
  std::vector<Value> values;
  Advantage adv;
};

Value Missing() {
  return Value{std::nullopt, std::string(kMissing), std::nullopt, {}, {}};
}

// Spread of a stats object, when it holds at least two values.
std::optional<double> Spread(const json* stats) {
  if (stats == nullptr) {
    return std::nullopt;
  }
  auto n = NumberAt(*stats, {"n"});
  auto lo = NumberAt(*stats, {"min"});
  auto hi = NumberAt(*stats, {"max"});
  auto med = NumberAt(*stats, {"median"});
  if (!n || *n < 2 || !lo || !hi || !med || *med <= 0) {
    return std::nullopt;
  }
  return (*hi - *lo) / *med;
}

// The median of a stats object, formatted by `fmt_value`, with its spread.
template <typename F>
Value FromStats(const json* stats, F fmt_value) {
  auto med = stats == nullptr ? std::nullopt : NumberAt(*stats, {"median"});
  if (!med) {
    return Missing();
  }
  return Value{med, fmt_value(*med), Spread(stats), {}, {}};
}

std::string TokS(double v) {
  return FormatFixed1(v) + " tok/s";
}

std::string Ms(double v) {
  return FormatMs(v) + " ms";
}

Value Score(std::optional<double> pass, std::optional<double> total, bool with_percent) {
  if (!pass || !total || *total <= 0) {
    return Missing();
  }
  double rate = *pass / *total;
  std::string text = fmt::format("{}/{}", FormatCount(pass), FormatCount(total));
  if (with_percent) {
    text += " (" + FormatPercent(rate) + ")";
  }
  return Value{rate, text, std::nullopt, pass, total};
}

// ---- Advantage -------------------------------------------------------------------------------

double Noise(const Value& a, const Value& b) {
  return std::max({kMinNoise, a.spread.value_or(0), b.spread.value_or(0)});
}

// How many times better `best` is than `other` (>= 1; infinity when other is 0).
double RatioOf(Kind kind, double best, double other) {
  double num = LowerIsBetter(kind) ? other : best;
  double den = LowerIsBetter(kind) ? best : other;
  if (num == den) {
    return 1.0;
  }
  return den > 0 ? num / den : INFINITY;
}

std::string_view Word(Kind kind) {
  switch (kind) {
    case Kind::kSpeed:
    case Kind::kTime:
      return "faster";
    case Kind::kRate:
    case Kind::kScore:
      return "better";
    case Kind::kNeutral:
      return "more";
    case Kind::kFailures:
      return "fewer";
  }
  return "better";
}

std::string TieText(const std::vector<std::size_t>& tied, std::size_t candidates,
                    const std::vector<std::string>& labels, std::size_t runs) {
  if (runs == 2 || tied.size() == candidates) {
    return "Tie";
  }
  std::vector<std::string> names;
  for (std::size_t i : tied) {
    names.push_back(labels[i]);
  }
  return fmt::format("Tie: {}", fmt::join(names, ", "));
}

Advantage Judge(const Row& row, const std::vector<std::string>& labels) {
  Advantage adv;
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < row.values.size(); ++i) {
    if (row.values[i].v) {
      idx.push_back(i);
    }
  }
  if (idx.size() < 2) {
    return adv;
  }
  const bool scores = row.kind == Kind::kScore;
  bool same_totals = scores && std::all_of(idx.begin(), idx.end(), [&](std::size_t i) {
                       return row.values[i].total == row.values[idx[0]].total;
                     });
  // What is ranked: pass counts when every run had the same tests, else the figure itself.
  auto key = [&](std::size_t i) { return same_totals ? *row.values[i].pass : *row.values[i].v; };
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return LowerIsBetter(row.kind) ? key(a) < key(b) : key(a) > key(b);
  });
  const std::size_t best = idx[0];
  const std::size_t runner = idx[1];
  const bool exact = scores || row.kind == Kind::kFailures;  // counts: no noise
  auto ties_best = [&](std::size_t i) {
    if (exact) {
      return key(i) == key(best);
    }
    double r = RatioOf(row.kind, key(best), key(i));
    return std::isfinite(r) && r <= 1.0 + Noise(row.values[best], row.values[i]) + kEpsilon;
  };
  if (!exact) {
    adv.noise = Noise(row.values[best], row.values[runner]);
  }
  if (ties_best(runner)) {
    std::vector<std::size_t> tied;
    for (std::size_t i : idx) {
      if (ties_best(i)) {
        tied.push_back(i);
      }
    }
    std::sort(tied.begin(), tied.end());
    adv.tie = true;
    adv.text = TieText(tied, idx.size(), labels, row.values.size());
    return adv;
  }
  adv.winner = best;
  const std::string& who = labels[best];
  if (same_totals) {
    adv.text = fmt::format("{} +{} passed", who, FormatCount(key(best) - key(runner)));
    return adv;
  }
  if (row.kind == Kind::kFailures) {
    adv.text = fmt::format("{} {} fewer", who, FormatCount(key(runner) - key(best)));
    return adv;
  }
  double ratio = RatioOf(row.kind, key(best), key(runner));
  if (!std::isfinite(ratio)) {
    adv.text = fmt::format("{} {} (vs 0)", who, Word(row.kind));
    return adv;
  }
  adv.ratio = ratio;
  adv.text = fmt::format("{} {} {}", who, FormatRatio(ratio), Word(row.kind));
  return adv;
}

// ---- Rows ------------------------------------------------------------------------------------

struct CategoryCount {
  double pass = 0;
  double total = 0;
};

// category -> counts, plus the order categories first appear in.
std::map<std::string, CategoryCount> CountCategories(const json& run,
                                                     std::vector<std::string>& order) {
  std::map<std::string, CategoryCount> counts;
  for (const json* t : ArrayAt(run, {"tests"})) {
    std::string cat = StringAt(*t, {"category"}).value_or("uncategorised");
    if (!counts.contains(cat) && std::find(order.begin(), order.end(), cat) == order.end()) {
      order.push_back(cat);
    }
    CategoryCount& c = counts[cat];
    c.total += 1;
    std::string status = StringAt(*t, {"status"}).value_or("");
    std::transform(status.begin(), status.end(), status.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    if (status == "PASS") {
      c.pass += 1;
    }
  }
  return counts;
}

bool HasTests(const json& run) {
  auto total = NumberAt(run, {"summary", "total"});
  return !ArrayAt(run, {"tests"}).empty() || (total && *total > 0);
}

const json* LevelOf(const json& run, double concurrency) {
  for (const json* l : ArrayAt(run, {"perf", "concurrency", "levels"})) {
    if (NumberAt(*l, {"concurrency"}) == concurrency) {
      return l;
    }
  }
  return nullptr;
}

const json* LengthOf(const json& run, double max_tokens) {
  for (const json* l : ArrayAt(run, {"perf", "max_tokens", "lengths"})) {
    if (NumberAt(*l, {"max_tokens"}) == max_tokens) {
      return l;
    }
  }
  return nullptr;
}

const json* PromptOf(const json& run, const std::string& name) {
  for (const json* p : ArrayAt(run, {"perf", "ttft", "prompts"})) {
    if (StringAt(*p, {"name"}) == name) {
      return p;
    }
  }
  return nullptr;
}

class RowBuilder {
 public:
  explicit RowBuilder(const std::vector<json>& runs) : runs_(runs) {}

  // Adds a row whose value for each run comes from `get`; skipped when no run has a value.
  template <typename F>
  void Add(std::string metric, std::string key, std::string unit, Kind kind, F get) {
    Row row{std::move(metric), std::move(key), std::move(unit), kind, {}, {}};
    bool any = false;
    for (const json& run : runs_) {
      row.values.push_back(get(run));
      any = any || row.values.back().v.has_value();
    }
    if (any) {
      rows_.push_back(std::move(row));
    }
  }

  std::vector<Row> Take() { return std::move(rows_); }

 private:
  const std::vector<json>& runs_;
  std::vector<Row> rows_;
};

void AddQualityRows(const std::vector<json>& runs, RowBuilder& b) {
  if (std::none_of(runs.begin(), runs.end(), HasTests)) {
    return;
  }
  b.Add("Total score", "score.total", "tests", Kind::kScore, [](const json& r) {
    return Score(NumberAt(r, {"summary", "pass"}), NumberAt(r, {"summary", "total"}), true);
  });
  bool any_unsupported = std::any_of(runs.begin(), runs.end(), [](const json& r) {
    return NumberAt(r, {"summary", "unsupported"}).value_or(0) > 0;
  });
  if (any_unsupported) {
    b.Add("Effective score (excl. unsupported)", "score.effective", "tests", Kind::kScore,
          [](const json& r) {
            auto total = NumberAt(r, {"summary", "total"});
            auto unsupported = NumberAt(r, {"summary", "unsupported"});
            std::optional<double> effective;
            if (total && unsupported) {
              effective = *total - *unsupported;
            }
            return Score(NumberAt(r, {"summary", "pass"}), effective, true);
          });
  }
  std::vector<std::string> order;
  std::vector<std::map<std::string, CategoryCount>> counts;
  for (const json& r : runs) {
    counts.push_back(CountCategories(r, order));
  }
  for (const std::string& cat : order) {
    std::set<double> sizes;
    for (const auto& c : counts) {
      if (auto it = c.find(cat); it != c.end()) {
        sizes.insert(it->second.total);
      }
    }
    std::string metric = CategoryName(cat);
    if (sizes.size() == 1) {
      metric +=
          fmt::format(" ({} test{})", FormatCount(*sizes.begin()), *sizes.begin() == 1 ? "" : "s");
    }
    std::size_t i = 0;
    b.Add(metric, "score.category." + cat, "tests", Kind::kScore, [&](const json&) {
      const auto& c = counts[i++];
      auto it = c.find(cat);
      if (it == c.end()) {
        return Missing();
      }
      return Score(it->second.pass, it->second.total, false);
    });
  }
}

void AddSpeedRows(const std::vector<json>& runs, RowBuilder& b) {
  b.Add("Server time to ready", "server.time_to_ready_s", "s", Kind::kTime, [](const json& r) {
    auto s = NumberAt(r, {"server_process", "time_to_ready_s"});
    if (!s) {
      return Missing();
    }
    return Value{s, FormatSeconds(s) + "s", std::nullopt, {}, {}};
  });
  b.Add("Decode speed (median)", "decode_tok_s", "tok/s", Kind::kSpeed, [](const json& r) {
    return FromStats(Find(r, {"perf", "decode", "decode_tok_s"}), TokS);
  });
  b.Add("Peak throughput", "throughput_tok_s.peak", "tok/s", Kind::kSpeed, [](const json& r) {
    std::optional<double> peak;
    std::optional<double> at;
    for (const json* l : ArrayAt(r, {"perf", "concurrency", "levels"})) {
      auto v = NumberAt(*l, {"throughput_tok_s"});
      if (v && (!peak || *v > *peak)) {
        peak = v;
        at = NumberAt(*l, {"concurrency"});
      }
    }
    if (!peak) {
      return Missing();
    }
    std::string text = TokS(*peak);
    if (at) {
      text += fmt::format(" ({} stream{})", FormatCount(at), *at == 1 ? "" : "s");
    }
    return Value{peak, text, std::nullopt, {}, {}};
  });
  std::set<double> levels;
  for (const json& r : runs) {
    for (const json* l : ArrayAt(r, {"perf", "concurrency", "levels"})) {
      if (auto c = NumberAt(*l, {"concurrency"})) {
        levels.insert(*c);
      }
    }
  }
  for (double c : levels) {
    b.Add(fmt::format("Throughput, concurrency {}", FormatCount(c)),
          fmt::format("throughput_tok_s.c{}", FormatCount(c)), "tok/s", Kind::kSpeed,
          [c](const json& r) {
            const json* l = LevelOf(r, c);
            auto v = l == nullptr ? std::nullopt : NumberAt(*l, {"throughput_tok_s"});
            if (!v) {
              return Missing();
            }
            std::string text = TokS(*v);
            auto errors = NumberAt(*l, {"errors"});
            if (errors && *errors > 0) {
              text += fmt::format(" ({} error{})", FormatCount(errors), *errors == 1 ? "" : "s");
            }
            return Value{v, text, std::nullopt, {}, {}};
          });
  }
  if (!levels.empty()) {
    b.Add("Concurrency success", "concurrency.success", "requests", Kind::kScore,
          [](const json& r) {
            auto ls = ArrayAt(r, {"perf", "concurrency", "levels"});
            if (ls.empty()) {
              return Missing();
            }
            double ok = 0;
            double all = 0;
            for (const json* l : ls) {
              auto o = NumberAt(*l, {"ok"});
              auto e = NumberAt(*l, {"errors"});
              if (!o || !e) {
                return Missing();
              }
              ok += *o;
              all += *o + *e;
            }
            return Score(ok, all, true);
          });
  }
  std::vector<std::string> prompts;
  for (const json& r : runs) {
    for (const json* p : ArrayAt(r, {"perf", "ttft", "prompts"})) {
      auto name = StringAt(*p, {"name"});
      if (name && std::find(prompts.begin(), prompts.end(), *name) == prompts.end()) {
        prompts.push_back(*name);
      }
    }
  }
  for (const std::string& name : prompts) {
    b.Add(fmt::format("TTFT ({} prompt)", name), "ttft_ms." + name, "ms", Kind::kTime,
          [&name](const json& r) {
            const json* p = PromptOf(r, name);
            return FromStats(p == nullptr ? nullptr : Find(*p, {"ttft_ms"}), Ms);
          });
  }
  // Context scaling: how far the answer stayed right, and how many sizes were right.
  b.Add("Context scaling (largest correct)", "context.max_correct_tokens", "tokens", Kind::kRate,
        [](const json& r) {
          std::optional<double> best;
          for (const json* row : ArrayAt(r, {"perf", "context", "rows"})) {
            if (BoolAt(*row, {"correct"}).value_or(false)) {
              auto n = NumberAt(*row, {"prompt_tokens"});
              if (!n) {
                n = NumberAt(*row, {"size"});
              }
              if (n && (!best || *n > *best)) {
                best = n;
              }
            }
          }
          if (!best) {
            return Missing();
          }
          return Value{best, FormatCount(best) + " tokens", std::nullopt, {}, {}};
        });
  b.Add("Context sizes correct", "context.correct", "sizes", Kind::kScore, [](const json& r) {
    auto rows = ArrayAt(r, {"perf", "context", "rows"});
    double correct = 0, measured = 0;
    for (const json* row : rows) {
      if (Find(*row, {"skipped"}) != nullptr) {
        continue;
      }
      ++measured;
      correct += BoolAt(*row, {"correct"}).value_or(false) ? 1 : 0;
    }
    if (measured == 0) {
      return Missing();
    }
    return Score(correct, measured, true);
  });
  std::set<double> lengths;
  for (const json& r : runs) {
    for (const json* l : ArrayAt(r, {"perf", "max_tokens", "lengths"})) {
      if (auto m = NumberAt(*l, {"max_tokens"})) {
        lengths.insert(*m);
      }
    }
  }
  for (double m : lengths) {
    b.Add(fmt::format("Tok/s, max_tokens {}", FormatCount(m)),
          fmt::format("tok_s.max_tokens_{}", FormatCount(m)), "tok/s", Kind::kSpeed,
          [m](const json& r) {
            const json* l = LengthOf(r, m);
            return FromStats(l == nullptr ? nullptr : Find(*l, {"tok_s"}), TokS);
          });
  }
  b.Add("Spec-decode acceptance", "spec_decode.acceptance_rate", "fraction", Kind::kRate,
        [](const json& r) {
          auto v = NumberAt(r, {"spec_decode", "acceptance_rate"});
          return v ? Value{v, FormatPercent(v), std::nullopt, {}, {}} : Missing();
        });
  b.Add("Mean acceptance length", "spec_decode.mean_acceptance_length", "tokens", Kind::kRate,
        [](const json& r) {
          auto v = NumberAt(r, {"spec_decode", "mean_acceptance_length"});
          return v ? Value{v, FormatFixed2(v) + " tokens", std::nullopt, {}, {}} : Missing();
        });
}

void AddTotalRows(RowBuilder& b) {
  b.Add("Average throughput", "summary.avg_tok_s", "tok/s", Kind::kSpeed, [](const json& r) {
    auto v = NumberAt(r, {"summary", "avg_tok_s"});
    return v ? Value{v, TokS(*v), std::nullopt, {}, {}} : Missing();
  });
  b.Add("Total tokens", "summary.completion_tokens", "tokens", Kind::kNeutral, [](const json& r) {
    auto v = NumberAt(r, {"summary", "completion_tokens"});
    return v ? Value{v, FormatCount(v), std::nullopt, {}, {}} : Missing();
  });
  b.Add("Total wall time", "summary.wall_time_s", "s", Kind::kTime, [](const json& r) {
    auto v = NumberAt(r, {"summary", "wall_time_s"});
    return v ? Value{v, FormatSeconds(v) + "s", std::nullopt, {}, {}} : Missing();
  });
  b.Add("Failed requests", "summary.failed_requests", "requests", Kind::kFailures,
        [](const json& r) {
          auto v = NumberAt(r, {"summary", "failed_requests"});
          if (!v) {
            return Missing();
          }
          std::string text = FormatCount(v);
          if (auto all = NumberAt(r, {"summary", "requests"})) {
            text += " of " + FormatCount(all);
          }
          return Value{v, text, std::nullopt, {}, {}};
        });
}

std::vector<Row> BuildRows(const std::vector<json>& runs, const std::vector<std::string>& labels) {
  RowBuilder b(runs);
  AddQualityRows(runs, b);
  AddSpeedRows(runs, b);
  AddTotalRows(b);
  std::vector<Row> rows = b.Take();
  for (Row& row : rows) {
    row.adv = Judge(row, labels);
  }
  return rows;
}

// Things a reader must know before trusting the table.
std::vector<std::string> Notes(const std::vector<json>& runs,
                               const std::vector<std::string>& labels) {
  std::vector<std::string> notes;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (BoolAt(runs[i], {"target", "simulated"}).value_or(false)) {
      notes.push_back(fmt::format(
          "{} ran against the built-in simulator (no model server): its figures show the "
          "harness, not a model.",
          labels[i]));
    }
    std::string status = StringAt(runs[i], {"status"}).value_or("complete");
    if (status != "complete") {
      notes.push_back(fmt::format("{} has partial results (status: {}).", labels[i], status));
    }
    if (auto w = ArrayAt(runs[i], {"warnings"}); !w.empty()) {
      notes.push_back(fmt::format("{} has {} warning{} in its report.", labels[i], w.size(),
                                  w.size() == 1 ? "" : "s"));
    }
  }

  // Settings that make figures incomparable when they differ.
  struct Setting {
    std::initializer_list<std::string_view> path;
    std::string_view what;
    std::string_view consequence;
  };

  const Setting settings[] = {
      {{"perf", "decode", "tokens"}, "Decode runs requested different token counts", ""},
      {{"perf", "concurrency", "tokens"},
       "Concurrency streams requested different token counts",
       ""},
      {{"summary", "total"},
       "The runs hold different numbers of tests",
       "; scores compare pass rates"},
  };
  for (const Setting& s : settings) {
    std::set<double> seen;
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (auto v = NumberAt(runs[i], s.path); v && *v > 0) {  // 0 tests: not a suite run
        seen.insert(*v);
        parts.push_back(fmt::format("{} {}", labels[i], FormatCount(v)));
      }
    }
    if (seen.size() > 1) {
      notes.push_back(fmt::format("{}: {}{}.", s.what, fmt::join(parts, ", "), s.consequence));
    }
  }
  return notes;
}

constexpr std::string_view kTieRule =
    "Advantage names the better run and its ratio over the runner-up. It is a Tie when that "
    "ratio is within the noise: max(3%, the larger relative spread (max − min) / median of the "
    "two runs' raw values, for a figure with at least 2 of them). Scores tie on equal pass "
    "counts, failed requests on equal counts. — means a run has no such figure. Rules: "
    "docs/compare.md.";

std::string Title(const std::vector<std::string>& labels) {
  return fmt::format("servebench compare: {}", fmt::join(labels, " vs "));
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

std::string RenderMd(const std::vector<json>& runs, const std::vector<std::string>& labels,
                     const std::vector<Row>& rows) {
  std::vector<std::string> escaped;
  for (const std::string& l : labels) {
    escaped.push_back(MarkdownCell(l));
  }
  std::string out = "# " + MarkdownCell(Title(labels), std::string::npos) + "\n\n";
  MarkdownTable who({{"Run"}, {"Model"}, {"Server"}, {"Endpoint"}, {"Status"}, {"Started"}});
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const json& r = runs[i];
    who.AddRow({escaped[i],
                MarkdownCell(StringAt(r, {"target", "model"}).value_or(std::string(kMissing))),
                MarkdownCell(ServerText(r)),
                MarkdownCell(StringAt(r, {"target", "endpoint"}).value_or(std::string(kMissing))),
                MarkdownCell(StringAt(r, {"status"}).value_or(std::string(kMissing))),
                MarkdownCell(StringAt(r, {"started_at"}).value_or(std::string(kMissing)))});
  }
  out += who.Render() + "\n";
  std::vector<std::string> notes = Notes(runs, labels);
  for (const std::string& n : notes) {
    out += "- " + MarkdownCell(n, std::string::npos) + "\n";
  }
  if (!notes.empty()) {
    out += "\n";
  }
  std::vector<Column> cols = {{"Metric"}};
  for (const std::string& l : escaped) {
    cols.push_back({l, Align::kRight});
  }
  cols.push_back({"Advantage"});
  MarkdownTable t(cols);
  for (const Row& row : rows) {
    std::vector<std::string> cells = {MarkdownCell(row.metric)};
    for (const Value& v : row.values) {
      cells.push_back(MarkdownCell(v.text));
    }
    cells.push_back(MarkdownCell(row.adv.text));
    t.AddRow(std::move(cells));
  }
  out += "## At a glance\n\n" + t.Render() + "\n" + std::string(kTieRule) + "\n";
  return out;
}

// Whole numbers (counts) are written as integers, everything else as it is.
ojson OptNum(std::optional<double> v) {
  if (!v) {
    return nullptr;
  }
  if (std::trunc(*v) == *v && std::fabs(*v) < 9e15) {
    return static_cast<long long>(*v);
  }
  return *v;
}

std::string RenderJson(const std::vector<json>& runs, const std::vector<std::string>& labels,
                       const std::vector<Row>& rows) {
  ojson doc = {{"schema", "servebench.compare/1"}};
  ojson jruns = ojson::array();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const json& r = runs[i];
    auto str = [&](std::initializer_list<std::string_view> path) {
      auto s = StringAt(r, path);
      return s ? ojson(*s) : ojson(nullptr);
    };
    jruns.push_back({{"label", labels[i]},
                     {"model", str({"target", "model"})},
                     {"endpoint", str({"target", "endpoint"})},
                     {"server_kind", str({"target", "server", "kind"})},
                     {"server_version", str({"target", "server", "version"})},
                     {"simulated", BoolAt(r, {"target", "simulated"}).value_or(false)},
                     {"status", str({"status"})},
                     {"started_at", str({"started_at"})}});
  }
  doc["runs"] = std::move(jruns);
  doc["notes"] = Notes(runs, labels);
  doc["tie_rule"] = std::string(kTieRule);
  ojson jrows = ojson::array();
  for (const Row& row : rows) {
    ojson values = ojson::array();
    ojson display = ojson::array();
    for (const Value& v : row.values) {
      values.push_back(OptNum(v.v));
      display.push_back(v.text);
    }
    ojson jr = {{"metric", row.metric},           {"key", row.key},   {"unit", row.unit},
                {"better", BetterName(row.kind)}, {"values", values}, {"display", display}};
    if (row.kind == Kind::kScore) {
      ojson pass = ojson::array();
      ojson total = ojson::array();
      for (const Value& v : row.values) {
        pass.push_back(OptNum(v.pass));
        total.push_back(OptNum(v.total));
      }
      jr["pass"] = std::move(pass);
      jr["total"] = std::move(total);
    }
    jr["advantage"] = {{"text", row.adv.text},
                       {"tie", row.adv.tie},
                       {"winner", row.adv.winner ? ojson(labels[*row.adv.winner]) : ojson(nullptr)},
                       {"winner_index", row.adv.winner ? ojson(*row.adv.winner) : ojson(nullptr)},
                       {"ratio", row.adv.ratio ? ojson(*row.adv.ratio) : ojson(nullptr)},
                       {"noise", row.adv.noise ? ojson(*row.adv.noise) : ojson(nullptr)}};
    jrows.push_back(std::move(jr));
  }
  doc["rows"] = std::move(jrows);
  return doc.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

std::string RenderHtml(const std::vector<json>& runs, const std::vector<std::string>& labels,
                       const std::vector<Row>& rows) {
  std::string title = HtmlEscape(Title(labels));
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>{}</title>\n<style>\n"
      "body {{ font-family: sans-serif; margin: 2em; }}\n"
      "table {{ border-collapse: collapse; margin-bottom: 1em; }}\n"
      "th, td {{ border: 1px solid #ccc; padding: 4px 8px; }}\n"
      "td.num {{ text-align: right; }}\n"
      "</style>\n</head>\n<body>\n<h1>{}</h1>\n",
      title, title);
  out +=
      "<table>\n<tr><th>Run</th><th>Model</th><th>Server</th><th>Endpoint</th>"
      "<th>Status</th><th>Started</th></tr>\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const json& r = runs[i];
    out +=
        fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                    HtmlEscape(labels[i]),
                    HtmlEscape(StringAt(r, {"target", "model"}).value_or(std::string(kMissing))),
                    HtmlEscape(ServerText(r)),
                    HtmlEscape(StringAt(r, {"target", "endpoint"}).value_or(std::string(kMissing))),
                    HtmlEscape(StringAt(r, {"status"}).value_or(std::string(kMissing))),
                    HtmlEscape(StringAt(r, {"started_at"}).value_or(std::string(kMissing))));
  }
  out += "</table>\n";
  auto notes = Notes(runs, labels);
  if (!notes.empty()) {
    out += "<ul>\n";
    for (const std::string& n : notes) {
      out += "<li>" + HtmlEscape(n) + "</li>\n";
    }
    out += "</ul>\n";
  }
  out += "<h2>At a glance</h2>\n<table>\n<tr><th>Metric</th>";
  for (const std::string& l : labels) {
    out += "<th>" + HtmlEscape(l) + "</th>";
  }
  out += "<th>Advantage</th></tr>\n";
  for (const Row& row : rows) {
    out += "<tr><td>" + HtmlEscape(row.metric) + "</td>";
    for (const Value& v : row.values) {
      out += "<td class=\"num\">" + HtmlEscape(v.text) + "</td>";
    }
    out += "<td>" + HtmlEscape(row.adv.text) + "</td></tr>\n";
  }
  out += "</table>\n<p>" + HtmlEscape(kTieRule) + "</p>\n</body>\n</html>\n";
  return out;
}

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

}  // namespace

Result<Format> ParseFormat(std::string_view name) {
  if (name == "md" || name == "markdown") {
    return Format::kMarkdown;
  }
  if (name == "json") {
    return Format::kJson;
  }
  if (name == "html") {
    return Format::kHtml;
  }
  return MakeError(ErrorCode::kUsage,
                   fmt::format("unknown format \"{}\" (expected md, html or json)", name));
}

std::vector<std::string> DefaultLabels(const std::vector<json>& runs,
                                       const std::vector<std::filesystem::path>& sources) {
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    labels.push_back(StringAt(runs[i], {"target", "model"}).value_or(fmt::format("run {}", i + 1)));
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

Result<std::string> Compare(const std::vector<json>& runs, const std::vector<std::string>& labels,
                            Format format) {
  if (runs.size() < 2) {
    return MakeError(ErrorCode::kUsage, "compare needs at least two runs");
  }
  if (!labels.empty() && labels.size() != runs.size()) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("{} labels given for {} runs", labels.size(), runs.size()));
  }
  std::vector<std::string> names = labels.empty() ? DefaultLabels(runs) : labels;
  std::vector<Row> rows = BuildRows(runs, names);
  switch (format) {
    case Format::kMarkdown:
      return RenderMd(runs, names, rows);
    case Format::kJson:
      return RenderJson(runs, names, rows);
    case Format::kHtml:
      return RenderHtml(runs, names, rows);
  }
  return MakeError(ErrorCode::kInternal, "unknown compare format");
}

}  // namespace sb::report
