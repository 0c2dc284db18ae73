#!/usr/bin/env bash
# CPU per request of this tree's perflab against another revision's, in
# alternating rounds against one nginx: a change to the request path or its
# timers measured as a ratio in the same run, not against figures of
# another day. Both run the same 1-step keep-alive GET plan, closed model,
# on the event loop (http.event_loop: true) or on goroutines (ENGINE=
# goroutines), pinned to one CPU with GOMAXPROCS=1; nginx has the other.
# Load goes only to 127.0.0.1 and every run is bounded in time.
#
# Usage: bench/ab.sh REV [seconds per run, default 10]   (ROUNDS=8, CONNS=50)
set -euo pipefail
cd "$(dirname "$0")/.."
REV=${1:?usage: bench/ab.sh REV [seconds]}
SECS=${2:-10}
ROUNDS=${ROUNDS:-8}
CONNS=${CONNS:-50}
PORT=${PORT:-18081}
ENGINE=${ENGINE:-event_loop}
source bench/lib.sh
need_wrk_nginx
nginx_dir
start_nginx "http://127.0.0.1:$PORT/"

go build -o "$OUT/perflab" ./cmd/perflab
BASE_TREE=$(mktemp -d)
git worktree add --detach "$BASE_TREE" "$REV" >/dev/null 2>&1
(cd "$BASE_TREE" && go build -o "$OLDPWD/$OUT/perflab-base" ./cmd/perflab)
git worktree remove --force "$BASE_TREE"

loop=true; [ "$ENGINE" = goroutines ] && loop=false
cat > "$OUT/ab.yaml" <<PLAN
name: bench-ab
target: http://127.0.0.1:$PORT
http: {event_loop: $loop}
scenarios:
  - {name: get, vus: $CONNS, duration: ${SECS}s, flow: [{name: GET /, url: /}]}
PLAN
# ab_run BINARY: one run; prints "requests cpu_seconds".
ab_run() {
  read -r C _ < <(GOMAXPROCS=1 cputime "$1" run "$OUT/ab.yaml" --out "$OUT/runs" --store off --quiet)
  grep -q "Err: 0 " "$OUT/cmd.out" || { echo "bench: errors:" >&2; cat "$OUT/cmd.out" >&2; exit 1; }
  echo "$(grep -o 'summary = [0-9]*' "$OUT/cmd.out" | awk '{print $3}') $C"
}
echo "| round | $REV µs/request | this tree µs/request | this / $REV |"
echo "|---:|---:|---:|---:|"
RATIOS=()
for round in $(seq "$ROUNDS"); do
  echo "== round $round/$ROUNDS" >&2
  read -r NB CB < <(ab_run "$OUT/perflab-base")
  read -r NN CN < <(ab_run "$OUT/perflab")
  r=$(awk -v nb="$NB" -v cb="$CB" -v nn="$NN" -v cn="$CN" 'BEGIN {printf "%.2f %.2f %.3f", cb/nb*1e6, cn/nn*1e6, (cn/nn)/(cb/nb)}')
  read -r UB UN RATIO <<<"$r"
  RATIOS+=("$RATIO")
  echo "| $round | $UB | $UN | ${RATIO}x |"
done
printf '%s\n' "${RATIOS[@]}" | sort -n | awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "\nmedian ratio %.3f (min %.3f, max %.3f) over %d rounds\n", m, a[1], a[NR], NR}'
