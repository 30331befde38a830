#include "scaleout/merge.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/clock.h"
#include "perf/histogram.h"
#include "perf/request_classes.h"
#include "report/html.h"
#include "report/markdown.h"
#include "report/run_dir.h"
#include "report/run_dir_lock.h"

namespace sb::scaleout {

namespace {

using nlohmann::json;

Error Usage(std::string text) {
  return MakeError(ErrorCode::kUsage, std::move(text));
}

// What every shard of one load must share, as "name" -> value paths into results.json.
const std::vector<std::pair<const char*, json::json_pointer>>& SharedFields() {
  static const std::vector<std::pair<const char*, json::json_pointer>> kFields = {
      {"target endpoint", json::json_pointer("/target/endpoint")},
      {"model", json::json_pointer("/target/model")},
      {"server kind", json::json_pointer("/target/server/kind")},
      {"server version", json::json_pointer("/target/server/version")},
      {"profiles", json::json_pointer("/config/profiles")},
      {"--warmup", json::json_pointer("/config/warmup")},
      {"--thinking", json::json_pointer("/config/thinking")},
      {"--arrival", json::json_pointer("/perf/rate/arrival")},
      {"--burstiness", json::json_pointer("/perf/rate/burstiness")},
      {"--duration-s", json::json_pointer("/perf/rate/duration_s")},
      {"--rate-tokens", json::json_pointer("/perf/rate/tokens")},
      {"--input-tokens", json::json_pointer("/perf/rate/input_tokens")},
      {"--late-ms", json::json_pointer("/perf/rate/late_ms")},
      {"--slo", json::json_pointer("/perf/rate/slo")},
      {"--slo-fraction", json::json_pointer("/perf/rate/slo_fraction")},
      {"shard count", json::json_pointer("/shard/count")}};
  return kFields;
}

json At(const json& j, const json::json_pointer& p) {
  return j.contains(p) ? j.at(p) : json(nullptr);
}

long long Int(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<long long>() : 0;
}

double Num(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

// Checks that the shards are the shards of one load; returns them ordered by index.
Result<std::vector<const json*>> OrderShards(const std::vector<json>& shards) {
  if (shards.empty()) {
    return Usage("merge needs at least one shard directory");
  }
  std::map<int, const json*> by_index;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const json& s = shards[k];
    if (!s.contains("shard") || !s["shard"].is_object()) {
      return Usage(
          fmt::format("input {} is not a shard's run (results.json has no \"shard\"): "
                      "run the load with `perf --shard I/N` or under mpirun/srun",
                      k + 1));
    }
    const int index = static_cast<int>(Int(s["shard"], "index"));
    if (by_index.count(index) != 0) {
      return Usage(fmt::format("shard {} is given twice", index));
    }
    by_index[index] = &s;
  }
  const json& first = *by_index.begin()->second;
  const int count = static_cast<int>(Int(first["shard"], "count"));
  std::vector<std::string> missing;
  for (int i = 0; i < count; ++i) {
    if (by_index.count(i) == 0) {
      missing.push_back(std::to_string(i));
    }
  }
  if (!missing.empty() || static_cast<int>(by_index.size()) != count) {
    return Usage(fmt::format(
        "the load was split into {} shards but {} were given{}", count, by_index.size(),
        missing.empty() ? std::string()
                        : fmt::format(" (missing: shard {})", fmt::join(missing, ", "))));
  }
  std::vector<const json*> ordered;
  for (const auto& [index, s] : by_index) {
    ordered.push_back(s);
  }
  for (const json* s : ordered) {
    const int index = static_cast<int>(Int((*s)["shard"], "index"));
    for (const auto& [name, ptr] : SharedFields()) {
      const json a = At(first, ptr);
      const json b = At(*s, ptr);
      if (a != b) {
        return Usage(
            fmt::format("shard {} differs from shard 0 in its {}: {} vs {} (the shards "
                        "of one load measure the same target with the same options)",
                        index, name, b.dump(), a.dump()));
      }
    }
    const json& perf = (*s)["perf"];
    for (auto it = perf.begin(); it != perf.end(); ++it) {
      if (it.key() != "rate") {
        return Usage(
            fmt::format("shard {} holds the {} profile: merge joins the rate profile "
                        "only",
                        index, it.key()));
      }
    }
    if (!perf.contains("rate") || !perf["rate"].contains("rates")) {
      return Usage(fmt::format("shard {} holds no rate profile", index));
    }
    std::vector<double> mine, theirs;
    for (const json& p : perf["rate"]["rates"]) {
      mine.push_back(Num(p, "rate_rps"));
    }
    for (const json& p : first["perf"]["rate"]["rates"]) {
      theirs.push_back(Num(p, "rate_rps"));
    }
    if (mine != theirs) {
      return Usage(fmt::format("shard {} ran the rates {} req/s, shard 0 ran {} req/s", index,
                               json(mine).dump(), json(theirs).dump()));
    }
  }
  return ordered;
}

// The merged histograms of one point of every shard.
Result<std::map<std::string, perf::Histogram>> MergedHistograms(
    const std::vector<const json*>& points, std::size_t point) {
  std::map<std::string, perf::Histogram> merged;
  for (std::size_t k = 0; k < points.size(); ++k) {
    const json& p = *points[k];
    if (!p.contains("histograms") || !p["histograms"].is_object()) {
      return Usage(
          fmt::format("shard {}, rate point {}: no histograms (run with a servebench "
                      "that writes them: perf --shard)",
                      k, point + 1));
    }
    for (const auto& [name, h] : p["histograms"].items()) {
      if (name == "unit") {
        continue;
      }
      auto hist = perf::Histogram::FromJson(h);
      if (!hist) {
        return MakeError(ErrorCode::kSetup, fmt::format("shard {}, rate point {}, {}: {}", k,
                                                        point + 1, name, hist.error().message));
      }
      auto [it, fresh] = merged.try_emplace(name, hist->significant_digits());
      it->second.Merge(hist.value());
    }
  }
  return merged;
}

Result<json> MergePoint(const std::vector<const json*>& points, std::size_t index,
                        const json& rate_options) {
  auto hist = MergedHistograms(points, index);
  if (!hist) {
    return hist.error();
  }
  auto h = [&](const char* name) {
    auto it = hist->find(name);
    return it != hist->end() ? it->second : perf::Histogram();
  };
  const json& first = *points.front();
  json out = json::object();
  out["phase"] = first.value("phase", "sweep");
  // The counts every point has, summed.
  for (const char* key : {"scheduled", "sent", "ok", "failed", "unsent", "late_sends"}) {
    long long sum = 0;
    for (const json* p : points) {
      sum += Int(*p, key);
    }
    out[key] = sum;
  }
  const long long sent = out["sent"].get<long long>(), ok = out["ok"].get<long long>(),
                  unsent = out["unsent"].get<long long>();
  long long good = 0, tokens = 0, queued = 0, threads = 0;
  double rate = 0, window = 0, offered = 0, achieved = 0, cpu_s = 0;
  bool any_offered = false, any_achieved = false, any_window = false, has_goodput = false;
  bool client_bound = false, capped = false;
  json reasons = json::array();
  json requests = json::array();
  for (std::size_t k = 0; k < points.size(); ++k) {
    const json& p = *points[k];
    rate += Num(p, "rate_rps");
    tokens += Int(p, "output_tokens");
    if (p.contains("offered_rate_rps") && p["offered_rate_rps"].is_number()) {
      offered += p["offered_rate_rps"].get<double>();
      any_offered = true;
    }
    if (p.contains("achieved_rate_rps") && p["achieved_rate_rps"].is_number()) {
      achieved += p["achieved_rate_rps"].get<double>();
      any_achieved = true;
    }
    if (p.contains("window_s") && p["window_s"].is_number()) {
      window = std::max(window, p["window_s"].get<double>());
      any_window = true;
    }
    if (p.contains("goodput") && p["goodput"].is_object()) {
      has_goodput = true;
      good += Int(p["goodput"], "good");
    }
    if (p.contains("queued") && p["queued"].is_number()) {
      capped = true;
      queued += p["queued"].get<long long>();
    }
    const json sc = p.value("self_check", json::object());
    client_bound = client_bound || sc.value("client_bound", false);
    threads += Int(sc, "threads");
    cpu_s += Num(sc, "client_cpu_s");
    for (const json& r : sc.value("reasons", json::array())) {
      reasons.push_back(fmt::format("shard {}: {}", k, r.get<std::string>()));
    }
    for (const json& r : p.value("requests", json::array())) {
      json row = r;
      row["shard"] = k;
      requests.push_back(std::move(row));
    }
  }
  out["rate_rps"] = rate;
  out["offered_rate_rps"] = any_offered ? json(offered) : json(nullptr);
  out["achieved_rate_rps"] = any_achieved ? json(achieved) : json(nullptr);
  // The shards start together (--start-at), so the load's window is the longest shard's.
  const bool has_window = any_window && window > 0;
  auto per_s = [&](double count) { return has_window ? json(count / window) : json(nullptr); };
  out["window_s"] = has_window ? json(window) : json(nullptr);
  out["throughput_rps"] = per_s(static_cast<double>(ok));
  out["output_tok_s"] = per_s(static_cast<double>(tokens));
  out["output_tokens"] = tokens;
  out["from_scheduled"] = {{"ttft_ms", perf::PercentilesJson(h("ttft_from_scheduled"), 1e6)},
                           {"e2e_ms", perf::PercentilesJson(h("e2e_from_scheduled"), 1e6)}};
  out["from_send"] = {{"ttft_ms", perf::PercentilesJson(h("ttft_from_send"), 1e6)},
                      {"e2e_ms", perf::PercentilesJson(h("e2e_from_send"), 1e6)}};
  out["itl_ms"] = perf::PercentilesJson(h("itl"), 1e6);
  out["tpot_ms"] = perf::PercentilesJson(h("tpot"), 1e6);
  out["client_queue_ms"] = capped ? perf::PercentilesJson(h("client_queue"), 1e6) : json(nullptr);
  out["queued"] = capped ? json(queued) : json(nullptr);
  json goodput = nullptr;
  if (has_goodput) {
    const double fraction = sent > 0 ? static_cast<double>(good) / static_cast<double>(sent) : 0;
    goodput = {{"good", good},
               {"fraction", sent > 0 ? json(fraction) : json(nullptr)},
               {"goodput_rps", per_s(static_cast<double>(good))},
               {"meets_slo",
                sent > 0 ? json(fraction >= rate_options.value("slo_fraction", 0.99) && unsent == 0)
                         : json(nullptr)}};
  }
  out["goodput"] = goodput;
  out["self_check"] = {{"schedule_lag_us", perf::PercentilesJson(h("schedule_lag"), 1e3)},
                       {"event_delay_us", perf::PercentilesJson(h("event_delay"), 1e3)},
                       {"sample_cost_us", nullptr},
                       {"client_cpu_s", cpu_s},
                       {"client_cpu_pct", nullptr},
                       {"busiest_thread_cpu_pct", nullptr},
                       {"threads", threads},
                       {"client_bound", client_bound},
                       {"reasons", reasons}};
  out["requests"] = std::move(requests);
  // Per class and cache outcome over every shard's requests. A shard's server_metrics window
  // counted the whole server (all shards), so none of them is the merged load's: left out.
  perf::AddRequestClasses(out);
  json merged_hist = {{"unit", "ns"}};
  for (const auto& [name, hh] : *hist) {
    merged_hist[name] = hh.ToJson();
  }
  out["histograms"] = std::move(merged_hist);
  return out;
}

// results.json "shards": who measured, and how far apart their clocks were.
json ShardsJson(const std::vector<const json*>& shards) {
  json list = json::array();
  std::optional<double> lo, hi;
  double worst_uncertainty = 0;
  int unknown = 0;
  for (const json* s : shards) {
    const json& sh = (*s)["shard"];
    const json clock = sh.value("clock", json::object());
    if (clock.contains("offset_s") && clock["offset_s"].is_number()) {
      const double off = clock["offset_s"].get<double>();
      lo = lo ? std::min(*lo, off) : off;
      hi = hi ? std::max(*hi, off) : off;
      worst_uncertainty = std::max(worst_uncertainty, Num(clock, "uncertainty_s"));
    } else {
      ++unknown;
    }
    list.push_back({{"index", sh.value("index", 0)},
                    {"host", sh.value("host", "")},
                    {"source", sh.value("source", "")},
                    {"status", s->value("status", "")},
                    {"started_at", s->value("started_at", json(nullptr))},
                    {"requests", (*s)["summary"].value("requests", 0LL)},
                    {"clock", clock},
                    {"command", s->value("command", "")}});
  }
  const json& first = (*shards.front())["shard"];
  return {{"count", shards.size()},
          {"start_at", first.value("start_at", json(nullptr))},
          {"clock_spread_s", lo ? json(*hi - *lo) : json(nullptr)},
          {"clock_uncertainty_s", lo ? json(worst_uncertainty) : json(nullptr)},
          {"clock_unknown", unknown},
          {"shards", list}};
}

}  // namespace

Result<json> MergeShardResults(const std::vector<json>& inputs, const std::string& command_line) {
  auto ordered = OrderShards(inputs);
  if (!ordered) {
    return ordered.error();
  }
  const std::vector<const json*>& shards = ordered.value();
  const json& first = *shards.front();
  json out = first;
  out.erase("shard");
  out["command"] = command_line;
  std::set<std::string> hosts;
  std::string started = first.value("started_at", ""), finished;
  std::string status = "complete";
  json reasons = json::array();
  for (const json* s : shards) {
    hosts.insert(s->value("host", ""));
    const std::string st = s->value("started_at", "");
    if (!st.empty() && (started.empty() || st < started)) {
      started = st;
    }
    const json fin = s->value("finished_at", json(nullptr));
    if (fin.is_string() && fin.get<std::string>() > finished) {
      finished = fin.get<std::string>();
    }
    const std::string sst = s->value("status", "complete");
    if (sst != "complete") {
      // The worst status wins: failed over interrupted over running.
      if (status == "complete" || sst == "failed" || (status == "running" && sst != "running")) {
        status = sst;
      }
      reasons.push_back(fmt::format(
          "shard {}: {}", (*s)["shard"].value("index", 0),
          s->value("stop_reason", json(sst)).is_string() ? s->value("stop_reason", sst) : sst));
    }
  }
  out["host"] = fmt::format("{}", fmt::join(hosts, ","));
  out["started_at"] = started;
  out["finished_at"] = finished.empty() ? json(nullptr) : json(finished);
  out["status"] = status;
  out["stop_reason"] =
      reasons.empty() ? json(nullptr) : json(fmt::format("{}", fmt::join(reasons, "; ")));

  // Summary: counts add up; the shards ran side by side, so the wall time is the longest.
  long long requests = 0, failed = 0, tokens = 0;
  double wall = 0;
  for (const json* s : shards) {
    const json& sum = (*s)["summary"];
    requests += sum.value("requests", 0LL);
    failed += sum.value("failed_requests", 0LL);
    tokens += sum.value("completion_tokens", 0LL);
    wall = std::max(wall, sum.value("wall_time_s", 0.0));
  }
  out["summary"]["requests"] = requests;
  out["summary"]["failed_requests"] = failed;
  out["summary"]["completion_tokens"] = tokens;
  out["summary"]["wall_time_s"] = wall;
  out["summary"]["avg_tok_s"] = wall > 0 ? json(static_cast<double>(tokens) / wall) : json(nullptr);

  // The rate profile: point by point.
  json& rate = out["perf"]["rate"];
  long long per_point = 0;
  long long max_conc = 0;
  json seeds = json::array();
  for (const json* s : shards) {
    const json& r = (*s)["perf"]["rate"];
    per_point += Int(r, "requests");
    max_conc += Int(r, "max_concurrency");
    seeds.push_back(r.value("seed", json(nullptr)));
  }
  rate["requests"] = rate["requests"].is_null() ? json(nullptr) : json(per_point);
  rate["max_concurrency"] = max_conc > 0 ? json(max_conc) : json(nullptr);
  rate["seed"] = nullptr;
  rate["shard_seeds"] = seeds;
  json points = json::array();
  const std::size_t n = first["perf"]["rate"]["rates"].size();
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<const json*> at;
    for (const json* s : shards) {
      at.push_back(&(*s)["perf"]["rate"]["rates"][i]);
    }
    auto merged = MergePoint(at, i, first["perf"]["rate"]);
    if (!merged) {
      return merged.error();
    }
    points.push_back(std::move(merged.value()));
  }
  rate["rates"] = std::move(points);

