#include "resources/report.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/profile_table.h"

namespace sb::resources {

using nlohmann::json;

namespace {

constexpr const char* kDash = "—";

const json* Get(const json& j, std::initializer_list<std::string_view> path) {
  const json* cur = &j;
  for (std::string_view k : path) {
    if (!cur->is_object()) {
      return nullptr;
    }
    const auto it = cur->find(k);
    if (it == cur->end() || it->is_null()) {
      return nullptr;
    }
    cur = &*it;
  }
  return cur;
}

std::string Num(const json& fig, std::initializer_list<std::string_view> path, const char* fmt_str,
                double scale = 1) {
  const json* v = Get(fig, path);
  if (v == nullptr || !v->is_number()) {
    return kDash;
  }
  return fmt::format(fmt::runtime(fmt_str), v->get<double>() * scale);
}

std::string Bytes(const json& fig, std::initializer_list<std::string_view> path) {
  const json* v = Get(fig, path);
  return v != nullptr && v->is_number() ? FormatBytes(v->get<double>()) : kDash;
}

// (profile, row label, figures) of every speed row that has a "resources" object.
std::vector<std::tuple<std::string, std::string, const json*>> Rows(const json& results) {
  std::vector<std::tuple<std::string, std::string, const json*>> out;
  const json* perf = Get(results, {"perf"});
  if (perf == nullptr) {
    return out;
  }
  auto add = [&](const std::string& profile, const std::string& label, const json& row) {
    if (const json* r = Get(row, {"resources"}); r != nullptr && r->is_object()) {
      out.emplace_back(profile, label, r);
    }
  };
  auto each = [](const json* arr, auto&& fn) {
    if (arr != nullptr && arr->is_array()) {
      for (const auto& x : *arr) {
        fn(x);
      }
    }
  };
  each(Get(*perf, {"decode", "runs"}),
       [&](const json& r) { add("decode", r.value("label", ""), r); });
  each(Get(*perf, {"concurrency", "levels"}), [&](const json& l) {
    add("concurrency", fmt::format("c{}", l.value("concurrency", 0)), l);
  });
  const ProfileSpec& mt = Profile(ProfileId::kMaxTokens);
  each(Get(*perf, {mt.key, mt.rows}), [&](const json& l) {
    each(Get(l, {"runs"}),
         [&](const json& r) { add(std::string(mt.name), r.value("label", ""), r); });
  });
  each(Get(*perf, {"ttft", "prompts"}), [&](const json& p) {
    each(Get(p, {"runs"}), [&](const json& r) { add("ttft", r.value("label", ""), r); });
  });
  each(Get(*perf, {"context", "rows"}),
       [&](const json& r) { add("context", fmt::format("{} tokens", r.value("size", 0)), r); });
  each(Get(*perf, {"rate", "rates"}),
       [&](const json& p) { add("rate", fmt::format("{} req/s", p.value("rate_rps", 0.0)), p); });
  return out;
}

std::string MemoryCell(const json& fig, const char* which) {
  std::string s = Bytes(fig, {"memory_bytes", which});
  const json* src = Get(fig, {"memory_source"});
  if (s != kDash && src != nullptr && src->is_string() && *src == "server_rss") {
    s += " (RSS)";
  }
  return s;
}

}  // namespace

std::string FormatBytes(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024) {
    return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024));
  }
  return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024));
}

