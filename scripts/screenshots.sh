#!/bin/sh
# Regenerates the screenshots of docs/reports.md: the demo's report.html (`servebench run`
# against the built-in simulator) and `compare --format html` of two concurrency sweeps of
# `servebench sim` at two token paces. Uses only the built servebench and Debian's chromium in
# headless mode, with networking off; nothing is downloaded. The windows are sized so that each
# PNG shows the top of its page and stays under about 300 KB.
#
#   scripts/screenshots.sh [BUILD_DIR]      (default: build)
#
# Writes docs/img/report-html.png and docs/img/compare-html.png; the runs go to a temporary
# directory that is removed at the end, and no run is recorded in a store.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
bin="$build/servebench"
img="$root/docs/img"
chromium=${SERVEBENCH_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}

if [ ! -x "$bin" ]; then
  echo "screenshots.sh: $bin not found: build servebench first (cmake --build build)" >&2
  exit 2
fi
if [ -z "$chromium" ]; then
  echo "screenshots.sh: chromium is not installed (apt-get install chromium)" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
export SERVEBENCH_STORE=off
mkdir -p "$img"

# A step's output goes to a log, shown when the step fails.
quiet() {
  if ! "$@" >"$tmp/log" 2>&1; then
    cat "$tmp/log" >&2
    echo "screenshots.sh: failed: $*" >&2
    exit 3
  fi
}

echo "screenshots.sh: the demo run (servebench run, built-in simulator)" >&2
quiet "$bin" run --out "$tmp/demo"

echo "screenshots.sh: two concurrency sweeps of servebench sim, then compare" >&2
for pace in 8 4; do
  quiet "$bin" perf --profile decode,concurrency --levels 1,2,4,8 --runs 3 --tokens 128 \
    --serve "$bin sim --port {port} --itl-ms $pace" --label "sim, ${pace} ms/token" \
    --out "$tmp/sweep-$pace"
done
quiet "$bin" compare "$tmp/sweep-8" "$tmp/sweep-4" --format html --out "$tmp/compare.html"

# One page to a PNG: a 1100 px wide window, as tall as `height`, networking off (every request
# goes to a closed port and no host name resolves; the pages load nothing anyway).
shoot() {
  page=$1 png=$2 height=$3
  sandbox=""
  if [ "$(id -u)" = 0 ]; then
    sandbox="--no-sandbox"  # chromium refuses to run as root with its sandbox
  fi
  # shellcheck disable=SC2086
  "$chromium" --headless $sandbox --disable-gpu --hide-scrollbars --mute-audio \
    --no-first-run --user-data-dir="$tmp/profile" --force-color-profile=srgb \
    --force-prefers-reduced-motion --blink-settings=preferredColorScheme=1 \
    --proxy-server=127.0.0.1:9 --host-resolver-rules="MAP * ~NOTFOUND" \
    --window-size="1100,$height" --screenshot="$png" "file://$page" >/dev/null 2>&1
  if [ ! -s "$png" ]; then
    echo "screenshots.sh: chromium wrote no $png" >&2
    exit 3
  fi
  echo "screenshots.sh: wrote $png ($(wc -c <"$png") bytes)" >&2
}

shoot "$tmp/demo/report.html" "$img/report-html.png" 2000
shoot "$tmp/compare.html" "$img/compare-html.png" 1700
