// compare's "Resources" section (docs/compare.md): what each run's result cost, from
// results.json "resources" (docs/results-schema.md), for the whole run and per matching speed
// row: peak memory, mean power, J/token and tokens/J. Each is one measurement per run (a
// window's peak or total), so its ratio has no interval ("n=1, no CI"). A row appears only when
// at least two runs have the figure.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/compare_internal.h"
#include "report/format.h"
#include "report/resource_rows.h"

namespace sb::report::compare_detail {

namespace {

constexpr double kMiB = 1024.0 * 1024;
constexpr double kGiB = kMiB * 1024;

// The figures compare reads from one window's "resources" (or several windows' together).
struct Cost {
  std::optional<double> peak_memory;  // bytes
  std::optional<std::string> memory_source;
  std::optional<double> mean_power;  // W
  std::optional<double> j_per_token;
  std::optional<double> tokens_per_j;
};

Cost FromFigures(const json& f) {
  return Cost{NumberAt(f, {"memory_bytes", "peak"}), StringAt(f, {"memory_source"}),
              NumberAt(f, {"power_w", "mean"}), NumberAt(f, {"j_per_token"}),
              NumberAt(f, {"tokens_per_j"})};
}

// The decode runs together: the highest peak, and energy over all their windows and tokens
// (each run's energy is measured; a run without it leaves the energy figures out).
Cost DecodeTogether(const std::vector<const json*>& runs) {
  Cost c;
  double energy = 0, window = 0, tokens = 0;
  bool all_energy = !runs.empty();
  for (const json* f : runs) {
    if (auto peak = NumberAt(*f, {"memory_bytes", "peak"})) {
      c.peak_memory = std::max(c.peak_memory.value_or(0), *peak);
      c.memory_source = StringAt(*f, {"memory_source"});
    }
    auto e = NumberAt(*f, {"energy_j"});
    auto w = NumberAt(*f, {"window_s"});
    auto t = NumberAt(*f, {"output_tokens"});
    if (!e || !w || !t) {
      all_energy = false;
      continue;
    }
    energy += *e;
    window += *w;
    tokens += *t;
  }
  if (all_energy && window > 0) {
    c.mean_power = energy / window;
  }
  if (all_energy && tokens > 0 && energy > 0) {
    c.j_per_token = energy / tokens;
    c.tokens_per_j = tokens / energy;
  }
  return c;
}

// "concurrency.c4", "context.2000", "rate.4": the row's key without spaces or units.
std::string PlaceKey(const ResourceRow& row) {
  std::string label = row.label;
  for (const char* unit : {" tokens", " req/s"}) {
    if (const auto at = label.find(unit); at != std::string::npos) {
      label.erase(at);
    }
  }
  return row.profile + "." + label;
}

// Where a run's cost is compared: "run" (the whole run), "decode" (its runs together), and
// each concurrency level, context size and rate point by its key (report/resource_rows.h).
// Max-tokens and TTFT runs are short repeats of a single request and are left out.
std::map<std::string, Cost> Costs(const json& results) {
  std::map<std::string, Cost> out;
  if (const json* run = Find(results, {"resources", "run"}); run != nullptr && run->is_object()) {
    out["run"] = FromFigures(*run);
  }
  std::vector<const json*> decode;
  for (const ResourceRow& row : ResourceRows(results)) {
    if (row.profile == "decode") {
      decode.push_back(row.figures);
    } else if (row.profile == "concurrency" || row.profile == "context" || row.profile == "rate") {
      out[PlaceKey(row)] = FromFigures(*row.figures);
    }
  }
  if (!decode.empty()) {
    out["decode"] = DecodeTogether(decode);
  }
  return out;
}

std::string Where(const std::string& key) {
  if (key == "run") {
    return "whole run";
  }
  if (key == "decode") {
    return "decode (all runs)";
  }
  const auto dot = key.find('.');
  const std::string profile = key.substr(0, dot), at = key.substr(dot + 1);
  return profile == "concurrency" ? "concurrency " + at.substr(1)
         : profile == "context"   ? "context " + at + " tokens"
                                  : "rate " + at + " req/s";
}

std::string Bytes(double v, const std::optional<std::string>& source) {
  std::string s =
      v >= kGiB ? fmt::format("{:.2f} GiB", v / kGiB) : fmt::format("{:.1f} MiB", v / kMiB);
  return source == "server_rss" ? s + " (RSS)" : s;
}

// The places (keys) in the first run's order, then those only later runs have.
std::vector<std::string> Places(const std::vector<std::map<std::string, Cost>>& costs,
                                const std::vector<CompareRun>& runs) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& k) {
    if (seen.insert(k).second) {
      out.push_back(k);
    }
  };
  add("run");
  add("decode");
  for (const CompareRun& r : runs) {
    for (const ResourceRow& row : ResourceRows(r.results)) {
      add(PlaceKey(row));
    }
  }
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const std::string& k) {
                             return std::count_if(costs.begin(), costs.end(), [&](const auto& c) {
                                      return c.count(k) > 0;
                                    }) < 2;
                           }),
            out.end());
  return out;
}

}  // namespace

