#include "perf/request_record.h"

#include <nlohmann/json.hpp>

#include "perf/metrics.h"
#include "perf/profiles.h"

namespace sb::perf {

using nlohmann::json;

namespace {

json Text(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}

json ParseOrNull(const std::string& text) {
  if (text.empty()) {
    return nullptr;
  }
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? json(nullptr) : j;
}

}  // namespace

json NumberOrNull(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

json CountOrNull(int v) {
  return v >= 0 ? json(v) : json(nullptr);
}

RequestRecord MakeRecord(const client::ChatResponse& r, const std::string& profile,
                         const std::string& label, std::int64_t t0_ns, bool warmup) {
  const RequestMetrics m = ComputeMetrics(r);
  RequestRecord rec;
  rec.id = r.id;
  rec.profile = profile;
  rec.label = label;
  rec.outcome = r.outcome;
  rec.reason = r.reason;
  rec.http_status = r.http_status;
  if (r.send_ns != 0) {
    rec.sent_at_ms = static_cast<double>(r.send_ns - t0_ns) / 1e6;
  }
  if (r.scheduled_ns != 0) {
    rec.scheduled_at_ms = static_cast<double>(r.scheduled_ns - t0_ns) / 1e6;
  }
  rec.ttft_ms = m.ttft_ms;
  rec.ttfa_ms = m.ttfa_ms;
  rec.e2e_ms = m.e2e_ms;
  const bool ok = rec.ok();
  if (ok) {  // a request that failed has no speed: its partial stream would make one up
    rec.decode_tok_s = m.decode_tok_s;
    rec.tpot_ms = m.tpot_ms;
  }
  rec.prompt_tokens = r.usage.prompt_tokens;
  rec.reasoning_tokens = r.usage.reasoning_tokens;
  if (ok || !m.tokens_estimated) {
    rec.completion_tokens = m.completion_tokens;
  }
  rec.tokens_estimated = ok && m.tokens_estimated;
  rec.chunks = m.chunks;
  rec.finish_reason = r.finish_reason;
  rec.sim_json = r.sim_json;
  rec.timings_json = r.timings_json;
  rec.warmup = warmup;
  rec.replayed = r.replayed;
  // A server that ignored stream=true sent the whole answer as one body (ComputeMetrics gives
  // it no speed).
  rec.unstreamed = ok && CameAsOneBody(r);
  rec.retries = r.retries;
  rec.retry_reasons = r.retry_reasons;
  return rec;
}

json RequestRecord::ToJson() const {
  json rec = {
      {"id", id},
      {"profile", profile},
      {"label", label},
      {"status", std::string(client::OutcomeName(outcome))},
      {"reason", Text(reason)},
      {"http_status", http_status},
      {"sent_at_ms", NumberOrNull(sent_at_ms)},
      {"ttft_ms", NumberOrNull(ttft_ms)},
      {"ttfa_ms", NumberOrNull(ttfa_ms)},
      {"e2e_ms", NumberOrNull(e2e_ms)},
      {"decode_tok_s", NumberOrNull(decode_tok_s)},
      {"tpot_ms", NumberOrNull(tpot_ms)},
      {"prompt_tokens", CountOrNull(prompt_tokens)},
      {"completion_tokens", completion_tokens ? json(*completion_tokens) : json()},
      {"reasoning_tokens", CountOrNull(reasoning_tokens)},
      {"tokens_estimated", tokens_estimated},
      {"chunks", chunks},
      {"finish_reason", Text(finish_reason)},
  };
  if (scheduled_at_ms) {
    rec["scheduled_at_ms"] = *scheduled_at_ms;
  }
  json server = json::object();
  if (!sim_json.empty()) {
    server["sim"] = ParseOrNull(sim_json);
  }
  if (!timings_json.empty()) {
    server["timings"] = ParseOrNull(timings_json);
  }
  if (!server.empty()) {
    rec["server"] = std::move(server);
  }
  if (warmup) {
    rec["warmup"] = true;
  }
  if (replayed) {
    rec["replayed"] = true;
  }
  if (unstreamed) {
    rec["streamed"] = false;
  }
  if (retries > 0) {
    rec["retries"] = retries;
    rec["retry_reasons"] = retry_reasons;
  }
  if (images) {
    rec["images"] = *images;
    rec["image_bytes"] = image_bytes.value_or(0);
  }
  if (workload) {
    rec["class"] = workload->cls;
    rec["input_tokens"] = CountOrNull(workload->input_tokens);
    rec["output_tokens"] = CountOrNull(workload->output_tokens);
    rec["cached_tokens"] = CountOrNull(workload->cached_tokens);
    rec["sent_ms"] = NumberOrNull(workload->sent_ms);
    rec["scheduled_ms"] = NumberOrNull(workload->scheduled_ms);
  }
  if (schedule) {
    rec["schedule_lag_ms"] = schedule->lag_ms;
    rec["ttft_from_scheduled_ms"] = NumberOrNull(schedule->ttft_ms);
    rec["e2e_from_scheduled_ms"] = NumberOrNull(schedule->e2e_ms);
    if (schedule->rate_rps) {
      rec["rate_rps"] = *schedule->rate_rps;
    }
    if (schedule->client_queue_ms) {
      rec["client_queue_ms"] = *schedule->client_queue_ms;
    }
    if (schedule->good) {
      rec["good"] = *schedule->good;
    }
  }
  if (trace) {
    rec["trace"] = {{"line", trace->line},
                    {"input_tokens", trace->input_tokens},
                    {"output_tokens", trace->output_tokens},
                    {"asked_input_tokens", trace->asked_input_tokens}};
  }
  if (turn) {
    rec["session"] = turn->session + 1;
    rec["turn"] = turn->turn;
    rec["tool_round"] = turn->tool_round;
    rec["cached_tokens"] = CountOrNull(turn->cached_tokens);
    rec["user_tokens"] = CountOrNull(turn->user_tokens);
    rec["think_ms"] = turn->think_ms;
    rec["tool_calls"] = turn->tool_calls;
    rec["itl_ms"] = {{"p50", NumberOrNull(turn->itl_p50_ms)},
                     {"p99", NumberOrNull(turn->itl_p99_ms)}};
  }
  return rec;
}

RequestFact RequestRecord::Fact() const {
  RequestFact f;
  f.cls = workload ? workload->cls : "?";
  f.ok = ok();
  if (f.ok) {
    f.ttft_ms = ttft_ms;
    f.e2e_ms = e2e_ms;
    f.tpot_ms = tpot_ms;
  }
  if (workload) {
    f.input_tokens = workload->input_tokens;
    f.output_tokens = workload->output_tokens;
    f.cached_tokens = workload->cached_tokens;
  }
  if (turn) {
    f.cached_tokens = turn->cached_tokens;
  }
  return f;
}

std::vector<RequestFact> FactsOf(const std::vector<RequestRecord>& records) {
  std::vector<RequestFact> facts;
  facts.reserve(records.size());
  for (const RequestRecord& r : records) {
    facts.push_back(r.Fact());
  }
  return facts;
}

json Sample::ToJson() const {
  json rec = record.ToJson();
  if (extra != nullptr && extra->is_object()) {
    for (const auto& [k, v] : extra->items()) {
      rec[k] = v;
    }
  }
  return rec;
}

Sample::operator json() const {
  return ToJson();
}

}  // namespace sb::perf
