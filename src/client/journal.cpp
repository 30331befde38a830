#include "client/journal.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace sb::client {

using nlohmann::json;

// ---- Client's journal entry points (the live paths are in http_client.cpp) -----------------

std::vector<ChatResponse> Client::RunChats(std::span<const ChatCall> calls, const RunHooks& hooks,
                                           std::stop_token stop) {
  io_cpu_ns_.clear();  // set again by RunChatsLive when it runs I/O threads
  if (journal_ == nullptr) {
    return RunChatsLive(calls, hooks, std::move(stop));
  }
  return journal_->RunChats(calls, hooks, std::move(stop),
                            [this](std::span<const ChatCall> c, const RunHooks& h,
                                   std::stop_token s) { return RunChatsLive(c, h, std::move(s)); });
}

Result<HttpResponse> Client::Get(std::string_view path, std::chrono::milliseconds timeout) {
  if (journal_ == nullptr) {
    return GetLive(path, timeout);
  }
  return journal_->Plain("GET", path, [&] { return GetLive(path, timeout); });
}

Result<HttpResponse> Client::Post(std::string_view path, std::string_view json_body,
                                  std::chrono::milliseconds timeout) {
  if (journal_ == nullptr) {
    return PostLive(path, json_body, timeout);
  }
  return journal_->Plain("POST", path, [&] { return PostLive(path, json_body, timeout); });
}

void Client::BeginUnit(std::string_view name) {
  if (journal_ != nullptr) {
    journal_->BeginUnit(name);
  }
}

void Client::EndUnit() {
  if (journal_ != nullptr) {
    journal_->EndUnit();
  }
}

// ---- Replay ---------------------------------------------------------------------------------

void ReplayHooks(std::span<const ChatResponse> batch, const RunHooks& hooks) {
  // What the live loop did, in time order: each stream's token events, interleaved as they
  // arrived, and each stream's end (on_done in completion order).
  struct Step {
    std::int64_t t_ns;
    std::size_t call;
    std::size_t event;  // == events.size(): the end
  };

  std::vector<Step> steps;
  for (std::size_t c = 0; c < batch.size(); ++c) {
    const ChatResponse& r = batch[c];
    if (hooks.on_event) {
      for (std::size_t i = 0; i < r.events.size(); ++i) {
        steps.push_back({r.events[i].t_ns, c, i});
      }
    }
    const std::int64_t end = r.done_ns != 0      ? r.done_ns
                             : !r.events.empty() ? r.events.back().t_ns
                                                 : r.send_ns;
    steps.push_back({end, c, r.events.size()});
  }
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
    return a.t_ns != b.t_ns ? a.t_ns < b.t_ns : a.event < b.event;
  });
  // Each stream's response as it stood: grown event by event (linear in the stream's length;
  // a copy per event would be quadratic in a 32K-token answer).
  std::vector<ChatResponse> partial(batch.size());
  std::vector<bool> cancelled(batch.size(), false);
  if (hooks.on_event) {
    for (std::size_t c = 0; c < batch.size(); ++c) {
      partial[c] = batch[c];
      partial[c].events.clear();
      partial[c].answer.clear();
      partial[c].reasoning.clear();
    }
  }
  for (const Step& s : steps) {
    const ChatResponse& r = batch[s.call];
    if (s.event == r.events.size()) {
      if (hooks.on_done) {
        hooks.on_done(r);
      }
      continue;
    }
    if (cancelled[s.call]) {
      continue;
    }
    const TokenEvent& ev = r.events[s.event];
    ChatResponse& p = partial[s.call];
    p.events.push_back(ev);
    const std::size_t answer_end = std::min<std::size_t>(ev.answer_end, r.answer.size());
    const std::size_t reasoning_end = std::min<std::size_t>(ev.reasoning_end, r.reasoning.size());
    if (answer_end > p.answer.size()) {
      p.answer.append(r.answer, p.answer.size(), answer_end - p.answer.size());
    }
    if (reasoning_end > p.reasoning.size()) {
      p.reasoning.append(r.reasoning, p.reasoning.size(), reasoning_end - p.reasoning.size());
    }
    if (!hooks.on_event(p)) {
      cancelled[s.call] = true;
    }
  }
}

// ---- Serialisation --------------------------------------------------------------------------

namespace {

std::int64_t Rel(std::int64_t t, std::int64_t t0) {
  return t == 0 ? 0 : t - t0;
}

std::int64_t Abs(std::int64_t rel, std::int64_t t0) {
  return rel == 0 ? 0 : rel + t0;
}

}  // namespace

