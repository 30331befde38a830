#include "store/record.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include "core/json_read.h"
#include "core/printable.h"
#include "core/profile_table.h"
#include "core/redact.h"
#include "core/result_rows.h"
#include "core/units.h"

namespace sb::store {

namespace {

using nlohmann::json;

// Where a nested row that lacks its own profile's dim sits (sessions' levels carry
// `concurrency`): the first dim of these profiles it has, in the order the store has always
// looked for them (docs/store.md "Metrics").
constexpr ProfileId kNestedDimProfiles[] = {ProfileId::kConcurrency, ProfileId::kMaxTokens,
                                            ProfileId::kContext, ProfileId::kRate,
                                            ProfileId::kTtft};

// Keys that hold request records, raw values or settings rather than results.
const std::set<std::string> kSkipKeys = {
    "runs",       "requests",     "values",           "request",      "attempts",
    "tokens",     "seed",         "late_ms",          "slo_fraction", "burstiness",
    "steps",      "min_rps",      "max_rps",          "depth",        "prompt_tokens_requested",
    "duration_s", "per_position", "tokens_per_chunk", "self_check",   "slo",
    "max_tokens", "bracket_rps",  "schedule",         "frontier"};

std::string Sha256Hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex += fmt::format("{:02x}", md[i]);
  }
  return hex;
}

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string PointText(const json& v) {
  if (v.is_string()) {
    return v.get<std::string>();
  }
  if (v.is_number_integer()) {
    return std::to_string(v.get<long long>());
  }
  if (v.is_number()) {
    return fmt::format("{}", v.get<double>());
  }
  return {};
}

struct Walker {
  std::string profile;
  std::vector<MetricRow>& out;

  void Add(const std::string& dim, const std::string& point, const std::string& name,
           const std::string& unit_key, double value, std::optional<long long> n,
           std::optional<std::pair<double, double>> ci) {
    if (!std::isfinite(value)) {
      return;
    }
    MetricRow r;
    r.profile = profile;
    r.dim = dim;
    r.point = point;
    r.metric = name;
    r.value = value;
    r.unit = UnitOf(unit_key);
    r.n = n;
    if (ci) {
      r.ci_lo = ci->first;
      r.ci_hi = ci->second;
    }
    out.push_back(std::move(r));
  }

  // The figures below `node` the store keeps (docs/store.md "Metrics"): plain numbers, a
  // statistics object's median (with its n and interval), a percentile object's p50 and p99
  // (as metric.p50, metric.p99); not flags, settings or records. The rows of an array below it
  // that say where they sit (the profile's dim in the table, else the first of kNestedDimProfiles'
  // dims they have) are walked at their place, under the prefix of the object that holds the array.
  void Walk(const json& node, const std::string& dim, const std::string& point,
            const std::string& prefix) {
    const FigureWalk how{
        [&dim](std::string_view k) { return kSkipKeys.contains(std::string(k)) || k == dim; },
        [this](std::string_view, const json& array, const std::string& at) { Rows(array, at); }};
    WalkFigures(node, prefix, how, [&](ResultRow r) {
      if (!std::isfinite(r.value) || r.kind == ResultRow::kFlag ||
          (r.kind == ResultRow::kStats && r.stat != "median") ||
          (r.kind == ResultRow::kPercentiles && r.stat != "p50" && r.stat != "p99")) {
        return;
      }
      if (r.kind == ResultRow::kPercentiles) {
        r.metric += "." + r.stat;
        r.ci_lo.reset();
        r.ci_hi.reset();
      }
      r.profile = profile;
      r.dim = dim;
      r.point = point;
      out.push_back(std::move(r));
    });
  }

  void Rows(const json& array, const std::string& prefix) {
    // The profile's own dim first, then kNestedDimProfiles'.
    const ProfileSpec* spec = FindProfile(profile);
    for (const auto& el : array) {
      if (!el.is_object()) {
        continue;
      }
      std::string el_dim, el_point;
      if (spec != nullptr && !spec->dim.empty()) {
        const std::string d(spec->dim);
        if (el.contains(d) && (el[d].is_number() || el[d].is_string())) {
          el_dim = d;
          el_point = PointText(el[d]);
        }
      }
      for (ProfileId other : kNestedDimProfiles) {
        const std::string d(Profile(other).dim);
        if (el_dim.empty() && el.contains(d) && (el[d].is_number() || el[d].is_string())) {
          el_dim = d;
          el_point = PointText(el[d]);
        }
      }
      if (el_dim.empty()) {
        continue;  // a row that does not say where it sits cannot be told from its siblings
      }
      Walk(el, el_dim, el_point, prefix);
    }
  }
};