std::vector<CompareRow> ResourceCompareRows(const std::vector<CompareRun>& runs) {
  std::vector<std::map<std::string, Cost>> costs;
  for (const CompareRun& r : runs) {
    costs.push_back(Costs(r.results));
  }
  RowBuilder b(runs);

  struct Figure {
    const char* name;
    const char* field;
    const char* unit;
    Better better;
    const char* word;
    std::function<std::optional<double>(const Cost&)> get;
    std::function<std::string(double, const Cost&)> text;
  };

  const std::vector<Figure> figures = {
      {"Peak memory", "peak_memory_bytes", "bytes", Better::kLower, "smaller",
       [](const Cost& c) { return c.peak_memory; },
       [](double v, const Cost& c) { return Bytes(v, c.memory_source); }},
      {"Mean power", "mean_power_w", "W", Better::kLower, "lower",
       [](const Cost& c) { return c.mean_power; },
       [](double v, const Cost&) { return FormatFixed1(v) + " W"; }},
      {"Energy per token", "j_per_token", "J/token", Better::kLower, "more efficient",
       [](const Cost& c) { return c.j_per_token; },
       [](double v, const Cost&) { return fmt::format("{:.3f} J/token", v); }},
      {"Tokens per joule", "tokens_per_j", "tokens/J", Better::kHigher, "more efficient",
       [](const Cost& c) { return c.tokens_per_j; },
       [](double v, const Cost&) { return fmt::format("{:.2f} tokens/J", v); }},
  };
  for (const std::string& place : Places(costs, runs)) {
    for (const Figure& f : figures) {
      int have = 0;
      for (const auto& c : costs) {
        auto it = c.find(place);
        have += it != c.end() && f.get(it->second) ? 1 : 0;
      }
      if (have < 2) {
        continue;  // only figures at least two runs measured
      }
      RowSpec spec{fmt::format("{}, {}", f.name, Where(place)),
                   fmt::format("resources.{}.{}", place, f.field), f.unit, f.better, f.word};
      b.Add(spec, [&](const CompareRun& run) {
        const auto& c = costs[static_cast<std::size_t>(&run - runs.data())];
        auto it = c.find(place);
        std::optional<double> v = it == c.end() ? std::nullopt : f.get(it->second);
        return v ? Cell(v, f.text(*v, it->second)) : Missing();
      });
    }
  }
  return b.Take();
}

void ResourceWarnings(const std::vector<CompareRun>& runs, const std::vector<std::string>& labels,
                      std::vector<std::string>& out) {
  std::vector<std::string> with, without;
  std::set<std::string> sources;
  std::vector<std::string> source_parts;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const json* res = Find(runs[i].results, {"resources"});
    if (res != nullptr && res->is_object()) {
      with.push_back(labels[i]);
    } else {
      // A merged run (servebench merge) has none: sampling is per machine, in each shard.
      const json* shards = Find(runs[i].results, {"shards"});
      without.push_back(shards != nullptr && shards->is_object()
                            ? labels[i] + " (merged from shards: each shard's run keeps its own)"
                            : labels[i] + " (a run from before the sampler)");
    }
    if (auto s = StringAt(runs[i].results, {"resources", "run", "memory_source"})) {
      sources.insert(*s);
      source_parts.push_back(fmt::format("{} {}", labels[i],
                                         *s == "gpu"          ? "GPU memory"
                                         : *s == "server_rss" ? "server RSS"
                                                              : *s));
    }
  }
  if (!with.empty() && !without.empty()) {
    out.push_back(fmt::format(
        "Resources were sampled in {} but not in {}: the Resources section compares only the "
        "runs that have them.",
        fmt::join(with, ", "), fmt::join(without, ", ")));
  }
  if (sources.size() > 1) {
    out.push_back(fmt::format(
        "Peak memory is not the same quantity in every run: {} (GPU memory where NVML was "
        "readable, else the launched server's RSS).",
        fmt::join(source_parts, "; ")));
  }
}

}  // namespace sb::report::compare_detail
