// The sections of a comparison beyond "At a glance" (rate, roofline, speculative decoding,
// context, startup), the paired quality test with its per-test changes, and the warnings for
// conditions the runs did not share.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/profile_table.h"
#include "core/stats.h"
#include "report/compare_internal.h"
#include "report/compare_stats.h"
#include "report/format.h"
#include "report/profile_rows.h"
#include "report/run_dir.h"

namespace sb::report::compare_detail {

namespace {

RowSpec Spec(std::string metric, std::string key, std::string unit, Better better, std::string word,
             double quantile = 0.5) {
  RowSpec s{std::move(metric), std::move(key), std::move(unit), better, std::move(word)};
  s.quantile = quantile;
  return s;
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  return s;
}

// A section when at least two runs have a figure in one of its rows.
void AddSection(std::vector<CompareSection>& out, std::string id, std::string title,
                std::string note, std::vector<CompareRow> rows) {
  bool shared = std::any_of(rows.begin(), rows.end(), [](const CompareRow& r) {
    return std::count_if(r.cells.begin(), r.cells.end(),
                         [](const CompareCell& c) { return c.value.has_value(); }) >= 2;
  });
  if (shared) {
    out.push_back(
        CompareSection{std::move(id), std::move(title), std::move(note), std::move(rows)});
  }
}

// ---- Rate --------------------------------------------------------------------------------------

const json* RatePoint(const json& run, double rate) {
  for (const json* p : ArrayAt(run, {"perf", "rate", "rates"})) {
    if (NumberAt(*p, {"rate_rps"}) == rate) {
      return p;
    }
  }
  return nullptr;
}

std::vector<double> RateTtfts(const json& point) {
  std::vector<double> out;
  for (const json* q : ArrayAt(point, {"requests"})) {
    if (StringAt(*q, {"status"}) != "ok") {
      continue;
    }
    if (auto v = NumberAt(*q, {"ttft_ms"})) {
      out.push_back(*v);
    }
  }
  return out;
}

std::vector<CompareRow> RateRows(const std::vector<CompareRun>& runs) {
  RowBuilder b(runs);
  // --search-rate: the answer of each run's search, compared as a rate.
  b.Add(Spec("Highest rate meeting the SLOs", "rate.search.best_rps", "req/s", Better::kHigher,
             "better"),
        [](const CompareRun& r) {
          auto v = NumberAt(r.results, {"perf", "rate", "search", "best_rps"});
          auto result = StringAt(r.results, {"perf", "rate", "search", "result"});
          return v ? Cell(v, fmt::format("{} req/s ({})", FormatFixed2(v), result.value_or("?")))
                   : Missing();
        });
  for (double rate : NumbersOver(runs, {"perf", "rate", "rates"}, "rate_rps")) {
    std::string at = fmt::format("{} req/s", FormatFixed2(rate));
    std::string key = fmt::format("rate.{}", FormatFixed2(rate));
    b.Add(Spec("Goodput, " + at, key + ".goodput_rps", "req/s", Better::kHigher, "better"),
          [rate](const CompareRun& r) {
            const json* p = RatePoint(r.results, rate);
            auto v = p == nullptr ? std::nullopt : NumberAt(*p, {"goodput", "goodput_rps"});
            auto f = p == nullptr ? std::nullopt : NumberAt(*p, {"goodput", "fraction"});
            // The rate the drawn schedule offered beside the nominal one in the row's name: a
            // short Poisson draw can offer 20% more, and goodput follows it.
            auto offered = p == nullptr ? std::nullopt : NumberAt(*p, {"offered_rate_rps"});
            return v ? Cell(v, fmt::format("{} req/s ({}; offered {} req/s)", FormatFixed2(v),
                                           FormatPercent(f), FormatFixed2(offered)))
                     : Missing();
          });
    b.Add(Spec("Output tok/s, " + at, key + ".output_tok_s", "tok/s", Better::kHigher, "faster"),
          [rate](const CompareRun& r) {
            const json* p = RatePoint(r.results, rate);
            auto v = p == nullptr ? std::nullopt : NumberAt(*p, {"output_tok_s"});
            return v ? Cell(v, TokS(*v)) : Missing();
          });
    for (auto [name, q] : {std::pair{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}}) {
      b.Add(Spec(fmt::format("TTFT {}, {}", name, at), fmt::format("{}.ttft_ms.{}", key, name),
                 "ms", Better::kLower, "faster", q),
            [rate, name](const CompareRun& r) {
              const json* p = RatePoint(r.results, rate);
              auto v = p == nullptr ? std::nullopt : NumberAt(*p, {"from_send", "ttft_ms", name});
              return v ? Cell(v, Ms(*v), RateTtfts(*p)) : Missing();
            });
    }
    for (auto name : {"p50", "p99"}) {
      b.Add(Spec(fmt::format("ITL {}, {}", name, at), fmt::format("{}.itl_ms.{}", key, name), "ms",
                 Better::kLower, "faster"),
            [rate, name](const CompareRun& r) {
              const json* p = RatePoint(r.results, rate);
              auto v = p == nullptr ? std::nullopt : NumberAt(*p, {"itl_ms", name});
              return v ? Cell(v, Ms(*v)) : Missing();
            });
    }
  }
  return b.Take();
}

// ---- Roofline, spec decoding, startup -------------------------------------------------

std::vector<CompareRow> RooflineRows(const std::vector<CompareRun>& runs) {
  RowBuilder b(runs);
  b.Add(Spec("Bandwidth ceiling", "roofline.ceiling_tok_s", "tok/s", Better::kHigher, "higher"),
        [](const CompareRun& r) {
          auto v = NumberAt(r.results, {"roofline", "ceiling_tok_s"});
          std::string text = TokS(v.value_or(0));
          if (auto hw = StringAt(r.results, {"roofline", "hardware", "name"})) {
            text += " (" + *hw + ")";
          }
          return v ? Cell(v, text) : Missing();
        });
  b.Add(Spec("Decode % of ceiling", "roofline.percent_of_ceiling", "%", Better::kHigher, "better"),
        [](const CompareRun& r) {
          auto v = NumberAt(r.results, {"roofline", "percent_of_ceiling"});
          return v ? Cell(v, FormatFixed1(v) + "%") : Missing();
        });
  return b.Take();
}

std::vector<CompareRow> SpecRows(const std::vector<CompareRun>& runs,
                                 const std::vector<CompareRow>& glance) {
  RowBuilder b(runs);
  b.Add(
      Spec("Acceptance rate", "spec_decode.acceptance_rate", "fraction", Better::kHigher, "better"),
      [](const CompareRun& r) {
        auto v = NumberAt(r.results, {"spec_decode", "acceptance_rate"});
        return v ? Cell(v, FormatPercent(v)) : Missing();
      });
  b.Add(Spec("Mean acceptance length", "spec_decode.mean_acceptance_length", "tokens",
             Better::kHigher, "better"),
        [](const CompareRun& r) {
          auto v = NumberAt(r.results, {"spec_decode", "mean_acceptance_length"});
          return v ? Cell(v, FormatFixed2(v) + " tokens") : Missing();
        });
  std::size_t positions = 0;
  for (const CompareRun& r : runs) {
    positions = std::max(positions, ArrayAt(r.results, {"spec_decode", "per_position"}).size());
  }
  for (std::size_t k = 0; k < positions; ++k) {
    b.Add(
        Spec(fmt::format("Acceptance at draft position {}", k + 1),
             fmt::format("spec_decode.position_{}", k + 1), "fraction", Better::kHigher, "better"),
        [k](const CompareRun& r) {
          auto per = NumbersAt(r.results, {"spec_decode", "per_position"});
          return k < per.size() ? Cell(per[k], FormatPercent(per[k])) : Missing();
        });
  }
  std::vector<CompareRow> rows = b.Take();
  // The uplift: the decode speed of the runs side by side (with its interval), when at least one
  // run measured speculative decoding.
  auto decode = std::find_if(glance.begin(), glance.end(),
                             [](const CompareRow& r) { return r.key == "decode_tok_s"; });
  if (!rows.empty() && decode != glance.end()) {
    CompareRow uplift = *decode;
    uplift.metric = "Decode speed (speculative uplift)";
    uplift.key = "spec_decode.uplift";
    rows.push_back(std::move(uplift));
  }
  return rows;
}

std::vector<CompareRow> StartupRows(const std::vector<CompareRun>& runs) {
  RowBuilder b(runs);
  b.Add(Spec("Server time to ready", "server.time_to_ready_s", "s", Better::kLower, "faster"),
        [](const CompareRun& r) {
          auto s = NumberAt(r.results, {"server_process", "time_to_ready_s"});
          if (!s) {
            return Missing();
          }
          // Known to the poll: older runs (no resolution recorded) compare exactly.
          auto res = NumberAt(r.results, {"server_process", "time_to_ready_resolution_s"});
          CompareCell c = Cell(s, FormatSeconds(s) + "s");
          if (res && *res > 0) {
            c.resolution = *res;
            c.text += fmt::format(" (±{}s)", FormatSeconds(res));
          }
          return c;
        });
  return b.Take();
}

// ---- Warnings ----------------------------------------------------------------------------------

std::string Join(const std::vector<std::string>& v) {
  return v.empty() ? std::string("none") : fmt::format("{}", fmt::join(v, ", "));
}

// "what differ: A x; B y." when at least two runs have a value and they are not all equal.
void Differ(std::vector<std::string>& out, std::string_view what,
            const std::vector<std::optional<std::string>>& values,
            const std::vector<std::string>& labels) {
  std::set<std::string> seen;
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i]) {
      seen.insert(*values[i]);
      parts.push_back(fmt::format("{} {}", labels[i], *values[i]));
    }
  }
  if (seen.size() > 1) {
    out.push_back(fmt::format("{} differ: {}.", what, fmt::join(parts, "; ")));
  }
}