  json warnings = json::array();
  std::set<std::string> seen;
  for (const json* s : shards) {
    for (const json& w : s->value("warnings", json::array())) {
      const std::string text =
          fmt::format("shard {}: {}", (*s)["shard"].value("index", 0), w.get<std::string>());
      if (seen.insert(text).second) {
        warnings.push_back(text);
      }
    }
  }
  out["shards"] = ShardsJson(shards);
  const json& sh = out["shards"];
  if (sh["clock_unknown"].get<int>() > 0) {
    warnings.push_back(
        fmt::format("{} shard(s) could not measure their clock offset to the "
                    "server: the shards' clock spread is not known",
                    sh["clock_unknown"].get<int>()));
  }
  out["warnings"] = warnings;
  out["spec_decode"] = nullptr;
  out.erase("resources");  // per machine; each shard's run directory keeps its own
  out.erase("resumed");
  return out;
}

Result<void> MergeRunDirs(const MergeArgs& args, const std::string& command_line) {
  std::vector<json> inputs;
  for (const std::string& dir : args.shard_dirs) {
    auto r = report::LoadResults(dir);
    if (!r) {
      return r.error();
    }
    inputs.push_back(std::move(r.value()));
  }
  auto merged = MergeShardResults(inputs, command_line);
  if (!merged) {
    return merged.error();
  }
  // One writer at a time: a second merge (or a run) into --out is refused.
  auto lock = report::RunDirLock::Acquire(args.out);
  if (!lock) {
    return lock.error();
  }
  if (!args.overwrite &&
      std::filesystem::exists(std::filesystem::path(args.out) / report::kResultsFile)) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("{} already holds a run (results.json); choose another --out, "
                                 "or pass --overwrite to replace it",
                                 args.out));
  }
  auto dir = report::RunDir::Create(
      args.out, args.overwrite ? report::RunDirMode::kOverwrite : report::RunDirMode::kNew);
  if (!dir) {
    return dir.error();
  }
  // Every shard's samples, in shard order, each line marked with its shard.
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const int index = inputs[k]["shard"].value("index", 0);
    const std::filesystem::path p =
        std::filesystem::path(args.shard_dirs[k]) / report::kSamplesFile;
    std::ifstream in(p);
    if (!in) {
      return MakeError(ErrorCode::kSetup, fmt::format("cannot read {}", p.string()));
    }
    std::string line;
    long long number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line.empty()) {
        continue;
      }
      json rec = json::parse(line, nullptr, false);
      if (rec.is_discarded() || !rec.is_object()) {
        return MakeError(ErrorCode::kSetup,
                         fmt::format("{}:{}: not a JSON object", p.string(), number));
      }
      rec["shard"] = index;
      if (auto ok = dir->AppendSample(rec); !ok) {
        return ok.error();
      }
    }
  }
  if (auto ok = dir->WriteResults(merged.value()); !ok) {
    return ok;
  }
  if (auto ok = dir->WriteText(report::kReportFile, report::RenderMarkdown(merged.value())); !ok) {
    return ok;
  }
  if (auto ok = dir->WriteText(report::kHtmlReportFile, report::RenderHtml(merged.value())); !ok) {
    return ok;
  }
  const json& sh = merged.value()["shards"];
  std::printf(
      "merged %zu shards (%lld requests); clock spread %s\nresults: %s/ (report.md, "
      "report.html, results.json, samples.jsonl)\n",
      inputs.size(), merged.value()["summary"].value("requests", 0LL),
      sh["clock_spread_s"].is_number()
          ? fmt::format("{:.1f} ms", sh["clock_spread_s"].get<double>() * 1e3).c_str()
          : "unknown",
      dir->path().c_str());
  return {};
}

}  // namespace sb::scaleout
