#include "perf/prometheus.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sb::perf {

namespace {

bool IsNameChar(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

Error LineError(std::string_view line, const char* what) {
  std::string shown(line.substr(0, 120));
  return MakeError(ErrorCode::kProtocol, fmt::format("bad /metrics line ({}): {}", what, shown));
}

Result<double> ParseValue(std::string_view v) {
  if (v == "NaN") {
    return std::nan("");
  }
  if (v == "+Inf" || v == "Inf") {
    return HUGE_VAL;
  }
  if (v == "-Inf") {
    return -HUGE_VAL;
  }
  std::string s(v);
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') {
    return MakeError(ErrorCode::kProtocol, "value");
  }
  return d;
}

Result<PromSample> ParseLine(std::string_view line) {
  PromSample s;
  std::size_t i = 0;
  while (i < line.size() && IsNameChar(line[i], i == 0)) {
    ++i;
  }
  if (i == 0) {
    return LineError(line, "no metric name");
  }
  s.name = std::string(line.substr(0, i));
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (true) {
      while (i < line.size() && (line[i] == ' ' || line[i] == ',')) {
        ++i;
      }
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      std::size_t k = i;
      while (i < line.size() && IsNameChar(line[i], i == k)) {
        ++i;
      }
      if (i == k || i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') {
        return LineError(line, "bad label");
      }
      std::string key(line.substr(k, i - k));
      i += 2;
      std::string val;
      while (i < line.size() && line[i] != '"') {
        if (line[i] == '\\' && i + 1 < line.size()) {
          char e = line[i + 1];
          val.push_back(e == 'n' ? '\n' : e);
          i += 2;
        } else {
          val.push_back(line[i++]);
        }
      }
      if (i >= line.size()) {
        return LineError(line, "unterminated label value");
      }
      ++i;  // closing quote
      s.labels[key] = std::move(val);
    }
  }
  while (i < line.size() && line[i] == ' ') {
    ++i;
  }
  std::size_t end = line.find(' ', i);
  auto v = ParseValue(line.substr(i, end == std::string_view::npos ? line.npos : end - i));
  if (!v) {
    return LineError(line, "bad value");
  }
  s.value = v.value();
  return s;
}

std::vector<double> PerPosition(const std::vector<PromSample>& samples, std::string_view name) {
  std::vector<double> out;
  for (const auto& s : samples) {
    if (s.name != name) {
      continue;
    }
    auto it = s.labels.find("position");
    if (it == s.labels.end()) {
      continue;
    }
    int pos = std::atoi(it->second.c_str());
    if (pos < 0 || pos > 64) {
      continue;
    }
    if (out.size() <= static_cast<std::size_t>(pos)) {
      out.resize(static_cast<std::size_t>(pos) + 1, 0.0);
    }
    out[static_cast<std::size_t>(pos)] += s.value;
  }
  return out;
}

}  // namespace

Result<std::vector<PromSample>> ParsePrometheus(std::string_view text) {
  std::vector<PromSample> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == text.npos ? text.npos : nl - pos);
    pos = nl == text.npos ? text.size() : nl + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
      line.remove_suffix(1);
    }
    while (!line.empty() && line.front() == ' ') {
      line.remove_prefix(1);
    }
    if (line.empty() || line.front() == '#') {
      continue;
    }
    auto s = ParseLine(line);
    if (!s) {
      return s.error();
    }
    out.push_back(std::move(s.value()));
  }
  return out;
}

std::optional<double> SumOf(const std::vector<PromSample>& samples, std::string_view name,
                            const std::map<std::string, std::string>& match) {
  std::optional<double> sum;
  for (const auto& s : samples) {
    if (s.name != name) {
      continue;
    }
    bool ok = true;
    for (const auto& [k, v] : match) {
      auto it = s.labels.find(k);
      ok = ok && it != s.labels.end() && it->second == v;
    }
    if (ok) {
      sum = sum.value_or(0.0) + s.value;
    }
  }
  return sum;
}

