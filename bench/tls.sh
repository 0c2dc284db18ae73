#!/usr/bin/env bash
# Measures perflab's request path over TLS (https, HTTP/1.1) against wrk, on
# this machine: CPU microseconds per request of a 1-step keep-alive GET for
#   - wrk -t1 -c50 https://127.0.0.1:PORT/,
#   - perflab with http.event_loop (its VUs on epoll loops),
#   - perflab with a goroutine per VU (the default engine),
# in alternating rounds, each driving the same nginx on 127.0.0.1 (one
# worker pinned to CPU 1, TLS with a self-signed certificate made by
# openssl for the run, a session cache, keep-alive, a 2-byte body), the load
# generator pinned to CPU 0 (perflab with GOMAXPROCS=1). Then, with a new
# connection (and handshake) per request, the same three a few rounds more,
# to show what a handshake costs each.
# Load goes only to 127.0.0.1 and every step is bounded in time.
#
# Usage: bench/tls.sh [seconds per measurement, default 10]
#   ROUNDS=5 (keep-alive rounds)  HS_ROUNDS=3 HS_SECS=5 (handshake rounds; 0: none)
# Needs: go, openssl, and wrk + nginx from Debian (installed when missing
# and root).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS=${1:-10}
CONNS=${CONNS:-50}
PORT=${PORT:-18443}
ROUNDS=${ROUNDS:-5}
HS_ROUNDS=${HS_ROUNDS:-3}
HS_SECS=${HS_SECS:-5}
need_wrk_nginx
need openssl || { echo "bench: needs openssl" >&2; exit 1; }

URL="https://127.0.0.1:$PORT/"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)   # what else the machine was doing
nginx_dir
# A self-signed certificate for 127.0.0.1 (ECDSA P-256), which perflab
# verifies (ca_file) and wrk does not check.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$NGX/key.pem" -out "$NGX/cert.pem" 2>/dev/null
# Every client gets the same TLS 1.3 cipher (AES-128-GCM: Go's first choice
# with AES hardware; wrk's OpenSSL would take AES-256-GCM), so that the
# record encryption is the same work for all.
start_nginx "$URL" ssl "ssl_certificate $NGX/cert.pem; ssl_certificate_key $NGX/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3; ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;
    ssl_session_cache shared:TLS:10m; ssl_session_timeout 10m;"
echo "bench: $(echo | openssl s_client -connect "127.0.0.1:$PORT" 2>/dev/null | grep -m1 -o 'TLSv1.3, Cipher is [A-Z0-9_]*' || echo 'TLS session: see nginx')" >&2

go build -o "$OUT/perflab" ./cmd/perflab
as_installed "$OUT/perflab"
cp "$NGX/cert.pem" "$OUT/tls-ca.pem"
plan() { # name event_loop keep_alive secs
  cat <<PLAN
name: bench-tls-$1
target: https://127.0.0.1:$PORT
http: {event_loop: $2, keep_alive: $3, ca_file: tls-ca.pem}
scenarios:
  - name: get
    vus: $CONNS
    duration: ${4}s
    flow:
      - {name: GET /, url: /}
PLAN
}
plan loop true true "$SECS" > "$OUT/tls-loop.yaml"
plan goroutines false true "$SECS" > "$OUT/tls-goroutines.yaml"
plan loop-hs true false "$HS_SECS" > "$OUT/tls-loop-hs.yaml"
plan goroutines-hs false false "$HS_SECS" > "$OUT/tls-goroutines-hs.yaml"