// A sweep's frontier points (perf.<profile>.frontier, docs/store.md): one row per figure, at
// dim "level" and the point's level, metric "frontier.<figure>"; `pareto` as 1 or 0.
void FrontierRows(const std::string& profile, const json& sweep, std::vector<MetricRow>& out) {
  const auto fr = sweep.find("frontier");
  if (fr == sweep.end() || !fr->is_array()) {
    return;
  }
  for (const json& p : *fr) {
    if (!p.is_object() || !p.contains("level") || !p["level"].is_number()) {
      continue;
    }
    auto add = [&](const char* key, const char* unit, std::optional<double> v) {
      if (v && std::isfinite(*v)) {
        MetricRow r;
        r.profile = profile;
        r.dim = "level";
        r.point = PointText(p["level"]);
        r.metric = std::string("frontier.") + key;
        r.value = *v;
        r.unit = unit;
        out.push_back(std::move(r));
      }
    };
    auto num = [&](const char* key) -> std::optional<double> {
      const auto it = p.find(key);
      return it != p.end() && it->is_number() ? std::optional(it->get<double>()) : std::nullopt;
    };
    if (!num("tok_s_per_user") || !num("total_tok_s")) {
      continue;
    }
    add("tok_s_per_user", "tok/s", num("tok_s_per_user"));
    add("tok_s_per_user_tpot", "tok/s", num("tok_s_per_user_tpot"));
    add("total_tok_s", "tok/s", num("total_tok_s"));
    add("total_tok_s_per_gpu", "tok/s", num("total_tok_s_per_gpu"));
    const auto pareto = p.find("pareto");
    add("pareto", "",
        pareto != p.end() && pareto->is_boolean() ? std::optional(pareto->get<bool>() ? 1.0 : 0.0)
                                                  : std::nullopt);
  }
}

// Profile "resources" (docs/store.md): what the result cost, from results.json "resources".
// Point "" is the whole run ("resources.run"); point "decode" the decode runs together (the
// highest peak; energy, windows and tokens summed, so J/token is total energy / total tokens).
void ResourceRows(const json& results, std::vector<MetricRow>& out) {
  const auto res = results.find("resources");
  if (res == results.end() || !res->is_object()) {
    return;
  }
  auto add = [&](const std::string& point, const char* metric, const char* unit,
                 std::optional<double> v, std::optional<long long> n) {
    if (v && std::isfinite(*v)) {
      MetricRow r;
      r.profile = "resources";
      r.point = point;
      r.dim = point.empty() ? "" : "profile";
      r.metric = metric;
      r.value = *v;
      r.unit = unit;
      r.n = n;
      out.push_back(std::move(r));
    }
  };
  if (const auto run = res->find("run"); run != res->end() && run->is_object()) {
    const auto n = NumberAt(*run, {"samples"});
    const std::optional<long long> samples =
        n ? std::optional(static_cast<long long>(*n)) : std::nullopt;
    add("", "peak_memory_bytes", "bytes", NumberAt(*run, {"memory_bytes", "peak"}), samples);
    add("", "mean_power_w", "W", NumberAt(*run, {"power_w", "mean"}), samples);
    add("", "energy_j", "J", NumberAt(*run, {"energy_j"}), samples);
    add("", "j_per_token", "J/token", NumberAt(*run, {"j_per_token"}), samples);
    add("", "tokens_per_j", "tokens/J", NumberAt(*run, {"tokens_per_j"}), samples);
    add("", "peak_kv_cache_usage", "fraction", NumberAt(*run, {"kv_cache_usage", "peak"}), samples);
  }
  // The decode runs together.
  std::optional<double> peak, peak_kv;
  double energy = 0, window = 0, tokens = 0;
  long long runs = 0;
  bool all_energy = true;
  const json* decode_runs = nullptr;
  if (const auto perf = results.find("perf"); perf != results.end() && perf->is_object()) {
    if (const auto d = perf->find("decode"); d != perf->end() && d->is_object()) {
      if (const auto r = d->find("runs"); r != d->end() && r->is_array()) {
        decode_runs = &*r;
      }
    }
  }
  for (const json& run : decode_runs != nullptr ? *decode_runs : json::array()) {
    const auto f = run.find("resources");
    if (f == run.end() || !f->is_object()) {
      continue;
    }
    ++runs;
    if (auto p = NumberAt(*f, {"memory_bytes", "peak"})) {
      peak = std::max(peak.value_or(0), *p);
    }
    if (auto p = NumberAt(*f, {"kv_cache_usage", "peak"})) {
      peak_kv = std::max(peak_kv.value_or(0), *p);
    }
    auto e = NumberAt(*f, {"energy_j"});
    auto w = NumberAt(*f, {"window_s"});
    auto t = NumberAt(*f, {"output_tokens"});
    if (e && w && t) {
      energy += *e;
      window += *w;
      tokens += *t;
    } else {
      all_energy = false;
    }
  }
  if (runs == 0) {
    return;
  }
  add("decode", "peak_memory_bytes", "bytes", peak, runs);
  add("decode", "peak_kv_cache_usage", "fraction", peak_kv, runs);
  if (all_energy && window > 0 && tokens > 0 && energy > 0) {
    add("decode", "mean_power_w", "W", energy / window, runs);
    add("decode", "energy_j", "J", energy, runs);
    add("decode", "j_per_token", "J/token", energy / tokens, runs);
    add("decode", "tokens_per_j", "tokens/J", tokens / energy, runs);
  }
}