std::vector<std::optional<std::string>> PerRun(
    const std::vector<CompareRun>& runs,
    const std::function<std::optional<std::string>(const json&)>& f) {
  std::vector<std::optional<std::string>> out;
  for (const CompareRun& r : runs) {
    out.push_back(f(r.results));
  }
  return out;
}

std::function<std::optional<std::string>(const json&)> NumberField(
    std::initializer_list<std::string_view> path) {
  std::vector<std::string> p(path.begin(), path.end());
  return [p](const json& r) -> std::optional<std::string> {
    const json* j = &r;
    for (const std::string& k : p) {
      if (!j->is_object() || !j->contains(k)) {
        return std::nullopt;
      }
      j = &(*j)[k];
    }
    if (!j->is_number()) {
      return std::nullopt;
    }
    return FormatCount(j->get<double>());
  };
}

// The list of `field` over the items of `array`, when the run has that array.
std::function<std::optional<std::string>(const json&)> ListField(
    std::initializer_list<std::string_view> array, std::string field) {
  std::vector<std::string> p(array.begin(), array.end());
  return [p, field](const json& r) -> std::optional<std::string> {
    const json* j = &r;
    for (const std::string& k : p) {
      if (!j->is_object() || !j->contains(k)) {
        return std::nullopt;
      }
      j = &(*j)[k];
    }
    if (!j->is_array()) {
      return std::nullopt;
    }
    std::vector<std::string> items;
    for (const json& item : *j) {
      if (auto n = NumberAt(item, {field})) {
        items.push_back(*n == std::trunc(*n) ? FormatCount(n) : fmt::format("{:g}", *n));
      }
    }
    return Join(items);
  };
}

