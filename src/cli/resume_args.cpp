#include "cli/resume_args.h"

#include <filesystem>
#include <fstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/redact.h"

namespace sb::cli {

namespace {

// An option's value as given, its items joined by ','.
std::string Given(const CLI::Option& o) {
  return fmt::format("{}", fmt::join(o.results(), ","));
}

// A default as CLI11 prints it ("[1,2,4,8]", "\"auto\"") in the same form.
std::string Normalized(std::string s) {
  std::erase_if(s, [](char ch) { return ch == '[' || ch == ']' || ch == '"' || ch == ' '; });
  return s;
}

}  // namespace

std::optional<std::string> FindResumeDir(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--resume" && i + 1 < argc) {
      return std::string(argv[i + 1]);
    }
    if (a.starts_with("--resume=")) {
      return a.substr(9);
    }
  }
  return std::nullopt;
}

std::vector<std::string> WithoutResume(std::vector<std::string> args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--resume") {
      ++i;
    } else if (!args[i].starts_with("--resume=")) {
      out.push_back(args[i]);
    }
  }
  return out;
}

Result<std::vector<std::string>> RecordedArgs(const std::string& dir) {
  const std::filesystem::path p = std::filesystem::path(dir) / "plan.json";
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("{} holds no run to resume (no readable plan.json)", dir));
  }
  nlohmann::json plan = nlohmann::json::parse(in, nullptr, false);
  if (!plan.is_object() || !plan.contains("args") || !plan["args"].is_array() ||
      plan["args"].empty()) {
    return MakeError(ErrorCode::kSetup, fmt::format("{} is not a servebench plan", p.string()));
  }
  try {
    return plan["args"].get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception&) {
    return MakeError(ErrorCode::kSetup, fmt::format("{} is not a servebench plan", p.string()));
  }
}

std::optional<int> ParseArgs(CLI::App& app, const std::vector<std::string>& args, bool lenient) {
  std::vector<std::string> words = {"servebench"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) {
    argv.push_back(w.data());
  }
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::RequiredError& e) {
    if (!lenient) {
      app.exit(e);
      return 2;
    }
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  return std::nullopt;
}

Result<std::string> CheckAgainstPlan(const CLI::App& given, const CLI::App& recorded,
                                     const std::string& dir) {
  std::string endpoint;
  for (const CLI::Option* g : given.get_options()) {
    const std::string name = g->get_name();
    if (g->count() == 0 || name == "--resume" || name == "--deadline" || name == "--help" ||
        name == "--store" || name == "--no-store") {
      continue;  // where the finished run is recorded is not part of what it measures
    }
    const std::string value = Given(*g);
    if (name == "--out" && std::filesystem::path(value) == std::filesystem::path(dir)) {
      continue;
    }
    const CLI::Option* r = recorded.get_option_no_throw(name);
    const std::string planned = r == nullptr     ? ""
                                : r->count() > 0 ? Given(*r)
                                                 : Normalized(r->get_default_str());
    if (name == "--endpoint" && RedactUrl(value) == planned) {
      endpoint = value;  // the plan.json copy had its credentials removed
      continue;
    }
    if (value != planned && Normalized(value) != planned) {
      return MakeError(
          ErrorCode::kUsage,
          fmt::format("{} {} contradicts the plan of {} ({}): --resume continues the run as "
                      "planned; start a new run to change it",
                      name, Redact(value), dir, planned.empty() ? "not given" : planned));
    }
  }
  return endpoint;
}

}  // namespace sb::cli
