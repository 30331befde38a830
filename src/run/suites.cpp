#include "run/suites.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "report/format.h"
#include "run/exit_codes.h"

namespace sb::run {

namespace {

using nlohmann::json;

const suite::TestSpec* FindTest(const std::vector<suite::Suite>& suites, const std::string& id) {
  for (const auto& s : suites) {
    for (const auto& t : s.tests) {
      if (t.id == id) {
        return &t;
      }
    }
  }
  return nullptr;
}

}  // namespace

Result<std::vector<suite::Suite>> LoadSuites(const std::vector<std::string>& names) {
  std::vector<suite::Suite> out;
  for (const std::string& n : names) {
    if (n == "none") {
      continue;
    }
    auto s = suite::LoadSuite(n);
    if (!s) {
      // A name that is a path to a file that is not there is an unreadable file (exit 3), not
      // a misspelt suite name (exit 2).
      const bool path_like =
          n.find('/') != std::string::npos || n.ends_with(".yaml") || n.ends_with(".yml");
      if (s.error().code == ErrorCode::kUsage && path_like) {
        std::error_code ec;
        if (!std::filesystem::exists(n, ec)) {
          return MakeError(
              ErrorCode::kSetup,
              fmt::format("cannot read suite file '{}': No such file or directory", n));
        }
      }
      return s.error();
    }
    out.push_back(std::move(s.value()));
  }
  return out;
}

Result<suite::RunOptions> MakeRunOptions(const SuiteArgs& a, const perf::ProfileOptions& profile) {
  suite::RunOptions o;
  if (a.rerun_empty) {
    o.rerun_budgets =
        a.rerun_budgets.empty() ? std::vector<int>{8192, 16384, 32768} : a.rerun_budgets;
    for (int b : o.rerun_budgets) {
      if (b < 1) {
        return MakeError(ErrorCode::kUsage, "--rerun-empty budgets must be positive");
      }
    }
  }
  o.repeat = a.repeat;
  o.timeout_s = a.test_timeout_s;  // checked with every other limit (CheckLimits)
  o.thinking = profile.enable_thinking;
  o.temperature = profile.temperature;
  o.video = a.video_transport == "frames"      ? suite::VideoTransport::kFrames
            : a.video_transport == "video_url" ? suite::VideoTransport::kVideoUrl
                                               : suite::VideoTransport::kAuto;
  o.video_frames = a.video_frames;
  o.code.python = a.python;
  o.code.cxx = a.cxx;
  o.profile = profile;
  o.only = a.tests;
  o.continuous_usage = a.continuous_usage;
  return o;
}

std::vector<sim::SimAnswer> SimAnswers(const std::vector<suite::Suite>& suites,
                                       const AnswerTweaks& tweaks) {
  auto has = [](const std::vector<std::string>& v, const std::string& id) {
    return std::find(v.begin(), v.end(), id) != v.end();
  };
  std::vector<sim::SimAnswer> out;
  for (const auto& s : suites) {
    for (const auto& t : s.tests) {
      if (!t.profile.empty()) {
        continue;
      }
      const suite::AnswerSpec* spec = t.reference_answer ? &*t.reference_answer : nullptr;
      if (has(tweaks.bad, t.id) && !t.bad_answers.empty()) {
        spec = &t.bad_answers.front();
      }
      const bool loop = has(tweaks.loop, t.id);
      const auto fault = tweaks.fault.find(t.id);
      const auto reasoning = tweaks.reasoning.find(t.id);
      if (spec == nullptr && !loop && fault == tweaks.fault.end()) {
        continue;
      }
      sim::SimAnswer a;
      a.key = suite::PromptKey(t);
      if (spec != nullptr) {
        a.content = spec->text;
        for (const auto& c : spec->tool_calls) {
          a.tool_calls.push_back({c.name, c.arguments});
        }
      }
      a.loop = loop;
      if (fault != tweaks.fault.end()) {
        a.fault = fault->second;
      }
      if (reasoning != tweaks.reasoning.end()) {
        a.reasoning_tokens = reasoning->second;
      }
      out.push_back(std::move(a));
    }
  }
  return out;
}

AnswerTweaks DemoTweaks() {
  AnswerTweaks t;
  // Seed 000's stories: the scheduling puzzle loops with thinking on; the video reasoning test
  // needs 12,362 tokens of thinking, more than its 8,192 budget. (full: a looping answer.)
  t.loop = {"reasoning.constraint_scheduling", "reasoning.syllogism"};
  t.reasoning = {{"video.reasoning", 12362}};
  // A wrong answer, a server error and a stalled stream, so every status appears.
  t.bad = {"image.bar_chart", "vision.chart.highest"};
  t.fault = {{"writing.email", "500"},
             {"coding.sql", "stall"},
             {"tools.calculate", "500"},
             {"reasoning.capital", "stall"}};
  return t;
}

sim::SimOptions DemoSimOptions(const std::vector<suite::Suite>& suites,
                               std::map<std::string, double>& timeouts) {
  sim::SimOptions o;
  o.ttft_ms = 30;
  o.prefill_us_per_token = 2;
  o.itl_ms = 1;
  o.jitter_ms = 0.1;
  o.concurrency_slowdown = 0.05;
  o.max_batch = 64;
  o.seed = 1;
  o.spec_tokens = 3;
  o.spec_accept = {0.86, 0.67, 0.55};  // seed 001's MTP acceptance
  o.thinking_tokens = 200;
  o.reject = {"audio"};
  o.stall_ms = 10'000;
  AnswerTweaks tweaks = DemoTweaks();
  o.answers = SimAnswers(suites, tweaks);
  for (const auto& [id, fault] : tweaks.fault) {
    if (fault == "stall" && FindTest(suites, id) != nullptr) {
      timeouts[id] = 3;  // the stall outlasts it: TIMEOUT
    }
  }
  return o;
}

Result<std::map<std::string, std::string>> ParseAssignments(const std::vector<std::string>& items,
                                                            const std::string& flag) {
  std::map<std::string, std::string> out;
  for (const std::string& item : items) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      return MakeError(ErrorCode::kUsage,
                       fmt::format("{} takes TEST_ID=VALUE items, got '{}'", flag, item));
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

// What the embedded simulator was told to do, for the report.
json DemoDescription(const std::vector<suite::Suite>& suites,
                     const std::map<std::string, double>& timeouts) {
  auto present = [&](const std::string& id) {
    for (const auto& s : suites) {
      for (const auto& t : s.tests) {
        if (t.id == id) {
          return true;
        }
      }
    }
    return false;
  };
  const AnswerTweaks tw = DemoTweaks();
  json lines = json::array();
  lines.push_back(
      "The simulator answers every test with its reference answer, except where listed here.");
  lines.push_back(
      "It refuses audio input (vLLM's \"At most 0 audio(s)\"): audio tests are "
      "UNSUPPORTED after one probe request.");
  for (const auto& id : tw.loop) {
    if (present(id)) {
      lines.push_back(fmt::format("{}: the output loops (LOOP, cancelled early).", id));
    }
  }
  for (const auto& [id, n] : tw.reasoning) {
    if (present(id)) {
      lines.push_back(
          fmt::format("{}: thinks for {} tokens before answering (EMPTY when the "
                      "budget is smaller; --rerun-empty retries).",
                      id, report::Thousands(n)));
    }
  }
  for (const auto& id : tw.bad) {
    if (present(id)) {
      lines.push_back(fmt::format("{}: gives a wrong answer (FAIL).", id));
    }
  }
  for (const auto& [id, fault] : tw.fault) {
    if (!present(id)) {
      continue;
    }
    if (fault == "stall") {
      const auto t = timeouts.find(id);
      lines.push_back(
          fmt::format("{}: the stream stalls for 10 s; the test's time limit is {} s "
                      "(TIMEOUT).",
                      id, t != timeouts.end() ? t->second : 0));
    } else {
      lines.push_back(fmt::format("{}: the server answers HTTP {} (ERROR).", id, fault));
    }
  }
  return lines;
}

// --min-pass-rate / --min-effective-pass-rate: exit 1 below the threshold.
int CheckGates(const SuiteArgs& a, const json& summary) {
  auto rate = [&](const char* key) -> std::optional<double> {
    if (summary.contains(key) && summary[key].is_number()) {
      return summary[key].get<double>();
    }
    return std::nullopt;
  };
  int code = kExitOk;
  if (a.min_pass_rate >= 0) {
    auto r = rate("pass_rate");
    if (!r || *r < a.min_pass_rate) {
      std::fprintf(stderr, "servebench: gate failed: pass rate %s is below --min-pass-rate %.3g\n",
                   r ? fmt::format("{:.3g}", *r).c_str() : "(no tests)", a.min_pass_rate);
      code = kExitGate;
    }
  }
  if (a.min_effective_pass_rate >= 0) {
    auto r = rate("effective_pass_rate");
    if (!r || *r < a.min_effective_pass_rate) {
      std::fprintf(stderr,
                   "servebench: gate failed: effective pass rate %s is below "
                   "--min-effective-pass-rate %.3g\n",
                   r ? fmt::format("{:.3g}", *r).c_str() : "(no tests)", a.min_effective_pass_rate);
      code = kExitGate;
    }
  }
  return code;
}

}  // namespace sb::run