std::string RenderResourcesMarkdown(const json& results) {
  const json* res = Get(results, {"resources"});
  if (res == nullptr || !res->is_object()) {
    return "";
  }
  std::string md = "## Resources\n\n";
  md += fmt::format(
      "Sampled every {} ms beside every measurement window ({} samples; definitions in "
      "docs/metrics.md). The sampler used {} ms of CPU per second.\n\n",
      Num(*res, {"period_ms"}, "{:.0f}"), res->value("samples", 0),
      Num(*res, {"sampler_cost", "cpu_ms_per_s"}, "{:.2f}"));
  md += "| Source | Status | What / why not |\n|---|---|---|\n";
  if (const json* sources = Get(*res, {"sources"}); sources != nullptr && sources->is_array()) {
    for (const auto& s : *sources) {
      const bool ok = s.value("available", false);
      std::string what = ok ? s.value("detail", "") : s.value("reason", "");
      if (ok && s.value("failed_reads", 0) > 0) {
        what += fmt::format(" ({} of {} reads failed; last: {})", s.value("failed_reads", 0),
                            s.value("reads", 0),
                            s.contains("last_error") && s["last_error"].is_string()
                                ? s["last_error"].get<std::string>()
                                : "");
      }
      md += fmt::format("| {} | {} | {} |\n", s.value("name", "?"),
                        ok ? "available" : "not available", what);
    }
  }
  md += "\n";

  // Only the figures some source measured: a column (or a whole-run figure) that is "—"
  // everywhere says nothing the sources table has not said.
  struct Column {
    const char* header;
    std::function<std::string(const json&)> cell;
  };

  const std::vector<Column> columns = {
      {"Peak memory", [](const json& f) { return MemoryCell(f, "peak"); }},
      {"Mean memory", [](const json& f) { return MemoryCell(f, "mean"); }},
      {"Mean power",
       [](const json& f) {
         return Num(f, {"power_w", "mean"}, "{:.1f} W");
       }},
      {"Energy", [](const json& f) { return Num(f, {"energy_j"}, "{:.1f} J"); }},
      {"J/token", [](const json& f) { return Num(f, {"j_per_token"}, "{:.3f}"); }},
      {"tokens/J", [](const json& f) { return Num(f, {"tokens_per_j"}, "{:.2f}"); }},
      {"Peak KV",
       [](const json& f) {
         return Num(f, {"kv_cache_usage", "peak"}, "{:.1f}%", 100);
       }},
      {"Peak server RSS",
       [](const json& f) {
         return Bytes(f, {"server_rss_bytes", "peak"});
       }},
      {"Mean server CPU",
       [](const json& f) {
         return Num(f, {"server_cpu_pct", "mean"}, "{:.1f}%");
       }},
  };
  if (const json* run = Get(*res, {"run"}); run != nullptr && run->is_object()) {
    std::vector<std::string> parts;
    for (const Column& c : columns) {
      if (std::string v = c.cell(*run); v != kDash) {
        parts.push_back(fmt::format("{} {}", c.header, v));
      }
    }
    md += parts.empty() ? "Whole run: no figure; no available source measured memory, power, "
                          "KV-cache usage or a server process.\n\n"
                        : fmt::format("Whole run (every sample, idle gaps included): {}.\n\n",
                                      fmt::join(parts, ", "));
  }
  const auto rows = Rows(results);
  std::vector<const Column*> shown;
  for (const Column& c : columns) {
    for (const auto& row : rows) {
      if (c.cell(*std::get<2>(row)) != kDash) {
        shown.push_back(&c);
        break;
      }
    }
  }
  if (!rows.empty() && shown.empty()) {
    md += fmt::format("None of the {} speed rows has a resource figure (sources above).\n\n",
                      rows.size());
  } else if (!rows.empty()) {
    md += "| Profile | Row |";
    std::string rule = "|---|---|";
    for (const Column* c : shown) {
      md += fmt::format(" {} |", c->header);
      rule += "---:|";
    }
    md += "\n" + rule + "\n";
    for (const auto& [profile, label, fig] : rows) {
      md += fmt::format("| {} | {} |", profile, label);
      for (const Column* c : shown) {
        md += fmt::format(" {} |", c->cell(*fig));
      }
      md += "\n";
    }
    md += "\nColumns with no figure in any row are left out; — marks a figure a row lacks.\n\n";
  }
  return md;
}

std::string RenderResourcesConsole(const json& results) {
  const json* res = Get(results, {"resources"});
  if (res == nullptr || !res->is_object()) {
    return "";
  }
  std::vector<std::string> parts;
  if (const json* run = Get(*res, {"run"}); run != nullptr) {
    if (Get(*run, {"memory_bytes", "peak"}) != nullptr) {
      parts.push_back(fmt::format("peak memory {}", MemoryCell(*run, "peak")));
    }
    if (Get(*run, {"server_rss_bytes", "peak"}) != nullptr) {
      parts.push_back(fmt::format("server peak RSS {}, mean CPU {}",
                                  Bytes(*run, {"server_rss_bytes", "peak"}),
                                  Num(*run, {"server_cpu_pct", "mean"}, "{:.1f}%")));
    }
    if (Get(*run, {"power_w", "mean"}) != nullptr) {
      parts.push_back(fmt::format("mean power {}", Num(*run, {"power_w", "mean"}, "{:.1f} W")));
    }
    if (Get(*run, {"kv_cache_usage", "peak"}) != nullptr) {
      parts.push_back(
          fmt::format("peak KV {}", Num(*run, {"kv_cache_usage", "peak"}, "{:.1f}%", 100)));
    }
  }
  std::vector<std::string> missing;
  if (const json* sources = Get(*res, {"sources"}); sources != nullptr && sources->is_array()) {
    for (const auto& s : *sources) {
      if (!s.value("available", false)) {
        missing.push_back(s.value("name", "?"));
      }
    }
  }
  std::string line = "resources: ";
  line += parts.empty() ? "nothing measured" : fmt::format("{}", fmt::join(parts, "; "));
  if (!missing.empty()) {
    line += fmt::format(" (not available: {}; see report.md)", fmt::join(missing, ", "));
  }
  return line + "\n";
}

}  // namespace sb::resources
