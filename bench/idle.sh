#!/usr/bin/env bash
# perflab's fixed costs: what it spends when there is almost nothing to do
# (its monitors, the loopback probe, interval rotation, writing intervals,
# the history, the end of the run), as a share of a core, and what they add
# to each request at a low rate. Against nginx (bench/lib.sh: one worker
# on CPU 1, a 2-byte body), perflab pinned to CPU 0 with GOMAXPROCS=1, the
# run history and the built-in monitors on (as a run has them by default),
# in alternating rounds:
#   idle     an arrival rate of 1/s for IDLE_SECS (default 60): CPU seconds
#            over wall seconds
#   600/s    an arrival rate of 600/s for SECS (default 10): CPU per request
#   50000/s  the same at 50,000/s: CPU per request, the high-rate figure
# CPU time is perf stat's task-clock (every thread's time on a CPU, to the
# microsecond) where perf can count it, else /usr/bin/time's user + system
# (rusage, which this kind of kernel may account by the tick: a process
# that wakes thousands of times a second for microseconds is charged a
# tick whenever one falls while it runs; at 600/s it gave 95-98 µs a
# request for two builds that perf put at 107 and 87).
# The table shows each figure's median and range over the rounds, and the
# ratio of the 600/s CPU per request to the 50,000/s one. Load goes only to
# 127.0.0.1 and every run is bounded in time.
#
# Usage: bench/idle.sh [ROUNDS, default 3]
#   BASE=path      also run another perflab binary in each round (a build
#                  of an earlier revision), alternating with this tree's
#   IDLE_SECS=60 SECS=10 PORT=18083 ENGINE=event_loop|goroutines
#   PROFILE=1      write a CPU profile of each idle run (bench/out/idle/)
#   FLOOR=1        also run bench/floor -mode open at 600/s and 50,000/s in
#                  each round: the least any Go generator spends on a new
#                  user's request (connect, GET, close) at each rate, the
#                  ratio that waking up from idle sets on this machine
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
IDLE_SECS=${IDLE_SECS:-60}
SECS=${SECS:-10}
PORT=${PORT:-18083}
ENGINE=${ENGINE:-event_loop}
source bench/lib.sh
OUT=bench/out/idle
rm -rf "$OUT"; mkdir -p "$OUT"
need_wrk_nginx
nginx_dir
start_nginx "http://127.0.0.1:$PORT/"

go build -o "$OUT/perflab" ./cmd/perflab
go build -o "$OUT/floor" ./bench/floor
as_installed "$OUT/perflab"
VERSIONS="this"
if [ -n "${BASE:-}" ]; then cp "$BASE" "$OUT/perflab-base"; VERSIONS="base this"; fi
loop=true; [ "$ENGINE" = goroutines ] && loop=false
cat > "$OUT/plan.yaml" <<PLAN
name: bench-idle
target: http://127.0.0.1:$PORT
http: {event_loop: $loop}
vars: {rate: 1, secs: 10}
scenarios:
  - {name: open, rate: "\${rate}", duration: "\${secs}s", vus: 50, max_vus: 200, flow: [{name: GET /, url: /}]}
PLAN

PERF=0
if perf stat -x, -e task-clock -o "$OUT/perf.txt" true 2>/dev/null && grep -q task-clock "$OUT/perf.txt"; then PERF=1; fi
echo "bench: CPU time from $([ "$PERF" = 1 ] && echo "perf stat's task-clock" || echo "/usr/bin/time (rusage)")" >&2

