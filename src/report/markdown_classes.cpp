#include "report/markdown_classes.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/format.h"
#include "report/markdown_tails.h"
#include "report/table.h"

namespace sb::report::md {

using nlohmann::json;

namespace {

bool IsCacheOutcome(std::string_view name) {
  return name.starts_with("cache ");
}

// Whether the rows say more than "every request was of one class and nothing was cached".
bool ClassesWorthShowing(const std::vector<const json*>& rows) {
  for (const json* r : rows) {
    if (BoolAt(*r, {"cache", "reported"}).value_or(false)) {
      return true;
    }
    int classes = 0;
    for (const json* c : ArrayAt(*r, {"classes"})) {
      classes += IsCacheOutcome(StringAt(*c, {"class"}).value_or("")) ? 0 : 1;
    }
    if (classes > 1) {
      return true;
    }
  }
  return false;
}

// Per level (or rate point): each request class and cache outcome, then the cached share.
void RenderRequestClasses(const std::vector<const json*>& rows, std::string_view dim,
                          std::string_view header, bool rate, std::string& out) {
  if (!ClassesWorthShowing(rows)) {
    return;
  }
  out += fmt::format(
      "Requests by class and by cache outcome at each {} (TTFT and E2E from the send; cache "
      "outcomes as the server reports cached prompt tokens):\n\n",
      rate ? "rate" : "level");
  MarkdownTable t({{std::string(header), Align::kRight},
                   {"Class"},
                   {"Requests", Align::kRight},
                   {"Input p50 / p99", Align::kRight},
                   {"Output p50 / p99", Align::kRight},
                   {"TTFT p50 / p90 / p99 (ms)", Align::kRight},
                   {"TPOT p50 / p90 / p99 (ms)", Align::kRight},
                   {"E2E p50 / p90 / p99 (ms)", Align::kRight}});
  MarkdownTable cache({{std::string(header), Align::kRight},
                       {"Cached share", Align::kRight},
                       {"Cached / prompt tokens", Align::kRight},
                       {"TTFT cached p50 / p90 / p99 (ms)", Align::kRight},
                       {"TTFT uncached p50 / p90 / p99 (ms)", Align::kRight}});
  bool any_cache = false;
  for (const json* r : rows) {
    const auto at = NumberAt(*r, {dim});
    const std::string where = rate ? FormatFixed2(at) : FormatCount(at);
    for (const json* c : ArrayAt(*r, {"classes"})) {
      t.AddRow({where, MarkdownCell(StringAt(*c, {"class"}).value_or("?")),
                FormatCount(NumberAt(*c, {"count"})), LengthCell(*c, "input_tokens"),
                LengthCell(*c, "output_tokens"), TailCell(*c, "ttft_ms"), TailCell(*c, "tpot_ms"),
                TailCell(*c, "e2e_ms")});
    }
    const json* c = Find(*r, {"cache"});
    if (c != nullptr && BoolAt(*c, {"reported"}).value_or(false)) {
      any_cache = true;
      cache.AddRow({where, FormatPercent(NumberAt(*c, {"share"})),
                    FormatCount(NumberAt(*c, {"cached_tokens"})) + " / " +
                        FormatCount(NumberAt(*c, {"prompt_tokens"})),
                    TailCell(*c, "ttft_cached_ms"), TailCell(*c, "ttft_uncached_ms")});
    } else {
      cache.AddRow({where, "not reported", "—", "—", "—"});
    }
  }
  out += t.Render() + "\n";
  if (any_cache) {
    out += "Prompt tokens the server says it served from its cache:\n\n" + cache.Render() + "\n";
  } else {
    out +=
        "Prompt tokens served from the server's cache: not reported (the server's answers "
        "carry no cached-token field).\n\n";
  }
}

}  // namespace

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
  if (Find(profile, {"levels"}) != nullptr) {
    RenderRequestClasses(ArrayAt(profile, {"levels"}), "concurrency", "Concurrency", false, out);
  } else if (Find(profile, {"rates"}) != nullptr) {
    RenderRequestClasses(ArrayAt(profile, {"rates"}), "rate_rps", "Rate (req/s)", true, out);
  }
}

}  // namespace sb::report::md
