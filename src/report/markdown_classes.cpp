#include "report/markdown_classes.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/format.h"
#include "report/table.h"

namespace sb::report::md {

using nlohmann::json;

void RenderWorkload(const json& profile, std::string& out) {
  if (const json* d = Find(profile, {"dataset"}); d != nullptr && d->is_object()) {
    const double max_requests = NumberAt(*d, {"max_requests"}).value_or(0);
    out += fmt::format(
        "Dataset `{}` ({}, {} order): {} requests from {} of {} entries (wrapped {} times){}; "
        "{} bad lines skipped, {} entries without a reply skipped.\n\n",
        MarkdownCell(StringAt(*d, {"file"}).value_or("?")),
        MarkdownCell(StringAt(*d, {"format"}).value_or("?")),
        MarkdownCell(StringAt(*d, {"order"}).value_or("?")),
        FormatCount(NumberAt(*d, {"requests"})), FormatCount(NumberAt(*d, {"used_entries"})),
        FormatCount(NumberAt(*d, {"entries"})), FormatCount(NumberAt(*d, {"wrapped"})),
        max_requests > 0 ? fmt::format(", --max-requests {}", FormatCount(max_requests)) : "",
        FormatCount(NumberAt(*d, {"skipped_bad_lines"})),
        FormatCount(NumberAt(*d, {"skipped_without_reply"})));
  }
  if (const json* sp = Find(profile, {"shared_prefix"}); sp != nullptr && sp->is_object()) {
    out += fmt::format(
        "Shared prefixes: {} groups of {} tokens (--shared-prefix), {} requests in turn; each "
        "prompt's unique part follows its group's prefix.\n\n",
        FormatCount(NumberAt(*sp, {"groups"})), FormatCount(NumberAt(*sp, {"tokens"})),
        FormatCount(NumberAt(*sp, {"requests"})));
  }
}

}  // namespace sb::report::md
