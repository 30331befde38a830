// `servebench report RUN`: report.html again for a saved run (docs/reports.md).
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/output_file.h"
#include "report/html.h"
#include "report/run_dir.h"

namespace sb::report {

Result<HtmlWrite> WriteHtmlReport(const std::filesystem::path& run,
                                  const std::filesystem::path& out) {
  auto results = LoadResults(run);
  if (!results) {
    return results.error();
  }
  HtmlWrite w;
  w.html = RenderHtml(results.value());
  if (out == "-") {
    return w;
  }
  std::filesystem::path target = out;
  if (target.empty()) {
    std::error_code ec;
    const std::filesystem::path dir =
        std::filesystem::is_directory(run, ec) ? run : run.parent_path();
    target = (dir.empty() ? std::filesystem::path(".") : dir) / std::string(kHtmlReportFile);
  }
  // A device (/dev/null) is written in place, a file replaced atomically (core/output_file.h).
  if (auto ok = WriteOutputFile(target, w.html); !ok) {
    return ok.error();
  }
  w.path = target;
  return w;
}

}  // namespace sb::report
