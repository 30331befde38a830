// The one list of output formats every command writes (report, compare, export, store history
// and leaderboard), each spelled once. A command accepts a subset of them.
#pragma once

#include <initializer_list>
#include <string_view>

#include "core/result.h"

namespace sb {

enum class OutputFormat { kMarkdown, kHtml, kCsv, kJson, kJsonl, kJunit };

// "md", "html", "csv", "json", "jsonl", "junit".
std::string_view OutputFormatName(OutputFormat format);

// `name` as one of `allowed` ("markdown" is read as "md"); otherwise a kUsage error naming what
// the command accepts: `--format xml: expected md, html or json`.
Result<OutputFormat> ParseOutputFormat(std::string_view name,
                                       std::initializer_list<OutputFormat> allowed);

}  // namespace sb
