#!/usr/bin/env bash
# servebench's client against the floor of this machine, as ratios, in one run
# (docs/performance.md, "The instrument against its floor"):
#
#   - CPU per streamed token at 16 and 64 streams: bench/client_cpu (the concurrency profile's
#     path) against bench/socket_floor (epoll + recv + the chunk scanner, no HTTP library), the
#     same load against the same simulator settings (ITL 0.5 ms), medians of --repeats passes;
#   - client-added TTFT p50 / p99 of a burst of 1,000 and 10,000 simultaneous requests:
#     `servebench perf --profile concurrency` (client TTFT minus the simulator's own TTFT and
#     minus its read lag, how long the request sat in the simulator's socket: both from each
#     record's server.sim object) against `socket_floor --burst` (N requests written in one loop
#     on pre-opened, warmed connections; the same subtraction), medians over --repeats runs; the
#     figures with the read lag left in are printed too, without a target;
#   - the same burst through vLLM's benchmark client (`vllm bench serve`) when one is installed.
#
# Usage: bench/floor-ratios.sh [--build DIR] [--repeats N] [--quick] [--check MAX] [--sim-threads N]
#                              [--io-threads N]
#   --quick          16 streams and the 1,000-request burst only (about a minute)
#   --check MAX      exit 1 when any ratio is above MAX (e.g. 1.5: a loose regression check)
#   --sim-threads N  the bursts' simulator serves from N event loops (`servebench sim --threads`;
#                    default 1): on a machine with spare cores, so the simulator is not the limit
#   --io-threads N   servebench's bursts on N client I/O threads (default: automatic, 4 at 1,000
#                    streams and 16 at 10,000; the floor writes from one thread)
# The bursts also print the simulator's own share of TTFT (read lag + first token's lateness,
# p99 over servebench's requests): when it is large, the simulator, not the client, was behind.
# Needs the built tree (build/servebench, build/bench/client_cpu, build/bench/socket_floor) and jq.
# The simulator and the client share the machine: run it on a quiet one, and say its load.
set -euo pipefail

BUILD=build
REPEATS=3
QUICK=0
CHECK=""
SIM_THREADS=1
IO_THREADS=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --repeats) REPEATS="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --check) CHECK="$2"; shift 2 ;;
    --sim-threads) SIM_THREADS="$2"; shift 2 ;;
    --io-threads) IO_THREADS="$2"; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "floor-ratios: unknown flag $1" >&2; exit 2 ;;
  esac
done
SB="$BUILD/servebench"
for f in "$SB" "$BUILD/bench/client_cpu" "$BUILD/bench/socket_floor"; do
  [[ -x "$f" ]] || { echo "floor-ratios: $f is missing: build the tree first" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "floor-ratios: jq is needed" >&2; exit 2; }

TMP=$(mktemp -d)
SIM_PID=""
cleanup() { [[ -n "$SIM_PID" ]] && kill "$SIM_PID" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "nan"; else print v[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "nan"}'; }

ROWS=()
INFO=()
RATIOS=()
DECODE=()
row() {  # name, servebench, floor, target
  local r; r=$(ratio "$2" "$3")
  ROWS+=("| $1 | $2 | $3 | ×$r | ≤ ×$4 |")
  RATIOS+=("$r")
}

info_row() {  # name, servebench, floor: shown, not a target (the simulator's read lag inside)
  INFO+=("| $1 | $2 | $3 | ×$(ratio "$2" "$3") | — (the simulator's read lag inside) |")
}

cpu_row() {  # streams tokens
  local s=$1 t=$2 ours floor
  ours=$("$BUILD/bench/client_cpu" --levels "$s" --tokens "$t" --itl-ms 0.5 --repeats "$REPEATS" |
         awk -F'|' -v s="$s" '$2+0 == s {gsub(/ /, "", $5); print $5}')
  floor=$("$BUILD/bench/socket_floor" --streams "$s" --tokens "$t" --itl-ms 0.5 --repeats "$REPEATS" |
          awk '/^median/ {print $2}')
  row "CPU per token, $s streams × $t (µs)" "$ours" "$floor" 1.15
}

# The servebench client's added TTFT for one burst of N: p50 and p99 over its requests.
client_burst() {  # streams port
  local n=$1 port=$2 out="$TMP/c$1"
  rm -rf "$out"
  "$SB" perf --endpoint "http://127.0.0.1:$port" --profile concurrency --levels "$n" \
      --tokens 8 --io-threads "$IO_THREADS" --out "$out" --no-store >/dev/null 2>&1
  jq -rs '[.[] | select(.profile == "concurrency" and .status == "ok")
           | .ttft_ms - .server.sim.ttft_ms] | sort
          | "\(.[length/2|floor]) \(.[length*99/100|floor])"' "$out/samples.jsonl" |
      tr '\n' ' '
  jq -rs '[.[] | select(.profile == "concurrency" and .status == "ok"
                        and .server.sim.read_lag_us != null)
           | .ttft_ms - .server.sim.ttft_ms - .server.sim.read_lag_us / 1000] | sort
          | "\(.[length/2|floor]) \(.[length*99/100|floor])"' "$out/samples.jsonl" |
      tr '\n' ' '
  jq -r '.perf.concurrency.levels[0].per_stream_decode_tok_s.p50' "$out/results.json" | tr '\n' ' '
  jq -r '.perf.concurrency.levels[0].self_check.simulator_behind_ms.p99 // "nan"' "$out/results.json"
}

