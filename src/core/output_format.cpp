#include "core/output_format.h"

#include <string>

namespace sb {

std::string_view OutputFormatName(OutputFormat format) {
  switch (format) {
    case OutputFormat::kMarkdown:
      return "md";
    case OutputFormat::kHtml:
      return "html";
    case OutputFormat::kCsv:
      return "csv";
    case OutputFormat::kJson:
      return "json";
    case OutputFormat::kJsonl:
      return "jsonl";
    case OutputFormat::kJunit:
      return "junit";
  }
  return "?";
}

Result<OutputFormat> ParseOutputFormat(std::string_view name,
                                       std::initializer_list<OutputFormat> allowed) {
  const std::string_view wanted = name == "markdown" ? "md" : name;
  for (OutputFormat f : allowed) {
    if (OutputFormatName(f) == wanted) {
      return f;
    }
  }
  std::string expected;
  std::size_t i = 0;
  for (OutputFormat f : allowed) {
    if (i > 0) {
      expected += i + 1 == allowed.size() ? " or " : ", ";
    }
    expected += OutputFormatName(f);
    ++i;
  }
  return MakeError(ErrorCode::kUsage, "--format " + std::string(name) + ": expected " + expected);
}

}  // namespace sb
