#include "cli/suite_command.h"

#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/profile_table.h"
#include "media/media.h"

namespace sb::cli {

namespace {

using nlohmann::json;

int PrintError(const Error& e) {
  std::fprintf(stderr, "servebench: error: %s\n", e.message.c_str());
  return e.code == ErrorCode::kUsage ? kExitUsage : kExitSetup;
}

// Tests a suite entry becomes: one, or one per row of a speed-profile entry.
std::size_t RowCount(const suite::TestSpec& t) {
  if (t.profile.empty()) {
    return 1;
  }
  const perf::ProfileOptions defaults;
  const json args = json::parse(t.profile_args_json, nullptr, false);
  auto size_of = [&](const char* key, std::size_t fallback) {
    return args.is_object() && args.contains(key) && args[key].is_array() ? args[key].size()
                                                                          : fallback;
  };
  if (t.profile == "concurrency") {
    return size_of("levels", defaults.args.Ints("--levels").size());
  }
  if (t.profile == Profile(ProfileId::kMaxTokens).name) {
    return size_of("lengths", defaults.args.Ints("--lengths").size());
  }
  if (t.profile == "context") {
    return size_of("sizes", defaults.args.Ints("--sizes").size());
  }
  if (t.profile == "ttft") {
    return 3;  // short, medium, long
  }
  return args.is_object() && args.contains("runs") ? args["runs"].get<std::size_t>()
                                                   : static_cast<std::size_t>(defaults.runs);
}

std::size_t Rows(const suite::Suite& s) {
  std::size_t n = 0;
  for (const auto& t : s.tests) {
    n += RowCount(t);
  }
  return n;
}

}  // namespace

void AddSuiteOptions(CLI::App* run, run::SuiteArgs& a) {
  run->add_option("--suite", a.suites,
                  "Quality suite: a built-in name (quick, standard, full; see `servebench "
                  "suites`) or a YAML file; repeatable; 'none' runs no suite (default: standard, "
                  "unless --profiles is given)");
  run->add_option("--tests", a.tests, "Run only these tests: ids, id prefixes or categories")
      ->delimiter(',');
  run->add_option_function<std::vector<int>>(
         "--rerun-empty",
         [&a](const std::vector<int>& budgets) {
           a.rerun_empty = true;
           a.rerun_budgets = budgets;
         },
         "Retry an EMPTY test (thinking used the whole budget) with each larger budget in turn "
         "(default 8192,16384,32768); every attempt is kept")
      ->delimiter(',')
      ->expected(0, 16)
      ->default_str("8192,16384,32768");
  run->add_option("--repeat", a.repeat, "Run each test N times: pass@k and the pass-rate CI")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  run->add_option_function<double>(
      "--test-timeout-s", [&a](double s) { a.test_timeout_s = s; },
      "Time limit of every test attempt, seconds above 0 (default: the test's own timeout_s, "
      "else --request-timeout-s when given, else the suite's, 300 s unless it says)");
  run->add_option("--video-transport", a.video_transport,
                  "How videos are sent: auto (video_url, frames when refused), video_url, frames")
      ->check(CLI::IsMember({"auto", "video_url", "frames"}))
      ->capture_default_str();
  run->add_option("--video-frames", a.video_frames, "Frames per video when sent as images")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  run->add_option("--python", a.python,
                  "Interpreter for model-written Python (default /usr/bin/python3)");
  run->add_option("--cxx", a.cxx, "Compiler for model-written C++ (default /usr/bin/g++)");
  run->add_option("--min-pass-rate", a.min_pass_rate,
                  "Exit 1 when PASS/total is below this fraction (0..1)")
      ->check(CLI::Range(0.0, 1.0));
  run->add_option("--min-effective-pass-rate", a.min_effective_pass_rate,
                  "Exit 1 when PASS/(total - UNSUPPORTED) is below this fraction (0..1)")
      ->check(CLI::Range(0.0, 1.0));
  run->add_flag("--continuous-usage", a.continuous_usage,
                "Ask for usage on every chunk (stream_options.continuous_usage_stats)");
}

// ---- servebench suites ----------------------------------------------------------------------

CLI::App* AddSuitesCommand(CLI::App& app, SuitesCommand& cmd) {
  CLI::App* c = app.add_subcommand(
      "suites", "List the built-in quality suites, or the tests of one suite (name or file)");
  c->add_option("name", cmd.name, "A built-in suite name or a suite file");
  c->add_flag("--json", cmd.json, "Print JSON instead of a table");
  return c;
}

namespace {

// `servebench suites`: the built-in suites with their test counts.
void ListSuites(bool as_json) {
  json list = json::array();
  for (const auto& b : suite::BuiltinSuites()) {
    auto s = suite::LoadSuite(b.name);
    const std::size_t n = s ? Rows(*s) : 0;
    list.push_back(json{{"name", b.name}, {"tests", n}, {"description", b.description}});
    if (!as_json) {
      std::printf("%-10s %3zu tests  %s\n", std::string(b.name).c_str(), n,
                  std::string(b.description).c_str());
    }
  }
  if (as_json) {
    std::printf("%s\n", list.dump(2).c_str());
  } else {
    std::printf(
        "\nservebench suites NAME lists a suite's tests; docs/suites.md describes the "
        "file format.\n");
  }
}

// `servebench suites NAME --json`.
void PrintSuiteJson(const suite::Suite& s) {
  json tests = json::array();
  for (const auto& t : s.tests) {
    tests.push_back(json{{"id", t.id},
                         {"name", t.DisplayName()},
                         {"category", t.category},
                         {"section", t.section},
                         {"profile", t.profile},
                         {"media", t.Modalities()},
                         {"thinking", t.thinking ? json(*t.thinking) : json(nullptr)},
                         {"max_tokens", t.max_tokens},
                         {"check", t.check ? json(t.check->type) : json(nullptr)}});
  }
  std::printf(
      "%s\n",
      json{{"suite", s.name}, {"description", s.description}, {"tests", tests}}.dump(2).c_str());
}

// `servebench suites NAME`: one line per test, under its category.
void PrintSuiteTable(const suite::Suite& s) {
  std::printf("%s: %s (%zu tests, %s)\n\n", s.name.c_str(), s.description.c_str(), Rows(s),
              s.source.c_str());
  std::string category;
  for (const auto& t : s.tests) {
    if (t.category != category) {
      category = t.category;
      std::printf("%s\n", category.c_str());
    }
    std::string what;
    if (!t.profile.empty()) {
      what = "speed profile " + t.profile;
    } else {
      std::vector<std::string> bits;
      if (t.check) {
        bits.push_back(t.check->type);
      }
      for (const auto& m : t.Modalities()) {
        bits.push_back(m);
      }
      if (t.thinking && *t.thinking) {
        bits.push_back("thinking");
      }
      if (!t.tools_json.empty()) {
        bits.push_back("tools");
      }
      what = fmt::format("{}", fmt::join(bits, ", "));
    }
    std::printf("  %-36s %-40s %s\n", t.id.c_str(), t.DisplayName().c_str(), what.c_str());
  }
}

}  // namespace

int RunSuitesCommand(const SuitesCommand& cmd) {
  if (cmd.name.empty()) {
    ListSuites(cmd.json);
    return kExitOk;
  }
  auto s = suite::LoadSuite(cmd.name);
  if (!s) {
    return PrintError(s.error());
  }
  if (cmd.json) {
    PrintSuiteJson(*s);
  } else {
    PrintSuiteTable(*s);
  }
  return kExitOk;
}

// ---- servebench assets ----------------------------------------------------------------------

CLI::App* AddAssetsCommand(CLI::App& app, AssetsCommand& cmd) {
  CLI::App* c = app.add_subcommand(
      "assets", "Write the generated test media (images, videos, audio) and their ground truth");
  c->add_option("--out", cmd.out, "Directory to write into")->capture_default_str();
  return c;
}

int RunAssetsCommand(const AssetsCommand& cmd) {
  if (auto ok = media::WriteCatalogue(cmd.out); !ok) {
    return PrintError(ok.error());
  }
  std::printf("wrote %zu assets and manifest.json to %s/\n", media::CatalogueNames().size(),
              cmd.out.c_str());
  return kExitOk;
}

}  // namespace sb::cli
