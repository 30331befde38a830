#include "report/markdown_dataset.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/format.h"
#include "report/table.h"

namespace sb::report::md {

using nlohmann::json;

void RenderDataset(const json& profile, std::string& out) {
  const json* d = Find(profile, {"dataset"});
  if (d == nullptr || !d->is_object()) {
    return;
  }
  out += fmt::format(
      "Prompts from dataset {} ({}, order {}): {} request{} sent from {} of its {} entries "
      "({} wrap{}); {} bad line{} skipped (--skip-bad-lines), {} entr{} without a reply "
      "skipped.\n\n",
      MarkdownCell(StringAt(*d, {"file"}).value_or("?")),
      MarkdownCell(StringAt(*d, {"format"}).value_or("?")),
      MarkdownCell(StringAt(*d, {"order"}).value_or("?")), FormatCount(NumberAt(*d, {"requests"})),
      NumberAt(*d, {"requests"}).value_or(0) == 1 ? "" : "s",
      FormatCount(NumberAt(*d, {"used_entries"})), FormatCount(NumberAt(*d, {"entries"})),
      FormatCount(NumberAt(*d, {"wrapped"})), NumberAt(*d, {"wrapped"}).value_or(0) == 1 ? "" : "s",
      FormatCount(NumberAt(*d, {"skipped_bad_lines"})),
      NumberAt(*d, {"skipped_bad_lines"}).value_or(0) == 1 ? "" : "s",
      FormatCount(NumberAt(*d, {"skipped_without_reply"})),
      NumberAt(*d, {"skipped_without_reply"}).value_or(0) == 1 ? "y" : "ies");
}

}  // namespace sb::report::md
