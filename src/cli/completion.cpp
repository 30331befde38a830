#include "cli/completion.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/profile_table.h"
#include "run/exit_codes.h"
#include "run/run.h"
#include "suite/suite.h"

namespace sb::cli {

namespace {

// What --help lists: named subcommands outside the hidden group "", options outside it too.
std::vector<const CLI::App*> Subcommands(const CLI::App& app) {
  return app.get_subcommands(
      [](const CLI::App* s) { return !s->get_name().empty() && !s->get_group().empty(); });
}

std::vector<const CLI::Option*> Options(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return !o->get_group().empty(); });
}

std::vector<std::string> Names(const CLI::Option& o) {
  std::vector<std::string> names;
  for (const auto& s : o.get_snames()) {
    names.push_back("-" + s);
  }
  for (const auto& l : o.get_lnames()) {
    names.push_back("--" + l);
  }
  return names;
}

bool TakesValue(const CLI::Option& o) {
  return o.get_expected_max() > 0;  // flags expect 0 values
}

bool Repeats(const CLI::Option& o) {
  return o.get_expected_max() > 1;
}

// The values an IsMember check allows: CLI11 writes them into the type name, "TEXT:{md,html}".
std::vector<std::string> Choices(const CLI::Option& o) {
  const std::string type = o.get_type_name();
  const auto open = type.find(":{");
  const auto close = type.rfind('}');
  std::vector<std::string> out;
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return out;
  }
  std::string item;
  for (char ch : type.substr(open + 2, close - open - 2)) {
    if (ch == ',') {
      out.push_back(item);
      item.clear();
    } else if (ch != ' ') {
      item += ch;
    }
  }
  if (!item.empty()) {
    out.push_back(item);
  }
  return out;
}

// Values of options that no IsMember check lists (a profile list is checked after parsing, a
// suite may also be a file): the profile names, the built-in suites, --by's groupings.
std::vector<std::string> KnownValues(const CLI::Option& o) {
  for (const auto& l : o.get_lnames()) {
    if (l == "profile" || l == "profiles") {
      std::vector<std::string> out;
      for (const ProfileSpec& p : Profiles()) {  // core/profile_table.h
        out.emplace_back(p.name);
      }
      return out;
    }
    if (l == "suite" || l == "suites") {
      std::vector<std::string> out;
      for (const auto& b : suite::BuiltinSuites()) {
        out.emplace_back(b.name);
      }
      return out;
    }
    if (l == "by") {
      return {"model", "recipe", "tag:"};
    }
  }
  return {};
}

bool IsSuite(const CLI::Option& o) {
  return o.check_lname("suite") || o.check_lname("suites");
}

// --metric: the metric names of the user's store, asked of the binary at completion time (the
// first column of `servebench history --list-metrics`, the store's ListMetrics).
bool IsMetric(const CLI::Option& o) {
  return o.check_lname("metric");
}

constexpr const char* kMetricList =
    "servebench history --list-metrics 2>/dev/null | awk '{print $1}'";

std::string Join(const std::vector<std::string>& items, const char* sep);

// A command's options and those of its own subcommands (`store import|ls|rm`), each name once.
std::vector<const CLI::Option*> AllOptions(const CLI::App& sub) {
  std::vector<const CLI::Option*> out;
  std::vector<std::string> seen;
  auto add = [&](const CLI::App& a) {
    for (const auto* o : Options(a)) {
      const auto names = Names(*o);
      const std::string key = names.empty() ? "positional " + o->get_name(true) : Join(names, " ");
      if (std::find(seen.begin(), seen.end(), key) == seen.end()) {
        seen.push_back(key);
        out.push_back(o);
      }
    }
  };
  add(sub);
  for (const auto* nested : Subcommands(sub)) {
    add(*nested);
  }
  return out;
}

std::vector<std::string> NestedNames(const CLI::App& sub) {
  std::vector<std::string> out;
  for (const auto* nested : Subcommands(sub)) {
    out.push_back(nested->get_name());
  }
  return out;
}

// The type name without its check ("TEXT:{md,html}" -> "TEXT").
std::string TypeName(const CLI::Option& o) {
  std::string type = o.get_type_name();
  return type.substr(0, type.find(':'));
}

// A number ("INT", "FLOAT", "UINT", "INT,..."): nothing to complete, not even file names.
bool TakesNumber(const CLI::Option& o) {
  const std::string type = TypeName(o);
  return type.starts_with("INT") || type.starts_with("FLOAT") || type.starts_with("UINT");
}

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& s : items) {
    out += (out.empty() ? "" : sep) + s;
  }
  return out;
}