std::string ProfileName(const std::string& key) {
  const ProfileSpec* p = FindProfile(key);
  return p != nullptr ? std::string(p->name) : key;
}

}  // namespace

namespace {

// The per-request values behind a row's median when its statistics keep none (sessions' turns,
// replay's classes): the run's successful samples.jsonl records of the profile whose dim field
// is the row's place. Used only when their median is the row's own: a record set that does not
// reproduce the figure (a sessions turn whose tool rounds are records too, a replay TTFT timed
// from the schedule) gives no interval rather than a wrong one.
std::vector<double> PlaceSamples(const CompareRun& run, const ProfileSpec& p, const json& place,
                                 const MetricSpec& m, double median) {
  if (!run.has_samples) {
    return {};
  }
  std::vector<double> out;
  for (const json& s : run.samples) {
    if (StringAt(s, {"profile"}) != p.name || StringAt(s, {"status"}) != "ok") {
      continue;
    }
    const json* at = Find(s, {p.dim});
    if (at == nullptr || *at != place) {
      continue;
    }
    if (auto v = NumberAt(s, {m.field})) {
      out.push_back(*v);
    }
  }
  if (out.empty() || std::abs(Median(out) - median) > 1e-9 * std::max(1.0, std::abs(median))) {
    return {};
  }
  return out;
}

// A profile compared from its rows (profile_rows.h): one row per place in its sweep and metric;
// the places in the first run's order, then any only a later run has.
std::vector<CompareRow> ProfileMetricRows(const std::vector<CompareRun>& runs,
                                          const ProfileSpec& p) {
  std::vector<std::pair<json, Place>> places;  // the dim's value, and it as a phrase and key
  for (const CompareRun& run : runs) {
    for (const json* row : ArrayAt(run.results, {"perf", p.key, p.rows})) {
      std::optional<Place> at = PlaceOf(*row, p);
      if (!at) {
        continue;
      }
      const json& place = *Find(*row, {p.dim});  // PlaceOf found it
      if (std::none_of(places.begin(), places.end(),
                       [&place](const auto& seen) { return seen.first == place; })) {
        // Two places whose names differ only in punctuation ("a/b", "a.b") would share a
        // key: the later one's key gets the first free "_2", "_3", ...
        const std::string base = at->key;
        for (int n = 2; std::any_of(places.begin(), places.end(),
                                    [&at](const auto& seen) { return seen.second.key == at->key; });
             ++n) {
          at->key = fmt::format("{}_{}", base, n);
        }
        places.emplace_back(place, std::move(*at));
      }
    }
  }
  RowBuilder b(runs);
  for (const auto& [place, at] : places) {
    auto row_of = [&p, &place](const CompareRun& r) -> const json* {
      for (const json* row : ArrayAt(r.results, {"perf", p.key, p.rows})) {
        if (const json* v = Find(*row, {p.dim}); v != nullptr && *v == place) {
          return row;
        }
      }
      return nullptr;
    };
    for (const MetricSpec& m : p.metrics) {
      RowSpec spec = Spec(fmt::format("{}, {}", m.label, at.phrase),
                          fmt::format("{}.{}.{}", p.name, at.key, m.field), std::string(m.unit),
                          m.better < 0   ? Better::kLower
                          : m.better > 0 ? Better::kHigher
                                         : Better::kNone,
                          m.unit == "ms" || m.unit == "tok/s" ? "faster"
                          : m.unit == "tokens"                ? "more"
                                                              : "higher");
      b.Add(spec, [&](const CompareRun& r) {
        const json* row = row_of(r);
        if (row == nullptr) {
          return Missing();
        }
        const auto v = MetricValue(*row, m);
        if (!v) {
          return Missing();
        }
        std::vector<double> samples = MetricSamples(*row, m);
        if (const json* stats = Find(*row, {m.field});
            samples.empty() && stats != nullptr && stats->is_object()) {
          samples = PlaceSamples(r, p, place, m, *v);
        }
        CompareCell cell = Cell(v, FormatMetricWithUnit(v, m.unit), std::move(samples));
        cell.n = NumberAt(*row, {m.field, "n"}).value_or(1);
        return cell;
      });
    }
  }
  return b.Take();
}

}  // namespace

