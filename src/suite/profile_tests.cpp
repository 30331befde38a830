#include "suite/profile_tests.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/profile_table.h"
#include "perf/server_watch.h"
#include "suite/runner_internal.h"
#include "suite/text.h"

namespace sb::suite::detail {

namespace {

using nlohmann::json;

// The row every test of `test` starts from.
json Base(const TestSpec& test, const std::string& id_suffix, const std::string& name) {
  return json{{"id", test.id + "." + id_suffix},
              {"name", name},
              {"category", test.category},
              {"section", test.section.empty() ? json(nullptr) : json(test.section)},
              {"input", "text"},
              {"profile", test.profile},
              {"attempts", 1}};
}

// The request's figures, copied onto the row (null where it has none).
void FromRequest(json& t, const json& req) {
  for (const char* k : {"ttft_ms", "e2e_ms", "decode_tok_s", "prompt_tokens", "completion_tokens",
                        "reasoning_tokens", "finish_reason"}) {
    t[k] = req.is_object() && req.contains(k) ? req[k] : json(nullptr);
  }
  t["time_ms"] = t["e2e_ms"];
}

std::pair<std::string, std::string> RequestStatus(const json& req) {
  const std::string s = req.value("status", std::string("ok"));
  const std::string reason =
      req.contains("reason") && req["reason"].is_string() ? req["reason"].get<std::string>() : "";
  if (s == "ok") {
    return {"PASS", ""};
  }
  if (s == "timeout") {
    const std::string_view flag = perf::TimeoutFlag(reason);
    return {"TIMEOUT", flag.empty() ? reason : fmt::format("{} (raise with {})", reason, flag)};
  }
  // Speed-profile requests are text only: no refusal of a modality or feature concerns
  // them, so an HTTP error is ERROR whatever it says.
  return {"ERROR", reason.empty() ? s : reason};
}

// 1234.56 -> "1,234.6"; "—" for no number.
std::string OneDecimal(const json& v) {
  if (!v.is_number()) {
    return "—";
  }
  const long long tenths = std::llround(v.get<double>() * 10);
  return Thousands(tenths / 10) + "." + std::to_string(std::llabs(tenths % 10));
}

std::string Ms(const json& v) {
  return v.is_number() ? fmt::format("{:.0f} ms", v.get<double>()) : std::string("—");
}

// Every request of a row must succeed; the row's first failure is its reason.
void RowStatus(const json& requests, json& t) {
  std::string status = "PASS", reason;
  for (const json& req : requests) {
    auto [s, why] = RequestStatus(req);
    if (s != "PASS") {
      status = s;
      reason = why;
      break;
    }
  }
  t["status"] = status;
  t["reason"] = reason.empty() ? json(nullptr) : json(reason);
}

const json& ArrayOr(const json& obj, const char* key) {
  static const json kEmpty = json::array();
  return obj.is_object() && obj.contains(key) && obj[key].is_array() ? obj[key] : kEmpty;
}

void DecodeRows(const TestSpec& test, const json& result, std::vector<json>& out) {
  int i = 0;
  for (const json& run : ArrayOr(result, "runs")) {
    json t = Base(test, fmt::format("run{}", ++i), fmt::format("Decode run {}", i));
    FromRequest(t, run);
    RowStatus(json::array({run}), t);
    if (t["status"] == "PASS") {
      t["reason"] = OneDecimal(run["decode_tok_s"]) + " tok/s decode";
    }
    out.push_back(std::move(t));
  }
}

void ConcurrencyRows(const TestSpec& test, const json& result, std::vector<json>& out) {
  for (const json& level : ArrayOr(result, "levels")) {
    const int n = level.value("concurrency", 0);
    json t = Base(test, fmt::format("c{}", n),
                  fmt::format("{} parallel request{}", n, n == 1 ? "" : "s"));
    const json& reqs = ArrayOr(level, "requests");
    long long tokens = 0;
    for (const json& req : reqs) {
      tokens += req.value("completion_tokens", 0);
    }
    t["completion_tokens"] = tokens;
    t["e2e_ms"] =
        level["wall_s"].is_number() ? json(level["wall_s"].get<double>() * 1000) : json(nullptr);
    t["time_ms"] = t["e2e_ms"];
    RowStatus(reqs, t);
    // Counted against the requests sent: a closed loop sends more than its n streams.
    const long long sent = level.value("sent", static_cast<long long>(reqs.size()));
    if (t["status"] == "PASS" && level.value("ok", 0LL) != sent) {
      t["status"] = "ERROR";
      t["reason"] = fmt::format("{} of {} requests succeeded", level.value("ok", 0), sent);
    }
    if (t["status"] == "PASS") {
      t["reason"] = fmt::format("{}/{} ok, {} tok/s combined", level.value("ok", 0), sent,
                                OneDecimal(level["throughput_tok_s"]));
    }
    out.push_back(std::move(t));
  }
}

// Max-tokens lengths and TTFT prompts: one row per item, judged by its runs.
void MaxTokensRows(const TestSpec& test, const json& result, std::vector<json>& out) {
  const ProfileSpec& spec = Profile(ProfileId::kMaxTokens);
  for (const json& len : ArrayOr(result, std::string(spec.rows).c_str())) {
    const int n = len.value(std::string(spec.dim), 0);
    json t = Base(test, std::to_string(n), fmt::format("Max tokens {}", Thousands(n)));
    const json& runs = ArrayOr(len, "runs");
    if (!runs.empty()) {
      FromRequest(t, runs.back());
    }
    RowStatus(runs, t);
    if (t["status"] == "PASS") {
      t["reason"] = OneDecimal(len["tok_s"].value("median", json())) + " tok/s incl. TTFT";
    }
    out.push_back(std::move(t));
  }
}

void TtftRows(const TestSpec& test, const json& result, std::vector<json>& out) {
  for (const json& p : ArrayOr(result, "prompts")) {
    const std::string name = p.value("name", std::string("prompt"));
    json t = Base(test, name, fmt::format("TTFT, {} prompt", name));
    const json& runs = ArrayOr(p, "runs");
    if (!runs.empty()) {
      FromRequest(t, runs.back());
    }
    RowStatus(runs, t);
    if (t["status"] == "PASS") {
      t["reason"] = "TTFT " + Ms(p["ttft_ms"].value("median", json())) + " (median)";
    }
    out.push_back(std::move(t));
  }
}

void ContextRows(const TestSpec& test, const json& result, std::vector<json>& out) {
  for (const json& row : ArrayOr(result, "rows")) {
    const int size = row.value("size", 0);
    json t = Base(test, std::to_string(size), fmt::format("Context ~{}", Thousands(size)));
    if (row.contains("skipped")) {
      t["status"] = "UNSUPPORTED";
      t["reason"] =
          fmt::format("{} tokens is {}", Thousands(size), row["skipped"].get<std::string>());
      t["attempts"] = 0;
      out.push_back(std::move(t));
      continue;
    }
    const json request = row.value("request", json::object());
    FromRequest(t, request);
    RowStatus(json::array({request}), t);
    if (t["status"] == "PASS") {
      if (row.value("correct", false)) {
        t["reason"] = fmt::format("{} prompt tokens, TTFT {}",
                                  row["prompt_tokens"].is_number()
                                      ? Thousands(row["prompt_tokens"].get<long long>())
                                      : std::string("—"),
                                  Ms(row["ttft_ms"]));
      } else {
        t["status"] = "FAIL";
        t["reason"] = fmt::format("expected {}, got \"{}\"", row.value("expected", std::string()),
                                  OneLine(row.value("answer", std::string()), 60));
      }
    }
    out.push_back(std::move(t));
  }
}

}  // namespace

perf::ProfileOptions ProfileTestOptions(const TestSpec& test, perf::ProfileOptions o,
                                        const std::optional<bool>& run_thinking,
                                        const std::optional<double>& run_temperature) {
  const json args = json::parse(test.profile_args_json, nullptr, false);
  if (args.is_object()) {
    auto ints = [&](const char* key, std::string_view flag) {
      if (args.contains(key)) {
        o.args.SetInts(flag, args[key].get<std::vector<int>>());
      }
    };
    ints("levels", "--levels");
    ints("lengths", "--lengths");
    ints("sizes", "--sizes");
    if (args.contains("runs")) {
      o.runs = args["runs"].get<int>();
      o.args.SetInts("--length-runs", {o.runs});
    }
    if (args.contains("tokens")) {
      o.tokens = args["tokens"].get<int>();
    }
    if (args.contains("depth")) {
      o.args.SetNumber("--depth", args["depth"].get<double>());
    }
    if (args.contains("context_max_tokens")) {
      o.context_max_tokens = args["context_max_tokens"].get<int>();
    }
  }
  if (run_thinking || test.thinking) {
    o.enable_thinking = run_thinking ? run_thinking : test.thinking;
  }
  if (run_temperature || test.temperature) {
    o.temperature = run_temperature ? run_temperature : test.temperature;
  }
  return o;
}

std::vector<json> ProfileTestRows(const TestSpec& test, const json& result) {
  std::vector<json> out;
  const ProfileSpec* spec = FindProfile(test.profile);  // the suite loader refused other names
  if (spec == nullptr) {
    return out;
  }
  switch (spec->id) {
    case ProfileId::kDecode:
      DecodeRows(test, result, out);
      break;
    case ProfileId::kConcurrency:
      ConcurrencyRows(test, result, out);
      break;
    case ProfileId::kMaxTokens:
      MaxTokensRows(test, result, out);
      break;
    case ProfileId::kTtft:
      TtftRows(test, result, out);
      break;
    case ProfileId::kContext:
      ContextRows(test, result, out);
      break;
    default:  // rate and replay are perf-only (the table's in_suites)
      break;
  }
  return out;
}

}  // namespace sb::suite::detail