// Inside a single-quoted shell word.
std::string SingleQuoted(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  }
  return out + "'";
}

// ---------------------------------------------------------------------------------------------

std::string Bash(const CLI::App& app) {
  std::vector<std::string> top = {"--help", "--version"};
  std::vector<std::string> names;
  for (const auto* sub : Subcommands(app)) {
    names.push_back(sub->get_name());
  }
  top.insert(top.end(), names.begin(), names.end());
  std::string s =
      "# bash completion for servebench. Generated by `servebench completion bash` from the\n"
      "# command definitions: do not edit.\n"
      "_servebench() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
      "  local cmd='' words='' nested='' i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case ${COMP_WORDS[i]} in\n"
      "      " +
      Join(names, "|") +
      ") cmd=${COMP_WORDS[i]}; break ;;\n"
      "    esac\n"
      "  done\n"
      "  case $cmd in\n"
      "    '') words=" +
      SingleQuoted(Join(top, " ")) + " ;;\n";
  for (const auto* sub : Subcommands(app)) {
    std::vector<std::string> words;
    std::vector<std::string> files;
    std::vector<std::string> numbers;
    std::string choices;
    words = NestedNames(*sub);  // `store import|ls|rm`
    for (const auto* o : AllOptions(*sub)) {
      const auto n = Names(*o);
      if (n.empty()) {
        continue;  // a positional: the default (file names) completes it
      }
      words.insert(words.end(), n.begin(), n.end());
      if (!TakesValue(*o)) {
        continue;
      }
      auto c = Choices(*o);
      if (c.empty()) {
        c = KnownValues(*o);
      }
      if (IsMetric(*o)) {
        choices += "        " + Join(n, "|") + ") COMPREPLY=($(compgen -W \"$(" + kMetricList +
                   ")\" -- \"$cur\")); return ;;\n";
      } else if (!c.empty()) {
        // A suite may also be a file: names first, then file names.
        choices += "        " + Join(n, "|") + ") COMPREPLY=($(compgen -W " +
                   SingleQuoted(Join(c, " ")) + " -- \"$cur\")" +
                   (IsSuite(*o) ? " $(compgen -f -- \"$cur\")" : "") + "); return ;;\n";
      } else if (TakesNumber(*o)) {
        numbers.insert(numbers.end(), n.begin(), n.end());
      } else {
        files.insert(files.end(), n.begin(), n.end());
      }
    }
    s += "    " + sub->get_name() + ")\n";
    if (!choices.empty() || !files.empty() || !numbers.empty()) {
      s += "      case $prev in\n" + choices;
      if (!numbers.empty()) {
        // -o default would offer file names for an empty reply: off for this word.
        s += "        " + Join(numbers, "|") +
             ") compopt +o default 2>/dev/null; return ;;  # a number\n";
      }
      if (!files.empty()) {
        s += "        " + Join(files, "|") + ") return ;;  # a value: file names (-o default)\n";
      }
      s += "      esac\n";
    }
    s += "      words=" + SingleQuoted(Join(words, " "));
    if (const auto nested = NestedNames(*sub); !nested.empty()) {
      s += "; nested=" + SingleQuoted(Join(nested, " "));
    }
    s += " ;;\n";
  }
  s += "  esac\n"
       "  if [[ -z $cmd || $cur == -* ]]; then\n"
       "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
       "  elif [[ -n $nested && $prev == \"$cmd\" ]]; then  # `store import|ls|rm`\n"
       "    COMPREPLY=($(compgen -W \"$nested\" -- \"$cur\"))\n"
       "  fi\n"
       "}\n"
       "complete -o default -F _servebench servebench\n";
  return s;
}

// ---------------------------------------------------------------------------------------------

// A description inside an _arguments spec's [...], inside single quotes.
std::string ZshDescription(const std::string& d) {
  std::string out;
  for (char ch : d) {
    if (ch == '[' || ch == ']' || ch == '\\') {
      out += '\\';
    }
    out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  }
  return out;
}