std::vector<CompareSection> ExtraSections(const std::vector<CompareRun>& runs,
                                          const std::vector<CompareRow>& glance) {
  std::vector<CompareSection> out;
  for (const ProfileSpec& p : Profiles()) {
    if (ComparedFromRows(p)) {
      AddSection(out, std::string(p.name), std::string(p.title), Capitalized(p.summary) + ".",
                 ProfileMetricRows(runs, p));
    }
  }
  AddSection(out, "rate", "Rate",
             "Open-loop load per offered rate; TTFT from the actual send; goodput needs --slo.",
             RateRows(runs));
  AddSection(out, "tails", "Tails per level",
             "p50 / p90 / p99 latency at each concurrency level and max-tokens length.",
             TailRows(runs));
  AddSection(out, "roofline", "Roofline", "The memory-bandwidth ceiling (docs/roofline.md).",
             RooflineRows(runs));
  AddSection(out, "spec_decode", "Speculative decoding",
             "Server counters over the measurement windows (docs/metrics.md).",
             SpecRows(runs, glance));
  AddSection(out, "startup", "Startup", "Runs whose server servebench started (--serve, launch).",
             StartupRows(runs));
  AddSection(out, "resources", "Resources",
             "What each result cost (docs/metrics.md \"Resources\"): one measurement per run "
             "and window, so no interval (n=1, no CI). Decode: all its runs together.",
             ResourceCompareRows(runs));
  return out;
}

