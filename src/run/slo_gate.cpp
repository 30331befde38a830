#include "run/slo_gate.h"

#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace sb::run {

namespace {

using nlohmann::json;

// One objective: its --slo key, its limit, and the request field it reads in each profile
// (rate latencies count from the scheduled send, as the rate profile's own verdict does).
struct Objective {
  const char* key;
  std::optional<double> limit;
  const char* concurrency_field;
  const char* rate_field;
  bool missing_is_met;  // TPOT of a one-token answer does not exist: nothing to miss
};

std::array<Objective, 3> Objectives(const perf::Slo& slo) {
  return {{{"ttft_ms", slo.ttft_ms, "ttft_ms", "ttft_from_scheduled_ms", false},
           {"tpot_ms", slo.tpot_ms, "tpot_ms", "tpot_ms", true},
           {"e2e_ms", slo.e2e_ms, "e2e_ms", "e2e_from_scheduled_ms", false}}};
}

bool MeetsObjective(const json& request, const Objective& o, bool rate) {
  const json* v = nullptr;
  if (auto it = request.find(rate ? o.rate_field : o.concurrency_field); it != request.end()) {
    v = &*it;
  }
  if (v == nullptr || !v->is_number()) {
    return o.missing_is_met;
  }
  return v->get<double>() <= *o.limit;
}

bool IsOk(const json& request) {
  auto it = request.find("status");
  return it != request.end() && it->is_string() && it->get<std::string>() == "ok";
}

// Judges the requests of one level or point: sent, good, and the objectives whose own share of
// good requests is below the fraction (the ones that failed it).
json Judge(const json& requests, const perf::Slo& slo, double fraction, bool rate) {
  long long sent = 0;
  long long good = 0;
  const auto objectives = Objectives(slo);
  std::array<long long, 3> met_each{};
  if (requests.is_array()) {
    for (const json& r : requests) {
      ++sent;
      const bool ok = IsOk(r);
      bool all = ok;
      for (std::size_t i = 0; i < objectives.size(); ++i) {
        if (!objectives[i].limit) {
          continue;
        }
        const bool m = ok && MeetsObjective(r, objectives[i], rate);
        met_each[i] += m ? 1 : 0;
        all = all && m;
      }
      good += all ? 1 : 0;
    }
  }
  json failed = json::array();
  for (std::size_t i = 0; i < objectives.size(); ++i) {
    if (objectives[i].limit &&
        (sent == 0 || static_cast<double>(met_each[i]) / static_cast<double>(sent) < fraction)) {
      failed.push_back(fmt::format("{}={:g} ({}/{} within)", objectives[i].key,
                                   *objectives[i].limit, met_each[i], sent));
    }
  }
  const double share = sent > 0 ? static_cast<double>(good) / static_cast<double>(sent) : 0.0;
  return json{{"sent", sent},
              {"good", good},
              {"fraction", sent > 0 ? json(share) : json(nullptr)},
              {"met", sent > 0 && share >= fraction},
              {"failed", failed}};
}

bool SameValue(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b));
}

bool Wanted(const std::optional<SloAt>& at, SloAt::Kind kind, double value) {
  return !at || (at->kind == kind && SameValue(at->value, value));
}

void CheckConcurrency(const json& results, const perf::Slo& slo, double fraction,
                      const std::optional<SloAt>& at, json& checks) {
  const json levels = results.value("/perf/concurrency/levels"_json_pointer, json::array());
  for (const json& level : levels) {
    if (!level.contains("concurrency") || !level["concurrency"].is_number()) {
      continue;
    }
    const double n = level["concurrency"].get<double>();
    if (!Wanted(at, SloAt::Kind::kConcurrency, n)) {
      continue;
    }
    json c = Judge(level.value("requests", json::array()), slo, fraction, false);
    c["where"] = fmt::format("concurrency {:g}", n);
    c["profile"] = "concurrency";
    c["level"] = n;
    checks.push_back(std::move(c));
  }
}

void CheckRatePoints(const json& points, const perf::Slo& slo, double fraction,
                     const std::optional<SloAt>& at, json& checks) {
  if (!points.is_array()) {
    return;
  }
  for (const json& p : points) {
    if (!p.contains("rate_rps") || !p["rate_rps"].is_number()) {
      continue;
    }
    const double r = p["rate_rps"].get<double>();
    if (!Wanted(at, SloAt::Kind::kRate, r)) {
      continue;
    }
    json c = Judge(p.value("requests", json::array()), slo, fraction, true);
    // The rate profile's own verdict (it also counts requests never sent) decides a point.
    const json verdict = p.value("/goodput/meets_slo"_json_pointer, json(nullptr));
    if (verdict.is_boolean()) {
      c["met"] = verdict.get<bool>();
    }
    c["where"] = fmt::format("rate {:g} req/s", r);
    c["profile"] = "rate";
    c["level"] = r;
    checks.push_back(std::move(c));
  }
}

