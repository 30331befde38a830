// The code checker: picks the answer's code, runs it with the test's tests in the sandbox.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "suite/check_common.h"
#include "suite/text.h"

namespace sb::suite::check {

namespace {

// ---- code ------------------------------------------------------------------------------------

struct CodeCase {
  std::string stdin_data;
  std::string stdout_data;
};

struct CodeArgs {
  sandbox::Language language = sandbox::Language::kPython;
  bool sql = false;  // language sql: the answer's query, run by Python `tests` (as `query`)
  std::string tests;
  std::vector<CodeCase> cases;
  std::string entry;
  double timeout_s = 10;
  double memory_mb = 1024;
};

Result<CodeArgs> ParseCode(const Check& c) {
  auto args = Args(c, {"language", "tests", "cases", "entry", "timeout_s", "memory_mb"});
  if (!args) {
    return args.error();
  }
  CodeArgs a;
  const json& lang = (*args)["language"];
  if (!lang.is_string() || (lang != "python" && lang != "cpp" && lang != "sql")) {
    return Bad("code needs 'language': python, cpp or sql");
  }
  a.language = lang == "cpp" ? sandbox::Language::kCpp : sandbox::Language::kPython;
  a.sql = lang == "sql";
  if (args->contains("tests")) {
    if (!(*args)["tests"].is_string()) {
      return Bad("tests must be source code (a string)");
    }
    a.tests = (*args)["tests"].get<std::string>();
  }
  if (args->contains("cases")) {
    const json& cases = (*args)["cases"];
    if (!cases.is_array()) {
      return Bad("cases must be a list of {stdin, stdout}");
    }
    for (const json& cs : cases) {
      if (!cs.is_object() || !cs.contains("stdout")) {
        return Bad("each case is a mapping {stdin, stdout}");
      }
      for (auto it = cs.begin(); it != cs.end(); ++it) {
        if (it.key() != "stdin" && it.key() != "stdout") {
          return Bad(fmt::format("unknown key '{}' in a case (known: stdin, stdout)", it.key()));
        }
        if (!it->is_string() && !it->is_number()) {
          return Bad("stdin and stdout of a case are text");
        }
      }
      auto text = [](const json& v) {
        return v.is_string() ? v.get<std::string>() : FormatNumber(v.get<double>());
      };
      a.cases.push_back({cs.contains("stdin") ? text(cs["stdin"]) : "", text(cs["stdout"])});
    }
  }
  if (a.tests.empty() && a.cases.empty()) {
    return Bad("code needs 'tests' (code run after the answer's) or 'cases' (stdin/stdout)");
  }
  if (a.sql && a.tests.empty()) {
    return Bad("code with language sql needs 'tests': Python that runs the variable `query`");
  }
  if (args->contains("entry")) {
    if (!(*args)["entry"].is_string()) {
      return Bad("entry must be a name");
    }
    a.entry = (*args)["entry"].get<std::string>();
  }
  auto timeout = OptNumber(*args, "timeout_s");
  auto memory = OptNumber(*args, "memory_mb");
  if (!timeout) {
    return timeout.error();
  }
  if (!memory) {
    return memory.error();
  }
  a.timeout_s = timeout->value_or(10);
  a.memory_mb = memory->value_or(1024);
  if (a.timeout_s <= 0 || a.memory_mb < 16) {
    return Bad("timeout_s must be positive and memory_mb at least 16");
  }
  return a;
}

bool LanguageMatches(const std::string& info, sandbox::Language lang, bool sql) {
  if (sql) {
    return info == "sql" || info == "sqlite" || info == "postgresql" || info == "postgres" ||
           info == "psql" || info == "mysql";
  }
  if (lang == sandbox::Language::kPython) {
    return info == "python" || info == "py" || info == "python3";
  }
  return info == "cpp" || info == "c++" || info == "cc" || info == "cxx" || info == "c";
}

// The answer's code: fenced blocks in the language (or untagged), preferring one that defines
// the entry point, else the longest; an answer without fences that looks like code as a whole.
std::optional<std::string> PickCode(std::string_view answer, const CodeArgs& a) {
  std::vector<CodeBlock> blocks = CodeBlocks(answer);
  std::vector<const CodeBlock*> candidates;
  for (const CodeBlock& b : blocks) {
    if (LanguageMatches(b.language, a.language, a.sql)) {
      candidates.push_back(&b);
    }
  }
  if (candidates.empty()) {
    for (const CodeBlock& b : blocks) {
      if (b.language.empty()) {
        candidates.push_back(&b);
      }
    }
  }
  if (candidates.empty()) {
    const bool looks_like_code = a.sql ? Lower(answer).find("select") != std::string::npos
                                 : a.language == sandbox::Language::kPython
                                     ? (answer.find("def ") != std::string_view::npos ||
                                        answer.find("class ") != std::string_view::npos ||
                                        answer.find("import ") != std::string_view::npos)
                                     : answer.find("#include") != std::string_view::npos;
    if (blocks.empty() && looks_like_code) {
      return std::string(answer);
    }
    return std::nullopt;
  }
  const CodeBlock* best = nullptr;
  for (const CodeBlock* b : candidates) {
    const bool defines = !a.entry.empty() && b->code.find(a.entry) != std::string::npos;
    const bool best_defines =
        best != nullptr && !a.entry.empty() && best->code.find(a.entry) != std::string::npos;
    if (best == nullptr || (defines && !best_defines) ||
        (defines == best_defines && b->code.size() > best->code.size())) {
      best = b;
    }
  }
  return best->code;
}

std::string LastLine(std::string_view s) {
  std::string_view t = Trim(s);
  const std::size_t nl = t.rfind('\n');
  return std::string(nl == std::string_view::npos ? t : t.substr(nl + 1));
}

// Lines compared with trailing whitespace removed and leading/trailing blank lines ignored.
std::string CanonicalOutput(std::string_view s) {
  std::string out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find('\n', start);
    std::string_view line = s.substr(start, end == std::string_view::npos ? end : end - start);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.remove_suffix(1);
    }
    out.append(line);
    out.push_back('\n');
    if (end == std::string_view::npos) {
      break;
    }
    start = end + 1;
  }
  return std::string(Trim(out));
}

