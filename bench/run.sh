#!/usr/bin/env bash
# Measures perflab's request path against wrk in the same run, on this machine:
#   1. CPU microseconds per request of a 1-step plan vs wrk, both driving the
#      same nginx on 127.0.0.1 with the same number of connections, the load
#      generator pinned to one CPU and nginx to another (taskset);
#   2. peak memory (RSS) of perflab holding 10,000 VUs in think time.
# Load goes only to 127.0.0.1 and every step is bounded in time.
#
# Usage: bench/run.sh [seconds per measurement, default 10]
# Needs: go, and wrk + nginx from Debian (installed when missing and root).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-10}
CONNS=${CONNS:-50}
PORT=${PORT:-18080}
OUT=bench/out
mkdir -p "$OUT"

need() { command -v "$1" >/dev/null 2>&1; }
if ! need wrk || ! need nginx; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk nginx-light >/dev/null
    nginx -s stop 2>/dev/null || true   # the package starts one on :80; we run our own
  else
    echo "bench: install wrk and nginx (Debian: apt-get install wrk nginx-light)" >&2; exit 1
  fi
fi
NCPU=$(nproc)
GEN_CPU=0; SRV_CPU=$(( NCPU > 1 ? 1 : 0 ))

# nginx serving a 2-byte body, one worker on its own CPU, no logging.
NGX=$(mktemp -d)
mkdir -p "$NGX/html" "$NGX/logs"
printf 'ok' > "$NGX/html/index.html"
cat > "$NGX/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile 65536;
pid $NGX/nginx.pid;
error_log $NGX/logs/error.log warn;
daemon off;
events { worker_connections 32768; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  server { listen 127.0.0.1:$PORT; root $NGX/html; location / { } }
}
CONF
ulimit -n 65536 2>/dev/null || true
taskset -c "$SRV_CPU" nginx -p "$NGX" -c "$NGX/nginx.conf" &
NGX_PID=$!
trap 'kill $NGX_PID 2>/dev/null; wait $NGX_PID 2>/dev/null; rm -rf "$NGX"' EXIT
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$PORT/" >/dev/null 2>&1 && break; sleep 0.1; done

go build -o "$OUT/perflab" ./cmd/perflab

# cputime CMD...: runs CMD pinned to the generator CPU; prints "user+sys_seconds max_rss_kb".
cputime() {
  /usr/bin/time -f "%U %S %M" -o "$OUT/time.txt" taskset -c "$GEN_CPU" "$@" > "$OUT/cmd.out" 2> "$OUT/cmd.err"
  awk '{printf "%.3f %d\n", $1+$2, $3}' "$OUT/time.txt"
}

echo "== wrk: 1 thread, $CONNS connections, ${SECS}s" >&2
read -r WRK_CPU WRK_RSS < <(cputime wrk -t1 -c"$CONNS" -d"${SECS}s" "http://127.0.0.1:$PORT/")
WRK_REQ=$(awk '/requests in/ {print $1}' "$OUT/cmd.out")

cat > "$OUT/plan.yaml" <<PLAN
name: bench-1step
target: http://127.0.0.1:$PORT
scenarios:
  - name: get
    vus: $CONNS
    duration: ${SECS}s
    flow:
      - {name: GET /, url: /}
PLAN
echo "== perflab: $CONNS VUs, ${SECS}s, GOMAXPROCS=1" >&2
read -r PL_CPU PL_RSS < <(GOMAXPROCS=1 cputime "$OUT/perflab" run "$OUT/plan.yaml" --out "$OUT/runs" --quiet)
PL_REQ=$(grep -o 'summary = [0-9]*' "$OUT/cmd.out" | awk '{print $3}')

cat > "$OUT/idle.yaml" <<PLAN
name: bench-10k-idle
target: http://127.0.0.1:$PORT
scenarios:
  - name: idle
    vus: 10000
    ramp_up: 5s
    duration: 20s
    think: 60s
    flow:
      - {name: GET /, url: /}
PLAN
echo "== perflab: 10,000 VUs, one request each then think time (20s)" >&2
read -r IDLE_CPU IDLE_RSS < <(cputime "$OUT/perflab" run "$OUT/idle.yaml" --out "$OUT/runs" --quiet)
IDLE_REQ=$(grep -o 'summary = [0-9]*' "$OUT/cmd.out" | awk '{print $3}')

us() { awk -v c="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.2f", c * 1e6 / n; else print "n/a" }'; }
WRK_US=$(us "$WRK_CPU" "$WRK_REQ"); PL_US=$(us "$PL_CPU" "$PL_REQ")
printf '\n%-28s %12s %12s %14s %12s\n' tool requests "req/s" "CPU us/req" "peak RSS MB"
printf '%-28s %12s %12.0f %14s %12.1f\n' "wrk -t1 -c$CONNS" "$WRK_REQ" "$(awk -v n="$WRK_REQ" -v s="$SECS" 'BEGIN{print n/s}')" "$WRK_US" "$(awk -v k="$WRK_RSS" 'BEGIN{print k/1024}')"
printf '%-28s %12s %12.0f %14s %12.1f\n' "perflab $CONNS VUs" "$PL_REQ" "$(awk -v n="$PL_REQ" -v s="$SECS" 'BEGIN{print n/s}')" "$PL_US" "$(awk -v k="$PL_RSS" 'BEGIN{print k/1024}')"
printf '%-28s %12s %12s %14s %12.1f\n' "perflab 10,000 idle VUs" "$IDLE_REQ" "-" "-" "$(awk -v k="$IDLE_RSS" 'BEGIN{print k/1024}')"
echo
awk -v a="$PL_US" -v b="$WRK_US" 'BEGIN { printf "perflab / wrk CPU per request: %.2fx (target: at most 2x)\n", a / b }'
awk -v k="$IDLE_RSS" 'BEGIN { printf "10,000 idle VUs: %.0f MB peak RSS (target: under 300 MB)\n", k / 1024 }'
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); generator on CPU $GEN_CPU, nginx on CPU $SRV_CPU"