void CompareQuality(const std::vector<CompareRun>& runs, const std::vector<std::string>& labels,
                    Comparison& out) {
  auto by_id = [](const json& run) {
    std::map<std::string, const json*> m;
    for (const json* t : ArrayAt(run, {"tests"})) {
      auto id = StringAt(*t, {"id"});
      if (!id) {
        continue;
      }
      std::string key = *id;
      if (auto rep = NumberAt(*t, {"repeat"})) {
        key += fmt::format("#{}", FormatCount(rep));
      }
      m[key] = t;
    }
    return m;
  };
  auto base = by_id(runs[0].results);
  if (base.empty()) {
    return;
  }
  for (std::size_t i = 1; i < runs.size(); ++i) {
    auto other = by_id(runs[i].results);
    PairedQuality pq;
    pq.base = 0;
    pq.other = i;
    for (const auto& [id, t] : base) {
      auto it = other.find(id);
      if (it == other.end()) {
        continue;
      }
      ++pq.shared;
      std::string from = Upper(StringAt(*t, {"status"}).value_or("?"));
      std::string to = Upper(StringAt(*it->second, {"status"}).value_or("?"));
      bool a = from == "PASS";
      bool b = to == "PASS";
      (a && b ? pq.both_pass : a ? pq.base_only : b ? pq.other_only : pq.neither) += 1;
      std::string change;
      if (a != b) {
        change = from + " → " + to;
      } else if (from != to && (to == "EMPTY" || to == "LOOP")) {
        change = "new " + to;
      }
      if (!change.empty()) {
        out.changes.push_back(TestChange{
            0, i, id, StringAt(*it->second, {"name"}).value_or(StringAt(*t, {"name"}).value_or(id)),
            from, to, change, StringAt(*it->second, {"reason"}).value_or("")});
      }
    }
    if (pq.shared == 0) {
      continue;
    }
    pq.p_value = stats::McNemarExactP(pq.base_only, pq.other_only);
    std::string verdict = pq.p_value < 0.05
                              ? fmt::format("{} passes more of them (p < 0.05)",
                                            pq.base_only > pq.other_only ? labels[0] : labels[i])
                              : "no significant difference (p ≥ 0.05)";
    pq.text = fmt::format(
        "{} vs {} on the {} tests both ran: {} pass in both, {} only in {}, {} only in {}, {} in "
        "neither; exact McNemar p = {}: {}.",
        labels[0], labels[i], pq.shared, pq.both_pass, pq.base_only, labels[0], pq.other_only,
        labels[i], pq.neither, pq.p_value >= 0.001 ? fmt::format("{:.3f}", pq.p_value) : "< 0.001",
        verdict);
    out.paired.push_back(std::move(pq));
  }
}

namespace {

// One run named twice (the same directory, or a copy of it: the same start, command and host):
// nothing was compared.
void SameRunWarnings(const std::vector<CompareRun>& runs, const std::vector<std::string>& labels,
                     std::vector<std::string>& w) {
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (std::size_t j = i + 1; j < runs.size(); ++j) {
      const json& a = runs[i].results;
      const json& b = runs[j].results;
      const auto started = StringAt(a, {"started_at"});
      const auto command = StringAt(a, {"command"});
      if (started && command && started == StringAt(b, {"started_at"}) &&
          command == StringAt(b, {"command"}) && StringAt(a, {"host"}) == StringAt(b, {"host"})) {
        w.push_back(
            fmt::format("{} and {} are the same run (started {}): every ratio is 1 by "
                        "construction, not a measurement.",
                        labels[i], labels[j], *started));
      }
    }
  }
}

