#!/usr/bin/env bash
# An accelerated soak: perflab's own memory over a long run. A 72-hour run
# at 10 s intervals has 25,920 intervals; this runs as many 100 ms ones
# (43.2 minutes), with 20 operations (18 steps in a transaction, the
# transaction, the scenario) on the goroutine engine, against `perflab sim`
# answering at once, with the run history and the built-in monitors on (the
# monitors sample every interval, 100 ms here: as many samples as 72 h of
# 10 s ones). Every EVERY intervals it prints perflab's resident memory
# (VmRSS) and its peak so far (VmHWM) from /proc/PID/status: a flat curve
# means memory does not grow with the number of intervals. Load goes only to
# 127.0.0.1, 2 VUs with a think time, bounded by the run's duration.
#
# Usage: bench/soak.sh [INTERVALS, default 25920] [EVERY, default INTERVALS/12]
#   PERFLAB=path   a perflab binary to measure (default: built from this tree)
#   OUT=dir        where it works (default bench/out/soak)
#   THINK=20ms     think time after each step
#   STORE=off      without the run history (--store off)
set -euo pipefail
cd "$(dirname "$0")/.."
USER_OUT=${OUT:-}
. bench/lib.sh
N=${1:-25920}
EVERY=${2:-$(( N / 12 > 0 ? N / 12 : 1 ))}
THINK=${THINK:-20ms}
PORT=${PORT:-18091}
perflab_dir soak "$USER_OUT"

start_sim "$BIN" "$DIR" "$PORT"

{
  cat <<PLAN
name: soak
target: http://127.0.0.1:$PORT
interval: 100ms
http: {event_loop: false}
scenarios:
  - name: soak
    vus: 2
    duration: $(( N * 100 ))ms
    flow:
      - transaction: tx
        steps:
PLAN
  for i in $(seq -w 1 18); do
    printf '          - {name: step%s, url: /, think: %s}\n' "$i" "$THINK"
  done
} > "$DIR/plan.yaml"

/usr/bin/time -v -o "$DIR/time.txt" "$BIN" run "$DIR/plan.yaml" --out "$DIR/runs" --progress none ${STORE:+--store "$STORE"} > "$DIR/run.log" 2>&1 &
TIME=$!
for _ in $(seq 50); do PID=$(pgrep -P "$TIME" || true); [ -z "$PID" ] || break; sleep 0.1; done
kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$PID/status" 2>/dev/null || true; }
printf '%10s %10s %10s %10s\n' intervals elapsed_s rss_MiB hwm_MiB
start=$(date +%s.%N)
next=$EVERY
while kill -0 "$PID" 2>/dev/null; do
  now=$(date +%s.%N)
  iv=$(awk -v a="$start" -v b="$now" 'BEGIN { printf "%d", (b - a) * 10 }')
  if [ "$iv" -ge "$next" ]; then
    rss=$(kb VmRSS); hwm=$(kb VmHWM)
    [ -z "$rss" ] || awk -v iv="$iv" -v a="$start" -v b="$now" -v r="$rss" -v h="$hwm" \
      'BEGIN { printf "%10d %10.0f %10.1f %10.1f\n", iv, b - a, r / 1024, h / 1024 }'
    next=$(( next + EVERY ))
  fi
  sleep 0.2
done
wait "$TIME" || echo "perflab exited with $?" >&2
# The peak of the whole run, the summary and reports at its end included.
awk '/Maximum resident set size/ { printf "peak RSS of the whole run: %.1f MiB\n", $NF / 1024 }' "$DIR/time.txt"
grep -E '^summary|^run ' "$DIR/run.log" || tail -5 "$DIR/run.log"