// --label TEXT / --tag K=V in a plan's args (both "--flag value" and "--flag=value").
void LabelsFromArgs(const std::vector<std::string>& args, Labels& labels) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    if (auto eq = flag.find('='); flag.starts_with("--") && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if ((flag == "--label" || flag == "--tag") && i + 1 < args.size()) {
      value = args[++i];
    } else {
      continue;
    }
    if (flag == "--label") {
      labels.label = value;
    } else if (flag == "--tag") {
      if (auto tag = ParseTag(value)) {
        labels.tags[tag->first] = tag->second;
      }
    }
  }
}

}  // namespace

std::string RunRecord::Config() const {
  // The recipe and the tags together: runs of one recipe with different tags (--serve with
  // --tag itl=3 and --tag itl=8) are different configurations.
  std::string s = recipe;
  for (const auto& [k, v] : tags) {
    s += (s.empty() ? "" : ",") + k + "=" + v;
  }
  return s.empty() ? "-" : s;
}

Result<std::pair<std::string, std::string>> ParseTag(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("--tag {}: expected KEY=VALUE, e.g. --tag hw=dgx-spark", text));
  }
  return std::pair{text.substr(0, eq), text.substr(eq + 1)};
}

std::string UnitOf(const std::string& key) {
  return UnitOfKey(key);
}

std::vector<MetricRow> MetricRows(const json& results) {
  std::vector<MetricRow> rows;
  if (results.contains("perf") && results["perf"].is_object()) {
    for (auto it = results["perf"].begin(); it != results["perf"].end(); ++it) {
      if (!it.value().is_object()) {
        continue;
      }
      Walker w{ProfileDisplayName(it.key()), rows};
      w.Walk(it.value(), "", "", "");
      FrontierRows(w.profile, it.value(), rows);
    }
  }
  ResourceRows(results, rows);
  const json summary = results.value("summary", json::object());
  if (summary.value("total", 0) > 0) {
    Walker w{"suite", rows};
    std::optional<std::pair<double, double>> ci;
    if (summary.contains("pass_rate_ci95") && summary["pass_rate_ci95"].is_array() &&
        summary["pass_rate_ci95"].size() == 2 && summary["pass_rate_ci95"][0].is_number() &&
        summary["pass_rate_ci95"][1].is_number()) {
      ci = std::pair{summary["pass_rate_ci95"][0].get<double>(),
                     summary["pass_rate_ci95"][1].get<double>()};
    }
    const long long total = summary.value("total", 0LL);
    if (summary.contains("pass_rate") && summary["pass_rate"].is_number()) {
      w.Add("", "", "pass_rate", "pass_rate", summary["pass_rate"].get<double>(), total, ci);
    }
    if (summary.contains("effective_pass_rate") && summary["effective_pass_rate"].is_number()) {
      w.Add("", "", "effective_pass_rate", "effective_pass_rate",
            summary["effective_pass_rate"].get<double>(), total, std::nullopt);
    }
    for (const char* k : {"total", "pass", "fail", "avg_tok_s"}) {
      if (summary.contains(k) && summary[k].is_number()) {
        w.Add("", "", k, k, summary[k].get<double>(), std::nullopt, std::nullopt);
      }
    }
  }
  return rows;
}

