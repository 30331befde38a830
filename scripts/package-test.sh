#!/usr/bin/env bash
# Builds the .deb, installs it on this machine with apt-get, runs the installed servebench from
# outside the source tree, then removes and purges it and checks that nothing of it is left.
# Meant for CI (`bash scripts/package-test.sh` after scripts/setup.sh) on a throwaway machine: it
# needs root (or sudo) and refuses to run where a servebench package is already installed.
# Measured: 12-17 s wall over 3 runs (2026-12-03, 2 shared cores, Debian 12, build tree already built: cpack with
# dpkg-shlibdeps and strip, apt install, `run --suite quick` on the simulator, purge).
#   scripts/package-test.sh               uses ./build (configured and built by scripts/setup.sh)
#   BUILD_DIR=b scripts/package-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
build_dir=$(realpath "${BUILD_DIR:-build}")
start=$(date +%s)
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

fail() {
  echo "package-test: FAIL: $*" >&2
  exit 1
}
step() { echo "package-test: $*" >&2; }

if dpkg-query -W -f='${Status}' servebench 2>/dev/null | grep -q "installed"; then
  fail "a servebench package is already installed here; remove it first (apt-get purge servebench)"
fi
[ ! -e /usr/bin/servebench ] || fail "/usr/bin/servebench exists already (not from a package?)"

# 1. The package, from an up-to-date build tree.
[ -f "$build_dir/CMakeCache.txt" ] || BUILD_DIR=$build_dir scripts/setup.sh
command -v dpkg-shlibdeps >/dev/null || fail "dpkg-shlibdeps missing: apt-get install dpkg-dev"
step "building $build_dir and the .deb"
cmake --build "$build_dir" -j "$(nproc)" --target servebench servebench_generated >/dev/null
rm -f "$build_dir"/servebench_*.deb
(cd "$build_dir" && cpack -G DEB >/dev/null) || fail "cpack -G DEB failed"
debs=("$build_dir"/servebench_*_amd64.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "cpack made no single servebench_*_amd64.deb"
deb=${debs[0]}
version=$(dpkg-deb -f "$deb" Version)
[ "$(basename "$deb")" = "servebench_${version}_amd64.deb" ] || fail "$deb: name and Version ($version) differ"
depends=$(dpkg-deb -f "$deb" Depends)
step "$(basename "$deb"): Depends: $depends; Recommends: $(dpkg-deb -f "$deb" Recommends)"
for d in libc6 libcurl4 python3; do
  grep -qE "(^|, )$d( |,|$)" <<<"$depends" || fail "Depends lacks $d (dpkg-shlibdeps not run?): $depends"
done
mapfile -t files < <(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }')
for f in /usr/bin/servebench /usr/share/man/man1/servebench.1 \
  /usr/share/bash-completion/completions/servebench /usr/share/zsh/vendor-completions/_servebench \
  /usr/share/doc/servebench/README.md /usr/share/doc/servebench/docs/install.md; do
  printf '%s\n' "${files[@]}" | grep -qx "$f" || fail "the package lacks $f"
done

# From here on a failure purges the package again.
cleanup() { $sudo dpkg --purge servebench >/dev/null 2>&1 || true; }
trap cleanup EXIT

# 2. Installed, it runs from anywhere, without the source or build tree.
step "apt-get install $deb"
if ! $sudo apt-get install -y -qq "$deb" >"$build_dir/package-test-apt.log" 2>&1; then
  cat "$build_dir/package-test-apt.log" >&2
  fail "apt-get install $deb failed"
fi
[ "$(command -v servebench)" = /usr/bin/servebench ] || fail "servebench is not /usr/bin/servebench on PATH"
work=$(mktemp -d)
cd "$work"
deb_version=$(dpkg-deb -f "$deb" Version)
[ "$(servebench --version)" = "servebench $deb_version" ] ||
  fail "servebench --version says '$(servebench --version 2>&1)', the package is $deb_version"
# Hide the source and build trees (a private mount namespace, where unshare can make one), so a
# run that reads anything from them fails.
run=(env XDG_CACHE_HOME="$work/cache" servebench run --suite quick --out "$work/x")
if $sudo unshare --mount true 2>/dev/null; then
  hide="mount -t tmpfs none '$src'"
  case $build_dir in "$src"/*) ;; *) hide="$hide && mount -t tmpfs none '$build_dir'" ;; esac
  step "servebench run --suite quick in $work, with $src hidden"
  $sudo unshare --mount sh -c "$hide && cd '$work' && exec \"\$@\"" _ "${run[@]}" >"$work/run.log" 2>&1 ||
    fail "installed servebench run --suite quick failed: $(tail -20 "$work/run.log")"
else
  step "servebench run --suite quick in $work (unshare unavailable: the source tree stays visible)"
  "${run[@]}" >"$work/run.log" 2>&1 || fail "installed servebench run --suite quick failed: $(tail -20 "$work/run.log")"
fi
for f in results.json report.md samples.jsonl; do
  [ -s "$work/x/$f" ] || fail "the run wrote no $work/x/$f"
done
if command -v man >/dev/null; then
  [ "$(man -w servebench)" = /usr/share/man/man1/servebench.1 ] || fail "man -w servebench: $(man -w servebench 2>&1)"
fi
[ -s /usr/share/man/man1/servebench.1 ] || fail "no man page"
[ -s /usr/share/bash-completion/completions/servebench ] || fail "no bash completion"
bash -c 'source /usr/share/bash-completion/completions/servebench && complete -p servebench' >/dev/null ||
  fail "the bash completion does not register for servebench"
[ -s /usr/share/zsh/vendor-completions/_servebench ] || fail "no zsh completion"
cd /
rm -rf "$work"

# 3. Removed and purged, nothing of it is left.
step "apt-get remove, purge"
$sudo apt-get remove -y -qq servebench >/dev/null || fail "apt-get remove servebench failed"
# apt-get purge knows the package no longer once it is removed (it has no conffiles, and is in
# no apt source): dpkg --purge, which ignores a package it does not know, makes sure.
$sudo dpkg --purge servebench >/dev/null 2>&1 || fail "dpkg --purge servebench failed"
trap - EXIT
if dpkg-query -W -f='${Status}' servebench 2>/dev/null | grep -q "installed"; then
  fail "dpkg still lists servebench: $(dpkg-query -W -f='${Status}' servebench)"
fi
[ -z "$(dpkg -L servebench 2>/dev/null)" ] || fail "dpkg -L servebench still lists files"
for f in "${files[@]}"; do
  [ ! -e "$f" ] || fail "$f is left after the purge"
done
[ ! -e /usr/share/doc/servebench ] || fail "/usr/share/doc/servebench is left after the purge"
if command -v servebench >/dev/null; then fail "servebench is still on PATH: $(command -v servebench)"; fi

echo "package-test: OK: $(basename "$deb") built, installed, run, purged in $(($(date +%s) - start)) s"