// What each run measured and how: profiles, token counts, prompts, levels, lengths, sizes,
// rates, thinking.
void SetupWarnings(const std::vector<CompareRun>& runs, const std::vector<std::string>& labels,
                   std::vector<std::string>& w) {
  std::vector<std::optional<std::string>> profiles;
  for (const CompareRun& r : runs) {
    std::vector<std::string> names;
    if (const json* perf = Find(r.results, {"perf"}); perf != nullptr && perf->is_object()) {
      for (const auto& [k, v] : perf->items()) {
        if (!v.is_null()) {
          names.push_back(ProfileName(k));
        }
      }
    }
    profiles.push_back(Join(names));
  }
  Differ(w, "Profile sets", profiles, labels);
  Differ(w, "Decode token counts", PerRun(runs, NumberField({"perf", "decode", "tokens"})), labels);
  Differ(w, "Concurrency token counts",
         PerRun(runs, NumberField({"perf", "concurrency", "tokens"})), labels);
  Differ(w, "Rate token counts", PerRun(runs, NumberField({"perf", "rate", "tokens"})), labels);
  Differ(w, "Context answer lengths (max_tokens)",
         PerRun(runs, NumberField({"perf", "context", "max_tokens"})), labels);
  Differ(
      w, "TTFT prompts",
      PerRun(runs,
             [](const json& r) -> std::optional<std::string> {
               auto ps = ArrayAt(r, {"perf", "ttft", "prompts"});
               if (ps.empty()) {
                 return std::nullopt;
               }
               std::vector<std::string> items;
               for (const json* p : ps) {
                 items.push_back(fmt::format("{} ({} tokens)", StringAt(*p, {"name"}).value_or("?"),
                                             FormatCount(NumberAt(*p, {"prompt_tokens"}))));
               }
               return Join(items);
             }),
      labels);
  Differ(w, "Concurrency levels",
         PerRun(runs, ListField({"perf", "concurrency", "levels"}, "concurrency")), labels);
  Differ(w, "Output lengths (max-tokens)",
         PerRun(runs, ListField({"perf", Profile(ProfileId::kMaxTokens).key,
                                 Profile(ProfileId::kMaxTokens).rows},
                                std::string(Profile(ProfileId::kMaxTokens).dim))),
         labels);
  Differ(w, "Context sizes", PerRun(runs, ListField({"perf", "context", "rows"}, "size")), labels);
  Differ(w, "Offered rates",
         PerRun(runs,
                [rates = ListField({"perf", "rate", "rates"}, "rate_rps")](
                    const json& r) -> std::optional<std::string> {
                  auto listed = rates(r);
                  // A --search-rate run has no fixed rates: it probed its own.
                  if (const json* s = Find(r, {"perf", "rate", "search"});
                      s != nullptr && s->is_object() && (!listed || *listed == "none")) {
                    auto best = NumberAt(*s, {"best_rps"});
                    return fmt::format("a rate search ({}{})",
                                       StringAt(*s, {"result"}).value_or("?"),
                                       best ? ", best " + FormatFixed2(best) + " req/s" : "");
                  }
                  return listed;
                }),
         labels);
  Differ(w, "Thinking settings",
         PerRun(runs,
                [](const json& r) -> std::optional<std::string> {
                  const json* t = Find(r, {"config", "thinking"});
                  if (t == nullptr || t->is_null()) {
                    return "not sent";
                  }
                  return t->is_boolean() ? (t->get<bool>() ? "on" : "off") : t->dump();
                }),
         labels);
}

// The flags whose effect the setup lines above already show from the runs' rows.
constexpr std::string_view kShownByRows[] = {
    "--tokens", "--rate-tokens", "--levels", "--lengths", "--sizes", "--rates", "--search-rate"};

// An option's value as a run read it (ProfileArgs: the value given, else the table's default):
// a list's items joined by ", ", a flag "on" or "off", "none" for no value.
std::string OptionText(const OptionSpec& o, const std::optional<std::string>& given) {
  ProfileArgs args;
  if (given) {
    args.Set(o.flag, *given);
  }
  if (o.kind == OptionSpec::kFlag) {
    return args.Flag(o.flag) ? "on" : "off";
  }
  if (o.kind == OptionSpec::kNumbers || o.kind == OptionSpec::kTexts) {
    return Join(args.Texts(o.flag));
  }
  const std::string_view value = args.Value(o.flag);
  return value.empty() ? std::string("none") : std::string(value);
}

