// `servebench completion bash|zsh|man`: the shell completion scripts and the man page, generated
// by walking the CLI11 app, so they list exactly the subcommands and options `--help` shows.
// The build writes them into the build tree and installs them from there (docs/install.md).
#pragma once

#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace sb::cli {

// Adds the hidden `completion` subcommand to `app`: it prints the script or page and ends the
// parse with CLI::Success (exit 0).
void AddCompletionCommand(CLI::App& app);

// The generated text for `kind` (bash, zsh or man); empty for another kind.
std::string CompletionText(const CLI::App& app, std::string_view kind);

}  // namespace sb::cli