RunRecord RecordFromResults(const json& results, const std::vector<std::string>& plan_args,
                            const Labels& extra, const std::string& run_dir) {
  RunRecord r;
  const json target = results.value("target", json::object());
  const json server = target.value("server", json::object());
  const json tool = results.value("tool", json::object());
  r.started_at = Str(results, "started_at");
  r.finished_at = Str(results, "finished_at");
  r.status = Str(results, "status");
  r.host = Str(results, "host");
  r.tool_version = Str(tool, "version");
  r.server_kind = Str(server, "kind");
  r.server_version = Str(server, "version");
  r.model = Str(target, "model");
  r.endpoint = RedactUrl(Str(target, "endpoint"));
  r.simulated = target.value("simulated", false);
  if (results.contains("recipe") && results["recipe"].is_object()) {
    r.recipe = Str(results["recipe"], "name");
    r.server_command = Str(results["recipe"], "command");
  }
  r.command = Redact(Str(results, "command"));
  r.run_dir = run_dir;
  Labels labels;
  LabelsFromArgs(plan_args, labels);  // runs written before results.json had "labels"
  if (const auto it = results.find("labels"); it != results.end() && it->is_object()) {
    labels.label = Str(*it, "label");
    if (const auto tags = it->find("tags"); tags != it->end() && tags->is_object()) {
      for (const auto& [k, v] : tags->items()) {
        if (v.is_string()) {
          labels.tags[k] = v.get<std::string>();
        }
      }
    }
  }
  if (!extra.label.empty()) {
    labels.label = extra.label;
  }
  for (const auto& [k, v] : extra.tags) {
    labels.tags[k] = v;
  }
  r.label = labels.label;
  r.tags = labels.tags;
  r.metrics = MetricRows(results);
  std::string single_suite;
  if (results.contains("suite") && results["suite"].is_object()) {
    const json names = results["suite"].value("names", json::array());
    if (names.is_array() && names.size() == 1 && names[0].is_string()) {
      single_suite = names[0].get<std::string>();
    }
  }
  for (const auto& t : results.value("tests", json::array())) {
    if (!t.is_object()) {
      continue;
    }
    TestRow row;
    row.suite = t.contains("suite") && t["suite"].is_string() ? t["suite"].get<std::string>()
                                                              : single_suite;
    row.test_id = Str(t, "id");
    row.category = Str(t, "category");
    row.status = Str(t, "status");
    row.reason = Str(t, "reason");
    if (t.contains("time_ms") && t["time_ms"].is_number()) {
      row.seconds = t["time_ms"].get<double>() / 1000.0;
    }
    if (t.contains("completion_tokens") && t["completion_tokens"].is_number_integer()) {
      row.tokens = t["completion_tokens"].get<long long>();
    }
    r.tests.push_back(std::move(row));
  }
  // The identity: what the run was (when, what command, against which model and server, from
  // which host), not where its directory lies now.
  r.id = Sha256Hex(fmt::format("{}\n{}\n{}\n{}\n{}", r.started_at, r.command, r.model, r.endpoint,
                               r.host))
             .substr(0, 12);
  std::string labels_text = r.label;
  for (const auto& [k, v] : r.tags) {
    labels_text += "\n" + k + "=" + v;
  }
  r.digest = Sha256Hex(results.dump() + "\n" + labels_text).substr(0, 16);
  // What the server named is printed by `store ls`, history and leaderboard: one printable line
  // (the identity above keeps the raw id, as results.json does).
  r.model = PrintableLine(r.model);
  r.server_kind = PrintableLine(r.server_kind);
  r.server_version = PrintableLine(r.server_version);
  for (TestRow& t : r.tests) {
    t.reason = PrintableLine(t.reason);
  }
  return r;
}

Result<RunRecord> ReadRunDir(const std::filesystem::path& dir, const Labels& extra) {
  std::filesystem::path results_path = dir;
  std::filesystem::path run_dir = dir;
  if (std::filesystem::is_directory(dir)) {
    results_path = dir / "results.json";
  } else {
    run_dir = dir.parent_path();
  }
  std::ifstream in(results_path, std::ios::binary);
  if (!in) {
    return MakeError(
        ErrorCode::kSetup,
        fmt::format("{}: no readable results.json (not a run directory)", dir.string()));
  }
  const json results = json::parse(in, nullptr, false);
  if (!results.is_object() || Str(results, "schema").rfind("servebench.results/", 0) != 0) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("{} is not a servebench results file", results_path.string()));
  }
  if (Str(results, "status") == "running") {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("{} is a run still in progress (status running): only a finished "
                                 "run is stored",
                                 results_path.string()));
  }
  std::vector<std::string> args;
  std::ifstream plan_in(run_dir / "plan.json", std::ios::binary);
  if (plan_in) {
    const json plan = json::parse(plan_in, nullptr, false);
    if (plan.is_object() && plan.contains("args") && plan["args"].is_array()) {
      for (const auto& a : plan["args"]) {
        if (a.is_string()) {
          args.push_back(a.get<std::string>());
        }
      }
    }
  }
  std::error_code ec;
  const auto abs = std::filesystem::absolute(run_dir, ec);
  return RecordFromResults(results, args, extra,
                           ec ? run_dir.string() : abs.lexically_normal().string());
}

}  // namespace sb::store
