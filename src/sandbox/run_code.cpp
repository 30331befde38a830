// RunCode: model-written Python or C++ through Run. C++ is compiled in one sandboxed run (the
// binary collected from its directory) and run in a second one (the binary copied in as an
// executable file), so the compiler and the program never share a directory.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

namespace sb::sandbox {

namespace {

// "" -> fallback_path when it exists, else fallback_name on $PATH; a name with '/' as is; a bare
// name on $PATH. Empty when none is executable.
std::string ResolveTool(const std::string& configured, const char* fallback_path,
                        const char* fallback_name) {
  std::string name = configured;
  if (name.empty()) {
    if (access(fallback_path, X_OK) == 0) {
      return fallback_path;
    }
    name = fallback_name;
  }
  if (name.find('/') != std::string::npos) {
    return access(name.c_str(), X_OK) == 0 ? name : std::string();
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) {
      colon = dirs.size();
    }
    std::string dir = dirs.substr(start, colon - start);
    if (!dir.empty() && dir[0] == '/') {
      std::string candidate = dir + "/" + name;
      if (access(candidate.c_str(), X_OK) == 0) {
        return candidate;
      }
    }
    start = colon + 1;
  }
  return {};
}

// The first line of the compiler's message that names an error, for the reason.
std::string FirstErrorLine(const std::string& message) {
  std::string first_nonempty;
  std::size_t start = 0;
  while (start < message.size()) {
    std::size_t end = message.find('\n', start);
    if (end == std::string::npos) {
      end = message.size();
    }
    std::string line = message.substr(start, end - start);
    if (line.find("error") != std::string::npos) {
      return line;
    }
    if (first_nonempty.empty() && line.find_first_not_of(" \t\r") != std::string::npos) {
      first_nonempty = line;
    }
    start = end + 1;
  }
  return first_nonempty;
}

}  // namespace

Result<RunResult> RunCode(Language language, std::string_view source, std::string_view stdin_data,
                          const CodeOptions& options) {
  if (language == Language::kPython) {
    std::string python = ResolveTool(options.python, "/usr/bin/python3", "python3");
    if (python.empty()) {
      return MakeError(ErrorCode::kSetup,
                       fmt::format("python interpreter not found: {}",
                                   options.python.empty() ? "/usr/bin/python3" : options.python));
    }
    Program program;
    // -I: isolated mode (no PYTHON* variables, no user site, the script's directory not on
    // sys.path); -B: no .pyc files.
    program.argv = {python, "-I", "-B", "main.py"};
    program.stdin_data = std::string(stdin_data);
    program.files.push_back(File{"main.py", std::string(source), false});
    return Run(program, options.run, options.stop);
  }

  std::string cxx = ResolveTool(options.cxx, "/usr/bin/g++", "g++");
  if (cxx.empty()) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("C++ compiler not found: {}",
                                 options.cxx.empty() ? "/usr/bin/g++" : options.cxx));
  }
  Program compile;
  compile.argv = {cxx, "-std=c++17", "-O1", "-pipe", "-o", "prog", "main.cpp"};
  compile.files.push_back(File{"main.cpp", std::string(source), false});
  compile.collect = {"prog"};
  auto built = Run(compile, options.compile, options.stop);
  if (!built) {
    return built.error().WithContext("compiling");
  }
  RunResult& c = built.value();
  if (c.verdict == Verdict::kStopped) {
    return built;
  }
  if (c.verdict != Verdict::kExited) {
    // The compiler hit a limit (a template bomb, a huge constexpr loop): the source's fault.
    c.reason = "compile: " + c.reason;
    return built;
  }
  if (c.exit_code != 0 || c.collected.empty()) {
    c.verdict = Verdict::kCompileError;
    std::string line = FirstErrorLine(c.stderr_data);
    c.reason = "compile error: " + (line.empty() ? fmt::format("exit code {}", c.exit_code) : line);
    c.collected.clear();
    return built;
  }
  Program run;
  run.argv = {"./prog"};
  run.stdin_data = std::string(stdin_data);
  run.files.push_back(File{"prog", std::move(c.collected.front().second), true});
  return Run(run, options.run, options.stop);
}

}  // namespace sb::sandbox
