#!/usr/bin/env bash
# An accelerated 24-hour longevity run, and its verdict. A day at 10 s
# intervals has 8,640 intervals; this runs as many 100 ms ones (14.4
# minutes) against `perflab sim` answering in 2 ms (lognormal, p99 6 ms)
# with a route that steps to 4 ms (p99 12 ms) at a known share of the run
# (DEGRADE_AT, default 0.6: hour 14 h 24 m of the day), and a route that
# stays flat. It prints the verdict of perflab drift and checks it: the
# run degraded, the degraded route's p95 changed level within 1% of the
# run of where the simulator stepped, the flat route stayed steady.
# Load goes only to 127.0.0.1, 2 VUs, bounded by the run's duration.
#
# Usage: bench/longevity.sh [INTERVALS, default 8640]
#   PERFLAB=path   a perflab binary to measure (default: built from this tree)
#   OUT=dir        where it works (default bench/out/longevity)
#   DEGRADE_AT=0.6 where the route steps, as a share of the run
set -euo pipefail
cd "$(dirname "$0")/.."
USER_OUT=${OUT:-}
. bench/lib.sh
N=${1:-8640}
AT=${DEGRADE_AT:-0.6}
PORT=${PORT:-18092}
perflab_dir longevity "$USER_OUT"

STEP_MS=$(awk -v n="$N" -v a="$AT" 'BEGIN { printf "%d", n * 100 * a }')
cat > "$DIR/stubs.yaml" <<STUBS
listen: 127.0.0.1:$PORT
routes:
  - {name: degrades, path: /degrades, latency: {lognormal: {p50: 2ms, p99: 6ms}}, degrade: {after: ${STEP_MS}ms, latency: {lognormal: {p50: 4ms, p99: 12ms}}}}
  - {name: flat, path: /flat, latency: {lognormal: {p50: 2ms, p99: 6ms}}}
STUBS
"$BIN" sim "$DIR/stubs.yaml" > "$DIR/sim.log" 2>&1 &
SIM=$!
SIM_START=$(date +%s.%N)
trap 'kill -INT $SIM 2>/dev/null; wait $SIM 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$PORT/flat" >/dev/null 2>&1 && break; sleep 0.1; done
kill -0 "$SIM" 2>/dev/null || { echo "bench: perflab sim did not start on port $PORT:" >&2; cat "$DIR/sim.log" >&2; exit 1; }

cat > "$DIR/plan.yaml" <<PLAN
name: longevity
target: http://127.0.0.1:$PORT
interval: 100ms
scenarios:
  - name: day
    vus: 2
    duration: $(( N * 100 ))ms
    flow:
      - {name: degrades, url: /degrades}
      - {name: flat, url: /flat}
PLAN
/usr/bin/time -v -o "$DIR/time.txt" "$BIN" run "$DIR/plan.yaml" --out "$DIR/runs" --store off --progress none > "$DIR/run.log" 2>&1 || true
RUN=$(ls -d "$DIR"/runs/*-longevity | head -1)
start=$(date +%s.%N)
"$BIN" drift "$RUN" > "$DIR/drift.txt"
"$BIN" drift --json "$RUN" > "$DIR/drift.json"
end=$(date +%s.%N)
sed -n '/^stage /,$p' "$DIR/drift.txt"
awk -v a="$start" -v b="$end" 'BEGIN { printf "\nperflab drift took %.1f s\n", b - a }'
grep -E '^drift over time' "$DIR/run.log" | sed 's/^/the run itself said: /' || true

# Where the simulator stepped, in seconds into the stage: its start plus
# the step, less the stage's start.
python3 - "$DIR/drift.json" "$RUN/summary.json" "$SIM_START" "$STEP_MS" "$N" <<'PY'
import json, sys
from datetime import datetime
drift = json.load(open(sys.argv[1]))["drift"]
stage = json.load(open(sys.argv[2]))["stages"][0]
start = datetime.fromisoformat(stage["start"].replace("Z", "+00:00")).timestamp()
want = float(sys.argv[3]) + int(sys.argv[4]) / 1000 - start
span = int(sys.argv[5]) * 0.1
series = {s["name"]: s for s in drift["series"]}
deg, flat = series["p95 of degrades"], series["p95 of flat"]
ch = deg.get("change") or {}
ok = drift["degraded"] and deg["verdict"] == "degraded" and deg["significant"] and ch and abs(ch["at_s"] - want) <= 0.01 * span and flat["verdict"] == "steady"
print(f"\nstepped at {want:.1f} s ({want / span:.0%} of the run); found: {ch.get('at_s', float('nan')):.1f} s, "
      f"{deg['sentence']}; flat: {flat['verdict']}; {drift['tests']} tests")
print("verdict and change point right" if ok else "WRONG: see " + sys.argv[1])
sys.exit(0 if ok else 1)
PY
