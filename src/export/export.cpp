#include "export/export.h"

#include <fmt/format.h>

namespace sb::exporter {

Result<ExportFormat> ParseExportFormat(std::string_view name) {
  if (name == "csv") {
    return ExportFormat::kCsv;
  }
  if (name == "junit") {
    return ExportFormat::kJunit;
  }
  if (name == "jsonl") {
    return ExportFormat::kJsonl;
  }
  return MakeError(
      ErrorCode::kUsage,
      fmt::format("unknown export format \"{}\" (expected csv, junit or jsonl)", name));
}

std::string ToJsonl(const report::CompareRun& run) {
  std::string out;
  auto line = [&](const nlohmann::json& rec, const char* kind) {
    // "record" first, then the record's own keys.
    nlohmann::ordered_json ordered = {{"record", kind}};
    for (const auto& [k, v] : rec.items()) {
      if (k != "record") {
        ordered[k] = v;
      }
    }
    out += ordered.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  };
  for (const nlohmann::json& s : run.samples) {
    line(s, "sample");
  }
  if (run.results.contains("tests") && run.results["tests"].is_array()) {
    for (const nlohmann::json& t : run.results["tests"]) {
      line(t, "test");
    }
  }
  return out;
}

Result<std::string> ExportRun(const std::filesystem::path& run, ExportFormat format) {
  auto loaded = report::LoadCompareRun(run);
  if (!loaded) {
    return loaded.error();
  }
  switch (format) {
    case ExportFormat::kCsv:
      return ToCsv(loaded->results);
    case ExportFormat::kJunit:
      return ToJunit(loaded->results);
    case ExportFormat::kJsonl:
      return ToJsonl(*loaded);
  }
  return MakeError(ErrorCode::kInternal, "unknown export format");
}

}  // namespace sb::exporter
