#!/usr/bin/env bash
# perflab's peak memory over a sweep of many stages: a plan whose variable
# `stage` lists STAGES values, one stage each, of one iteration of 3 steps by
# one VU against `perflab sim` answering at once, with the run history on.
# Prints the peak resident memory of the whole run (/usr/bin/time -v), the
# summary line and the wall time. Memory kept per finished stage shows as
# peak RSS growing with STAGES. Load goes only to 127.0.0.1: STAGES x 3
# requests.
#
# Usage: bench/sweep.sh [STAGES, default 10000]
#   PERFLAB=path   a perflab binary to measure (default: built from this tree)
#   OUT=dir        where it works (default bench/out/sweep)
#   OPEN=1         each stage an arrival-rate model (3 histograms an operation)
set -euo pipefail
cd "$(dirname "$0")/.."
USER_OUT=${OUT:-}
. bench/lib.sh
N=${1:-10000}
PORT=${PORT:-18092}
perflab_dir sweep "$USER_OUT"

start_sim "$BIN" "$DIR" "$PORT"

load="vus: 1
    iterations: 1"
[ -z "${OPEN:-}" ] || load="rate: 1000
    duration: 1ms
    vus: 1
    max_vus: 1"
{
  cat <<PLAN
name: sweep
target: http://127.0.0.1:$PORT
interval: 1s
vars:
PLAN
  printf '  n: [%s]\n' "$(seq -s, 1 "$N")"
  cat <<PLAN
scenarios:
  - name: sweep
    $load
    flow:
      - {name: first, url: /}
      - {name: second, url: /}
      - {name: third, url: /}
PLAN
} > "$DIR/plan.yaml"

/usr/bin/time -v -o "$DIR/time.txt" "$BIN" run "$DIR/plan.yaml" --out "$DIR/runs" --progress none > "$DIR/run.log" 2> "$DIR/stderr.log" || echo "perflab exited with $?" >&2
grep -E '^summary' "$DIR/run.log" || tail -5 "$DIR/stderr.log"
awk -v n="$N" '
  /Maximum resident set size/ { rss = $NF }
  /Elapsed \(wall clock\)/ { wall = $NF }
  END { printf "%d stages: peak RSS %.1f MiB, wall %s\n", n, rss / 1024, wall }' "$DIR/time.txt"
ls -l "$DIR"/runs/*/summary.json | awk '{ printf "summary.json: %.1f MB\n", $5 / 1e6 }'
