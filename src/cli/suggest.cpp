#include "cli/suggest.h"

#include <algorithm>
#include <sstream>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace sb::cli {

namespace {

std::size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The deepest subcommand that was given on the command line.
const CLI::App* Selected(const CLI::App& app) {
  const CLI::App* at = &app;
  for (;;) {
    auto subs = at->get_subcommands();
    if (subs.empty()) {
      return at;
    }
    at = subs.front();
  }
}

}  // namespace

std::string SuggestFlag(const CLI::App& app, const std::string& error_text) {
  const CLI::App* cmd = Selected(app);
  std::vector<std::string> flags;
  for (const CLI::Option* o : cmd->get_options()) {
    for (const std::string& name : o->get_lnames()) {
      flags.push_back("--" + name);
    }
  }
  std::istringstream words(error_text);
  std::string word;
  while (words >> word) {
    if (!word.starts_with("--") || word.size() < 3) {
      continue;
    }
    word = word.substr(0, word.find('='));
    // "--levels:" in "--levels: --levels must be ...": a known flag with CLI11's punctuation.
    while (!word.empty() && std::string_view(":,.;'\"").find(word.back()) != std::string::npos) {
      word.pop_back();
    }
    if (std::find(flags.begin(), flags.end(), word) != flags.end()) {
      continue;
    }
    std::string best;
    std::size_t best_d = 3;
    for (const std::string& f : flags) {
      std::size_t d = EditDistance(word, f);
      bool plural = f == word + "s" || word == f + "s";
      if (plural) {
        d = 0;
      }
      if (d < best_d && (plural || (word.size() >= 7 && d <= 2))) {
        best = f;
        best_d = d;
      }
    }
    if (!best.empty()) {
      std::string path = cmd->get_name();
      return fmt::format("servebench {}: {} is not a flag of this command; did you mean {}?", path,
                         word, best);
    }
  }
  return "";
}

}  // namespace sb::cli
