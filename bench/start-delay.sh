#!/usr/bin/env bash
# How late perflab starts the iterations of an arrival-rate model (start
# delay: from each iteration's due time to its request's send), per rate and
# per engine, with the timerfd that perflab paces with and with Go's own
# timers (PERFLAB_GO_TIMERS=1: perflab before 2026-11-25), and what each
# costs in CPU per request. perflab runs pinned to one CPU with
# GOMAXPROCS=1; the server, `perflab sim` answering "ok" at once, to
# another. Load goes only to 127.0.0.1 and every run is bounded in time.
#
# Usage: bench/start-delay.sh [seconds per run, default 10]
#   RATES="1000 5000 20000 50000"  ENGINES="event_loop goroutines"
#   TIMERS="timerfd go"      ROUNDS=3 (alternating; the table shows medians)
#   PRIO=rt                  also run perflab at real-time priority (chrt -f 10),
#                            as on a core of its own
#   BASE=path                also run another perflab binary (a build of an
#                            earlier revision) in each round, alternating
#                            with this tree's: the table gets a row per
#                            version ("base", "this")
#   INTERVAL=10s             the plan's interval (default: the run's own,
#                            100 ms for a run under 6 s)
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-10}
RATES=${RATES:-1000 5000 20000 50000}
ENGINES=${ENGINES:-event_loop goroutines}
TIMERS=${TIMERS:-timerfd go}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-18090}
OUT=bench/out/start-delay
rm -rf "$OUT"; mkdir -p "$OUT"
NCPU=$(nproc)
GEN_CPU=0; SRV_CPU=$(( NCPU > 1 ? 1 : 0 ))
PRE=()
if [ "${PRIO:-}" = rt ]; then PRE=(chrt -f 10); fi

go build -o "$OUT/perflab" ./cmd/perflab
VERSIONS="this"
if [ -n "${BASE:-}" ]; then cp "$BASE" "$OUT/perflab-base"; VERSIONS="base this"; fi
cat > "$OUT/stubs.yaml" <<STUBS
listen: 127.0.0.1:$PORT
routes: [{name: ok, path: /, body: ok}]
STUBS
taskset -c "$SRV_CPU" "$OUT/perflab" sim "$OUT/stubs.yaml" > "$OUT/sim.log" 2>&1 &
SIM=$!
trap 'kill -INT $SIM 2>/dev/null; wait $SIM 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$PORT/" >/dev/null 2>&1 && break; sleep 0.1; done

for engine in $ENGINES; do
  loop=true; [ "$engine" = goroutines ] && loop=false
  cat > "$OUT/$engine.yaml" <<PLAN
name: start-delay
target: http://127.0.0.1:$PORT
http: {event_loop: $loop}
${INTERVAL:+interval: $INTERVAL}
vars: {rate: 1000}
scenarios:
  - {name: open, rate: "\${rate}", duration: ${SECS}s, vus: 100, max_vus: 100, flow: [{name: GET /, url: /}]}
PLAN
done

# One line per run: engine rate timers p50 p99 max (ms) cpu_us_per_request dropped
for round in $(seq "$ROUNDS"); do
  for rate in $RATES; do
    for engine in $ENGINES; do
      for timers in $TIMERS; do
       for version in $VERSIONS; do
        bin="$OUT/perflab"; [ "$version" = base ] && bin="$OUT/perflab-base"
        label=$timers; [ "$VERSIONS" = this ] || label="$timers,$version"
        go=0; [ "$timers" = go ] && go=1
        echo "== round $round/$ROUNDS: $engine, $rate/s, $label" >&2
        PERFLAB_GO_TIMERS=$go GOMAXPROCS=1 /usr/bin/time -f "%U %S" -o "$OUT/time.txt" \
          "${PRE[@]}" taskset -c "$GEN_CPU" "$bin" run "$OUT/$engine.yaml" --set rate="$rate" \
          --out "$OUT/runs" --store off --quiet > "$OUT/run.out" 2>&1 || { cat "$OUT/run.out" >&2; exit 1; }
        dir=$(grep -o "results in .*" "$OUT/run.out" | awk '{print $3}')
        python3 - "$dir/summary.json" "$OUT/time.txt" "$engine" "$rate" "$label" >> "$OUT/rows.txt" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
op = [o for o in s["stages"][0]["operations"] if o["kind"] == "scenario"][0]
d = op["start_delay_ms"]
u, sy = map(float, open(sys.argv[2]).read().split())
print(sys.argv[3], sys.argv[4], sys.argv[5], d["p50"], d["p99"], d["max"], round((u + sy) / max(op["count"], 1) * 1e6, 2), op.get("dropped", 0))
PY
       done
      done
    done
  done
done

python3 - "$OUT/rows.txt" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    e, r, t, p50, p99, mx, cpu, dropped = line.split()
    rows.setdefault((e, int(r), t), []).append((float(p50), float(p99), float(mx), float(cpu), int(dropped)))
print("| engine | rate /s | timers | runs | start delay p50 µs | p99 µs | max µs | CPU µs/request | dropped |")
print("|---|--:|---|--:|--:|--:|--:|--:|--:|")
for (e, r, t), v in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1], not kv[0][2].startswith("timerfd"), kv[0][2])):
    med = lambda i: statistics.median(x[i] for x in v)
    print(f"| {e} | {r} | {t} | {len(v)} | {med(0)*1000:.0f} | {med(1)*1000:.0f} | {med(2)*1000:.0f} | {med(3):.2f} | {sum(x[4] for x in v)} |")
print()
print("Every run (p50 / p99 / max µs):")
for (e, r, t), v in sorted(rows.items()):
    print(f"- {e} {r}/s {t}: " + "; ".join(f"{x[0]*1000:.0f} / {x[1]*1000:.0f} / {x[2]*1000:.0f}" for x in v))
PY
