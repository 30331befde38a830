// Runs quality suites against a server and gives every test one status (docs/suites.md "Statuses"):
// PASS / FAIL from the checker, EMPTY (finish_reason length with no answer), LOOP (the stream
// repeated itself and was cancelled), UNSUPPORTED (the server refused a modality or feature),
// ERROR (transport, 5xx, malformed stream), TIMEOUT (no answer within the test's time limit).
// Each modality is probed once per run before the tests, so a text-only server costs one
// request per modality. Speed-profile tests run through perf::Session and become one test per
// row. Every request is appended to samples.jsonl as it finishes (with the full answer and
// reasoning); results.json gets the tests[] entries (docs/results-schema.md).
// Thread safety: a SuiteRunner is used from one thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "client/chat.h"
#include "client/http_client.h"
#include "perf/profiles.h"
#include "perf/prometheus.h"
#include "sandbox/sandbox.h"
#include "suite/suite.h"

namespace sb::suite {

enum class Status { kPass, kFail, kEmpty, kLoop, kUnsupported, kError, kTimeout };

// "PASS", "FAIL", "EMPTY", "LOOP", "UNSUPPORTED", "ERROR", "TIMEOUT".
std::string_view StatusName(Status status);

// The modality or feature an error answer refuses: "image", "video", "audio", "tools", or
// "media" for a refusal of multimodal input that names no modality ("unsupported content
// type", "not a multimodal model"); "" when it is no refusal. vLLM "At most 0 image(s) may be
// provided" and llama.cpp's HTTP 500 "image input is not supported ... mmproj" are "image";
// "tool choice requires --enable-auto-tool-choice" is "tools". Only 4xx, 500 and 501 (and 0:
// no status) can be refusals. `text` is the error body or the reason built from it.
std::string RefusedFeature(int http_status, std::string_view text);

// Whether a refusal (RefusedFeature) concerns a request that uses `features` ("image", "video",
// "audio", "tools"): the same feature, or "media" and any media. A test is UNSUPPORTED only
// then; a text-only test's HTTP 500 is ERROR whatever its message says.
bool RefusalApplies(std::string_view refused, const std::vector<std::string>& features);

// Whether an error answer refuses some modality or feature (RefusedFeature is not "").
bool IsUnsupportedError(int http_status, std::string_view text);

enum class VideoTransport { kAuto, kVideoUrl, kFrames };

struct RunOptions {
  // Budgets for EMPTY reruns: an EMPTY attempt is retried with each budget larger than the
  // last one tried, in order (--rerun-empty; default 8192,16384,32768). Empty = no reruns.
  std::vector<int> rerun_budgets;
  int repeat = 1;                                 // each test this many times (--repeat)
  std::optional<double> timeout_s;                // overrides every test's time limit
  std::map<std::string, double> timeout_by_test;  // per test id; wins over timeout_s
  std::optional<bool> thinking;                   // overrides every test's thinking setting
  std::optional<double> temperature;              // overrides every test's temperature
  VideoTransport video = VideoTransport::kAuto;
  int video_frames = 8;           // frames per video when sent as images
  std::vector<std::string> only;  // run only these test ids or categories
  sandbox::CodeOptions code;      // the code checker's interpreter, compiler, limits
  perf::ProfileOptions profile;   // base options of speed-profile tests
  bool continuous_usage = false;  // stream_options.continuous_usage_stats
};

struct SuiteTarget {
  std::string model;
  client::ServerKind kind = client::ServerKind::kUnknown;
  std::int64_t max_model_len = 0;
};

class SuiteRunner {
 public:
  // `session` runs the speed-profile tests (and shares the run's request ids and totals).
  SuiteRunner(client::Client& client, SuiteTarget target, RunOptions options,
              perf::Session& session, perf::SampleSink on_sample, perf::ProgressSink on_progress,
              std::stop_token stop, std::int64_t t0_ns);

  // Runs the tests of `suite` that options.only selects (all by default), options.repeat times.
  // Returns early when stopped (the test in flight is dropped and listed as not run).
  void Run(const Suite& suite);

  // tests[] entries so far (docs/results-schema.md).
  const std::vector<nlohmann::json>& tests() const { return tests_; }

  // Test counts and rates (total, pass, fail, empty, loop, unsupported, error, timeout,
  // pass_rate, effective_pass_rate, pass_rate_ci95) over tests().
  nlohmann::json StatusSummary() const;

  // results.json "suite": names, tests run/not run, probes and transports, the suite's own
  // tokens/time/tok/s, pass@k with --repeat, speculative decoding by input kind.
  nlohmann::json SuiteJson() const;

  // perf.<profile> objects produced by speed-profile tests.
  const std::map<std::string, nlohmann::json>& perf_results() const { return perf_; }

  // Requests the suite sent and their totals (for the run's summary).
  long long requests() const { return requests_; }

  // True once the server stopped answering (the session's perf::ServerWatch): the suite ended.
  bool server_gone() const { return server_gone_ || session_.server_gone(); }

  long long failed_requests() const { return failed_requests_; }

  long long completion_tokens() const { return completion_tokens_; }

  double wall_time_s() const { return wall_time_s_; }

  const std::vector<std::string>& warnings() const { return warnings_; }

  // One attempt at a test and its time limit: the runner's own types (runner_internal.h),
  // public only so that its .cpp files' helpers can name them.
  struct Attempt;

  struct AttemptLimit {
    double seconds = 0;
    bool from_request_timeout = false;  // --request-timeout-s set it
  };

 private:
  struct Probe;
  struct Prepared;

  AttemptLimit TestTimeLimit(const TestSpec& test) const;

  void ProbeModalities(const std::vector<const TestSpec*>& tests);
  Probe ProbeOne(const std::string& modality, const std::string& transport);
  nlohmann::json RunTest(const TestSpec& test, int repeat);
  Attempt RunAttempt(const TestSpec& test, const Prepared& prepared, int max_tokens, int attempt);
  void Account(const TestSpec& test, Attempt& a, bool looped, bool over_cap, int attempt_number);
  void RunProfileTest(const TestSpec& test);
  Result<Prepared> Prepare(const TestSpec& test);
  Result<std::string> MediaParts(const MediaRef& ref);
  std::optional<perf::SpecCounters> Scrape();
  void Warn(const std::string& text);

  client::Client& client_;
  SuiteTarget target_;
  RunOptions options_;
  perf::Session& session_;
  perf::SampleSink on_sample_;
  perf::ProgressSink on_progress_;
  std::stop_token stop_;
  std::int64_t t0_ns_;
  std::uint64_t next_id_ = 1'000'000;  // request ids (the speed profiles count from 1)

  std::vector<nlohmann::json> tests_;
  std::vector<std::string> suites_run_;
  std::vector<std::string> not_run_;
  std::map<std::string, nlohmann::json> probes_;    // modality -> probe result
  std::map<std::string, std::string> transport_;    // modality -> how it is sent
  std::map<std::string, std::string> unsupported_;  // modality -> reason
  std::map<std::string, std::string> part_cache_;   // media key -> content-part JSON
  std::map<std::string, nlohmann::json> perf_;
  bool scrape_ = true;
  bool server_gone_ = false;  // the session's ServerWatch judged the server gone (warned once)
  std::map<std::string, perf::SpecWindow> spec_by_input_;  // "text", "image", "video", "audio"
  long long requests_ = 0, failed_requests_ = 0, completion_tokens_ = 0;
  double wall_time_s_ = 0;
  std::vector<std::string> warnings_;
};

}  // namespace sb::suite
