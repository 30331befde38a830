// The "Tails per level" section of a comparison (issue 23 item 2): p50, p90 and p99 of TTFT,
// TPOT, E2E and ITL at each concurrency level, max-tokens length and sessions level that the runs
// share. A quantile's interval is bootstrapped from the level's own request records (TTFT, TPOT,
// E2E of each successful request; a sessions run's one level: all its requests); ITL has no
// per-request value, so its rows carry none.
#include <array>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/profile_table.h"
#include "report/compare_internal.h"
#include "report/format.h"
#include "report/run_dir.h"

namespace sb::report::compare_detail {

namespace {

struct Sweep {
  std::string_view profile;         // results.json key under "perf" and the samples' "profile"
  std::string_view array;           // "levels", "lengths"
  std::string_view field;           // the row's place in the sweep (the profile table's dim)
  std::string_view records;         // the row's request records: "requests", "runs"
  std::string_view name;            // in the row's name: "concurrency", "max_tokens"
  std::string_view key;             // the row key's prefix: "tails.c", "tails.max_tokens_"
  bool records_in_profile = false;  // the records sit beside the rows (sessions: one level)
};

struct Figure {
  std::string_view name;  // "TTFT"
  std::string_view key;   // "ttft_ms" in the row and in a request record
  bool per_request;       // a samples.jsonl record has this field
};

constexpr std::array<Figure, 4> kFigures = {{{"TTFT", "ttft_ms", true},
                                             {"TPOT", "tpot_ms", true},
                                             {"E2E", "e2e_ms", true},
                                             {"ITL", "itl_ms", false}}};

const json* Row(const json& run, const Sweep& s, double at) {
  for (const json* l : ArrayAt(run, {"perf", s.profile, s.array})) {
    if (NumberAt(*l, {s.field}) == at) {
      return l;
    }
  }
  return nullptr;
}

std::set<double> Points(const std::vector<CompareRun>& runs, const Sweep& s) {
  std::set<double> out;
  for (const CompareRun& r : runs) {
    for (const json* l : ArrayAt(r.results, {"perf", s.profile, s.array})) {
      if (auto v = NumberAt(*l, {s.field}); v && NumberAt(*l, {"itl_ms", "n"})) {
        out.insert(*v);  // only rows written with tails
      }
    }
  }
  return out;
}

void AddSweep(const std::vector<CompareRun>& runs, const Sweep& s, RowBuilder& b) {
  for (double at : Points(runs, s)) {
    const std::string where = fmt::format("{} {}", s.name, FormatCount(at));
    const std::string key_at = fmt::format("{}{}", s.key, FormatCount(at));
    for (const Figure& f : kFigures) {
      for (auto [q_name, q] : {std::pair{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}}) {
        RowSpec spec{fmt::format("{} {}, {}", f.name, q_name, where),
                     fmt::format("{}.{}.{}", key_at, f.key, q_name), "ms", Better::kLower,
                     "faster"};
        spec.quantile = q;
        b.Add(spec, [&s, at, &f, q_name](const CompareRun& r) {
          const json* l = Row(r.results, s, at);
          auto v = l == nullptr ? std::nullopt : NumberAt(*l, {f.key, q_name});
          if (!v) {
            return Missing();
          }
          std::vector<double> samples;
          const json* holder = s.records_in_profile ? Find(r.results, {"perf", s.profile}) : l;
          for (const json* rec : f.per_request&& holder != nullptr ? ArrayAt(*holder, {s.records})
                                                                   : std::vector<const json*>{}) {
            auto x = NumberAt(*rec, {f.key});
            if (x && StringAt(*rec, {"status"}) == "ok") {
              samples.push_back(*x);
            }
          }
          return Cell(v, Ms(*v), std::move(samples));
        });
      }
    }
  }
}

}  // namespace

std::vector<CompareRow> TailRows(const std::vector<CompareRun>& runs) {
  RowBuilder b(runs);
  const ProfileSpec& concurrency = Profile(ProfileId::kConcurrency);
  AddSweep(
      runs,
      {concurrency.key, concurrency.rows, concurrency.dim, "requests", "concurrency", "tails.c"},
      b);
  const ProfileSpec& max_tokens = Profile(ProfileId::kMaxTokens);
  AddSweep(runs,
           {max_tokens.key, max_tokens.rows, max_tokens.dim, "runs", max_tokens.dim,
            "tails.max_tokens_"},
           b);
  // A sessions run: its session-concurrency level (the profile's rows are its turns).
  const ProfileSpec& sessions = Profile(ProfileId::kSessions);
  AddSweep(runs,
           {sessions.key, "levels", "concurrency", "requests", "sessions concurrency",
            "tails.sessions_c", true},
           b);
  return b.Take();
}

}  // namespace sb::report::compare_detail