std::string SandboxDetail(const sandbox::RunResult& run) {
  std::string tail = std::string(Trim(run.stderr_data));
  if (tail.size() > 2000) {
    tail = "…" + tail.substr(tail.size() - 2000);
  }
  return fmt::format("verdict {}, exit code {}, {:.2f} s CPU, {:.2f} s wall{}{}",
                     sandbox::VerdictName(run.verdict), run.exit_code, run.cpu_s, run.wall_s,
                     tail.empty() ? "" : "; stderr: ", tail);
}

CheckOutcome RunCode(const CodeArgs& a, const Reply& r, const CheckEnv& env) {
  auto code = PickCode(r.answer, a);
  if (!code) {
    return FailWith(fmt::format("no {} code block in the answer",
                                a.sql                                      ? "SQL"
                                : a.language == sandbox::Language::kPython ? "Python"
                                                                           : "C++"));
  }
  if (!a.entry.empty() && code->find(a.entry) == std::string::npos) {
    return FailWith(fmt::format("the code does not define '{}'", a.entry));
  }
  sandbox::CodeOptions options = env.code;
  options.run.cpu_s = a.timeout_s;
  options.run.wall_s = a.timeout_s * 2 + 1;
  options.run.memory_bytes = static_cast<std::uint64_t>(a.memory_mb * 1024 * 1024);
  std::string program = *code;
  if (a.sql) {
    // The query as a Python string literal (JSON string syntax is valid Python).
    program = "query = " + json(*code).dump(-1, ' ', true, json::error_handler_t::replace) +
              "\n\n" + a.tests;
  } else if (!a.tests.empty()) {
    if (a.language == sandbox::Language::kCpp && a.tests.find("main(") != std::string::npos) {
      // The tests bring main(); the answer's own main (an example run) is renamed away.
      program = "#define main servebench_answer_main\n" + *code + "\n#undef main\n" + a.tests;
    } else {
      program = *code + "\n\n" + a.tests;
    }
  }
  std::vector<CodeCase> cases = a.cases;
  if (cases.empty()) {
    cases.push_back({"", ""});
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto run = sandbox::RunCode(a.language, program, cases[i].stdin_data, options);
    if (!run) {
      return FailWith("could not run the code: " + run.error().message);
    }
    const sandbox::RunResult& res = *run;
    const std::string detail = SandboxDetail(res);
    if (res.verdict == sandbox::Verdict::kStopped) {
      CheckOutcome stopped = FailWith(res.reason, detail);
      stopped.stopped = true;
      return stopped;
    }
    const std::string which = a.cases.empty() ? "" : fmt::format("case {}: ", i + 1);
    if (res.verdict == sandbox::Verdict::kCompileError) {
      return FailWith(res.reason, detail);
    }
    if (res.verdict != sandbox::Verdict::kExited) {
      return FailWith(which + res.reason, detail);
    }
    if (res.exit_code != 0) {
      std::string last = LastLine(res.stderr_data);
      if (last.empty()) {
        last = LastLine(res.stdout_data);
      }
      return FailWith(fmt::format("{}exit code {}{}{}", which, res.exit_code,
                                  last.empty() ? "" : ": ", OneLine(last, 160)),
                      detail);
    }
    if (!a.cases.empty() &&
        CanonicalOutput(res.stdout_data) != CanonicalOutput(cases[i].stdout_data)) {
      return FailWith(fmt::format("{}expected output {}, got {}", which,
                                  Quote(cases[i].stdout_data, 60), Quote(res.stdout_data, 60)),
                      detail);
    }
  }
  return Pass();
}

}  // namespace

Result<void> ValidateCode(const Check& c) {
  return Valid(ParseCode(c));
}

CheckOutcome EvaluateCode(const Check& c, const Reply& r, const CheckEnv& env) {
  return Evaluate(ParseCode(c), [&](const CodeArgs& a) { return RunCode(a, r, env); });
}

}  // namespace sb::suite::check
