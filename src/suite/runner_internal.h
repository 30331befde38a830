// Internal to sb_suite: what runner.cpp and runner_attempt.cpp (the probes, a test's messages and
// media, one attempt) share: SuiteRunner's private state types and a few helpers.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/chat.h"
#include "media/media.h"
#include "perf/metrics.h"
#include "suite/runner.h"

namespace sb::suite {

namespace detail {

inline constexpr const char* kProbePrompt = "Reply with the word OK.";

// The most bytes a test's streamed text (answer and reasoning) may reach: 4× what max_tokens
// tokens hold at 4 bytes a token. A server that ignores max_tokens is cancelled there.
inline constexpr std::size_t kBytesPerToken = 4, kAnswerCapFactor = 4;

// 1234567 -> "1,234,567".
std::string Thousands(long long v);
// "12" for 10 s and more, else 3 significant digits.
std::string Seconds(double s);
// Tool calls as results.json holds them (arguments parsed when they are JSON).
nlohmann::json ToolCallsJson(const std::vector<client::ToolCall>& calls);
// "video", "image", "audio" or "text": the test's richest input.
std::string InputKind(const TestSpec& t);
// input_audio.format: the file's extension ("wav", "mp3", ...).
std::string AudioFormat(const media::Asset& a);

}  // namespace detail

struct SuiteRunner::Probe {
  bool supported = false;
  bool unknown = false;  // the probe itself failed (transport, 5xx): tests run anyway
  std::string reason;
  int http_status = 0;
  double ms = 0;
};

struct SuiteRunner::Prepared {
  std::vector<client::ChatMessage> messages;
  std::string unsupported;  // reason, when a modality is refused
  std::string input_kind;
  std::map<std::string, std::string> transports;  // modality -> transport used
  // What a refusal may name for this test: its modalities, "image" when videos go as frames,
  // "tools" when it sends tools (RefusalApplies).
  std::vector<std::string> features;
};

struct SuiteRunner::Attempt {
  Status status = Status::kError;
  std::string reason;
  bool interrupted = false;
  client::ChatResponse response;
  perf::RequestMetrics metrics;
  std::string answer;
  std::string reasoning;
  int reasoning_tokens = -1;
  bool reasoning_estimated = false;
  std::optional<double> reasoning_ms;
  int max_tokens = 0;
  std::string check_detail;
  // A response received in full (or a LOOP the runner cancelled): its tokens and time count in
  // the suite's totals and its token counts are reported. False for ERROR, TIMEOUT, cancelled.
  bool counted = false;
  double time_s = 0;           // send -> end of the response (the time waited, for a TIMEOUT)
  std::optional<int> retries;  // transport retries the client made, when it reports them
};

}  // namespace sb::suite
