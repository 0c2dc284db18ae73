#!/usr/bin/env bash
# What watching a run costs it: perflab's CPU per request for a 50-VU
# closed-model run against nginx on 127.0.0.1, alone, with
# --metrics-listen (scraped every second, as a Prometheus would), and with
# --serve (its live page's series and event stream read every second, as
# an open browser tab does). Paired: the three kinds alternate, ROUNDS
# times. Usage: bash bench/observe.sh [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${1:-3}
SECS=${2:-10}
need_wrk_nginx
go build -o "$OUT/perflab" ./cmd/perflab
nginx_dir
start_nginx http://127.0.0.1:18090/
cat > "$OUT/observe.yaml" <<PLAN
name: observe
target: http://127.0.0.1:18090
interval: 1s
scenarios:
  - {name: s, vus: 50, duration: ${SECS}s, flow: [{name: get, url: /}]}
PLAN

# one KIND: a run of OUT/perflab (GOMAXPROCS=1, on the generator CPU) with
# the kind's watcher beside it; prints "requests cpu_s".
one() {
  local extra=() watcher=""
  case $1 in
    metrics) extra=(--metrics-listen 127.0.0.1:19464)
      watcher='while sleep 1; do curl -fs http://127.0.0.1:19464/metrics >/dev/null || true; done' ;;
    serve) extra=(--serve=127.0.0.1:19465 --store "$OUT/observe.db")
      watcher='sleep 1; id=$(curl -fs http://127.0.0.1:19465/api/runs | grep -o "\"id\":\"[^\"]*\"" | head -1 | cut -d\" -f4);
        curl -fsN "http://127.0.0.1:19465/runs/$id/events" >/dev/null & while sleep 1; do curl -fs "http://127.0.0.1:19465/api/runs/$id/series" >/dev/null || true; done' ;;
  esac
  local store=(--store off)
  [ "$1" = serve ] && store=()
  rm -f "$OUT/observe.db"*
  ( [ -n "$watcher" ] && taskset -c "$SRV_CPU" bash -c "$watcher" ) &
  local w=$!
  read -r C _ < <(GOMAXPROCS=1 cputime "$OUT/perflab" run "$OUT/observe.yaml" --out "$OUT/runs" "${store[@]}" --quiet "${extra[@]}")
  pkill -P $w 2>/dev/null || true; kill $w 2>/dev/null || true; wait $w 2>/dev/null || true
  echo "$(grep -o 'summary = [0-9]*' "$OUT/cmd.out" | awk '{print $3}') $C"
}

printf '%-8s %10s %8s %12s\n' kind requests cpu_s us/request
for r in $(seq "$ROUNDS"); do
  for k in plain metrics serve; do
    read -r n c < <(one $k)
    printf '%-8s %10s %8s %12.2f\n' "$k" "$n" "$c" "$(echo "$c * 1000000 / $n" | bc -l)"
  done
done | tee "$OUT/observe.txt"