# rounds N SECS KEEP_ALIVE PLAN_LOOP PLAN_GOROUTINES: alternating rounds;
# sets WRK_RUNS, PL_RUNS and PG_RUNS to "requests cpu rss" per round.
rounds() {
  local n=$1 secs=$2 round
  local hdr=()
  [ "$3" = true ] || hdr=(-H "Connection: close")
  WRK_RUNS=(); PL_RUNS=(); PG_RUNS=()
  for round in $(seq "$n"); do
    echo "== round $round/$n: wrk, 1 thread, $CONNS connections, ${secs}s ${hdr[*]}" >&2
    wrk_run -t1 -c"$CONNS" -d"${secs}s" "${hdr[@]}" "$URL"; WRK_RUNS+=("$RUN")
    if grep -q "Socket errors" "$OUT/cmd.out"; then echo "bench: wrk: $(grep 'Socket errors' "$OUT/cmd.out")" >&2; fi
    echo "== round $round/$n: perflab, event loop, $CONNS VUs, ${secs}s, GOMAXPROCS=1" >&2
    perflab_run "$4"; PL_RUNS+=("$RUN")
    echo "== round $round/$n: perflab, goroutine per VU, $CONNS VUs, ${secs}s, GOMAXPROCS=1" >&2
    perflab_run "$5"; PG_RUNS+=("$RUN")
  done
}

# report TITLE: each round with its ratios to wrk's, then each tool's
# median round.
report() {
  local i wr wc pr pc qr qc w
  echo
  echo "$1"
  printf '%-7s %22s %30s %30s\n' round "wrk req, us/req" "event loop req, us/req (x wrk)" "goroutines req, us/req (x wrk)"
  for i in "${!WRK_RUNS[@]}"; do
    read -r wr wc _ <<< "${WRK_RUNS[$i]}"; read -r pr pc _ <<< "${PL_RUNS[$i]}"; read -r qr qc _ <<< "${PG_RUNS[$i]}"
    w=$(us "$wc" "$wr")
    printf '%-7s %14s %7s %14s %7s (%s) %14s %7s (%s)\n' "$((i + 1))" "$wr" "$w" "$pr" "$(us "$pc" "$pr")" \
      "$(awk -v a="$(us "$pc" "$pr")" -v b="$w" 'BEGIN { printf "%.2fx", a / b }')" "$qr" "$(us "$qc" "$qr")" \
      "$(awk -v a="$(us "$qc" "$qr")" -v b="$w" 'BEGIN { printf "%.2fx", a / b }')"
  done
  read -r wr wc w < <(median "${WRK_RUNS[@]}")
  read -r pr pc _ < <(median "${PL_RUNS[@]}")
  read -r qr qc _ < <(median "${PG_RUNS[@]}")
  local wu; wu=$(us "$wc" "$wr")
  printf '%-7s %14s %7s %14s %7s (%s) %14s %7s (%s)\n' median "$wr" "$wu" "$pr" "$(us "$pc" "$pr")" \
    "$(awk -v a="$(us "$pc" "$pr")" -v b="$wu" 'BEGIN { printf "%.2fx", a / b }')" "$qr" "$(us "$qc" "$qr")" \
    "$(awk -v a="$(us "$qc" "$qr")" -v b="$wu" 'BEGIN { printf "%.2fx", a / b }')"
  printf 'peak RSS (median rounds): wrk %.1f MB, event loop %.1f MB, goroutines %.1f MB\n' \
    "$(awk -v k="$w" 'BEGIN{print k/1024}')" "$(median "${PL_RUNS[@]}" | awk '{print $3/1024}')" "$(median "${PG_RUNS[@]}" | awk '{print $3/1024}')"
}

rounds "$ROUNDS" "$SECS" true "$OUT/tls-loop.yaml" "$OUT/tls-goroutines.yaml"
KEEP=$(report "keep-alive over TLS, $CONNS connections, ${SECS}s a run:")
if [ "$HS_ROUNDS" -gt 0 ]; then
  rounds "$HS_ROUNDS" "$HS_SECS" false "$OUT/tls-loop-hs.yaml" "$OUT/tls-goroutines-hs.yaml"
  HS=$(report "a new TLS connection per request (wrk: Connection: close; perflab: keep_alive: false), ${HS_SECS}s a run:")
fi
echo "$KEEP"
[ "$HS_ROUNDS" -gt 0 ] && echo "$HS"
echo "load average (1, 5, 15 min): $LOAD0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); generator on CPU $GEN_CPU, nginx $(nginx -v 2>&1 | cut -d/ -f2) on CPU $SRV_CPU; $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2); $(go version | cut -d' ' -f3)"
