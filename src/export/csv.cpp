// CSV export: every numeric figure of the speed tables in long format.
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/profile_table.h"
#include "core/result_rows.h"
#include "export/export.h"

namespace sb::exporter {

namespace {

using nlohmann::json;

// Keys that hold raw records or per-request values (jsonl's), or text.
bool Skipped(std::string_view key) {
  return key == "requests" || key == "runs" || key == "request" || key == "values" ||
         key == "self_check" || key == "weights" || key == "model" || key == "weight_format" ||
         key == "hardware" || key == "per_position" || key == "tokens_per_chunk";
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

// Collects the rows, each where `profile`, `level` and `level_unit` say.
struct Writer {
  std::vector<ResultRow> rows;
  std::string profile;
  std::string dim;
  std::string level;
  std::string level_unit;

  void Row(const std::string& metric, double value, const std::string& unit) {
    ResultRow r;
    r.metric = metric;
    r.value = value;
    r.unit = unit;
    Add(std::move(r));
  }

  void Add(ResultRow r) {
    r.profile = profile;
    r.dim = level.empty() ? "" : dim;
    r.point = level;
    r.point_unit = level_unit;
    rows.push_back(std::move(r));
  }

  // The figures of `obj` (a row of a table, or a profile-wide object), every statistic of each;
  // arrays below it are records or the profile's own tables, left out.
  void Walk(const json& obj) {
    WalkFigures(obj, "", FigureWalk{Skipped, nullptr}, [this](ResultRow r) { Add(std::move(r)); });
  }

  // The profile-wide figures of a sweep's section, beside its rows (arrays are left out):
  // replay's achieved rate and send lag, sessions' throughput and totals, the settings it ran
  // with. Not `gpus` (the frontier's row) or rate's `search` (rate-search's).
  void WalkWide(const json& section) {
    const FigureWalk how{
        [](std::string_view k) { return Skipped(k) || k == "gpus" || k == "search"; }, nullptr};
    WalkFigures(section, "", how, [this](ResultRow r) { Add(std::move(r)); });
  }

  void Table(const json& table, std::string_view level_key, std::string unit) {
    if (!table.is_array()) {
      return;
    }
    for (const json& row : table) {
      if (!row.is_object()) {
        continue;
      }
      const json* l = row.contains(level_key) ? &row[std::string(level_key)] : nullptr;
      level = l == nullptr     ? ""
              : l->is_string() ? l->get<std::string>()
              : l->is_number() ? Number(l->get<double>())
                               : l->dump();
      level_unit = unit;
      dim = level_key;
      Walk(row);
    }
    level.clear();
    level_unit.clear();
  }
};

}  // namespace

std::vector<ResultRow> SpeedRows(const json& results) {
  Writer w;
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
      w.Walk(s);
      continue;
    }
    w.WalkWide(s);
    w.Table(s.value(std::string(p.rows), json()), std::string(p.dim), std::string(p.dim_unit));
    if (s.contains("frontier") && s["frontier"].is_array()) {  // concurrency, rate, sessions
      w.profile = std::string(p.name) + "-frontier";
      if (s.contains("gpus") && s["gpus"].is_number()) {
        w.Row("gpus", s["gpus"].get<double>(), "GPUs");
      }
      // A sessions level is the sessions in flight, not a turn (the profile's own rows).
      w.Table(s["frontier"], "level",
              p.id == ProfileId::kSessions ? "sessions" : std::string(p.dim_unit));
      w.profile = std::string(p.name);
    }
    if (p.id == ProfileId::kRate && s.contains("search") && s["search"].is_object()) {
      w.profile = "rate-search";
      w.Walk(s["search"]);  // its outcome: the best rate, the bracket, the probes' count
      w.Table(s["search"].value("points", json()), std::string(p.dim), std::string(p.dim_unit));
    }
  }
  if (results.contains("spec_decode") && results["spec_decode"].is_object()) {
    w.profile = "spec_decode";
    w.Walk(results["spec_decode"]);
    const json& per = results["spec_decode"].value("per_position", json());
    if (per.is_array()) {
      w.dim = "position";
      w.level_unit = "draft position";
      for (std::size_t i = 0; i < per.size(); ++i) {
        if (per[i].is_number()) {
          w.level = std::to_string(i + 1);
          w.Row("acceptance", per[i].get<double>(), "fraction");
        }
      }
      w.level.clear();
      w.level_unit.clear();
    }
  }
  if (results.contains("roofline") && results["roofline"].is_object()) {
    w.profile = "roofline";
    w.Walk(results["roofline"]);
  }
  return std::move(w.rows);
}

std::string ToCsv(const json& results) {
  std::string out = std::string(kCsvHeader) + "\n";
  for (const ResultRow& r : SpeedRows(results)) {
    out +=
        fmt::format("{},{},{},{},{},{},{}\n", Field(r.profile), Field(r.point), Field(r.point_unit),
                    Field(r.metric), Field(r.stat), Number(r.value), Field(r.unit));
  }
  return out;
}

}  // namespace sb::exporter