// One _arguments spec. `exclusive`: the option ends the command line (--help, --version).
std::string ZshSpec(const CLI::Option& o, bool exclusive = false) {
  const auto n = Names(o);
  std::string action = "_files";
  auto c = Choices(o);
  if (c.empty()) {
    c = KnownValues(o);
  }
  if (IsMetric(o)) {
    action = "_servebench_metrics";
  } else if (c.empty() && TakesNumber(o)) {
    action = " ";  // the message alone: a number has nothing to complete
  } else if (!c.empty()) {
    action = IsSuite(o)
                 ? "{_alternative \"suites:suite:(" + Join(c, " ") + ")\" \"files:file:_files\"}"
                 : "(" + Join(c, " ") + ")";
  }
  if (n.empty()) {
    std::string name = o.get_name(true);
    return SingleQuoted(std::string(Repeats(o) ? "*" : "") + ":" + name + ":" + action);
  }
  std::string spec;
  if (exclusive) {
    spec += "'(- *)'";
  } else if (Repeats(o)) {
    spec += "'*'";
  } else if (n.size() > 1) {
    spec += "'(" + Join(n, " ") + ")'";
  }
  spec += n.size() > 1 ? "{" + Join(n, ",") + "}" : n.front();
  spec += "'[" + ZshDescription(o.get_description()) + "]";
  if (TakesValue(o)) {
    std::string message = o.get_lnames().empty() ? TypeName(o) : o.get_lnames().front();
    spec += ":" + message + ":" + action;
  }
  return spec + "'";
}

std::string Zsh(const CLI::App& app) {
  std::string s =
      "#compdef servebench\n"
      "# zsh completion for servebench. Generated by `servebench completion zsh` from the\n"
      "# command definitions: do not edit.\n"
      "\n"
      "_servebench_commands() {\n"
      "  local -a commands=(\n";
  for (const auto* sub : Subcommands(app)) {
    s += "    " + SingleQuoted(sub->get_name() + ":" + sub->get_description()) + "\n";
  }
  s += "  )\n"
       "  _describe -t commands 'servebench command' commands\n"
       "}\n"
       "\n"
       "_servebench_metrics() {\n"
       "  local -a metrics=(${(f)\"$(" +
       std::string(kMetricList) +
       ")\"})\n"
       "  compadd -a metrics\n"
       "}\n"
       "\n"
       "_servebench() {\n"
       "  local curcontext=$curcontext state line ret=1\n"
       "  _arguments -C \\\n";
  for (const auto* o : Options(app)) {
    s += "    " + ZshSpec(*o, /*exclusive=*/true) + " \\\n";
  }
  s += "    '1: :_servebench_commands' \\\n"
       "    '*:: :->args' && ret=0\n"
       "  if [[ $state == args ]]; then\n"
       "    curcontext=${curcontext%:*:*}:servebench-$words[1]:\n"
       "    case $words[1] in\n";
  for (const auto* sub : Subcommands(app)) {
    s += "      " + sub->get_name() + ")\n        _arguments -s \\\n";
    if (const auto nested = NestedNames(*sub); !nested.empty()) {
      s += "          '1:command:(" + Join(nested, " ") + ")' \\\n";
    }
    for (const auto* o : AllOptions(*sub)) {
      s += "          " + ZshSpec(*o) + " \\\n";
    }
    s += "          && ret=0 ;;\n";
  }
  s += "    esac\n"
       "  fi\n"
       "  return ret\n"
       "}\n"
       "\n"
       "_servebench \"$@\"\n";
  return s;
}

// ---------------------------------------------------------------------------------------------

// Roff text: backslashes and hyphens escaped, no line starting with a control character.
std::string Roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char ch : text) {
    if (line_start && (ch == '.' || ch == '\'')) {
      out += "\\&";
    }
    if (ch == '\\') {
      out += "\\e";
    } else if (ch == '-') {
      out += "\\-";
    } else {
      out += ch;
    }
    line_start = ch == '\n';
  }
  return out;
}

std::string ManOption(const CLI::Option& o) {
  const auto n = Names(o);
  std::string head;
  if (n.empty()) {
    head = "\\fI" + Roff(o.get_name(true)) + "\\fR";
  } else {
    for (const auto& name : n) {
      head += (head.empty() ? "" : ", ") + std::string("\\fB") + Roff(name) + "\\fR";
    }
  }
  if (TakesValue(o) && !n.empty()) {
    head += " \\fI" + Roff(o.get_type_name()) + "\\fR";
  }
  std::string body = o.get_description();
  if (!o.get_default_str().empty()) {
    body += " (default: " + o.get_default_str() + ")";
  }
  if (o.get_required()) {
    body += " (required)";
  }
  if (Repeats(o) && !n.empty()) {
    body += " (repeat or comma-separate)";
  }
  return ".TP\n" + head + "\n" + Roff(body) + "\n";
}