json ResponseToJson(const ChatResponse& r, std::int64_t t0_ns) {
  json events = json::array();
  for (const TokenEvent& e : r.events) {
    events.push_back(
        json::array({Rel(e.t_ns, t0_ns), e.tokens, e.kinds, e.answer_end, e.reasoning_end}));
  }
  json tools = json::array();
  for (const ToolCall& t : r.tool_calls) {
    tools.push_back(json::array({t.id, t.name, t.arguments}));
  }
  return json{{"id", r.id},
              {"outcome", static_cast<int>(r.outcome)},
              {"reason", r.reason},
              {"http_status", r.http_status},
              {"error_body", r.error_body},
              {"scheduled", Rel(r.scheduled_ns, t0_ns)},
              {"send", Rel(r.send_ns, t0_ns)},
              {"first_send", Rel(r.first_send_ns, t0_ns)},
              {"written", Rel(r.written_ns, t0_ns)},
              {"first_byte", Rel(r.first_byte_ns, t0_ns)},
              {"done", Rel(r.done_ns, t0_ns)},
              {"events", std::move(events)},
              {"answer", r.answer},
              {"reasoning", r.reasoning},
              {"tool_calls", std::move(tools)},
              {"finish_reason", r.finish_reason},
              {"usage", json::array({r.usage.prompt_tokens, r.usage.completion_tokens,
                                     r.usage.reasoning_tokens, r.usage.cached_tokens})},
              {"server_model", r.server_model},
              {"timings", r.timings_json},
              {"timings_predicted_n", r.timings_predicted_n},
              {"sim", r.sim_json},
              {"stream_done", r.stream_done},
              {"streamed", r.streamed},
              {"invalid_utf8", r.invalid_utf8},
              {"retries", r.retries},
              {"retry_reasons", r.retry_reasons}};
}

Result<ChatResponse> ResponseFromJson(const json& j, std::int64_t t0_ns) {
  ChatResponse r;
  try {
    r.id = j.at("id").get<std::uint64_t>();
    const int outcome = j.at("outcome").get<int>();
    if (outcome < 0 || outcome > static_cast<int>(Outcome::kCancelled)) {
      return MakeError(ErrorCode::kSetup, "recorded response has an unknown outcome");
    }
    r.outcome = static_cast<Outcome>(outcome);
    r.reason = j.at("reason").get<std::string>();
    r.http_status = j.at("http_status").get<int>();
    r.error_body = j.at("error_body").get<std::string>();
    r.scheduled_ns = Abs(j.at("scheduled").get<std::int64_t>(), t0_ns);
    r.send_ns = Abs(j.at("send").get<std::int64_t>(), t0_ns);
    r.first_send_ns = Abs(j.at("first_send").get<std::int64_t>(), t0_ns);
    r.written_ns = Abs(j.value("written", std::int64_t{0}), t0_ns);  // absent in earlier journals
    r.first_byte_ns = Abs(j.at("first_byte").get<std::int64_t>(), t0_ns);
    r.done_ns = Abs(j.at("done").get<std::int64_t>(), t0_ns);
    for (const json& e : j.at("events")) {
      TokenEvent ev;
      ev.t_ns = Abs(e.at(0).get<std::int64_t>(), t0_ns);
      ev.tokens = e.at(1).get<std::int32_t>();
      ev.kinds = e.at(2).get<std::uint8_t>();
      ev.answer_end = e.at(3).get<std::uint32_t>();
      ev.reasoning_end = e.at(4).get<std::uint32_t>();
      r.events.push_back(ev);
    }
    r.answer = j.at("answer").get<std::string>();
    r.reasoning = j.at("reasoning").get<std::string>();
    for (const json& t : j.at("tool_calls")) {
      r.tool_calls.push_back(
          {t.at(0).get<std::string>(), t.at(1).get<std::string>(), t.at(2).get<std::string>()});
    }
    r.finish_reason = j.at("finish_reason").get<std::string>();
    const json& u = j.at("usage");
    r.usage = {u.at(0).get<int>(), u.at(1).get<int>(), u.at(2).get<int>(), u.at(3).get<int>()};
    r.server_model = j.at("server_model").get<std::string>();
    r.timings_json = j.at("timings").get<std::string>();
    r.timings_predicted_n = j.at("timings_predicted_n").get<int>();
    r.sim_json = j.at("sim").get<std::string>();
    r.stream_done = j.at("stream_done").get<bool>();
    r.streamed = j.at("streamed").get<bool>();
    r.invalid_utf8 = j.at("invalid_utf8").get<bool>();
    r.retries = j.at("retries").get<int>();
    r.retry_reasons = j.at("retry_reasons").get<std::vector<std::string>>();
  } catch (const json::exception& e) {
    return MakeError(ErrorCode::kSetup,
                     std::string("recorded response is not readable: ") + e.what());
  }
  return r;
}

json HttpResponseToJson(const HttpResponse& r) {
  return json{{"status", r.status},
              {"body", r.body},
              {"content_type", r.content_type},
              {"server", r.server_header}};
}

Result<HttpResponse> HttpResponseFromJson(const json& j) {
  HttpResponse r;
  try {
    r.status = j.at("status").get<int>();
    r.body = j.at("body").get<std::string>();
    r.content_type = j.at("content_type").get<std::string>();
    r.server_header = j.at("server").get<std::string>();
  } catch (const json::exception& e) {
    return MakeError(ErrorCode::kSetup,
                     std::string("recorded response is not readable: ") + e.what());
  }
  return r;
}

}  // namespace sb::client
