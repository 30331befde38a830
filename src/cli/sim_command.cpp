// `servebench sim` (sim_command.h).
#include "cli/sim_command.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/signals.h"
#include "core/result.h"
#include "run/exit_codes.h"
#include "run/suites.h"

namespace sb::cli {

using run::Fail;
using run::kExitOk;

int RunSimCommand(SimCommand& c) {
  c.options.spec_accept = c.spec_accept;
  c.options.reject = c.reject;
  c.options.fault_kinds = c.fault_kinds;
  if (!c.answers.empty()) {
    auto suites = run::LoadSuites(c.answers);
    if (!suites) {
      return Fail(suites.error());
    }
    run::AnswerTweaks tweaks = c.demo ? run::DemoTweaks() : run::AnswerTweaks{};
    if (c.demo && c.reject.empty()) {
      c.options.reject = {"audio"};
    }
    tweaks.loop.insert(tweaks.loop.end(), c.answer_loop.begin(), c.answer_loop.end());
    tweaks.bad.insert(tweaks.bad.end(), c.answer_bad.begin(), c.answer_bad.end());
    auto faults = run::ParseAssignments(c.answer_fault, "--answer-fault");
    auto reasoning = run::ParseAssignments(c.answer_reasoning, "--answer-reasoning");
    if (!faults) {
      return Fail(faults.error());
    }
    if (!reasoning) {
      return Fail(reasoning.error());
    }
    for (const auto& [id, kind] : faults.value()) {
      tweaks.fault[id] = kind;
    }
    for (const auto& [id, n] : reasoning.value()) {
      try {
        tweaks.reasoning[id] = std::stoi(n);
      } catch (...) {
        return Fail(MakeError(ErrorCode::kUsage,
                              fmt::format("--answer-reasoning {}={}: not a number", id, n)));
      }
    }
    c.options.answers = run::SimAnswers(suites.value(), tweaks);
  } else if (c.demo || !c.answer_loop.empty() || !c.answer_bad.empty() || !c.answer_fault.empty() ||
             !c.answer_reasoning.empty()) {
    return Fail(MakeError(ErrorCode::kUsage,
                          "--demo and --answer-* need --answers SUITE (the suite to answer)"));
  }
  if (c.options.threads == 0) {  // one loop per core
    c.options.threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1U, 256U));
  }
  if (auto ok = sim::Validate(c.options); !ok) {
    return Fail(MakeError(ErrorCode::kUsage, ok.error().message));
  }
  auto server = sim::SimServer::Start(c.options);
  if (!server) {
    return Fail(server.error());
  }
  std::printf("listening on %s\n", server.value()->base_url().c_str());
  std::fflush(stdout);
  WaitForStopSignal();
  server.value()->Stop();
  return kExitOk;
}

