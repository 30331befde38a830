#include "report/format.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/number_format.h"
#include "core/printable.h"

namespace sb::report {

using nlohmann::json;

std::vector<const nlohmann::json*> ProfileRows(const nlohmann::json& perf, ProfileId id) {
  const ProfileSpec& spec = Profile(id);
  return ArrayAt(perf, {spec.key, spec.rows});
}

std::optional<double> RowLevel(const nlohmann::json& row, ProfileId id) {
  return NumberAt(row, {Profile(id).dim});
}

std::string Thousands(long long v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    out.push_back(digits[static_cast<std::size_t>(i)]);
    int left = n - 1 - i;
    if (left > 0 && left % 3 == 0) {
      out.push_back(',');
    }
  }
  return v < 0 ? "-" + out : out;
}

std::string FormatCount(std::optional<double> v) {
  if (!v) {
    return std::string(kMissing);
  }
  return Thousands(std::llround(*v));
}

namespace {

// Fixed-point with thousands separators in the integer part ("1,119.8"): the one number format
// of the console and the reports (core/number_format.h).
std::string Fixed(double v, int decimals) {
  return FixedGrouped(v, decimals);
}

}  // namespace

std::string FormatFixed1(std::optional<double> v) {
  return v ? Fixed(*v, 1) : std::string(kMissing);
}

std::string FormatFixed2(std::optional<double> v) {
  return v ? Fixed(*v, 2) : std::string(kMissing);
}

std::string FormatMs(std::optional<double> ms) {
  if (!ms) {
    return std::string(kMissing);
  }
  return MillisecondsText(*ms);
}

std::string FormatSeconds(std::optional<double> s) {
  if (!s) {
    return std::string(kMissing);
  }
  if (std::fabs(*s) >= 0.995) {
    return Fixed(*s, 1);
  }
  std::string out = Fixed(*s, 2);  // "0.82"; "0.70" reads "0.7" as in the seeds
  if (out.back() == '0' && out.compare(out.size() - 3, 3, ".00") != 0) {
    out.pop_back();
  }
  return out;
}

std::string FormatPercent(std::optional<double> fraction) {
  if (!fraction) {
    return std::string(kMissing);
  }
  std::string s = Fixed(*fraction * 100.0, 1);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) {
    s.resize(s.size() - 2);
  }
  return s + "%";
}

std::string FormatRatio(double ratio) {
  std::string s = Fixed(ratio, 1);
  if (s == "1.0") {
    s = Fixed(ratio, 2);
  }
  return s + "×";
}


std::string MarkdownCode(std::string_view text) {
  const std::string cell = MarkdownCell(text, std::string::npos);
  if (cell.find('`') == std::string::npos) {
    return "`" + cell + "`";
  }
  std::size_t longest = 0;
  for (std::size_t i = 0; i < cell.size();) {
    std::size_t run = 0;
    while (i + run < cell.size() && cell[i + run] == '`') {
      ++run;
    }
    longest = std::max(longest, run);
    i += run == 0 ? 1 : run;
  }
  const std::string fence(longest + 1, '`');
  return fence + " " + cell + " " + fence;
}

std::string ServerKindName(std::string_view kind) {
  if (kind == "vllm") {
    return "vLLM";
  }
  if (kind == "sglang") {
    return "SGLang";
  }
  if (kind == "ollama") {
    return "Ollama";
  }
  if (kind == "sim") {
    return "servebench simulator";
  }
  if (kind == "unknown") {
    return "unknown server";
  }
  return std::string(kind);  // llama.cpp and anything newer
}

RunLabels LabelsOf(const json& results) {
  RunLabels out;
  const json* labels = Find(results, {"labels"});
  if (labels == nullptr || !labels->is_object()) {
    return out;
  }
  if (auto label = StringAt(*labels, {"label"}); label && !label->empty()) {
    out.label = *label;
  }
  if (const json* tags = Find(*labels, {"tags"}); tags != nullptr && tags->is_object()) {
    for (const auto& [k, v] : tags->items()) {
      if (v.is_string()) {
        out.tags.push_back(k + "=" + v.get<std::string>());
      }
    }
  }
  return out;
}

std::string DescribeTarget(const json& results) {
  // What the server named (model id, kind, version) as one printable line: no ESC, CR or LF
  // reaches a terminal or a report.
  std::string model =
      PrintableLine(StringAt(results, {"target", "model"}).value_or("unknown model"), 200);
  std::string endpoint =
      PrintableLine(StringAt(results, {"target", "endpoint"}).value_or("unknown endpoint"), 500);
  if (BoolAt(results, {"target", "simulated"}).value_or(false)) {
    return fmt::format(
        "the built-in simulator (no model server) — figures show the harness, not a model "
        "(model \"{}\" at {})",
        model, endpoint);
  }
  std::string server;
  if (auto kind = StringAt(results, {"target", "server", "kind"})) {
    server = PrintableLine(ServerKindName(*kind), 100);
    if (auto version = StringAt(results, {"target", "server", "version"})) {
      server += " " + PrintableLine(*version, 200);
    } else if (*kind != "unknown") {
      server += ", version unknown";
    }
  } else {
    server = "unknown server";
  }
  return fmt::format("{} at {} ({})", model, endpoint, server);
}

std::string CategoryName(std::string_view category) {
  // Names that the generic rule would spell badly.
  static constexpr std::pair<std::string_view, std::string_view> kKnown[] = {
      {"ttft", "TTFT"},
      {"latency_throughput", "Latency & throughput"},
      {"ocr", "OCR"},
  };
  for (const auto& [id, name] : kKnown) {
    if (category == id) {
      return std::string(name);
    }
  }
  std::string out(category);
  for (char& c : out) {
    if (c == '_') {
      c = ' ';
    }
  }
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') {
    out[0] = static_cast<char>(out[0] - 'a' + 'A');
  }
  return out;
}

}  // namespace sb::report
