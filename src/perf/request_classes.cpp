#include "perf/request_classes.h"

#include <map>

#include <nlohmann/json.hpp>

#include "perf/profiles.h"

namespace sb::perf {

using nlohmann::json;

namespace {

json ClassJson(const std::string& name, const std::vector<const RequestFact*>& facts) {
  std::vector<double> in, out, ttft, itl, e2e, tpot;
  for (const RequestFact* f : facts) {
    if (f->input_tokens >= 0) {
      in.push_back(f->input_tokens);
    }
    if (f->output_tokens >= 0) {
      out.push_back(f->output_tokens);
    }
    if (f->ttft_ms) {
      ttft.push_back(*f->ttft_ms);
    }
    if (f->e2e_ms) {
      e2e.push_back(*f->e2e_ms);
    }
    if (f->tpot_ms) {
      tpot.push_back(*f->tpot_ms);
    }
    itl.insert(itl.end(), f->itl_ms.begin(), f->itl_ms.end());
  }
  json row = {{"class", name},
              {"count", facts.size()},
              {"input_tokens", SummaryStatsJson(in)},
              {"output_tokens", SummaryStatsJson(out)},
              {"ttft_ms", SummaryStatsJson(ttft)},
              {"itl_ms", SummaryStatsJson(itl)},
              {"e2e_ms", SummaryStatsJson(e2e)}};
  if (!tpot.empty()) {
    row["tpot_ms"] = SummaryStatsJson(tpot);
  }
  return row;
}

}  // namespace

json ClassesJson(const std::vector<RequestFact>& facts) {
  std::map<std::string, std::vector<const RequestFact*>> by;
  for (const RequestFact& f : facts) {
    by[f.cls].push_back(&f);
    const char* cache = f.cached_tokens < 0   ? "cache not reported"
                        : f.cached_tokens > 0 ? "cache hit"
                                              : "cache miss";
    by[cache].push_back(&f);
  }
  json out = json::array();
  for (const auto& [name, list] : by) {
    out.push_back(ClassJson(name, list));
  }
  return out;
}

json CacheJson(const std::vector<RequestFact>& facts) {
  long long cached = 0, prompt = 0, reported = 0;
  std::vector<double> ttft_cached, ttft_uncached;
  for (const RequestFact& f : facts) {
    if (f.cached_tokens < 0 || f.input_tokens <= 0) {
      continue;
    }
    ++reported;
    cached += f.cached_tokens;
    prompt += f.input_tokens;
    if (f.ttft_ms) {
      (f.cached_tokens > 0 ? ttft_cached : ttft_uncached).push_back(*f.ttft_ms);
    }
  }
  if (reported == 0) {
    return {{"reported", false}, {"share", "not reported"}};
  }
  return {{"reported", true},
          {"requests", reported},
          {"cached_tokens", cached},
          {"prompt_tokens", prompt},
          {"share", static_cast<double>(cached) / static_cast<double>(prompt)},
          {"ttft_cached_ms", SummaryStatsJson(ttft_cached)},
          {"ttft_uncached_ms", SummaryStatsJson(ttft_uncached)}};
}

RequestFact FactOfRecord(const json& rec) {
  RequestFact f;
  auto num = [&](const char* key) -> std::optional<double> {
    const auto it = rec.find(key);
    return it != rec.end() && it->is_number() ? std::optional(it->get<double>()) : std::nullopt;
  };
  auto count = [&](const char* key) {  // a count out of int's range is no count
    const auto v = num(key);
    return v && *v >= 0 && *v <= 2e9 ? static_cast<int>(*v) : -1;
  };
  const auto cls = rec.find("class");
  f.cls = cls != rec.end() && cls->is_string() ? cls->get<std::string>() : "?";
  const auto status = rec.find("status");
  f.ok = status != rec.end() && status->is_string() && *status == "ok";
  if (f.ok) {
    f.ttft_ms = num("ttft_ms");
    f.e2e_ms = num("e2e_ms");
    f.tpot_ms = num("tpot_ms");
  }
  f.input_tokens = count("input_tokens");
  f.output_tokens = count("output_tokens");
  f.cached_tokens = count("cached_tokens");
  return f;
}

void AddRequestClasses(json& row) {
  const auto requests = row.find("requests");
  if (requests == row.end() || !requests->is_array()) {
    return;
  }
  std::vector<RequestFact> facts;
  for (const json& rec : *requests) {
    if (rec.is_object()) {
      facts.push_back(FactOfRecord(rec));
    }
  }
  AddClassRows(row, facts);
}

void AddClassRows(json& row, const std::vector<RequestFact>& facts) {
  row["classes"] = ClassesJson(facts);
  row["cache"] = CacheJson(facts);
}

}  // namespace sb::perf
