// The "At a glance" rows of a comparison: quality scores, speed figures and totals.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/profile_table.h"
#include "report/compare_internal.h"
#include "report/format.h"
#include "report/run_dir.h"

namespace sb::report::compare_detail {

using nlohmann::json;

const json* ItemWith(const json& run, std::initializer_list<std::string_view> array,
                     std::string_view field, double v) {
  for (const json* l : ArrayAt(run, array)) {
    if (NumberAt(*l, {field}) == v) {
      return l;
    }
  }
  return nullptr;
}

std::set<double> NumbersOver(const std::vector<CompareRun>& runs,
                             std::initializer_list<std::string_view> array,
                             std::string_view field) {
  std::set<double> out;
  for (const CompareRun& r : runs) {
    for (const json* l : ArrayAt(r.results, array)) {
      if (auto c = NumberAt(*l, {field})) {
        out.insert(*c);
      }
    }
  }
  return out;
}

namespace {

const RowSpec kScoreSpec{"", "", "tests", Better::kHigher, "passed", true};

RowSpec Spec(std::string metric, std::string key, std::string unit, Better better,
             std::string word) {
  return RowSpec{std::move(metric), std::move(key), std::move(unit), better, std::move(word)};
}

RowSpec ScoreSpec(std::string metric, std::string key, std::string unit = "tests") {
  RowSpec s = kScoreSpec;
  s.metric = std::move(metric);
  s.key = std::move(key);
  s.unit = std::move(unit);
  return s;
}

struct CategoryCount {
  double pass = 0;
  double total = 0;
};

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  return s;
}

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
    if (Upper(StringAt(*t, {"status"}).value_or("")) == "PASS") {
      c.pass += 1;
    }
  }
  return counts;
}

bool HasTests(const CompareRun& run) {
  auto total = NumberAt(run.results, {"summary", "total"});
  return !ArrayAt(run.results, {"tests"}).empty() || (total && *total > 0);
}

void AddQualityRows(const std::vector<CompareRun>& runs, RowBuilder& b) {
  if (std::none_of(runs.begin(), runs.end(), HasTests)) {
    return;
  }
  b.Add(ScoreSpec("Total score", "score.total"), [](const CompareRun& r) {
    return ScoreCell(NumberAt(r.results, {"summary", "pass"}),
                     NumberAt(r.results, {"summary", "total"}), true);
  });
  bool any_unsupported = std::any_of(runs.begin(), runs.end(), [](const CompareRun& r) {
    return NumberAt(r.results, {"summary", "unsupported"}).value_or(0) > 0;
  });
  if (any_unsupported) {
    b.Add(ScoreSpec("Effective score (excl. unsupported)", "score.effective"),
          [](const CompareRun& r) {
            auto total = NumberAt(r.results, {"summary", "total"});
            auto unsupported = NumberAt(r.results, {"summary", "unsupported"});
            std::optional<double> effective;
            if (total && unsupported) {
              effective = *total - *unsupported;
            }
            return ScoreCell(NumberAt(r.results, {"summary", "pass"}), effective, true);
          });
  }
  std::vector<std::string> order;
  std::vector<std::map<std::string, CategoryCount>> counts;
  for (const CompareRun& r : runs) {
    counts.push_back(CountCategories(r.results, order));
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
    b.Add(ScoreSpec(metric, "score.category." + cat), [&](const CompareRun&) {
      const auto& c = counts[i++];
      auto it = c.find(cat);
      if (it == c.end()) {
        return Missing();
      }
      return ScoreCell(it->second.pass, it->second.total, false);
    });
  }
}