// Examples of each command, shown in its section of the page ("what", "command line").
std::vector<std::pair<std::string, std::string>> Examples(const std::string& command) {
  static const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> kAll = {
      {"run",
       {"Quality suites and speed profiles against a server",
        "servebench run \\-\\-endpoint http://gpu\\-7:8000/v1 \\-\\-suite quick"}},
      {"run",
       {"The same against the built-in simulator (no \\-\\-endpoint)",
        "servebench run \\-\\-suite quick"}},
      {"perf",
       {"Decode speed and concurrency only",
        "servebench perf \\-\\-endpoint URL \\-\\-profile decode,concurrency"}},
      {"perf",
       {"Open-loop load at three rates with latency objectives",
        "servebench perf \\-\\-profile rate \\-\\-rates 5,20,60 \\-\\-slo "
        "ttft_ms=500"}},
      {"launch",
       {"Start each server of a recipe matrix, measure it, compare them",
        "servebench launch matrix.yaml \\-\\-profiles decode,concurrency"}},
      {"compare", {"Two runs side by side", "servebench compare runs/a runs/b \\-\\-format md"}},
      {"report", {"Re-render a run directory's reports", "servebench report runs/a"}},
      {"export", {"A run as CSV", "servebench export runs/a \\-\\-format csv"}},
      {"sim", {"The simulator as a standalone server", "servebench sim \\-\\-port 8000"}},
      {"suites", {"List the built-in suites", "servebench suites"}},
      {"store",
       {"Import run directories, list and remove stored runs",
        "servebench store import runs/*; servebench store ls"}},
      {"history", {"One metric over time", "servebench history \\-\\-metric decode.decode_tok_s"}},
      {"leaderboard",
       {"Rank stored runs",
        "servebench leaderboard \\-\\-metric decode.decode_tok_s \\-\\-by "
        "model"}},
      {"doctor", {"What works on this machine", "servebench doctor"}},
  };
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [cmd, ex] : kAll) {
    if (cmd == command) {
      out.push_back(ex);
    }
  }
  return out;
}

// An example block: each "what" as a paragraph, its command line below it (roff already).
std::string ManExamples(const std::vector<std::pair<std::string, std::string>>& examples) {
  std::string s;
  for (const auto& [what, line] : examples) {
    s += ".PP\n" + what + ":\n.RS\n.nf\n.B " + line + "\n.fi\n.RE\n";
  }
  return s;
}

// ENVIRONMENT and FILES: what every command reads (docs/store.md, docs/media.md, README.md).
constexpr const char* kManEnvironmentAndFiles =
    ".SH ENVIRONMENT\n"
    ".TP\n.B OPENAI_API_KEY\n"
    "The API key sent to the server when set (another variable: \\-\\-api\\-key\\-env; a file: "
    "\\-\\-api\\-key\\-file). Never written to any output.\n"
    ".TP\n.B SERVEBENCH_STORE\n"
    "The run store when no \\-\\-store is given: a SQLite path or a postgresql:// URL; \\fBoff\\fR "
    "records nothing.\n"
    ".TP\n.B XDG_DATA_HOME\n"
    "The default store is $XDG_DATA_HOME/servebench/runs.sqlite.\n"
    ".TP\n.B SERVEBENCH_CACHE_DIR\n"
    "The generated media's disk cache (default $XDG_CACHE_HOME/servebench/media, else "
    "~/.cache/servebench/media); \\fBoff\\fR: none.\n"
    ".TP\n.B SERVEBENCH_NVML_LIB\n"
    "The NVML library to load for GPU memory and power (default libnvidia\\-ml.so.1).\n"
    ".TP\n.B TMPDIR\n"
    "Where the sandbox that runs model\\-written code makes its working directories.\n"
    ".SH FILES\n"
    ".TP\n.I runs/<UTC time>\\-<model>/\n"
    "One directory per run (\\-\\-out): results.json, samples.jsonl, report.md, report.html, "
    "plan.json, journal.jsonl, and server.log when servebench started the server.\n"
    ".TP\n.I ~/.local/share/servebench/runs.sqlite\n"
    "The default run store (store, history, leaderboard).\n"
    ".TP\n.I ~/.cache/servebench/media/\n"
    "The generated test media, made again when missing.\n";

