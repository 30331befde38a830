// What the quality-suite machinery costs per test, so it never shows up in a model's figures:
// the streaming loop detector (runs on every event), reasoning separation and number
// extraction, the checkers, loading a suite, generating the media, and running code in the
// sandbox. Figures and the command are in docs/performance.md.
//   build/bench/suite_cost [--reps N] [--hostile-only]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <time.h>

#include "media/internal.h"
#include "media/media.h"
#include "sandbox/sandbox.h"
#include "suite/checkers.h"
#include "suite/loop.h"
#include "suite/suite.h"
#include "suite/text.h"
#include "support/hostile_answers.h"

namespace {

using Clock = std::chrono::steady_clock;

double MedianUs(int reps, const std::function<void()>& fn) {
  std::vector<double> us;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    fn();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

// A long varied answer: numbered reasoning steps, prose, a code block.
std::string LongAnswer(std::size_t bytes) {
  std::string s = "<think>\n";
  for (int i = 0; s.size() < bytes / 2; ++i) {
    s += "Step " + std::to_string(i) + ": we add " + std::to_string(i * 7 % 13) +
         " to the running total and note that the result is " + std::to_string(i * 31 % 97) + ".\n";
  }
  s += "</think>\n\nThe schedule works out as follows.\n\n```python\n";
  for (int i = 0; s.size() < bytes; ++i) {
    s += "def f" + std::to_string(i) + "(x):\n    return x * " + std::to_string(i) + "\n";
  }
  s += "```\n\nThe answer is **842**.\n";
  return s;
}

sb::suite::Check MakeCheck(const std::string& type, const std::string& args) {
  sb::suite::Check c;
  c.type = type;
  c.args_json = args;
  return c;
}

void Leaves(const sb::suite::Check& c, std::vector<const sb::suite::Check*>& out) {
  if (c.children.empty()) {
    out.push_back(&c);
  }
  for (const sb::suite::Check& child : c.children) {
    Leaves(child, out);
  }
}

double ThreadCpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Every distinct leaf checker of the built-in suites (code checks included: the sandbox runs
// them) against each 1 MiB hostile answer (tests/support/hostile_answers.h): the slowest pairs
// and the total, as the thread's CPU time (wall time on a shared machine measures the others).
void HostileAnswers() {
  struct Timed {
    double ms;
    std::string what;
  };

  std::vector<Timed> timed;
  double total_ms = 0;
  std::vector<sb::suite::Suite> suites;
  for (const auto& b : sb::suite::BuiltinSuites()) {
    auto s = sb::suite::LoadSuite(b.name);
    if (!s) {
      std::fprintf(stderr, "%s\n", s.error().message.c_str());
      std::exit(1);
    }
    suites.push_back(std::move(*s));
  }
  const sb::suite::CheckEnv env;
  std::set<std::string> seen;
  for (const auto& a : sb::testing::HostileAnswers(1 << 20)) {
    const sb::suite::Reply reply{a.text, {}, "stop"};
    for (const auto& suite : suites) {
      for (const auto& t : suite.tests) {
        if (!t.check) {
          continue;
        }
        std::vector<const sb::suite::Check*> leaves;
        Leaves(*t.check, leaves);
        for (const sb::suite::Check* c : leaves) {
          if (!seen.insert(a.name + c->type + c->args_json).second) {
            continue;
          }
          const double t0 = ThreadCpuUs();
          (void)sb::suite::RunCheck(*c, reply, env);
          const double us = ThreadCpuUs() - t0;
          total_ms += us / 1000;
          timed.push_back({us / 1000, suite.name + "/" + t.id + " " + c->type + " on " + a.name});
        }
      }
    }
  }
  std::sort(timed.begin(), timed.end(), [](const Timed& x, const Timed& y) { return x.ms > y.ms; });
  std::printf(
      "| %zu (checker, 1 MiB hostile answer) pairs, every built-in suite | %.0f ms CPU in all "
      "| slowest: %.0f ms (%s) |\n",
      timed.size(), total_ms, timed.front().ms, timed.front().what.c_str());
  for (std::size_t i = 0; i < std::min<std::size_t>(5, timed.size()); ++i) {
    std::printf("|   %s | %.1f ms CPU | one check |\n", timed[i].what.c_str(), timed[i].ms);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 20;
  bool hostile_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[i + 1]));
    }
    hostile_only = hostile_only || std::strcmp(argv[i], "--hostile-only") == 0;
  }
  std::printf("| what | median | per |\n|---|---:|---|\n");
  HostileAnswers();
  if (hostile_only) {
    return 0;
  }

