#include "suite/runner.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include "core/number_format.h"
#include "core/profile_table.h"
#include "core/stats.h"
#include "perf/metrics.h"
#include "perf/request_record.h"
#include "suite/checkers.h"
#include "suite/loop.h"
#include "suite/profile_tests.h"
#include "suite/runner_internal.h"
#include "suite/text.h"

namespace sb::suite {

namespace {

using nlohmann::json;
using namespace detail;  // NOLINT: the runner's own helpers (runner_internal.h)

constexpr std::size_t kAnswerCap = 16 * 1024;  // answer text kept in results.json (code points)

// Wilson score interval (95%) for k successes out of n.
std::pair<double, double> Wilson(double k, double n) {
  if (n <= 0) {
    return {0, 0};
  }
  const double z = 1.959963984540054;
  const double p = k / n;
  const double denom = 1 + z * z / n;
  const double centre = (p + z * z / (2 * n)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

bool Selected(const TestSpec& t, const std::vector<std::string>& only) {
  if (only.empty()) {
    return true;
  }
  for (const std::string& o : only) {
    if (o == t.id || o == t.category || (!t.section.empty() && o == t.section) ||
        t.id.rfind(o + ".", 0) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

namespace detail {

std::string Thousands(long long v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out.push_back(',');
    }
    out.push_back(digits[i]);
  }
  return v < 0 ? "-" + out : out;
}

std::string Seconds(double s) {
  return s >= 10 ? fmt::format("{:.0f}", s) : fmt::format("{:.3g}", s);
}

json ToolCallsJson(const std::vector<client::ToolCall>& calls) {
  json out = json::array();
  for (const auto& c : calls) {
    json args = json::parse(c.arguments, nullptr, false);
    out.push_back(
        json{{"name", c.name}, {"arguments", args.is_discarded() ? json(c.arguments) : args}});
  }
  return out;
}

std::string InputKind(const TestSpec& t) {
  const auto mods = t.Modalities();
  for (const char* m : {"video", "image", "audio"}) {
    if (std::find(mods.begin(), mods.end(), m) != mods.end()) {
      return m;
    }
  }
  return "text";
}

// input_audio.format: the file's extension ("wav", "mp3", ...).
std::string AudioFormat(const media::Asset& a) {
  return a.extension.empty() ? "wav" : a.extension;
}

}  // namespace detail

std::string_view StatusName(Status status) {
  switch (status) {
    case Status::kPass:
      return "PASS";
    case Status::kFail:
      return "FAIL";
    case Status::kEmpty:
      return "EMPTY";
    case Status::kLoop:
      return "LOOP";
    case Status::kUnsupported:
      return "UNSUPPORTED";
    case Status::kError:
      return "ERROR";
    case Status::kTimeout:
      return "TIMEOUT";
  }
  return "ERROR";
}

std::string RefusedFeature(int http_status, std::string_view text) {
  if (http_status != 0 && (http_status < 400 || http_status > 501)) {
    return "";
  }
  // RE2: linear in the text, whatever a hostile server sends.
  static const re2::RE2 kPatterns(
      "(?i)(at most \\d+ (image|video|audio)|"
      "(image|video|audio|vision|multimodal) (input )?(is |are )?not supported|"
      "not a multimodal model|"
      "does not support (image|video|audio|vision|multimodal|multi-modal|tool|function)|"
      "(doesn't|do not|cannot|can't) (support|accept|process) (image|video|audio|tool)|"
      "only supported by certain models|"
      "unsupported (content|part|message)( ?\\[\\]\\.)? ?type|"
      "unknown (content|part) type|"
      "invalid content type|"
      "mmproj|"
      "tool choice requires|"
      "enable-auto-tool-choice|"
      "tools? (is|are) not supported|"
      "tools? param requires|"
      "requires --jinja|"
      "(image|video|audio|tool)s? (are|is) (disabled|not enabled))");
  re2::StringPiece matched;
  if (!re2::RE2::PartialMatch(re2::StringPiece(text.substr(0, 4096)), kPatterns, &matched)) {
    return "";
  }
  // What the matched refusal names ("image input is not supported - hint: ... mmproj": image).
  const std::string what = Lower(std::string(matched.data(), matched.size()));
  for (const auto& [word, feature] :
       std::initializer_list<std::pair<const char*, const char*>>{{"image", "image"},
                                                                  {"vision", "image"},
                                                                  {"video", "video"},
                                                                  {"audio", "audio"},
                                                                  {"tool", "tools"},
                                                                  {"function", "tools"},
                                                                  {"jinja", "tools"}}) {
    if (what.find(word) != std::string::npos) {
      return feature;
    }
  }
  return "media";  // "not a multimodal model", "unsupported content type", "mmproj", ...
}

bool IsUnsupportedError(int http_status, std::string_view text) {
  return !RefusedFeature(http_status, text).empty();
}

bool RefusalApplies(std::string_view refused, const std::vector<std::string>& features) {
  if (refused.empty()) {
    return false;
  }
  for (const std::string& f : features) {
    if (f == refused || (refused == "media" && (f == "image" || f == "video" || f == "audio"))) {
      return true;
    }
  }
  return false;
}

// ---- per-run state ---------------------------------------------------------------------------

SuiteRunner::SuiteRunner(client::Client& client, SuiteTarget target, RunOptions options,
                         perf::Session& session, perf::SampleSink on_sample,
                         perf::ProgressSink on_progress, std::stop_token stop, std::int64_t t0_ns)
    : client_(client),
      target_(std::move(target)),
      options_(std::move(options)),
      session_(session),
      on_sample_(std::move(on_sample)),
      on_progress_(std::move(on_progress)),
      stop_(std::move(stop)),
      t0_ns_(t0_ns) {}

void SuiteRunner::Warn(const std::string& text) {
  if (std::find(warnings_.begin(), warnings_.end(), text) == warnings_.end()) {
    warnings_.push_back(text);
  }
}

std::optional<perf::SpecCounters> SuiteRunner::Scrape() {
  if (!scrape_) {
    return std::nullopt;
  }
  std::chrono::milliseconds limit(10'000);
  if (const auto request = options_.profile.request_timeout;
      request.count() > 0 && request < limit) {
    limit = request;  // --request-timeout-s holds for auxiliary requests too
  }
  auto resp = client_.Get("/metrics", limit);
  if (!resp || resp->status != 200) {
    scrape_ = false;
    return std::nullopt;
  }
  auto samples = perf::ParsePrometheus(resp->body);
  if (!samples) {
    scrape_ = false;
    return std::nullopt;
  }
  auto counters = perf::ReadSpecCounters(*samples);
  if (!counters) {
    scrape_ = false;
  }
  return counters;
}

json SuiteRunner::RunTest(const TestSpec& test, int repeat) {
  json t = {{"id", test.id},
            {"name", test.DisplayName()},
            {"category", test.category},
            {"section", test.section.empty() ? json(nullptr) : json(test.section)},
            {"input", InputKind(test)},
            {"thinking", (options_.thinking ? options_.thinking : test.thinking)
                             ? json(*(options_.thinking ? options_.thinking : test.thinking))
                             : json(nullptr)},
            {"max_tokens", test.max_tokens}};
  if (options_.repeat > 1) {
    t["repeat"] = repeat;
  }
  auto prepared = Prepare(test);
  if (!prepared) {
    t["status"] = "ERROR";
    t["reason"] = prepared.error().message;
    t["attempts"] = json::array();
    return t;
  }
  if (!prepared->unsupported.empty()) {
    t["status"] = "UNSUPPORTED";
    t["reason"] = prepared->unsupported;
    t["attempts"] = json::array();
    t["sent"] = false;
    return t;
  }
  if (!prepared->transports.empty()) {
    t["transport"] = prepared->transports;
  }
  std::vector<int> budgets = {test.max_tokens};
  for (int b : options_.rerun_budgets) {
    if (b > budgets.back()) {
      budgets.push_back(b);
    }
  }
  // Completion tokens of an attempt received in full (usage, else counted from the events);
  // null for a failed one.
  auto tokens_of = [](const Attempt& a) {
    if (!a.counted) {
      return json(nullptr);
    }
    return a.response.usage.completion_tokens >= 0 ? json(a.response.usage.completion_tokens)
                                                   : json(a.metrics.completion_tokens);
  };
  json attempts = json::array();
  Attempt last;
  for (std::size_t i = 0; i < budgets.size(); ++i) {
    last = RunAttempt(test, *prepared, budgets[i], static_cast<int>(i + 1));
    if (last.interrupted) {
      return json();  // dropped: the run was stopped while it was in flight
    }
    const auto& r = last.response;
    json entry = {
        {"max_tokens", budgets[i]},
        {"status", std::string(StatusName(last.status))},
        {"reason", last.reason.empty() ? json(nullptr) : json(last.reason)},
        {"finish_reason", r.finish_reason.empty() ? json(nullptr) : json(r.finish_reason)},
        {"http_status", r.http_status == 0 ? json(nullptr) : json(r.http_status)},
        // On the run's clock (that of the speed profiles' sent_at_ms and of the resource
        // samples), so report.html can place the attempt's tokens in time.
        {"sent_at_ms",
         r.send_ns != 0 ? json(static_cast<double>(r.send_ns - t0_ns_) / 1e6) : json(nullptr)},
        {"ttft_ms", perf::NumberOrNull(last.metrics.ttft_ms)},
        {"e2e_ms", perf::NumberOrNull(last.metrics.e2e_ms)},
        {"completion_tokens", tokens_of(last)},
        {"reasoning_tokens",
         last.counted ? perf::CountOrNull(last.reasoning_tokens) : json(nullptr)}};
    if (last.retries) {
      entry["retries"] = *last.retries;
    }
    attempts.push_back(std::move(entry));
    if (last.status != Status::kEmpty) {
      break;
    }
    if (i + 1 < budgets.size() && on_progress_) {
      on_progress_(fmt::format("{}: EMPTY at {} tokens, retrying with {}", test.id,
                               Thousands(budgets[i]), Thousands(budgets[i + 1])));
    }
  }
  const auto& r = last.response;
  const bool ok = r.outcome == client::Outcome::kOk;
  t["status"] = std::string(StatusName(last.status));
  t["reason"] = last.reason.empty() ? json(nullptr) : json(last.reason);
  t["ttft_ms"] = perf::NumberOrNull(last.metrics.ttft_ms);
  t["ttfa_ms"] = perf::NumberOrNull(last.metrics.ttfa_ms);
  t["e2e_ms"] = perf::NumberOrNull(last.metrics.e2e_ms);
  // The test's wall time: send to the end of the response (a TIMEOUT's time is the time waited).
  t["time_ms"] = last.time_s > 0 ? json(last.time_s * 1000) : json(nullptr);
  t["decode_tok_s"] = ok ? perf::NumberOrNull(last.metrics.decode_tok_s) : json(nullptr);
  t["prompt_tokens"] = perf::CountOrNull(r.usage.prompt_tokens);
  // A failed request (ERROR, TIMEOUT) has no token counts: what it streamed before failing is
  // not an answer, and an estimate from it would only mislead.
  t["completion_tokens"] = tokens_of(last);
  t["tokens_estimated"] = last.counted && r.usage.completion_tokens < 0;
  t["reasoning_tokens"] = last.counted ? perf::CountOrNull(last.reasoning_tokens) : json(nullptr);
  t["reasoning_tokens_estimated"] = last.counted && last.reasoning_estimated;
  t["reasoning_ms"] = perf::NumberOrNull(last.reasoning_ms);
  t["finish_reason"] = r.finish_reason.empty() ? json(nullptr) : json(r.finish_reason);
  t["max_tokens"] = last.max_tokens;
  t["attempts"] = attempts;
  if (last.retries) {
    t["retries"] = *last.retries;
  }
  const std::size_t answer_chars = CountCodePoints(last.answer);
  t["answer"] = Excerpt(last.answer, kAnswerCap);
  if (answer_chars > kAnswerCap) {
    t["answer_truncated"] = true;
  }
  t["answer_chars"] = answer_chars;
  t["reasoning_chars"] = CountCodePoints(last.reasoning);
  if (!r.tool_calls.empty()) {
    t["tool_calls"] = ToolCallsJson(r.tool_calls);
  }
  if (!last.check_detail.empty()) {
    t["check_detail"] = last.check_detail;
  }
  return t;
}

void SuiteRunner::RunProfileTest(const TestSpec& test) {
  const perf::ProfileOptions o =
      ProfileTestOptions(test, options_.profile, options_.thinking, options_.temperature);
  const json result = session_.Run(test.profile, o);
  const ProfileSpec* spec = FindProfile(test.profile);  // the suite loader refused other names
  perf_[spec != nullptr ? std::string(spec->key) : test.profile] = result;
  for (json& t : ProfileTestRows(test, result)) {
    tests_.push_back(std::move(t));
  }
}

void SuiteRunner::Run(const Suite& suite) {
  suites_run_.push_back(suite.name);
  std::vector<const TestSpec*> selected;
  for (const TestSpec& t : suite.tests) {
    if (Selected(t, options_.only)) {
      selected.push_back(&t);
    }
  }
  if (selected.empty()) {
    Warn(fmt::format("No test of suite '{}' matches --tests {}.", suite.name,
                     fmt::join(options_.only, ",")));
    return;
  }
  std::vector<const TestSpec*> quality;
  for (const TestSpec* t : selected) {
    if (t->profile.empty()) {
      quality.push_back(t);
    }
  }
  {
    // The modality probes are one unit of the run's journal.
    client::UnitScope unit(client_, fmt::format("probes {}", suite.name));
    ProbeModalities(quality);
  }
  for (int rep = 1; rep <= options_.repeat; ++rep) {
    for (const TestSpec* t : selected) {
      if (session_.server_gone() && !server_gone_) {
        server_gone_ = true;
        Warn(fmt::format("The server stopped answering: {}; the remaining tests were not run.",
                         session_.gone_reason()));
      }
      if (stop_.stop_requested() || session_.Halted() || server_gone_) {
        not_run_.push_back(t->id);
        continue;
      }
      if (!t->profile.empty()) {
        if (rep == 1) {
          if (on_progress_) {
            on_progress_(fmt::format("{}: {} profile", t->id, t->profile));
          }
          RunProfileTest(*t);
        }
        continue;
      }
      // One test (its probes, attempts and reruns) is one unit of the run's journal.
      client::UnitScope unit(client_, fmt::format("test {} {}", t->id, rep));
      json result = RunTest(*t, rep);
      if (result.is_null()) {
        not_run_.push_back(t->id);
        continue;
      }
      if (on_progress_) {
        std::string line = fmt::format("{}: {}", t->id, result["status"].get<std::string>());
        // The time of the attempt, send to end (a TIMEOUT's is the time waited, not the last
        // token's), and its tokens when it was received in full.
        if (result.contains("time_ms") && result["time_ms"].is_number()) {
          line += fmt::format(" ({:.2f} s", result["time_ms"].get<double>() / 1000);
          if (result["completion_tokens"].is_number()) {
            line += ", " + CountOf(result["completion_tokens"].get<long long>(), "token", "tokens");
          }
          line += ")";
        }
        if (result["status"] != "PASS" && result["reason"].is_string()) {
          line += " " + OneLine(result["reason"].get<std::string>(), 100);
        }
        on_progress_(line);
      }
      tests_.push_back(std::move(result));
    }
  }
  if (!unsupported_.empty()) {
    for (const auto& [modality, reason] : unsupported_) {
      int n = 0;
      for (const json& t : tests_) {
        if (t.value("status", "") == "UNSUPPORTED" && t.value("input", "") == modality) {
          ++n;
        }
      }
      if (n > 0) {
        Warn(
            fmt::format("{} {} test{} UNSUPPORTED: the server refuses {} input ({}); the probe "
                        "cost one request, the tests sent none.",
                        n, modality, n == 1 ? " is" : "s are", modality, reason));
      }
    }
  }
}

json SuiteRunner::StatusSummary() const {
  std::map<std::string, int> counts;
  for (const json& t : tests_) {
    ++counts[t.value("status", std::string("ERROR"))];
  }
  const int total = static_cast<int>(tests_.size());
  const int pass = counts["PASS"];
  const int unsupported = counts["UNSUPPORTED"];
  json s = {{"total", total},
            {"pass", pass},
            {"fail", counts["FAIL"]},
            {"empty", counts["EMPTY"]},
            {"loop", counts["LOOP"]},
            {"unsupported", unsupported},
            {"error", counts["ERROR"]},
            {"timeout", counts["TIMEOUT"]},
            {"pass_rate", total > 0 ? json(static_cast<double>(pass) / total) : json(nullptr)},
            {"effective_pass_rate", total - unsupported > 0
                                        ? json(static_cast<double>(pass) / (total - unsupported))
                                        : json(nullptr)}};
  if (total > 0) {
    auto [lo, hi] = Wilson(pass, total);
    s["pass_rate_ci95"] = json::array({lo, hi});
  } else {
    s["pass_rate_ci95"] = nullptr;
  }
  return s;
}

json SuiteRunner::SuiteJson() const {
  json probes = json::object();
  for (const auto& [k, v] : probes_) {
    probes[k] = v;
  }
  json spec = json::object();
  for (const auto& [kind, window] : spec_by_input_) {
    if (!window.empty()) {
      spec[kind] = perf::SpecJson(window);
    }
  }
  json out = {
      {"names", suites_run_},
      {"tests", tests_.size()},
      {"not_run", not_run_},
      {"probes", probes},
      {"transports", transport_},
      {"requests", requests_},
      {"completion_tokens", completion_tokens_},
      {"wall_time_s", wall_time_s_},
      {"avg_tok_s", wall_time_s_ > 0 ? json(static_cast<double>(completion_tokens_) / wall_time_s_)
                                     : json(nullptr)},
      {"repeat", options_.repeat},
      {"rerun_budgets", options_.rerun_budgets},
      {"spec_decode_by_input", spec.empty() ? json(nullptr) : spec},
      {"sandbox", sandbox::Probe().Describe()}};
  if (options_.repeat > 1) {
    // pass@k per test (unbiased estimator over its repetitions), and the mean over tests.
    std::map<std::string, std::pair<int, int>> by_test;  // id -> (n, c)
    std::vector<std::string> order;
    std::map<std::string, std::string> names;
    for (const json& t : tests_) {
      if (!t.contains("repeat") || t.value("status", "") == "UNSUPPORTED") {
        continue;
      }
      const std::string id = t.value("id", std::string());
      if (!by_test.count(id)) {
        order.push_back(id);
        names[id] = t.value("name", id);
      }
      auto& nc = by_test[id];
      ++nc.first;
      if (t.value("status", "") == "PASS") {
        ++nc.second;
      }
    }
    std::vector<int> ks = {1};
    for (int k = 2; k < options_.repeat; k *= 2) {
      ks.push_back(k);
    }
    if (options_.repeat > 1) {
      ks.push_back(options_.repeat);
    }
    json rows = json::array();
    std::map<int, double> sums;
    for (const std::string& id : order) {
      const auto [n, c] = by_test[id];
      json at = json::object();
      for (int k : ks) {
        if (k <= n) {
          const double v = PassAtK(n, c, k);
          at[std::to_string(k)] = v;
          sums[k] += v;
        }
      }
      rows.push_back(json{{"id", id}, {"name", names[id]}, {"n", n}, {"c", c}, {"pass_at", at}});
    }
    json mean = json::object();
    for (const auto& [k, sum] : sums) {
      mean[std::to_string(k)] = order.empty() ? 0.0 : sum / static_cast<double>(order.size());
    }
    out["pass_at_k"] = json{{"k", ks}, {"tests", rows}, {"mean", mean}};
  }
  return out;
}

}  // namespace sb::suite