std::string Man(const CLI::App& app) {
  // The app's description: "servebench: WHAT\nMORE...": WHAT is the NAME line.
  std::string desc = app.get_description();
  std::string first = desc.substr(0, desc.find('\n'));
  std::string rest = desc.find('\n') == std::string::npos ? "" : desc.substr(desc.find('\n') + 1);
  if (first.rfind("servebench: ", 0) == 0) {
    first = first.substr(12);
  }
  std::string s =
      ".\\\" Generated by `servebench completion man` from the command definitions: do "
      "not edit.\n"
      ".TH SERVEBENCH 1 \"\" \"servebench " +
      std::string(run::Version()) +
      "\" \"User Commands\"\n"
      ".SH NAME\n"
      "servebench \\- " +
      Roff(first) +
      "\n"
      ".SH SYNOPSIS\n"
      ".B servebench\n"
      ".I COMMAND\n"
      ".RI [ OPTIONS ]\n"
      ".br\n"
      ".B servebench\n"
      ".I COMMAND\n"
      ".B \\-\\-help\n"
      ".br\n"
      ".B servebench \\-\\-version\n"
      ".SH DESCRIPTION\n" +
      Roff(rest) + "\n.SH OPTIONS\n";
  for (const auto* o : Options(app)) {
    s += ManOption(*o);
  }
  s += ".SH COMMANDS\n";
  for (const auto* sub : Subcommands(app)) {
    std::string synopsis = "servebench " + sub->get_name() + " [OPTIONS]";
    for (const auto* o : Options(*sub)) {
      if (Names(*o).empty()) {
        synopsis += " " + o->get_name(true) + (Repeats(*o) ? "..." : "");
      }
    }
    s += ".SS \"" + Roff(synopsis) + "\"\n" + Roff(sub->get_description()) + "\n";
    for (const auto* o : Options(*sub)) {
      s += ManOption(*o);
    }
    for (const auto* nested : Subcommands(*sub)) {  // store import|ls|rm
      s += ".TP\n\\fB" + Roff(nested->get_name()) + "\\fR\n" + Roff(nested->get_description()) +
           "\n";
    }
    if (const auto examples = Examples(sub->get_name()); !examples.empty()) {
      s += ".PP\n\\fBExamples\\fR\n" + ManExamples(examples);
    }
    s += ".PP\n\\fBExit status\\fR: as for every command (EXIT STATUS below).\n";
  }
  s += ".SH EXAMPLES\n";
  for (const char* cmd : {"run", "perf", "compare"}) {
    s += ManExamples(Examples(cmd));
  }
  s += kManEnvironmentAndFiles;
  s += ".SH EXIT STATUS\n"
       ".TP\n" +
       std::to_string(run::kExitOk) +
       "\nSuccess (for a run: complete, and no gate failed).\n"
       ".TP\n" +
       std::to_string(run::kExitGate) +
       "\nA gate failed (\\-\\-min\\-pass\\-rate, \\-\\-min\\-effective\\-pass\\-rate).\n"
       ".TP\n" +
       std::to_string(run::kExitUsage) +
       "\nUsage: an unknown command or option, a bad value.\n"
       ".TP\n" +
       std::to_string(run::kExitSetup) +
       "\nSetup, I/O or a failed run: an unreachable endpoint, an unknown model, an unreadable "
       "file, "
       "every request failed, the server went away, a full disk, \\-\\-deadline passed.\n"
       ".TP\n" +
       std::to_string(run::kExitInterrupted) +
       "\nInterrupted by SIGINT or SIGTERM; \\fBservebench run \\-\\-resume\\fR \\fIDIR\\fR "
       "continues the "
       "run.\n"
       ".SH SEE ALSO\n"
       "The full documentation: README.md and docs/*.md, installed in\n"
       ".IR /usr/share/doc/servebench/ .\n";
  return s;
}

}  // namespace

std::string CompletionText(const CLI::App& app, std::string_view kind) {
  if (kind == "bash") {
    return Bash(app);
  }
  if (kind == "zsh") {
    return Zsh(app);
  }
  if (kind == "man") {
    return Man(app);
  }
  return {};
}

void AddCompletionCommand(CLI::App& app) {
  auto kind = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "completion", "Print the bash or zsh completion script, or the man page (roff)");
  cmd->group("");  // hidden from --help, and from what it generates
  cmd->add_option("kind", *kind, "bash, zsh or man")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "man"}));
  cmd->callback([&app, kind] {
    std::fputs(CompletionText(app, *kind).c_str(), stdout);
    throw CLI::Success();
  });
}

}  // namespace sb::cli
