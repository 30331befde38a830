#include "perf/frontier.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/frontier.h"
#include "core/stats.h"

namespace sb::perf {

using nlohmann::json;

namespace {

std::optional<double> Number(const json& j, const char* a, const char* b = nullptr) {
  const json* v = &j;
  for (const char* k : {a, b}) {
    if (k == nullptr) {
      break;
    }
    if (!v->is_object() || !v->contains(k)) {
      return std::nullopt;
    }
    v = &(*v)[k];
  }
  return v->is_number() ? std::optional<double>(v->get<double>()) : std::nullopt;
}

json ToJson(const std::vector<FrontierPoint>& points) {
  json out = json::array();
  for (const FrontierPoint& p : points) {
    const auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    out.push_back({{"level", p.level},
                   {"label", p.label},
                   {"tok_s_per_user", p.per_user},
                   {"tok_s_per_user_tpot", opt(p.per_user_tpot)},
                   {"total_tok_s", p.total},
                   {"total_tok_s_per_gpu", opt(p.total_per_gpu)},
                   {"pareto", p.pareto}});
  }
  return out;
}

}  // namespace

json ConcurrencyFrontier(const json& levels, int gpus) {
  std::vector<FrontierInput> in;
  for (const json& l : levels) {
    auto n = Number(l, "concurrency");
    if (!n) {
      continue;
    }
    in.push_back({*n, fmt::format("c{:g}", *n), Number(l, "per_stream_decode_tok_s", "median"),
                  Number(l, "tpot_ms", "p50"), Number(l, "throughput_tok_s")});
  }
  return ToJson(BuildFrontier(in, gpus));
}

json RateFrontier(const json& points, int gpus) {
  std::vector<FrontierInput> in;
  for (const json& p : points) {
    auto rate = Number(p, "rate_rps");
    if (!rate) {
      continue;
    }
    std::vector<double> decode;
    if (p.contains("requests") && p["requests"].is_array()) {
      for (const json& r : p["requests"]) {
        auto v = Number(r, "decode_tok_s");
        if (v && r.value("status", "") == "ok") {
          decode.push_back(*v);
        }
      }
    }
    in.push_back({*rate, fmt::format("{:g} req/s", *rate),
                  decode.empty() ? std::nullopt : std::optional<double>(Median(decode)),
                  Number(p, "tpot_ms", "p50"), Number(p, "output_tok_s")});
  }
  return ToJson(BuildFrontier(in, gpus));
}

}  // namespace sb::perf
