// SuiteRunner: the modality probes, a test's messages and media, and one attempt at a test
// (a request, its stream watched for loops and runaway length, the answer checked) (runner.h).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/stats.h"
#include "suite/checkers.h"
#include "suite/loop.h"
#include "suite/runner.h"
#include "suite/runner_internal.h"
#include "suite/text.h"

namespace sb::suite {

using nlohmann::json;
using namespace detail;  // NOLINT: the runner's own helpers (runner_internal.h)

Result<std::string> SuiteRunner::MediaParts(const MediaRef& ref) {
  const std::string key = fmt::format("{}:{}:{}", static_cast<int>(ref.kind), ref.name,
                                      transport_.count("video") ? transport_["video"] : "");
  if (auto it = part_cache_.find(key); it != part_cache_.end()) {
    return it->second;
  }
  auto asset = ref.is_file ? media::LoadFile(ref.name) : media::Generate(ref.name);
  if (!asset) {
    return asset.error();
  }
  json parts = json::array();
  switch (ref.kind) {
    case media::Kind::kImage:
      parts.push_back(
          json{{"type", "image_url"}, {"image_url", {{"url", media::DataUri(*asset)}}}});
      break;
    case media::Kind::kVideo: {
      const std::string how = transport_.count("video") ? transport_["video"] : "video_url";
      if (how == "frames") {
        if (ref.is_file) {
          return MakeError(ErrorCode::kSetup,
                           fmt::format("{} is a video file: frames can be sent only for "
                                       "catalogue videos (the server refuses video_url)",
                                       ref.name));
        }
        auto frames = media::VideoFrames(ref.name, options_.video_frames);
        if (!frames) {
          return frames.error();
        }
        for (const auto& f : *frames) {
          parts.push_back(json{{"type", "image_url"}, {"image_url", {{"url", media::DataUri(f)}}}});
        }
      } else {
        parts.push_back(
            json{{"type", "video_url"}, {"video_url", {{"url", media::DataUri(*asset)}}}});
      }
      break;
    }
    case media::Kind::kAudio:
      parts.push_back(
          json{{"type", "input_audio"},
               {"input_audio",
                {{"data", media::Base64(asset->bytes)}, {"format", AudioFormat(*asset)}}}});
      break;
  }
  std::string text = parts.dump();
  part_cache_[key] = text;
  return text;
}

SuiteRunner::Probe SuiteRunner::ProbeOne(const std::string& modality, const std::string& how) {
  Probe p;
  json parts = json::array();
  if (modality == "image" || how == "frames") {
    auto a = media::Generate("probe_image");
    if (!a) {
      p.unknown = true;
      p.reason = a.error().message;
      return p;
    }
    parts.push_back(json{{"type", "image_url"}, {"image_url", {{"url", media::DataUri(*a)}}}});
  } else if (modality == "video") {
    auto a = media::Generate("probe_video");
    if (!a) {
      p.unknown = true;
      p.reason = a.error().message;
      return p;
    }
    parts.push_back(json{{"type", "video_url"}, {"video_url", {{"url", media::DataUri(*a)}}}});
  } else {
    auto a = media::Generate("probe_audio");
    if (!a) {
      p.unknown = true;
      p.reason = a.error().message;
      return p;
    }
    parts.push_back(json{{"type", "input_audio"},
                         {"input_audio", {{"data", media::Base64(a->bytes)}, {"format", "wav"}}}});
  }
  parts.push_back(json{{"type", "text"}, {"text", kProbePrompt}});
  client::ChatParams params;
  params.model = target_.model;
  params.messages.push_back({"user", kProbePrompt, parts.dump()});
  params.max_tokens = 8;
  client::ChatCall call;
  call.id = next_id_++;
  call.body = client::BuildChatBody(params, target_.kind);
  call.total_timeout = std::chrono::milliseconds(120'000);
  if (const auto request = options_.profile.request_timeout;
      request.count() > 0 && request < call.total_timeout) {
    call.total_timeout = request;  // --request-timeout-s holds for the probes too
  }
  auto rs = client_.RunChats(std::span(&call, 1), {}, stop_);
  const client::ChatResponse& r = rs.front();
  ++requests_;
  session_.ObserveResponse(r);
  if (on_sample_) {
    on_sample_(perf::Sample{
        perf::MakeRecord(r, "probe", modality + (how.empty() ? "" : " " + how), t0_ns_),
        std::make_shared<const json>(json{{"probe", modality}})});
  }
  p.http_status = r.http_status;
  p.ms = r.done_ns > r.send_ns && r.send_ns != 0 ? static_cast<double>(r.done_ns - r.send_ns) / 1e6
                                                 : 0;
  if (r.outcome == client::Outcome::kOk) {
    p.supported = true;
    return p;
  }
  p.reason = r.reason;
  // Refused: a known refusal message, or a plain "bad request" for a minimal valid request.
  // Authentication, a missing model or rate limiting say nothing about the modality.
  const bool bad_request =
      r.http_status == 400 || r.http_status == 415 || r.http_status == 422 || r.http_status == 501;
  if (r.outcome == client::Outcome::kHttpError &&
      (bad_request ||
       IsUnsupportedError(r.http_status, r.error_body.empty() ? r.reason : r.error_body))) {
    return p;  // refused
  }
  ++failed_requests_;
  p.unknown = true;
  return p;
}

void SuiteRunner::ProbeModalities(const std::vector<const TestSpec*>& tests) {
  std::vector<std::string> needed;
  for (const TestSpec* t : tests) {
    for (const std::string& m : t->Modalities()) {
      if (std::find(needed.begin(), needed.end(), m) == needed.end()) {
        needed.push_back(m);
      }
    }
  }
  auto record = [&](const std::string& modality, const std::string& how, const Probe& p) {
    json j = {{"transport", how},
              {"supported", p.unknown ? json(nullptr) : json(p.supported)},
              {"http_status", p.http_status == 0 ? json(nullptr) : json(p.http_status)},
              {"reason", p.reason.empty() ? json(nullptr) : json(p.reason)},
              {"ms", p.ms}};
    probes_[modality + (how.empty() ? "" : ":" + how)] = j;
  };
  auto has = [&](const char* m) {
    return std::find(needed.begin(), needed.end(), m) != needed.end();
  };
  const bool video_frames_possible = options_.video != VideoTransport::kVideoUrl;
  std::optional<Probe> image;
  if (has("image") || (has("video") && video_frames_possible)) {
    if (stop_.stop_requested()) {
      return;
    }
    image = ProbeOne("image", "image_url");
    record("image", "image_url", *image);
    if (!image->supported && !image->unknown) {
      unsupported_["image"] = image->reason;
    }
    transport_["image"] = "image_url";
    if (on_progress_) {
      on_progress_(fmt::format("probe image: {}", image->supported ? "accepted"
                                                  : image->unknown
                                                      ? "probe failed: " + image->reason
                                                      : "refused: " + image->reason));
    }
  }
  if (has("video")) {
    if (stop_.stop_requested()) {
      return;
    }
    const bool image_ok = image && (image->supported || image->unknown);
    if (options_.video == VideoTransport::kFrames) {
      transport_["video"] = "frames";
      if (image && !image_ok) {
        unsupported_["video"] =
            "video sent as frames, and the server refuses images: " + image->reason;
      }
    } else {
      Probe v = ProbeOne("video", "video_url");
      record("video", "video_url", v);
      if (v.supported || v.unknown) {
        transport_["video"] = "video_url";
      } else if (options_.video == VideoTransport::kAuto && image_ok) {
        transport_["video"] = "frames";
        Warn(
            fmt::format("The server refused video_url ({}); videos are sent as {} frames each, "
                        "as images.",
                        v.reason, options_.video_frames));
      } else {
        transport_["video"] = "video_url";
        unsupported_["video"] = v.reason;
      }
      if (on_progress_) {
        on_progress_(fmt::format(
            "probe video: {}", transport_["video"] == "frames" ? "video_url refused, sending frames"
                               : unsupported_.count("video")   ? "refused: " + v.reason
                                                               : "accepted"));
      }
    }
  }
  if (has("audio")) {
    if (stop_.stop_requested()) {
      return;
    }
    Probe a = ProbeOne("audio", "input_audio");
    record("audio", "input_audio", a);
    transport_["audio"] = "input_audio";
    if (!a.supported && !a.unknown) {
      unsupported_["audio"] = a.reason;
    }
    if (on_progress_) {
      on_progress_(fmt::format("probe audio: {}", a.supported ? "accepted"
                                                  : a.unknown ? "probe failed: " + a.reason
                                                              : "refused: " + a.reason));
    }
  }
}

Result<SuiteRunner::Prepared> SuiteRunner::Prepare(const TestSpec& test) {
  Prepared p;
  p.input_kind = InputKind(test);
  for (const std::string& m : test.Modalities()) {
    if (auto it = unsupported_.find(m); it != unsupported_.end()) {
      p.unsupported = fmt::format("the server refuses {} input: {}", m, it->second);
      return p;
    }
    if (auto it = transport_.find(m); it != transport_.end()) {
      p.transports[m] = it->second;
    }
    p.features.push_back(m);
    if (auto it = p.transports.find(m);
        m == "video" && it != p.transports.end() && it->second == "frames") {
      p.features.push_back("image");
    }
  }
  if (!test.tools_json.empty()) {
    p.features.push_back("tools");
  }
  for (const MessageSpec& m : test.messages) {
    client::ChatMessage msg;
    msg.role = m.role;
    msg.content = m.text;
    if (!m.media.empty()) {
      json parts = json::array();
      for (const MediaRef& ref : m.media) {
        auto media_parts = MediaParts(ref);
        if (!media_parts) {
          return media_parts.error().WithContext(fmt::format("media '{}'", ref.name));
        }
        for (json& part : json::parse(*media_parts)) {
          parts.push_back(std::move(part));
        }
      }
      if (!m.text.empty()) {
        parts.push_back(json{{"type", "text"}, {"text", m.text}});
      }
      msg.content_json = parts.dump();
    }
    p.messages.push_back(std::move(msg));
  }
  return p;
}

// An attempt's time limit, first that applies: the demo scenario's per-test limit,
// --test-timeout-s, a `timeout_s` on the test itself, --request-timeout-s, the suite's default
// `timeout_s` (300 s unless the suite file says).
SuiteRunner::AttemptLimit SuiteRunner::TestTimeLimit(const TestSpec& test) const {
  if (const auto by_test = options_.timeout_by_test.find(test.id);
      by_test != options_.timeout_by_test.end()) {
    return {by_test->second, false};
  }
  if (options_.timeout_s) {
    return {*options_.timeout_s, false};
  }
  const auto request = options_.profile.request_timeout;
  if (!test.own_timeout && request.count() > 0) {
    return {static_cast<double>(request.count()) / 1e3, true};
  }
  return {test.timeout_s, false};
}

namespace {

// Watches an attempt's stream: cancels it on a loop in the answer or the reasoning, or when
// answer and reasoning together pass `cap_bytes`; notes when a </think> tag closed the thinking.
struct StreamWatch {
  StreamWatch(const TestSpec& test, std::size_t cap)
      : answer_loop(test.loop_span, test.loop_repeats, test.loop_repeats * kNearRepeatFactor),
        reasoning_loop(test.loop_span, test.loop_repeats, test.loop_repeats * kNearRepeatFactor),
        cap_bytes(cap) {}

  LoopDetector answer_loop;
  LoopDetector reasoning_loop;
  std::size_t cap_bytes;
  std::size_t answer_seen = 0, reasoning_seen = 0;
  std::string loop_channel;  // "answer" or "reasoning" once a loop is found
  bool over_cap = false;
  std::int64_t think_end_ns = 0;

  // Whether the stream may go on.
  bool OnEvent(const client::ChatResponse& r) {
    if (r.answer.size() > answer_seen) {
      const std::string_view fresh = std::string_view(r.answer).substr(answer_seen);
      if (think_end_ns == 0 && !r.events.empty()) {
        const std::size_t from = answer_seen > 12 ? answer_seen - 12 : 0;
        if (r.answer.find("</think", from) != std::string::npos) {
          think_end_ns = r.events.back().t_ns;
        }
      }
      answer_seen = r.answer.size();
      if (answer_loop.Feed(fresh)) {
        loop_channel = "answer";
        return false;
      }
    }
    if (r.reasoning.size() > reasoning_seen) {
      const std::string_view fresh = std::string_view(r.reasoning).substr(reasoning_seen);
      reasoning_seen = r.reasoning.size();
      if (reasoning_loop.Feed(fresh)) {
        loop_channel = "reasoning";
        return false;
      }
    }
    if (r.answer.size() + r.reasoning.size() > cap_bytes) {
      over_cap = true;
      return false;
    }
    return true;
  }

  bool looped() const { return !loop_channel.empty(); }

  const LoopDetector& loop() const {
    return loop_channel == "answer" ? answer_loop : reasoning_loop;
  }
};

int CompletionTokens(const client::ChatResponse& r, const perf::RequestMetrics& m) {
  return r.usage.completion_tokens >= 0 ? r.usage.completion_tokens : m.completion_tokens;
}

// The answer without its reasoning (fields or <think> tags), the reasoning's tokens (counted by
// the server, else estimated) and its time.
void SplitReasoning(const client::ChatResponse& r, std::int64_t think_end_ns,
                    SuiteRunner::Attempt& a) {
  SplitReply split = SplitThinking(r.answer);
  a.answer = split.had_tags ? split.answer : r.answer;
  a.reasoning = r.reasoning;
  if (split.had_tags && !split.reasoning.empty()) {
    a.reasoning += (a.reasoning.empty() ? "" : "\n") + split.reasoning;
  }
  if (r.usage.reasoning_tokens > 0) {
    a.reasoning_tokens = r.usage.reasoning_tokens;
  } else if (!a.reasoning.empty()) {
    a.reasoning_estimated = true;
    if (!r.reasoning.empty()) {
      int n = 0;
      for (const auto& ev : r.events) {
        if (ev.kinds & client::TokenEvent::kReasoning) {
          n += ev.tokens >= 0 ? ev.tokens : 1;
        }
      }
      a.reasoning_tokens = n;
    } else {
      const double share = static_cast<double>(split.reasoning.size()) /
                           static_cast<double>(std::max<std::size_t>(1, r.answer.size()));
      a.reasoning_tokens = static_cast<int>(std::lround(a.metrics.completion_tokens * share));
    }
  } else if (r.usage.reasoning_tokens == 0) {
    a.reasoning_tokens = 0;
  }
  if (!a.reasoning.empty() && !r.events.empty() && a.metrics.ttft_ms) {
    const std::int64_t first = r.events.front().t_ns;
    std::int64_t end = think_end_ns;
    if (end == 0) {
      end = a.metrics.ttfa_ms && !split.had_tags
                ? r.send_ns + static_cast<std::int64_t>(*a.metrics.ttfa_ms * 1e6)
                : r.events.back().t_ns;
    }
    a.reasoning_ms = static_cast<double>(end - first) / 1e6;
  }
}

// A timeout's reason, naming the bound and the flag that raises it.
std::string TimeoutReason(const client::ChatResponse& r, const SuiteRunner::AttemptLimit& limit) {
  if (r.reason.find("total time") != std::string::npos) {
    return limit.from_request_timeout
               ? fmt::format(
                     "no answer within --request-timeout-s {} s (the whole-request limit; "
                     "raise it, or give this test its own with --test-timeout-s)",
                     Seconds(limit.seconds))
               : fmt::format(
                     "no answer within the test's time limit of {} s (raise with "
                     "--test-timeout-s)",
                     Seconds(limit.seconds));
  }
  if (r.reason.starts_with("no first byte")) {
    return r.reason + " (the client's first-byte limit; raise with --first-byte-timeout-s)";
  }
  if (r.reason.starts_with("idle gap")) {
    return r.reason + " (the client's idle limit; raise with --idle-timeout-s)";
  }
  return r.reason;
}

// The status of an attempt whose stream was cut short or failed; false when it came back in full
// (the check judges it).
bool JudgeUnfinished(const client::ChatResponse& r, const StreamWatch& w, int max_tokens,
                     const SuiteRunner::AttemptLimit& limit,
                     const std::vector<std::string>& features, bool stop_requested,
                     SuiteRunner::Attempt& a) {
  const bool cancelled_here =
      r.outcome == client::Outcome::kCancelled && (w.looped() || w.over_cap);
  if (r.outcome == client::Outcome::kCancelled && !cancelled_here && stop_requested) {
    a.interrupted = true;
  } else if (w.looped()) {
    const LoopDetector& d = w.loop();
    a.status = Status::kLoop;
    a.reason = fmt::format(
        "the {} repeats a {}-token span {} times{} (\"{}\"); cancelled after "
        "{}{} tokens",
        w.loop_channel, d.span(), d.repeats(), d.near() ? " with only its numbers changing" : "",
        d.span_text(), r.usage.completion_tokens >= 0 ? "" : "about ",
        Thousands(CompletionTokens(r, a.metrics)));
  } else if (w.over_cap) {
    a.status = Status::kError;
    a.reason = fmt::format(
        "answer over {} bytes (4× max_tokens {} at 4 bytes a token: the server does not stop "
        "at max_tokens); cancelled",
        Thousands(static_cast<long long>(w.cap_bytes)), Thousands(max_tokens));
  } else if (r.outcome == client::Outcome::kTimeout) {
    a.status = Status::kTimeout;
    a.reason = TimeoutReason(r, limit);
  } else if (r.outcome == client::Outcome::kHttpError) {
    // UNSUPPORTED only when the error refuses a modality or feature this test uses (llama.cpp
    // answers an image without mmproj with HTTP 500); any other 4xx/5xx is ERROR.
    const std::string refused =
        RefusedFeature(r.http_status, r.error_body.empty() ? r.reason : r.error_body);
    a.status = RefusalApplies(refused, features) ? Status::kUnsupported : Status::kError;
    a.reason = r.reason;
  } else if (r.outcome != client::Outcome::kOk) {
    a.status = Status::kError;
    a.reason = r.reason;
  } else if (r.finish_reason == "length" && Trim(a.answer).empty() && r.tool_calls.empty()) {
    a.status = Status::kEmpty;
    const std::string tokens = Thousands(CompletionTokens(r, a.metrics));
    a.reason = a.reasoning.empty()
                   ? fmt::format(
                         "no answer: the budget ran out before any answer text (finish_reason "
                         "length at {} tokens)",
                         tokens)
                   : fmt::format(
                         "no answer: thinking used the whole budget (finish_reason length at {} "
                         "tokens)",
                         tokens);
  } else {
    return false;
  }
  return true;
}

}  // namespace

SuiteRunner::Attempt SuiteRunner::RunAttempt(const TestSpec& test, const Prepared& prepared,
                                             int max_tokens, int attempt_number) {
  Attempt a;
  a.max_tokens = max_tokens;
  client::ChatParams params;
  params.model = target_.model;
  params.messages = prepared.messages;
  params.max_tokens = max_tokens;
  params.temperature = options_.temperature ? options_.temperature : test.temperature;
  params.enable_thinking = options_.thinking ? options_.thinking : test.thinking;
  params.tools_json = test.tools_json;
  params.tool_choice_json = test.tool_choice_json;
  params.continuous_usage = options_.continuous_usage;
  const AttemptLimit limit = TestTimeLimit(test);

  client::ChatCall call;
  call.id = next_id_++;
  call.body = client::BuildChatBody(params, target_.kind);
  call.total_timeout = std::chrono::milliseconds(static_cast<long long>(limit.seconds * 1000));
  // A server that ignores max_tokens is stopped at the token cap perf uses, not only by the
  // answer's byte cap below (a fast endless stream of short tokens took 20-80 s to reach it).
  call.max_stream_tokens =
      perf::kStreamTokensFactor * std::max(1, max_tokens) + perf::kStreamTokensMargin;

  StreamWatch watch(
      test, static_cast<std::size_t>(std::max(1, max_tokens)) * kBytesPerToken * kAnswerCapFactor);
  client::RunHooks hooks;
  hooks.on_event = [&watch](const client::ChatResponse& r) { return watch.OnEvent(r); };

  std::optional<perf::SpecCounters> before = Scrape();
  auto rs = client_.RunChats(std::span(&call, 1), hooks, stop_);
  a.response = std::move(rs.front());
  const client::ChatResponse& r = a.response;
  if (before) {
    if (auto after = Scrape()) {
      spec_by_input_[prepared.input_kind].Add(*before, *after);
    }
  } else {
    perf::AddTimingsDrafts(r.timings_json, spec_by_input_[prepared.input_kind]);
  }
  a.metrics = perf::ComputeMetrics(r);
  a.time_s = r.send_ns != 0 && r.done_ns > r.send_ns
                 ? static_cast<double>(r.done_ns - r.send_ns) / 1e9
                 : 0;
  // --retries is the client's (ClientOptions::retries): it counts what it made; reported only
  // when it made some.
  if (r.retries > 0) {
    a.retries = r.retries;
  }
  SplitReasoning(r, watch.think_end_ns, a);

  if (!JudgeUnfinished(r, watch, max_tokens, limit, prepared.features, stop_.stop_requested(), a)) {
    Reply reply{a.answer, r.tool_calls, r.finish_reason};
    CheckEnv env{options_.code};
    env.code.stop = stop_;
    CheckOutcome o = RunCheck(*test.check, reply, env);
    // Stopped while its code ran: no verdict; the test is left to --resume like one whose
    // request was in flight.
    a.interrupted = o.stopped;
    a.status = o.pass ? Status::kPass : Status::kFail;
    a.reason = o.reason;
    a.check_detail = o.detail;
    if (!o.pass && r.finish_reason == "length") {
      a.reason += fmt::format("; the answer was cut at max_tokens ({})", Thousands(max_tokens));
    }
    if (!o.pass && Trim(a.answer).empty() && r.tool_calls.empty()) {
      a.reason = "empty answer (finish_reason " +
                 (r.finish_reason.empty() ? std::string("none") : r.finish_reason) + ")" +
                 (a.reasoning.empty() ? "" : " after reasoning");
    }
  }

  // A server that stopped answering ends the suite (the session's ServerWatch; Run checks it).
  session_.ObserveResponse(r);
  Account(test, a, watch.looped(), watch.over_cap, attempt_number);
  return a;
}

// Totals and the sample line. Only responses received in full (and LOOPs, cancelled here
// after real output) count their tokens and time: a failed stream's partial count would
// inflate the suite's tok/s (3 tokens in 0.02 s of a stream that then stalled).
void SuiteRunner::Account(const TestSpec& test, Attempt& a, bool looped, bool over_cap,
                          int attempt_number) {
  const client::ChatResponse& r = a.response;
  a.counted = r.send_ns != 0 && ((r.outcome == client::Outcome::kOk && !over_cap) || looped);
  if (r.send_ns != 0) {
    ++requests_;
    if (!a.counted) {
      ++failed_requests_;
    }
  }
  if (a.counted) {
    completion_tokens_ += CompletionTokens(r, a.metrics);
    std::int64_t end = r.events.empty() ? r.done_ns : r.events.back().t_ns;
    if (end > r.send_ns) {
      wall_time_s_ += static_cast<double>(end - r.send_ns) / 1e9;
    }
  }
  if (on_sample_ && r.send_ns != 0) {
    // The perf record, then what a suite attempt adds to it.
    auto extra = std::make_shared<json>();
    json& rec = *extra;
    rec["test"] = test.id;
    rec["attempt"] = attempt_number;
    rec["max_tokens"] = a.max_tokens;
    rec["test_status"] = a.interrupted ? json(nullptr) : json(std::string(StatusName(a.status)));
    rec["answer"] = r.answer;
    rec["reasoning"] = r.reasoning;
    if (!r.tool_calls.empty()) {
      rec["tool_calls"] = ToolCallsJson(r.tool_calls);
    }
    on_sample_(perf::Sample{
        perf::MakeRecord(r, "suite", fmt::format("{} attempt {}", test.id, attempt_number), t0_ns_),
        std::move(extra)});
  }
}

}  // namespace sb::suite
