// `--resume DIR` on the command line (docs/resume.md): the recorded plan's words, and the check
// that options given beside --resume agree with it. Thread safety: used from main's thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace CLI {
class App;
}  // namespace CLI

namespace sb::cli {

// DIR of "--resume DIR" or "--resume=DIR" among argv[1..]; nullopt when absent.
std::optional<std::string> FindResumeDir(int argc, char** argv);

// `args` without its "--resume DIR" / "--resume=DIR".
std::vector<std::string> WithoutResume(std::vector<std::string> args);

// The command line's words recorded in DIR/plan.json ("run", "--suite", "quick", ...);
// kSetup error when DIR holds no plan.
Result<std::vector<std::string>> RecordedArgs(const std::string& dir);

// Parses `args` (the words after the program name) into `app`. lenient: a missing required
// option or argument is no error (the plan supplies it). Returns the exit code when parsing ends
// the program (help, a parse error: printed), nullopt otherwise.
std::optional<int> ParseArgs(CLI::App& app, const std::vector<std::string>& args, bool lenient);

// Every option given beside --resume (parsed into `given`) must have the value the plan
// (`recorded`) has, or its default where the plan did not give it; --resume, --deadline,
// --store, --no-store and --out DIR may differ. kUsage error naming the first difference. An --endpoint given again
// with the credentials the plan had removed is no difference: it is returned (else "").
Result<std::string> CheckAgainstPlan(const CLI::App& given, const CLI::App& recorded,
                                     const std::string& dir);

}  // namespace sb::cli