std::optional<SpecCounters> ReadSpecCounters(const std::vector<PromSample>& samples) {
  SpecCounters c;
  if (auto t = SumOf(samples, "vllm:spec_decode_num_draft_tokens_total")) {
    // v1 and v0 share this name; v1 alone has num_drafts and per-position counters.
    c.draft_tokens = t;
    c.accepted_tokens = SumOf(samples, "vllm:spec_decode_num_accepted_tokens_total");
    c.drafts = SumOf(samples, "vllm:spec_decode_num_drafts_total");
    c.accepted_per_pos = PerPosition(samples, "vllm:spec_decode_num_accepted_tokens_per_pos_total");
    c.source = c.drafts ? "vllm" : "vllm-v0";
  } else if (auto l = SumOf(samples, "llamacpp:spec_decode_num_draft_tokens_total")) {
    c.source = "llama.cpp";
    c.draft_tokens = l;
    c.accepted_tokens = SumOf(samples, "llamacpp:spec_decode_num_accepted_tokens_total");
    c.drafts = SumOf(samples, "llamacpp:spec_decode_num_drafts_total");
    c.accepted_per_pos =
        PerPosition(samples, "llamacpp:spec_decode_num_accepted_tokens_per_pos_total");
  } else if (SumOf(samples, "sglang:spec_accept_length") ||
             SumOf(samples, "sglang:spec_accept_rate")) {
    c.source = "sglang";
    c.gauge_accept_length = SumOf(samples, "sglang:spec_accept_length");
    c.gauge_accept_rate = SumOf(samples, "sglang:spec_accept_rate");
  } else {
    return std::nullopt;
  }
  c.requests_finished = SumOf(samples, "vllm:request_success_total");
  if (!c.requests_finished) {
    c.requests_finished = SumOf(samples, "sglang:num_requests_total");
  }
  c.requests_running = SumOf(samples, "vllm:num_requests_running");
  if (!c.requests_running) {
    c.requests_running = SumOf(samples, "llamacpp:requests_processing");
  }
  if (!c.requests_running) {
    c.requests_running = SumOf(samples, "sglang:num_running_reqs");
  }
  return c;
}

void SpecWindow::Add(const SpecCounters& before, const SpecCounters& after) {
  source = after.source;
  auto delta = [](const std::optional<double>& b, const std::optional<double>& a) {
    return a && b ? *a - *b : 0.0;
  };
  draft_tokens += delta(before.draft_tokens, after.draft_tokens);
  accepted_tokens += delta(before.accepted_tokens, after.accepted_tokens);
  if (after.drafts && before.drafts) {
    drafts += *after.drafts - *before.drafts;
    has_drafts = true;
  }
  if (accepted_per_pos.size() < after.accepted_per_pos.size()) {
    accepted_per_pos.resize(after.accepted_per_pos.size(), 0.0);
  }
  for (std::size_t i = 0; i < after.accepted_per_pos.size(); ++i) {
    double b = i < before.accepted_per_pos.size() ? before.accepted_per_pos[i] : 0.0;
    accepted_per_pos[i] += after.accepted_per_pos[i] - b;
  }
  if (after.gauge_accept_length) {
    gauge_accept_length = after.gauge_accept_length;
  }
  if (after.gauge_accept_rate) {
    gauge_accept_rate = after.gauge_accept_rate;
  }
}

nlohmann::json SpecJson(const SpecWindow& w) {
  using nlohmann::json;
  if (w.empty()) {
    return nullptr;
  }
  json j = {{"source", w.source}};
  if (w.draft_tokens > 0) {
    j["num_draft_tokens"] = w.draft_tokens;
    j["num_accepted_tokens"] = w.accepted_tokens;
    j["acceptance_rate"] = w.accepted_tokens / w.draft_tokens;
  }
  if (w.has_drafts && w.drafts > 0) {
    j["num_drafts"] = w.drafts;
    j["mean_acceptance_length"] = 1.0 + w.accepted_tokens / w.drafts;
    json per = json::array();
    for (double a : w.accepted_per_pos) {
      per.push_back(a / w.drafts);
    }
    j["per_position"] = per;
  }
  if (w.gauge_accept_length) {
    j["mean_acceptance_length"] = *w.gauge_accept_length;
    j["gauge"] = true;  // SGLang: the last batch's value, not a window average
  }
  if (w.gauge_accept_rate) {
    j["acceptance_rate"] = *w.gauge_accept_rate;
    j["gauge"] = true;
  }
  return j;
}

std::optional<PrefixCacheCounters> ReadPrefixCacheCounters(const std::vector<PromSample>& samples) {
  PrefixCacheCounters c;
  c.queries = SumOf(samples, "vllm:prefix_cache_queries_total");
  c.hits = SumOf(samples, "vllm:prefix_cache_hits_total");
  if (c.queries && c.hits) {
    c.source = "vllm";
    return c;
  }
  if (auto g = SumOf(samples, "sglang:cache_hit_rate")) {
    return PrefixCacheCounters{"sglang", std::nullopt, std::nullopt, g};
  }
  return std::nullopt;
}

nlohmann::json PrefixCacheWindowJson(const PrefixCacheCounters& before,
                                     const PrefixCacheCounters& after) {
  if (before.queries && before.hits && after.queries && after.hits) {
    const double queries = *after.queries - *before.queries;
    const double hits = *after.hits - *before.hits;
    if (queries < 0 || hits < 0) {
      return nullptr;  // the server restarted between the scrapes: its counters start again
    }
    return {{"source", after.source},
            {"prompt_tokens", queries},
            {"cached_tokens", hits},
            {"share", queries > 0 ? nlohmann::json(hits / queries) : nlohmann::json(nullptr)}};
  }
  if (after.gauge_hit_rate) {
    return {{"source", after.source}, {"hit_rate_gauge", *after.gauge_hit_rate}};
  }
  return nullptr;
}

}  // namespace sb::perf