  const std::string answer = LongAnswer(128 * 1024);
  {
    const double us = MedianUs(reps, [&] {
      sb::suite::LoopDetector d(20, 10);
      for (std::size_t i = 0; i < answer.size(); i += 16) {
        d.Feed(std::string_view(answer).substr(i, 16));
      }
    });
    std::printf(
        "| loop detector, 128 KiB answer fed in 16-byte events | %.0f µs | %.2f µs per KiB |\n", us,
        us / 128);
  }
  {
    const double us = MedianUs(reps, [&] {
      auto split = sb::suite::SplitThinking(answer);
      auto n = sb::suite::FinalNumber(split.answer);
      (void)n;
    });
    std::printf("| reasoning split + final number, 128 KiB | %.0f µs | one answer |\n", us);
  }
  const sb::suite::Reply reply{answer.substr(answer.size() - 2000), {}, "stop"};
  sb::suite::CheckEnv env;

  struct Named {
    const char* name;
    sb::suite::Check check;
  };

  const std::vector<Named> checks = {
      {"number", MakeCheck("number", R"({"expect": 842})")},
      {"contains (3 needles)", MakeCheck("contains", R"({"all": ["schedule", "answer", "842"]})")},
      {"regex", MakeCheck("regex", R"({"pattern": "answer is \\*\\*\\d+\\*\\*"})")},
      {"length (words)", MakeCheck("length", R"({"unit": "words", "max": 5000})")},
  };
  for (const Named& n : checks) {
    const double us = MedianUs(reps, [&] { (void)sb::suite::RunCheck(n.check, reply, env); });
    std::printf("| %s check, 2 KB answer | %.1f µs | one check |\n", n.name, us);
  }
  {
    const double us = MedianUs(std::min(reps, 5), [] {
      auto s = sb::suite::LoadSuite("full");
      if (!s) {
        std::fprintf(stderr, "%s\n", s.error().message.c_str());
        std::exit(1);
      }
    });
    std::printf(
        "| load the built-in `full` suite (65 tests, placeholders resolved) | %.1f ms | once per "
        "run |\n",
        us / 1000);
  }
  {
    const auto t0 = Clock::now();
    for (const std::string& name : sb::media::CatalogueNames()) {
      auto a = sb::media::internal::GenerateUncached(name);
      if (!a) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), a.error().message.c_str());
        return 1;
      }
    }
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    std::printf(
        "| generate every catalogue asset (%zu: PNG, MP4, WAV), uncached | %.0f ms | once per "
        "process |\n",
        sb::media::CatalogueNames().size(), ms);
  }
  sb::sandbox::CodeOptions code;
  {
    const double us = MedianUs(std::min(reps, 10), [&] {
      auto r = sb::sandbox::RunCode(sb::sandbox::Language::kPython, "print(6 * 7)\n", "", code);
      if (!r || r->stdout_data != "42\n") {
        std::fprintf(stderr, "python run failed\n");
        std::exit(1);
      }
    });
    std::printf("| sandboxed Python run (print) | %.1f ms | one code check |\n", us / 1000);
  }
  {
    const double us = MedianUs(std::min(reps, 3), [&] {
      auto r = sb::sandbox::RunCode(sb::sandbox::Language::kCpp,
                                    "#include <cstdio>\nint main(){std::printf(\"42\\n\");}\n", "",
                                    code);
      if (!r || r->stdout_data != "42\n") {
        std::fprintf(stderr, "c++ run failed\n");
        std::exit(1);
      }
    });
    std::printf("| sandboxed C++ compile + run (printf) | %.0f ms | one code check |\n", us / 1000);
  }
  std::printf("\nsandbox: %s\n", sb::sandbox::Probe().Describe().c_str());
  return 0;
}