// The profile table's options that the runs read with different values (the options each run
// was given, results.json config.profile_options; one not given had its default), for each
// option that at least two runs read: each ran a profile that reads it. A run written before
// its options were recorded has no value.
void OptionWarnings(const std::vector<CompareRun>& runs, const std::vector<std::string>& labels,
                    std::vector<std::string>& w) {
  std::set<std::string_view> done(std::begin(kShownByRows), std::end(kShownByRows));
  for (const ProfileSpec& p : Profiles()) {
    for (const OptionSpec& o : p.options) {
      if (!done.insert(o.flag).second) {
        continue;
      }
      Differ(w, fmt::format("{} settings", o.flag),
             PerRun(runs,
                    [&o](const json& r) -> std::optional<std::string> {
                      const json* given = Find(r, {"config", "profile_options"});
                      const json* perf = Find(r, {"perf"});
                      if (given == nullptr || !given->is_object() || perf == nullptr ||
                          !perf->is_object()) {
                        return std::nullopt;
                      }
                      const bool read = std::any_of(
                          Profiles().begin(), Profiles().end(), [&](const ProfileSpec& q) {
                            const json* s = Find(*perf, {q.key});
                            return ProfileReads(q, o.flag) && s != nullptr && s->is_object();
                          });
                      if (!read) {
                        return std::nullopt;
                      }
                      return OptionText(o, StringAt(*given, {o.flag}));
                    }),
             labels);
    }
  }
}

// Suites: names and size, then the test ids themselves (a different suite version).
void SuiteWarnings(const std::vector<CompareRun>& runs, const std::vector<std::string>& labels,
                   std::vector<std::string>& w) {
  Differ(w, "Suites",
         PerRun(runs,
                [](const json& r) -> std::optional<std::string> {
                  auto names = Find(r, {"suite", "names"});
                  if (names == nullptr || !names->is_array()) {
                    return std::nullopt;
                  }
                  std::vector<std::string> n;
                  for (const json& x : *names) {
                    n.push_back(x.is_string() ? x.get<std::string>() : x.dump());
                  }
                  return fmt::format("{} ({} tests)", Join(n), ArrayAt(r, {"tests"}).size());
                }),
         labels);
  std::vector<std::set<std::string>> ids;
  for (const CompareRun& r : runs) {
    std::set<std::string> s;
    for (const json* t : ArrayAt(r.results, {"tests"})) {
      if (auto id = StringAt(*t, {"id"})) {
        s.insert(*id);
      }
    }
    ids.push_back(std::move(s));
  }
  for (std::size_t i = 1; i < runs.size(); ++i) {
    if (ids[0].empty() || ids[i].empty() || ids[0] == ids[i]) {
      continue;
    }
    std::vector<std::string> only_a;
    std::vector<std::string> only_b;
    std::set_difference(ids[0].begin(), ids[0].end(), ids[i].begin(), ids[i].end(),
                        std::back_inserter(only_a));
    std::set_difference(ids[i].begin(), ids[i].end(), ids[0].begin(), ids[0].end(),
                        std::back_inserter(only_b));
    auto few = [](const std::vector<std::string>& v) {
      std::vector<std::string> head(v.begin(), v.begin() + std::min<std::size_t>(v.size(), 5));
      return Join(head) + (v.size() > 5 ? ", …" : "");
    };
    w.push_back(fmt::format(
        "The suites' tests differ (another suite or suite version): {} only in {} ({}), {} only "
        "in {} ({}); quality is compared on the {} shared tests.",
        only_a.size(), labels[0], few(only_a), only_b.size(), labels[i], few(only_b),
        ids[0].size() - only_a.size()));
  }
}

}  // namespace

std::vector<std::string> Warnings(const std::vector<CompareRun>& runs,
                                  const std::vector<std::string>& labels) {
  std::vector<std::string> w;
  SameRunWarnings(runs, labels, w);
  SetupWarnings(runs, labels, w);
  OptionWarnings(runs, labels, w);
  SuiteWarnings(runs, labels, w);
  ResourceWarnings(runs, labels, w);
  Differ(w, "servebench versions",
         PerRun(runs,
                [](const json& r) {
                  return StringAt(r, {"tool", "version"});
                }),
         labels);
  return w;
}

}  // namespace sb::report::compare_detail