burst_rows() {  # streams
  local n=$1 port=18790 p50s=() p99s=() fp50s=() fp99s=() decodes=() behinds=()
  local np50s=() np99s=() fnp50s=() fnp99s=()
  "$SB" sim --port "$port" --ttft-ms 50 --itl-ms 200 --max-batch $((n * 2)) --slowdown 0 \
      --threads "$SIM_THREADS" >"$TMP/sim.log" 2>&1 &
  SIM_PID=$!
  for _ in $(seq 50); do grep -q "listening" "$TMP/sim.log" 2>/dev/null && break; sleep 0.1; done
  for _ in $(seq "$REPEATS"); do
    read -r a b na nb d e < <(client_burst "$n" "$port")
    p50s+=("$a"); p99s+=("$b"); np50s+=("$na"); np99s+=("$nb"); decodes+=("$d"); behinds+=("$e")
  done
  kill "$SIM_PID"; wait "$SIM_PID" 2>/dev/null || true; SIM_PID=""
  "$BUILD/bench/socket_floor" --burst --streams "$n" --tokens 8 --itl-ms 200 --ttft-ms 50 \
      --repeats "$REPEATS" --sim-threads "$SIM_THREADS" >"$TMP/floor.txt"
  mapfile -t fp50s < <(awk '/burst: client-added TTFT/ {print $5}' "$TMP/floor.txt")
  mapfile -t fp99s < <(awk '/burst: client-added TTFT/ {print $8}' "$TMP/floor.txt")
  mapfile -t fnp50s < <(awk '/net of the simulator.s read lag/ {print $10}' "$TMP/floor.txt")
  mapfile -t fnp99s < <(awk '/net of the simulator.s read lag/ {print $13}' "$TMP/floor.txt")
  med() { printf '%s\n' "$@" | median | xargs printf '%.2f'; }
  row "client-added TTFT p50, burst of $n (ms)" "$(med "${np50s[@]}")" "$(med "${fnp50s[@]}")" 1.3
  row "client-added TTFT p99, burst of $n (ms)" "$(med "${np99s[@]}")" "$(med "${fnp99s[@]}")" 1.3
  info_row "TTFT over the simulator's own, p50, burst of $n (ms)" "$(med "${p50s[@]}")" \
      "$(med "${fp50s[@]}")"
  info_row "TTFT over the simulator's own, p99, burst of $n (ms)" "$(med "${p99s[@]}")" \
      "$(med "${fp99s[@]}")"
  local d; d=$(printf '%s\n' "${decodes[@]}" | median)
  DECODE+=("| per-stream decode median, $n streams (tok/s) | $(printf '%.3f' "$d") | 5.000 (the simulator's truth) | $(awk -v d="$d" 'BEGIN {printf "%+.2f%%", (d / 5 - 1) * 100}') | within 1% |")
  local b; b=$(printf '%s\n' "${behinds[@]}" | median | xargs printf '%.2f')
  DECODE+=("| the simulator's own share of TTFT p99, burst of $n, $SIM_THREADS loop(s) (ms) | $b | — | — | small beside the client-added TTFT |")
}

echo "floor-ratios: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $REPEATS passes each, simulator with $SIM_THREADS event loop(s)" >&2
cpu_row 16 4000
[[ $QUICK == 1 ]] || cpu_row 64 2000
burst_rows 1000
[[ $QUICK == 1 ]] || burst_rows 10000

echo "| Figure | servebench | floor | ratio | target |"
echo "|---|---:|---:|---:|---|"
printf '%s\n' "${ROWS[@]}" "${INFO[@]}" "${DECODE[@]}"
if command -v vllm >/dev/null; then
  echo "vllm is installed: run \`vllm bench serve\` against the same simulator for its figures" \
       "(docs/performance.md)"
else
  echo "vllm: not installed here, no comparison with its benchmark client"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ -n "$CHECK" ]]; then
  for r in "${RATIOS[@]}"; do
    if awk -v r="$r" -v m="$CHECK" 'BEGIN {exit !(r == "nan" || r > m)}'; then
      echo "floor-ratios: a ratio (×$r) is above ×$CHECK" >&2
      exit 1
    fi
  done
fi