void AddConcurrencyRows(const std::vector<CompareRun>& runs, RowBuilder& b) {
  b.Add(Spec("Peak throughput", "throughput_tok_s.peak", "tok/s", Better::kHigher, "faster"),
        [](const CompareRun& r) {
          std::optional<double> peak;
          std::optional<double> at;
          for (const json* l : ArrayAt(r.results, {"perf", "concurrency", "levels"})) {
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
          return Cell(peak, text);
        });
  std::set<double> levels = NumbersOver(runs, {"perf", "concurrency", "levels"}, "concurrency");
  for (double c : levels) {
    b.Add(
        Spec(fmt::format("Throughput, concurrency {}", FormatCount(c)),
             fmt::format("throughput_tok_s.c{}", FormatCount(c)), "tok/s", Better::kHigher,
             "faster"),
        [c](const CompareRun& r) {
          const json* l = ItemWith(r.results, {"perf", "concurrency", "levels"}, "concurrency", c);
          auto v = l == nullptr ? std::nullopt : NumberAt(*l, {"throughput_tok_s"});
          if (!v) {
            return Missing();
          }
          std::string text = TokS(*v);
          auto errors = NumberAt(*l, {"errors"});
          if (errors && *errors > 0) {
            text += fmt::format(" ({} error{})", FormatCount(errors), *errors == 1 ? "" : "s");
          }
          return Cell(v, text);
        });
  }
  if (levels.empty()) {
    return;
  }
  b.Add(ScoreSpec("Concurrency success", "concurrency.success", "requests"),
        [](const CompareRun& r) {
          auto ls = ArrayAt(r.results, {"perf", "concurrency", "levels"});
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
          return ScoreCell(ok, all, true);
        });
}

void AddTtftRows(const std::vector<CompareRun>& runs, RowBuilder& b) {
  std::vector<std::string> prompts;
  for (const CompareRun& r : runs) {
    for (const json* p : ArrayAt(r.results, {"perf", "ttft", "prompts"})) {
      auto name = StringAt(*p, {"name"});
      if (name && std::find(prompts.begin(), prompts.end(), *name) == prompts.end()) {
        prompts.push_back(*name);
      }
    }
  }
  for (const std::string& name : prompts) {
    b.Add(Spec(fmt::format("TTFT ({} prompt)", name), "ttft_ms." + name, "ms", Better::kLower,
               "faster"),
          [&name](const CompareRun& r) {
            const json* p = nullptr;
            for (const json* q : ArrayAt(r.results, {"perf", "ttft", "prompts"})) {
              if (StringAt(*q, {"name"}) == name) {
                p = q;
              }
            }
            const json* stats = p == nullptr ? nullptr : Find(*p, {"ttft_ms"});
            auto med = stats == nullptr ? std::nullopt : NumberAt(*stats, {"median"});
            if (!med) {
              return Missing();
            }
            return Cell(med, Ms(*med), RawValues(r, "ttft", name + " run ", "ttft_ms", stats));
          });
  }
}

void AddContextRows(RowBuilder& b) {
  b.Add(Spec("Context scaling (largest correct)", "context.max_correct_tokens", "tokens",
             Better::kHigher, "better"),
        [](const CompareRun& r) {
          std::optional<double> best;
          for (const json* row : ArrayAt(r.results, {"perf", "context", "rows"})) {
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
          return Cell(best, FormatCount(best) + " tokens");
        });
  b.Add(ScoreSpec("Context sizes correct", "context.correct", "sizes"), [](const CompareRun& r) {
    double correct = 0;
    double measured = 0;
    for (const json* row : ArrayAt(r.results, {"perf", "context", "rows"})) {
      if (Find(*row, {"skipped"}) != nullptr) {
        continue;
      }
      ++measured;
      correct += BoolAt(*row, {"correct"}).value_or(false) ? 1 : 0;
    }
    if (measured == 0) {
      return Missing();
    }
    return ScoreCell(correct, measured, true);
  });
}

void AddLengthRows(const std::vector<CompareRun>& runs, RowBuilder& b) {
  const ProfileSpec& spec = Profile(ProfileId::kMaxTokens);
  for (double m : NumbersOver(runs, {"perf", spec.key, spec.rows}, spec.dim)) {
    b.Add(Spec(fmt::format("Tok/s, max_tokens {}", FormatCount(m)),
               fmt::format("tok_s.max_tokens_{}", FormatCount(m)), "tok/s", Better::kHigher,
               "faster"),
          [m, &spec](const CompareRun& r) {
            const json* l = ItemWith(r.results, {"perf", spec.key, spec.rows}, spec.dim, m);
            const json* stats = l == nullptr ? nullptr : Find(*l, {"tok_s"});
            auto med = stats == nullptr ? std::nullopt : NumberAt(*stats, {"median"});
            if (!med) {
              return Missing();
            }
            // tok_s (completion tokens / request wall time) is no samples.jsonl field: the
            // stats object's raw values are the same requests.
            return Cell(med, TokS(*med), NumbersAt(*stats, {"values"}));
          });
  }
}

void AddTotalRows(RowBuilder& b) {
  b.Add(Spec("Average throughput", "summary.avg_tok_s", "tok/s", Better::kHigher, "faster"),
        [](const CompareRun& r) {
          auto v = NumberAt(r.results, {"summary", "avg_tok_s"});
          return v ? Cell(v, TokS(*v)) : Missing();
        });
  b.Add(Spec("Total tokens", "summary.completion_tokens", "tokens", Better::kNone, "more"),
        [](const CompareRun& r) {
          auto v = NumberAt(r.results, {"summary", "completion_tokens"});
          return v ? Cell(v, FormatCount(v)) : Missing();
        });
  b.Add(Spec("Total wall time", "summary.wall_time_s", "s", Better::kLower, "shorter"),
        [](const CompareRun& r) {
          auto v = NumberAt(r.results, {"summary", "wall_time_s"});
          return v ? Cell(v, FormatSeconds(v) + "s") : Missing();
        });
  RowSpec failed =
      Spec("Failed requests", "summary.failed_requests", "requests", Better::kLower, "fewer");
  failed.counts = true;
  b.Add(failed, [](const CompareRun& r) {
    auto v = NumberAt(r.results, {"summary", "failed_requests"});
    if (!v) {
      return Missing();
    }
    std::string text = FormatCount(v);
    if (auto all = NumberAt(r.results, {"summary", "requests"})) {
      text += " of " + FormatCount(all);
    }
    return Cell(v, text);
  });
}

}  // namespace

CompareCell Missing() {
  return CompareCell{std::nullopt, std::string(kMissing), {}, {}, {}};
}

CompareCell Cell(std::optional<double> v, std::string text, std::vector<double> samples) {
  if (!v) {
    return Missing();
  }
  return CompareCell{v, std::move(text), {}, {}, std::move(samples)};
}

CompareCell ScoreCell(std::optional<double> pass, std::optional<double> total, bool with_percent) {
  if (!pass || !total || *total <= 0) {
    return Missing();
  }
  double rate = *pass / *total;
  std::string text = fmt::format("{}/{}", FormatCount(pass), FormatCount(total));
  if (with_percent) {
    text += " (" + FormatPercent(rate) + ")";
  }
  return CompareCell{rate, text, pass, total, {}};
}

std::string TokS(double v) {
  return FormatFixed1(v) + " tok/s";
}

std::string Ms(double v) {
  return FormatMs(v) + " ms";
}

std::vector<double> RawValues(const CompareRun& run, std::string_view profile,
                              std::string_view label_prefix, std::string_view field,
                              const json* fallback) {
  if (!run.has_samples) {
    return fallback == nullptr ? std::vector<double>{} : NumbersAt(*fallback, {"values"});
  }
  std::vector<double> out;
  for (const json& s : run.samples) {
    auto p = StringAt(s, {"profile"});
    auto label = StringAt(s, {"label"});
    if (p != profile || !label || !label->starts_with(label_prefix) ||
        StringAt(s, {"status"}) != "ok") {
      continue;
    }
    if (auto v = NumberAt(s, {field})) {
      out.push_back(*v);
    }
  }
  return out;
}

std::vector<CompareRow> GlanceRows(const std::vector<CompareRun>& runs) {
  RowBuilder b(runs);
  AddQualityRows(runs, b);
  b.Add(Spec("Decode speed (median)", "decode_tok_s", "tok/s", Better::kHigher, "faster"),
        [](const CompareRun& r) {
          const json* stats = Find(r.results, {"perf", "decode", "decode_tok_s"});
          auto med = stats == nullptr ? std::nullopt : NumberAt(*stats, {"median"});
          if (!med) {
            return Missing();
          }
          return Cell(med, TokS(*med), RawValues(r, "decode", "run ", "decode_tok_s", stats));
        });
  AddConcurrencyRows(runs, b);
  AddTtftRows(runs, b);
  AddContextRows(b);
  AddLengthRows(runs, b);
  AddTotalRows(b);
  return b.Take();
}

}  // namespace sb::report::compare_detail
