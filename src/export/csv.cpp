// CSV export: every numeric figure of the speed tables in long format.
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/profile_table.h"
#include "core/units.h"
#include "export/export.h"

namespace sb::exporter {

namespace {

using nlohmann::json;

// Keys that hold raw records or per-request values (jsonl's), or text.
bool Skipped(std::string_view key) {
  return key == "requests" || key == "runs" || key == "request" || key == "values" ||
         key == "self_check" || key == "weights" || key == "model" || key == "weight_format" ||
         key == "hardware" || key == "per_position" || key == "tokens_per_chunk" || key == "cached";
}

std::string Field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
    return std::string(s);
  }
  std::string out = "\"";
  for (char c : s) {
    out += c;
    if (c == '"') {
      out += '"';
    }
  }
  return out + "\"";
}

std::string Number(double v) {
  if (std::trunc(v) == v && std::fabs(v) < 9e15) {
    return fmt::format("{}", static_cast<long long>(v));
  }
  return fmt::format("{}", v);
}

struct Writer {
  std::string out;
  std::string profile;
  std::string level;
  std::string level_unit;

  void Row(const std::string& metric, const std::string& stat, double value,
           const std::string& unit) {
    out += fmt::format("{},{},{},{},{},{},{}\n", Field(profile), Field(level), Field(level_unit),
                       Field(metric), Field(stat), Number(value), Field(unit));
  }

  // Numbers of `obj` (a row of a table), recursing into objects: a stats or percentile object
  // ({"n", "median"/"p50", ...}) gives one row per statistic under its own key as the metric;
  // another object prefixes its keys ("goodput.fraction").
  void Walk(const json& obj, const std::string& prefix, const std::string& unit_key) {
    bool stats = obj.contains("n") && (obj.contains("median") || obj.contains("p50"));
    for (const auto& [k, v] : obj.items()) {
      if (Skipped(k)) {
        continue;
      }
      std::string unit = UnitOfKey(stats ? unit_key : k);
      if (stats) {
        if (v.is_number()) {
          Row(prefix, k, v.get<double>(), k == "n" ? "count" : unit);
        }
        continue;
      }
      std::string metric = prefix.empty() ? k : prefix + "." + k;
      if (v.is_number()) {
        Row(metric, "value", v.get<double>(), unit);
      } else if (v.is_boolean()) {
        Row(metric, "value", v.get<bool>() ? 1 : 0, "bool");
      } else if (v.is_object()) {
        Walk(v, metric, k);
      }
    }
  }

  void Table(const json& rows, std::string_view level_key, std::string unit) {
    if (!rows.is_array()) {
      return;
    }
    for (const json& row : rows) {
      if (!row.is_object()) {
        continue;
      }
      const json* l = row.contains(level_key) ? &row[std::string(level_key)] : nullptr;
      level = l == nullptr     ? ""
              : l->is_string() ? l->get<std::string>()
              : l->is_number() ? Number(l->get<double>())
                               : l->dump();
      level_unit = unit;
      Walk(row, "", "");
    }
    level.clear();
    level_unit.clear();
  }
};

}  // namespace

std::string ToCsv(const json& results) {
  Writer w;
  w.out = std::string(kCsvHeader) + "\n";
  const json* perf = results.contains("perf") ? &results["perf"] : nullptr;
  for (const ProfileSpec& p : Profiles()) {  // the table's order, its names
    const std::string key(p.key);
    if (perf == nullptr || !perf->is_object() || !perf->contains(key) ||
        !(*perf)[key].is_object()) {
      continue;
    }
    const json& s = (*perf)[key];
    w.profile = std::string(p.name);
    if (p.dim.empty()) {
      w.Walk(s, "", "");
      continue;
    }
    if (p.id == ProfileId::kConcurrency && s.contains("tokens") && s["tokens"].is_number()) {
      w.Row("tokens", "value", s["tokens"].get<double>(), "tokens");
    }
    w.Table(s.value(std::string(p.rows), json()), std::string(p.dim), std::string(p.dim_unit));
    if (s.contains("frontier") && s["frontier"].is_array()) {  // concurrency, rate, sessions
      w.profile = std::string(p.name) + "-frontier";
      if (s.contains("gpus") && s["gpus"].is_number()) {
        w.Row("gpus", "value", s["gpus"].get<double>(), "GPUs");
      }
      // A sessions level is the sessions in flight, not a turn (the profile's own rows).
      w.Table(s["frontier"], "level",
              p.id == ProfileId::kSessions ? "sessions" : std::string(p.dim_unit));
      w.profile = std::string(p.name);
    }
    if (p.id == ProfileId::kRate && s.contains("search") && s["search"].is_object()) {
      w.profile = "rate-search";
      w.Table(s["search"].value("points", json()), std::string(p.dim), std::string(p.dim_unit));
    }
  }
  if (results.contains("spec_decode") && results["spec_decode"].is_object()) {
    w.profile = "spec_decode";
    w.Walk(results["spec_decode"], "", "");
    const json& per = results["spec_decode"].value("per_position", json());
    if (per.is_array()) {
      w.level_unit = "draft position";
      for (std::size_t i = 0; i < per.size(); ++i) {
        if (per[i].is_number()) {
          w.level = std::to_string(i + 1);
          w.Row("acceptance", "value", per[i].get<double>(), "fraction");
        }
      }
      w.level.clear();
      w.level_unit.clear();
    }
  }
  if (results.contains("roofline") && results["roofline"].is_object()) {
    w.profile = "roofline";
    w.Walk(results["roofline"], "", "");
  }
  return w.out;
}

}  // namespace sb::exporter