namespace {

void AddSimOptions(CLI::App* cmd, SimCommand& c) {
  auto& o = c.options;
  cmd->add_option("--host", o.host, "Address to bind")->capture_default_str();
  cmd->add_option("--port", o.port, "Port (0 = any free port)")->capture_default_str();
  cmd->add_option("--model", o.model, "Model id it serves")->capture_default_str();
  cmd->add_option("--threads", o.threads,
                  "Event loops, one thread each, sharing the port (SO_REUSEPORT): for more "
                  "streams than one core can serve; the batch and the counters stay one engine's "
                  "(0 = one per core)")
      ->capture_default_str();
  cmd->add_option("--ttft-ms", o.ttft_ms, "Time to first token at an empty prompt")
      ->capture_default_str();
  cmd->add_option("--prefill-us-per-token", o.prefill_us_per_token,
                  "TTFT added per prompt token (µs)")
      ->capture_default_str();
  cmd->add_option("--itl-ms", o.itl_ms, "Decode step time of one stream")->capture_default_str();
  cmd->add_option("--jitter-ms", o.jitter_ms, "Uniform ± jitter per decode step")
      ->capture_default_str();
  cmd->add_option("--chars-per-token", o.chars_per_token,
                  "Prompt words cut into tokens of at most N characters, as a small vocabulary "
                  "(0 = a word is a token)")
      ->capture_default_str();
  cmd->add_flag("--plain-tokenize", o.plain_tokenize,
                "/tokenize takes plain text only, as llama.cpp's: a messages body is a 400");
  cmd->add_flag("--apply-template", o.apply_template,
                "Serve POST /apply-template as llama.cpp does (the chat template applied to "
                "messages, as text)");
  cmd->add_option("--slowdown", o.concurrency_slowdown,
                  "Step time grows by this fraction per extra running stream")
      ->capture_default_str();
  cmd->add_option("--max-batch", o.max_batch, "Streams decoded at once; the rest queue")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of every random choice")->capture_default_str();
  cmd->add_option("--output-tokens", o.default_output_tokens,
                  "Natural answer length when the request does not force one")
      ->capture_default_str();
  cmd->add_option("--thinking-tokens", o.thinking_tokens,
                  "Reasoning tokens before the answer when thinking is on")
      ->capture_default_str();
  cmd->add_option("--spec-tokens", o.spec_tokens, "Speculative draft tokens per step (0 = off)")
      ->capture_default_str();
  cmd->add_option("--spec-accept", c.spec_accept,
                  "Per-position acceptance rates, e.g. 0.86,0.67,0.55")
      ->delimiter(',');
  cmd->add_option("--reject", c.reject, "Modalities refused with HTTP 400: image,video,audio")
      ->delimiter(',')
      ->check(CLI::IsMember({"image", "video", "audio"}));
  cmd->add_option("--fault-rate", o.fault_rate, "Probability of a fault per chat request")
      ->capture_default_str();
  cmd->add_option("--fault-kinds", c.fault_kinds,
                  "Faults to draw from: reset,stall,malformed,500,429 (default), and "
                  "503,giant,badutf8,endless,done_open,done_only,huge_usage,huge_header when "
                  "named")
      ->delimiter(',')
      ->check(CLI::IsMember({"reset", "stall", "malformed", "500", "429", "503", "giant", "badutf8",
                             "endless", "done_open", "done_only", "huge_usage", "huge_header"}));
  cmd->add_option("--stall-ms", o.stall_ms, "How long the stall fault stops the stream")
      ->capture_default_str();
  cmd->add_option("--retry-after-s", o.retry_after_s,
                  "Retry-After of the 429 and 503 faults (seconds; fractions allowed)")
      ->capture_default_str();
  cmd->add_option("--giant-event-bytes", o.giant_event_bytes,
                  "Content bytes of the giant fault's one event")
      ->capture_default_str();
  cmd->add_flag("--gzip", o.gzip,
                "Compress responses (gzip) when the request's Accept-Encoding allows it");
  cmd->add_option("--request-log", o.request_log,
                  "Append one line per chat request to this file: the hash of its messages and "
                  "the start of its last text");
  cmd->add_option("--prefix-cache-tokens", o.prefix_cache_tokens,
                  "Prefix cache size in prompt tokens (LRU blocks; 0 = off)")
      ->capture_default_str();
  cmd->add_option("--block-tokens", o.block_tokens, "Prefix cache block size in tokens")
      ->capture_default_str();
  cmd->add_option("--tool-call-probability", o.tool_call_probability,
                  "A request that offers tools calls one of them with this probability "
                  "(deterministic with --seed and the messages; 0 = never)")
      ->capture_default_str();
  cmd->add_option("--max-model-len", o.max_model_len, "Context window in tokens")
      ->capture_default_str();
  cmd->add_option("--answers", c.answers,
                  "Answer the tests of these suites (names or files) with their reference "
                  "answers, matched by prompt text")
      ->delimiter(',');
  cmd->add_option("--answer-loop", c.answer_loop, "With --answers: these test ids loop")
      ->delimiter(',');
  cmd->add_option("--answer-bad", c.answer_bad,
                  "With --answers: these test ids get their first bad answer")
      ->delimiter(',');
  cmd->add_option("--answer-fault", c.answer_fault,
                  "With --answers: TEST_ID=KIND (reset, stall, malformed, 500, 429)")
      ->delimiter(',');
  cmd->add_option("--answer-reasoning", c.answer_reasoning,
                  "With --answers: TEST_ID=N reasoning tokens before the answer (thinking on)")
      ->delimiter(',');
  cmd->add_flag("--demo", c.demo,
                "With --answers: the demo scenario of `servebench run` (audio refused, a loop, "
                "an exhausted budget, a wrong answer, a 500, a stall)");
}

}  // namespace

CLI::App* AddSimCommand(CLI::App& app, SimCommand& c) {
  CLI::App* cmd = app.add_subcommand(
      "sim", "Serve the simulator: an OpenAI-compatible server with known ground truth");
  AddSimOptions(cmd, c);
  return cmd;
}

}  // namespace sb::cli
