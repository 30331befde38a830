#!/usr/bin/env bash
# ctest PackagingGenerated: the man page and the completion scripts the build generated (and
# installs) are what the binary prints now, and they name every subcommand and every option that
# the live `--help` of the binary and of each subcommand lists, so they cannot drift.
#   generated_test.sh SERVEBENCH GENERATED_DIR
set -euo pipefail
exe=$1
gen=$2
fail=0
err() {
  echo "PackagingGenerated: $*" >&2
  fail=1
}

# 1. The installed files are the live output (a stale build tree fails here).
for pair in bash:servebench.bash zsh:_servebench man:servebench.1; do
  kind=${pair%%:*} file=$gen/${pair#*:}
  if [[ ! -s $file ]]; then
    err "$file is missing or empty"
  elif ! diff -u "$file" <("$exe" completion "$kind") >/dev/null; then
    err "$file differs from \`servebench completion $kind\` (rebuild the servebench_generated target)"
  fi
done
bash_script=$("$exe" completion bash)
zsh_script=$("$exe" completion zsh)
# The page's text with roff's escapes undone (\- is -, \fB...\fR are fonts).
man_text=$("$exe" completion man | sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\e/\\/g')

# Option and positional names in the Options:/Positionals: sections of a --help text.
help_names() {
  awk '/^[A-Za-z]+:$/ { sec = $0; next }
       (sec == "Options:" || sec == "Positionals:") && /^  [^ ]/ {
         n = split($1, names, ",")
         for (i = 1; i <= n; i++) print names[i]
       }'
}
has_word() {  # has_word TEXT WORD: WORD occurs delimited by no name character
  grep -qE -- "(^|[^A-Za-z0-9_-])$(printf '%s' "$2" | sed 's/[.[*^$]/\\&/g')([^A-Za-z0-9_-]|\$)" <<<"$1"
}

top_help=$("$exe" --help)
mapfile -t subcommands < <(awk '/^[A-Za-z]+:$/ { sec = $0; next } sec == "Subcommands:" && /^  [^ ]/ { print $1 }' <<<"$top_help")
if ((${#subcommands[@]} < 5)); then
  err "found only ${#subcommands[@]} subcommands in \`servebench --help\`: ${subcommands[*]}"
fi
checked=0

# 2. The top level: its options and every subcommand.
while read -r opt; do
  has_word "$bash_script" "$opt" || err "bash: no top-level option $opt"
  has_word "$zsh_script" "$opt" || err "zsh: no top-level option $opt"
  has_word "$man_text" "$opt" || err "man: no top-level option $opt"
  checked=$((checked + 1))
done < <(help_names <<<"$top_help")
for sub in "${subcommands[@]}"; do
  has_word "$bash_script" "$sub" || err "bash: no subcommand $sub"
  has_word "$zsh_script" "$sub" || err "zsh: no subcommand $sub"
  grep -qE "^\.SS \"servebench $sub( |\")" <<<"$man_text" || err "man: no section for $sub"
  # 3. Every option of `servebench SUB --help`, in the bash and zsh scripts and in SUB's
  # section of the page.
  section=$(awk -v s="servebench $sub" 'index($0, ".SS \"" s) == 1 { on = 1; next } /^\.S[SH] / { on = 0 } on' <<<"$man_text")
  zsh_case=$(awk -v s="      $sub)" '$0 == s { on = 1; next } /^      [a-z-]+\)$/ || /^    esac/ { on = 0 } on' <<<"$zsh_script")
  bash_case=$(awk -v s="    $sub)" '$0 == s { on = 1; next } /^    [a-z-]+\)$/ || /^  esac/ { on = 0 } on' <<<"$bash_script")
  while read -r opt; do
    checked=$((checked + 1))
    has_word "$section" "$opt" || err "man: servebench $sub has no $opt"
    has_word "$zsh_case" "$opt" || err "zsh: servebench $sub has no $opt"
    if [[ $opt == -* ]]; then
      has_word "$bash_case" "$opt" || err "bash: servebench $sub has no $opt"
    fi
  done < <("$exe" "$sub" --help | help_names)
done
# The hidden command stays hidden.
if grep -qE '(^| |\|)completion(\)|\|)' <<<"$bash_script" || grep -q "'completion:" <<<"$zsh_script" ||
  grep -q '"servebench completion' <<<"$man_text"; then
  err "the hidden completion command is listed"
fi

# 4. The scripts parse, and bash completes.
bash -n <<<"$bash_script" || err "bash -n fails on the bash completion"
if command -v zsh >/dev/null 2>&1; then
  zsh -n <<<"$zsh_script" || err "zsh -n fails on the zsh completion"
fi
complete_bash() {  # complete_bash WORD...: the candidates for the last word
  bash -c 'eval "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _servebench; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$bash_script" "$@"
}
[[ $(complete_bash servebench ru) == run ]] || err "bash: 'servebench ru<TAB>' does not give run"
complete_bash servebench run --sui | grep -qx -- --suite || err "bash: 'servebench run --sui<TAB>' does not give --suite"
[[ $(complete_bash servebench compare --format '' | tr '\n' ' ') == "md html json junit " ]] ||
  err "bash: 'servebench compare --format <TAB>' does not give md html json junit"

# 5. The page renders without warnings.
if command -v groff >/dev/null 2>&1; then
  warnings=$("$exe" completion man | groff -man -Tutf8 -ww -z 2>&1) || true
  [[ -z $warnings ]] || err "groff warns about the man page: $warnings"
fi

if ((fail)); then
  exit 1
fi
echo "PackagingGenerated: ${#subcommands[@]} subcommands, $checked options checked"
