// The speed profiles of `servebench perf` (and of `servebench run` when no suite is given):
// decode, concurrency, max-tokens, ttft. Each returns the JSON object documented in
// docs/results-schema.md (perf.<profile>) and streams every finished request to a sample sink.
// Requests run through client::Client; nothing here touches the wire.
// Thread safety: a Session is used from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "client/chat.h"
#include "client/http_client.h"

namespace sb::perf {

struct ProfileOptions {
  int tokens = 256;                                  // forced output tokens (decode, concurrency)
  int runs = 3;                                      // repetitions (decode, ttft)
  std::vector<int> levels = {1, 2, 4, 8};            // concurrency levels
  std::vector<int> lengths = {64, 128, 256, 512, 1024};  // max-tokens profile
  int length_runs = 1;                               // repetitions per max-tokens length
  int ttft_max_tokens = 16;                          // output budget of a TTFT request
  int warmup = 1;                                    // warm-up requests per session (excluded)
  std::optional<bool> enable_thinking;               // chat_template_kwargs.enable_thinking
  std::optional<double> temperature;
  std::chrono::milliseconds request_timeout{0};      // per request total limit (0 = none)
};

// The profile names accepted by --profile, in the order `run` executes them.
const std::vector<std::string>& ProfileNames();

// "max-tokens" -> "max_tokens" (the results.json key).
std::string ProfileKey(const std::string& name);

struct SessionTarget {
  std::string model;
  client::ServerKind kind = client::ServerKind::kUnknown;
};

// Receives each finished request's record (samples.jsonl line) as soon as it finishes.
using SampleSink = std::function<void(const nlohmann::json&)>;
// Receives short human progress lines ("decode run 2/3: 199.1 tok/s").
using ProgressSink = std::function<void(const std::string&)>;

class Session {
 public:
  Session(client::Client& client, SessionTarget target, SampleSink on_sample,
          ProgressSink on_progress, std::stop_token stop, std::int64_t t0_ns);

  // Runs one profile by name. REQUIRES: name is in ProfileNames().
  nlohmann::json Run(const std::string& name, const ProfileOptions& options);

  nlohmann::json Decode(const ProfileOptions& options);
  nlohmann::json Concurrency(const ProfileOptions& options);
  nlohmann::json MaxTokens(const ProfileOptions& options);
  nlohmann::json Ttft(const ProfileOptions& options);

  // The results.json "summary" speed fields over every measured (non-warm-up) request so far.
  nlohmann::json Summary() const;

  // Problems a reader must know about (estimated token counts, failed requests ...).
  const std::vector<std::string>& warnings() const { return warnings_; }

  bool interrupted() const { return stop_.stop_requested(); }

 private:
  std::vector<client::ChatResponse> Execute(std::vector<client::ChatParams> params,
                                            const std::string& profile,
                                            const std::vector<std::string>& labels);
  void WarmUp(const ProfileOptions& options);
  client::ChatParams Params(const ProfileOptions& options, const std::string& prompt,
                            int max_tokens, bool force);
  nlohmann::json Record(const client::ChatResponse& r, const std::string& profile,
                        const std::string& label, bool warmup) const;
  void Warn(const std::string& text);

  client::Client& client_;
  SessionTarget target_;
  SampleSink on_sample_;
  ProgressSink on_progress_;
  std::stop_token stop_;
  std::int64_t t0_ns_;
  std::uint64_t next_id_ = 1;
  std::uint64_t nonce_ = 0;  // makes every prompt unique (defeats prefix caching)
  int warmups_done_ = 0;
  // Totals over measured requests, for Summary().
  long long requests_ = 0, failed_ = 0, completion_tokens_ = 0;
  double wall_time_s_ = 0;
  bool any_estimated_ = false;
  std::vector<std::string> warnings_;
};

// Serialises a statistics object {"n","min","median","mean","max","p50","p90","p99","stddev",
// "values"}; an empty series is {"n": 0}.
nlohmann::json StatsJson(const std::vector<double>& values);

// A deterministic English filler text of about `words` words (for long prompts).
std::string FillerText(int words, std::uint64_t seed);

}  // namespace sb::perf
