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
    if (BoolAt(*r, {"cache", "reported"}).value_or(false) ||
        Find(*r, {"cache", "server_metrics"}) != nullptr) {
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
  bool server_metrics = false;  // a column of the server's own /metrics count, when any
  for (const json* r : rows) {
    server_metrics = server_metrics || Find(*r, {"cache", "server_metrics"}) != nullptr;
  }
  std::vector<Column> cache_columns = {{std::string(header), Align::kRight},
                                       {"Cached share", Align::kRight},
                                       {"Cached / prompt tokens", Align::kRight},
                                       {"TTFT cached p50 / p90 / p99 (ms)", Align::kRight},
                                       {"TTFT uncached p50 / p90 / p99 (ms)", Align::kRight}};
  if (server_metrics) {
    cache_columns.push_back({"Server /metrics: cached share (cached / prompt)", Align::kRight});
  }
  MarkdownTable cache(cache_columns);
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
    std::vector<std::string> cells;
    if (c != nullptr && BoolAt(*c, {"reported"}).value_or(false)) {
      any_cache = true;
      cells = {where, FormatPercent(NumberAt(*c, {"share"})),
               FormatCount(NumberAt(*c, {"cached_tokens"})) + " / " +
                   FormatCount(NumberAt(*c, {"prompt_tokens"})),
               TailCell(*c, "ttft_cached_ms"), TailCell(*c, "ttft_uncached_ms")};
    } else {
      cells = {where, "not reported", "—", "—", "—"};
    }
    if (server_metrics) {
      const std::string m = c != nullptr ? ServerCacheCell(*c) : "—";
      any_cache = any_cache || m != "—";
      cells.push_back(m);
    }
    cache.AddRow(cells);
  }
  out += t.Render() + "\n";
  if (any_cache) {
    out += "Prompt tokens the server says it served from its cache:\n\n" + cache.Render() + "\n";
    if (server_metrics) {
      out +=
          "The /metrics column is the server's own count over each window (vLLM's "
          "vllm:prefix_cache_hits / prefix_cache_queries; SGLang's cache_hit_rate gauge): every "
          "request it served in that time, ours or not.\n\n";
    }
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

std::string ServerCacheCell(const json& cache) {
  const json* m = Find(cache, {"server_metrics"});
  if (m == nullptr || !m->is_object()) {
    return "—";
  }
  if (const auto g = NumberAt(*m, {"hit_rate_gauge"})) {
    return fmt::format("gauge {}", FormatFixed2(g));
  }
  return fmt::format("{} ({} / {})", FormatPercent(NumberAt(*m, {"share"})),
                     FormatCount(NumberAt(*m, {"cached_tokens"})),
                     FormatCount(NumberAt(*m, {"prompt_tokens"})));
}

std::string ServerCacheSentence(const json& cache, bool markdown) {
  const json* m = Find(cache, {"server_metrics"});
  if (m == nullptr || !m->is_object()) {
    return "";
  }
  const std::string raw = StringAt(*m, {"source"}).value_or("?");
  const std::string source = markdown ? MarkdownCell(raw) : raw;
  const char* strong = markdown ? "**" : "";
  const char* end = markdown ? "\n\n" : "";
  if (const auto g = NumberAt(*m, {"hit_rate_gauge"})) {
    return fmt::format(
        "The server's own prefix-cache gauge ({}, cache_hit_rate, a recent average) read {} "
        "after the run.{}",
        source, FormatFixed2(g), end);
  }
  return fmt::format(
      "The server's own /metrics ({} prefix-cache counters) counted {}{}{} of the prompt tokens "
      "it looked up during the run as served from its cache ({} of {}; every request it served "
      "in that time, ours or not).{}",
      source, strong, FormatPercent(NumberAt(*m, {"share"})), strong,
      FormatCount(NumberAt(*m, {"cached_tokens"})), FormatCount(NumberAt(*m, {"prompt_tokens"})),
      end);
}

}  // namespace sb::report::md
