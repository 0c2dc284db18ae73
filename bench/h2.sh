#!/usr/bin/env bash
# Measures perflab's HTTP/2 request path (h2c: cleartext, prior knowledge)
# against h2load, on this machine: CPU microseconds per request of a 1-step
# GET for
#   - h2load -t1 -c50 -m1 (50 connections, one stream at a time on each),
#   - perflab, http.version 2 on the event loop (50 VUs, a connection each,
#     one stream at a time: the same shape as h2load's),
#   - perflab, http.version 2 on a goroutine per VU (net/http's client,
#     which multiplexes the VUs' streams over shared connections),
# in alternating rounds, each driving the same nginx on 127.0.0.1 (one
# worker pinned to CPU 1, listen ... http2 without ssl: h2c, a 2-byte body),
# the load generator pinned to CPU 0 (perflab with GOMAXPROCS=1), CPU time
# (user + system) from /usr/bin/time. Load goes only to 127.0.0.1 and every
# step is bounded in time.
#
# Usage: bench/h2.sh [seconds per measurement, default 10]
#   ROUNDS=5  CONNS=50  PORT=18082
# Needs: go, h2load (Debian: nghttp2-client), nginx (nginx-light);
# installed when missing and root.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS=${1:-10}
CONNS=${CONNS:-50}
PORT=${PORT:-18082}
ROUNDS=${ROUNDS:-5}
need_wrk_nginx
need_deb h2load nghttp2-client

URL="http://127.0.0.1:$PORT/"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)   # what else the machine was doing
nginx_dir
CURL_OPTS=--http2-prior-knowledge start_nginx "$URL" http2

go build -o "$OUT/perflab" ./cmd/perflab
as_installed "$OUT/perflab"
one_step_plan bench-h2-loop 'version: "2", event_loop: true' > "$OUT/h2-loop.yaml"
one_step_plan bench-h2-goroutines 'version: "2", event_loop: false' > "$OUT/h2-goroutines.yaml"

# h2load_run ARGS...: one h2load run; sets RUN to "requests cpu rss"
# (those that succeeded), and fails on any that failed, errored, timed out
# or had a status other than 2xx. (With -D, the 2xx count may include a
# request still in flight when the time was up.)
h2load_run() {
  read -r C R < <(cputime h2load "$@")
  local line; line=$(grep -m1 '^requests:' "$OUT/cmd.out")
  if ! grep -q ' 0 failed, 0 errored, 0 timeout' <<< "$line" || ! grep -q ' 0 3xx, 0 4xx, 0 5xx' "$OUT/cmd.out"; then
    echo "bench: h2load saw errors:" >&2; cat "$OUT/cmd.out" >&2; exit 1
  fi
  RUN="$(awk '{print $8}' <<< "$line") $C $R"
}

H_RUNS=(); PL_RUNS=(); PG_RUNS=()
for round in $(seq "$ROUNDS"); do
  echo "== round $round/$ROUNDS: h2load, 1 thread, $CONNS connections, 1 stream each, ${SECS}s" >&2
  h2load_run -t1 -c"$CONNS" -m1 -D"$SECS" "$URL"; H_RUNS+=("$RUN")
  echo "== round $round/$ROUNDS: perflab, HTTP/2 on the event loop, $CONNS VUs, ${SECS}s, GOMAXPROCS=1" >&2
  perflab_run "$OUT/h2-loop.yaml"; PL_RUNS+=("$RUN")
  echo "== round $round/$ROUNDS: perflab, HTTP/2 on a goroutine per VU, $CONNS VUs, ${SECS}s, GOMAXPROCS=1" >&2
  perflab_run "$OUT/h2-goroutines.yaml"; PG_RUNS+=("$RUN")
done

# ratio A B: A/B as 1.23x
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
echo
echo "h2c, $CONNS connections (h2load -m1) or VUs, ${SECS}s a run:"
printf '%-7s %22s %32s %32s\n' round "h2load req, us/req" "event loop req, us/req (x h2load)" "goroutines req, us/req (x h2load)"
LR=(); GR=()
for i in "${!H_RUNS[@]}"; do
  read -r hr hc _ <<< "${H_RUNS[$i]}"; read -r pr pc _ <<< "${PL_RUNS[$i]}"; read -r qr qc _ <<< "${PG_RUNS[$i]}"
  h=$(us "$hc" "$hr"); p=$(us "$pc" "$pr"); q=$(us "$qc" "$qr")
  LR+=("$(ratio "$p" "$h")"); GR+=("$(ratio "$q" "$h")")
  printf '%-7s %14s %7s %16s %7s (%s) %16s %7s (%s)\n' "$((i + 1))" "$hr" "$h" "$pr" "$p" "${LR[-1]}" "$qr" "$q" "${GR[-1]}"
done
read -r hr hc hm < <(median "${H_RUNS[@]}")
read -r pr pc pm < <(median "${PL_RUNS[@]}")
read -r qr qc qm < <(median "${PG_RUNS[@]}")
h=$(us "$hc" "$hr"); p=$(us "$pc" "$pr"); q=$(us "$qc" "$qr")
printf '%-7s %14s %7s %16s %7s (%s) %16s %7s (%s)\n' median "$hr" "$h" "$pr" "$p" "$(ratio "$p" "$h")" "$qr" "$q" "$(ratio "$q" "$h")"
# spread RATIOS...: "lowest-highest, median" of the rounds' ratios, which
# a busy host disturbs less than each tool's median round.
spread() { printf '%s\n' "$@" | tr -d x | sort -n | awk '{a[NR]=$1} END {printf "%.2fx-%.2fx, median %.2fx", a[1], a[NR], (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo "round by round: event loop $(spread "${LR[@]}") h2load's CPU per request; goroutines $(spread "${GR[@]}")"
printf 'peak RSS (median rounds): h2load %.1f MB, event loop %.1f MB, goroutines %.1f MB\n' \
  "$(awk -v k="$hm" 'BEGIN{print k/1024}')" "$(awk -v k="$pm" 'BEGIN{print k/1024}')" "$(awk -v k="$qm" 'BEGIN{print k/1024}')"
echo "load average (1, 5, 15 min): $LOAD0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); generator on CPU $GEN_CPU, nginx $(nginx -v 2>&1 | cut -d/ -f2) on CPU $SRV_CPU; $(h2load --version | head -1); $(go version | cut -d' ' -f3)"
