#include "export/export.h"

#include <fmt/format.h>

#include "report/html.h"
#include "report/markdown.h"
#include "resources/report.h"
#include "roofline/roofline.h"

namespace sb::exporter {

std::string ReportMarkdown(const nlohmann::json& results) {
  std::string markdown = report::RenderMarkdown(results);
  if (results.contains("roofline")) {
    markdown += "\n" + roofline::RenderRooflineMarkdown(results);
  }
  if (const std::string res = resources::RenderResourcesMarkdown(results); !res.empty()) {
    markdown += "\n" + res;
  }
  return markdown;
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

Result<std::string> ExportRun(const std::filesystem::path& run, OutputFormat format) {
  auto loaded = report::LoadCompareRun(run);
  if (!loaded) {
    return loaded.error();
  }
  switch (format) {
    case OutputFormat::kCsv:
      return ToCsv(loaded->results);
    case OutputFormat::kJunit:
      return ToJunit(loaded->results);
    case OutputFormat::kJsonl:
      return ToJsonl(*loaded);
    case OutputFormat::kMarkdown:
      return ReportMarkdown(loaded->results);
    case OutputFormat::kHtml:
      return report::RenderHtml(loaded->results);
    case OutputFormat::kJson:
      return loaded->results.dump(2) + "\n";
  }
  return MakeError(ErrorCode::kInternal, "unknown export format");
}

}  // namespace sb::exporter