json SloJsonOf(const perf::Slo& slo) {
  json j = json::object();
  for (const Objective& o : Objectives(slo)) {
    if (o.limit) {
      j[o.key] = *o.limit;
    }
  }
  return j;
}

std::string AtText(const std::optional<SloAt>& at) {
  if (!at) {
    return "";
  }
  return fmt::format("{}={:g}", at->kind == SloAt::Kind::kRate ? "rate" : "concurrency", at->value);
}

}  // namespace

Result<SloAt> ParseSloAt(std::string_view text) {
  auto bad = [&] {
    return MakeError(ErrorCode::kUsage,
                     fmt::format("--slo-at '{}': expected concurrency=N or rate=R (req/s)", text));
  };
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) {
    return bad();
  }
  const std::string_view key = text.substr(0, eq);
  const std::string value(text.substr(eq + 1));
  SloAt at;
  if (key == "concurrency") {
    at.kind = SloAt::Kind::kConcurrency;
  } else if (key == "rate") {
    at.kind = SloAt::Kind::kRate;
  } else {
    return bad();
  }
  double v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() ||
      !std::isfinite(v) || v <= 0) {
    return bad();
  }
  if (at.kind == SloAt::Kind::kConcurrency && v != std::floor(v)) {
    return bad();
  }
  at.value = v;
  return at;
}

Result<void> CheckSloGateArgs(const SloGateArgs& args, const perf::Slo& slo) {
  if (args.fail_on_slo && slo.empty()) {
    return MakeError(ErrorCode::kUsage,
                     "--fail-on-slo needs --slo (the objectives, e.g. --slo ttft_ms=500)");
  }
  if (args.at && !args.fail_on_slo) {
    return MakeError(ErrorCode::kUsage, "--slo-at has no effect without --fail-on-slo");
  }
  return {};
}

json EvaluateSloGate(const json& results, const perf::Slo& slo, double slo_fraction,
                     const std::optional<SloAt>& at) {
  json checks = json::array();
  CheckConcurrency(results, slo, slo_fraction, at, checks);
  CheckRatePoints(results.value("/perf/rate/rates"_json_pointer, json::array()), slo, slo_fraction,
                  at, checks);
  CheckRatePoints(results.value("/perf/rate/search/points"_json_pointer, json::array()), slo,
                  slo_fraction, at, checks);
  bool met = !checks.empty();
  for (const json& c : checks) {
    met = met && c["met"].get<bool>();
  }
  json reason = nullptr;
  if (checks.empty()) {
    reason = at ? fmt::format("--slo-at {}: no such level or rate was measured", AtText(at))
                : std::string("no concurrency level or rate point was measured to check it on");
  }
  return json{{"slo", SloJsonOf(slo)},
              {"slo_fraction", slo_fraction},
              {"at", at ? json(AtText(at)) : json(nullptr)},
              {"met", met},
              {"checks", checks},
              {"reason", reason}};
}

std::string SloGateConsole(const json& verdict) {
  if (verdict.value("met", false)) {
    return "";
  }
  std::string slo;
  const json objectives = verdict.value("slo", json::object());
  for (const auto& [k, v] : objectives.items()) {
    slo += fmt::format("{}{}={:g}", slo.empty() ? "" : ",", k, v.get<double>());
  }
  std::string out;
  if (verdict.contains("reason") && verdict["reason"].is_string()) {
    out += fmt::format("servebench: gate failed: --slo {} not checked: {}\n", slo,
                       verdict["reason"].get<std::string>());
  }
  const json checks = verdict.value("checks", json::array());
  for (const json& c : checks) {
    if (c.value("met", false)) {
      continue;
    }
    std::vector<std::string> failed = c.value("failed", std::vector<std::string>{});
    out += fmt::format(
        "servebench: gate failed: --slo {} not met at {}: {}/{} requests good, needs {:g}%{}\n",
        slo, c.value("where", std::string()), c.value("good", 0LL), c.value("sent", 0LL),
        100 * verdict.value("slo_fraction", 0.99),
        failed.empty() ? std::string() : fmt::format(" (missed: {})", fmt::join(failed, ", ")));
  }
  return out;
}

}  // namespace sb::run
