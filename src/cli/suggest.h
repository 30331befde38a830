// A hint after CLI11's parse errors: an unexpected or unknown flag close to one the command
// takes ("run --profile decode" -> "did you mean --profiles?").
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace sb::cli {

// The hint line for `error_text` (CLI11's message) against the flags of the subcommand that was
// being parsed under `app`; "" when no flag is close. Close means: one is the other plus or minus
// a trailing "s", or at most two edits apart (for flags of 5+ characters).
std::string SuggestFlag(const CLI::App& app, const std::string& error_text);

}  // namespace sb::cli