# run VERSION RATE SECS: one run; appends "version rate wall cpu requests" to rows.txt.
run() {
  local bin="$OUT/perflab" prof=() count=()
  [ "$1" = base ] && bin="$OUT/perflab-base"
  [ -n "${PROFILE:-}" ] && [ "$2" = 1 ] && prof=(--cpuprofile "$OUT/idle-$1-$round.prof")
  [ "$PERF" = 1 ] && count=(perf stat -x, -e task-clock -o "$OUT/perf.txt" --)
  rm -rf "$OUT/runs"
  GOMAXPROCS=1 /usr/bin/time -f "%e %U %S" -o "$OUT/time.txt" "${count[@]}" taskset -c "$GEN_CPU" "$bin" run "$OUT/plan.yaml" \
    --set rate="$2" --set secs="$3" --out "$OUT/runs" --quiet "${prof[@]}" > "$OUT/run.out" 2>&1 || { cat "$OUT/run.out" >&2; exit 1; }
  if ! grep -q "Err: 0 " "$OUT/run.out"; then echo "bench: perflab saw errors:" >&2; cat "$OUT/run.out" >&2; exit 1; fi
  local n cpu; n=$(grep -o 'summary = [0-9]*' "$OUT/run.out" | awk '{print $3}')
  read -r wall u s < "$OUT/time.txt"
  if [ "$PERF" = 1 ]; then
    cpu=$(awk -F, '/task-clock/ { printf "%.4f", $1 / 1000 }' "$OUT/perf.txt")
  else
    cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
  fi
  echo "$1 $2 $wall $cpu $n" >> "$OUT/rows.txt"
}

# floor RATE SECS: one run of bench/floor's open model; appends a row as run does.
floor() {
  local count=()
  [ "$PERF" = 1 ] && count=(perf stat -x, -e task-clock -o "$OUT/perf.txt" --)
  GOMAXPROCS=1 /usr/bin/time -f "%e %U %S" -o "$OUT/time.txt" "${count[@]}" taskset -c "$GEN_CPU" "$OUT/floor" -mode open \
    -addr "127.0.0.1:$PORT" -rate "$1" -c 200 -d "${2}s" 2> "$OUT/run.out" || { cat "$OUT/run.out" >&2; exit 1; }
  local n cpu; n=$(awk '/^requests/ {print $2}' "$OUT/run.out")
  read -r wall u s < "$OUT/time.txt"
  if [ "$PERF" = 1 ]; then
    cpu=$(awk -F, '/task-clock/ { printf "%.4f", $1 / 1000 }' "$OUT/perf.txt")
  else
    cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
  fi
  echo "floor $1 $wall $cpu $n" >> "$OUT/rows.txt"
}

for round in $(seq "$ROUNDS"); do
  for version in $VERSIONS; do
    echo "== round $round/$ROUNDS: $version" >&2
    run "$version" 1 "$IDLE_SECS"
    run "$version" 600 "$SECS"
    run "$version" 50000 "$SECS"
  done
  if [ -n "${FLOOR:-}" ]; then
    echo "== round $round/$ROUNDS: floor" >&2
    floor 600 "$SECS"
    floor 50000 "$SECS"
  fi
done

python3 - "$OUT/rows.txt" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    v, rate, wall, cpu, n = line.split()
    rows.setdefault(v, {}).setdefault(int(rate), []).append((float(wall), float(cpu), int(n)))
def fig(xs):
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"
print("| perflab | rounds | idle: CPU % of a core | 600/s: CPU µs/request | 50,000/s: CPU µs/request | 600/s over 50,000/s |")
print("|---|--:|--:|--:|--:|--:|")
for v in sorted(rows, key=lambda v: (v == "floor", v != "base")):
    r = rows[v]
    idle = [100 * c / w for w, c, n in r.get(1, [])]
    low = [1e6 * c / n for w, c, n in r[600]]
    high = [1e6 * c / n for w, c, n in r[50000]]
    ratio = [a / b for a, b in zip(low, high)]
    print(f"| {v} | {len(low)} | {fig(idle) if idle else '-'} | {fig(low)} | {fig(high)} | {fig(ratio)} |")
print()
print("Every run (version rate: wall s, CPU s, requests):")
for v in rows:
    for rate in sorted(rows[v]):
        print(f"- {v} {rate}/s: " + "; ".join(f"{w:.1f} s, {c:.3f} s, {n}" for w, c, n in rows[v][rate]))
PY
