#!/usr/bin/env bash
# Measures perflab's request path against its peers in the same run, on
# this machine:
#   1. CPU microseconds per request of a 1-step keep-alive GET for perflab,
#      wrk, hey, vegeta and k6, each driving the same nginx on 127.0.0.1 with
#      the same number of connections, the load generator pinned to one CPU
#      and nginx to another (taskset);
#   2. peak memory (RSS) of perflab holding 10,000 VUs (and connections) in
#      think time.
# Load goes only to 127.0.0.1 and every step is bounded in time.
#
# Usage: bench/run.sh [seconds per measurement, default 10]
# Needs: go, and wrk + nginx from Debian (installed when missing and root);
# hey, vegeta and k6 are installed with `go install` when missing (k6 takes
# minutes to build; set PEERS=wrk to skip the Go peers).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS=${1:-10}
CONNS=${CONNS:-50}
PORT=${PORT:-18080}
need_wrk_nginx
PEERS=${PEERS:-wrk hey vegeta k6}
GOBIN=$(go env GOPATH)/bin
install_peer() { # name module
  [ -x "$GOBIN/$1" ] && return 0
  echo "bench: go install $2" >&2
  go install "$2" >/dev/null 2>&1 || { echo "bench: could not install $1; skipping it" >&2; return 1; }
}
case " $PEERS " in *" hey "*) install_peer hey github.com/rakyll/hey@latest || true;; esac
case " $PEERS " in *" vegeta "*) install_peer vegeta github.com/tsenart/vegeta/v12@latest || true;; esac
case " $PEERS " in *" k6 "*) install_peer k6 go.k6.io/k6@latest || true;; esac
URL="http://127.0.0.1:$PORT/"
# nginx serving a 2-byte body, one worker on its own CPU, no logging.
nginx_dir
start_nginx "$URL"

go build -o "$OUT/perflab" ./cmd/perflab
go build -o "$OUT/floor" ./bench/floor
as_installed "$OUT/perflab"

ROWS=()
row() { # name requests cpu_seconds rss_kb
  ROWS+=("$1|$2|$3|$4")
}
if [[ " $PEERS " == *" hey "* && -x "$GOBIN/hey" ]]; then
  echo "== hey: $CONNS workers, ${SECS}s" >&2
  read -r C R < <(GOMAXPROCS=1 cputime "$GOBIN/hey" -z "${SECS}s" -c "$CONNS" "$URL")
  row "hey -c $CONNS" "$(awk '/responses/ {n += $2} END {print n+0}' "$OUT/cmd.out")" "$C" "$R"
fi
if [[ " $PEERS " == *" vegeta "* && -x "$GOBIN/vegeta" ]]; then
  echo "== vegeta: max rate, $CONNS workers, ${SECS}s" >&2
  echo "GET $URL" > "$OUT/targets.txt"
  read -r C R < <(GOMAXPROCS=1 cputime "$GOBIN/vegeta" attack -targets="$OUT/targets.txt" -rate=0 -workers="$CONNS" -max-workers="$CONNS" -duration="${SECS}s" -output="$OUT/vegeta.bin")
  row "vegeta -workers $CONNS" "$("$GOBIN/vegeta" report -type=json "$OUT/vegeta.bin" | sed 's/.*"requests":\([0-9]*\).*/\1/')" "$C" "$R"
fi
if [[ " $PEERS " == *" k6 "* && -x "$GOBIN/k6" ]]; then
  echo "== k6: $CONNS VUs, ${SECS}s" >&2
  printf "import http from 'k6/http';\nexport default function () { http.get('%s'); }\n" "$URL" > "$OUT/k6.js"
  read -r C R < <(GOMAXPROCS=1 K6_NO_USAGE_REPORT=true cputime "$GOBIN/k6" run --quiet --vus "$CONNS" --duration "${SECS}s" "$OUT/k6.js")
  row "k6 --vus $CONNS" "$(grep -o 'http_reqs[^0-9]*[0-9]*' "$OUT/cmd.out" | grep -o '[0-9]*$')" "$C" "$R"
fi

# perflab runs the plan twice a round: with http.event_loop (its cheap
# path, VUs as state machines on epoll, as wrk) and with the default engine
# (a goroutine per VU, which every other feature runs on).
one_step_plan bench-1step "event_loop: true" > "$OUT/plan.yaml"
# wrk and perflab alternate for ROUNDS rounds, so that both see the same
# machine (a shared VM drifts by 10-20% over minutes); the table shows the
# median round of each.
ROUNDS=${ROUNDS:-3}
FLOOR=${FLOOR:-1}   # also the two floors of a Go generator (bench/floor)
sed 's/event_loop: true/event_loop: false/' "$OUT/plan.yaml" > "$OUT/plan-goroutines.yaml"
WRK_RUNS=(); PL_RUNS=(); PG_RUNS=(); GO_RUNS=(); LOOP_RUNS=()
for round in $(seq "$ROUNDS"); do
  echo "== round $round/$ROUNDS: wrk, 1 thread, $CONNS connections, ${SECS}s" >&2
  wrk_run -t1 -c"$CONNS" -d"${SECS}s" "$URL"; WRK_RUNS+=("$RUN")
  echo "== round $round/$ROUNDS: perflab, event loop, $CONNS VUs, ${SECS}s, GOMAXPROCS=1" >&2
  perflab_run "$OUT/plan.yaml"; PL_RUNS+=("$RUN")
  echo "== round $round/$ROUNDS: perflab, goroutine per VU, $CONNS VUs, ${SECS}s, GOMAXPROCS=1" >&2
  perflab_run "$OUT/plan-goroutines.yaml"; PG_RUNS+=("$RUN")
  if [ "$FLOOR" = 1 ]; then
    for mode in goroutines loop; do
      echo "== round $round/$ROUNDS: floor, $mode, $CONNS connections, ${SECS}s, GOMAXPROCS=1" >&2
      read -r C R < <(GOMAXPROCS=1 cputime "$OUT/floor" -mode "$mode" -addr "127.0.0.1:$PORT" -c "$CONNS" -d "${SECS}s")
      if ! grep -q "errors 0 " "$OUT/cmd.err"; then echo "bench: floor $mode failed:" >&2; cat "$OUT/cmd.err" >&2; exit 1; fi
      run="$(awk '/^requests/ {print $2}' "$OUT/cmd.err") $C $R"
      if [ "$mode" = loop ]; then LOOP_RUNS+=("$run"); else GO_RUNS+=("$run"); fi
    done
  fi
done
read -r WRK_REQ WRK_CPU WRK_RSS < <(median "${WRK_RUNS[@]}")
read -r PL_REQ PL_CPU PL_RSS < <(median "${PL_RUNS[@]}")
read -r PG_REQ PG_CPU PG_RSS < <(median "${PG_RUNS[@]}")
ROWS=("wrk -t1 -c$CONNS (median of $ROUNDS)|$WRK_REQ|$WRK_CPU|$WRK_RSS" "${ROWS[@]}"
  "perflab, event loop (median)|$PL_REQ|$PL_CPU|$PL_RSS" "perflab, goroutines (median)|$PG_REQ|$PG_CPU|$PG_RSS")
if [ "$FLOOR" = 1 ]; then
  read -r REQ CPU RSS < <(median "${GO_RUNS[@]}");   ROWS+=("floor: goroutines (median)|$REQ|$CPU|$RSS")
  read -r REQ CPU RSS < <(median "${LOOP_RUNS[@]}"); ROWS+=("floor: event loop (median)|$REQ|$CPU|$RSS")
fi

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
sed 's/^scenarios:/http: {event_loop: true}\nscenarios:/' "$OUT/idle.yaml" > "$OUT/idle-loop.yaml"
echo "== perflab, event loop: 10,000 VUs, one request each then think time (20s)" >&2
read -r IDLE_LOOP_CPU IDLE_LOOP_RSS < <(cputime "$OUT/perflab" run "$OUT/idle-loop.yaml" --out "$OUT/runs" --quiet)
IDLE_LOOP_REQ=$(grep -o 'summary = [0-9]*' "$OUT/cmd.out" | awk '{print $3}')

printf '\n%-28s %12s %12s %14s %12s %14s\n' tool requests "req/s" "CPU us/req" "peak RSS MB" "CPU vs wrk"
WRK_US=$(us "$WRK_CPU" "$WRK_REQ")
for r in "${ROWS[@]}"; do
  IFS='|' read -r name req cpu rss <<< "$r"
  u=$(us "$cpu" "$req")
  printf '%-28s %12s %12.0f %14s %12.1f %14s\n' "$name" "$req" "$(awk -v n="$req" -v s="$SECS" 'BEGIN{print n/s}')" "$u" \
    "$(awk -v k="$rss" 'BEGIN{print k/1024}')" "$(awk -v a="$u" -v b="$WRK_US" 'BEGIN { if (b > 0 && a != "n/a") printf "%.2fx", a / b; else print "-" }')"
done
printf '%-28s %12s %12s %14s %12.1f\n' "perflab 10,000 idle VUs" "$IDLE_REQ" "-" "-" "$(awk -v k="$IDLE_RSS" 'BEGIN{print k/1024}')"
printf '%-28s %12s %12s %14s %12.1f\n' "  the same, event loop" "$IDLE_LOOP_REQ" "-" "-" "$(awk -v k="$IDLE_LOOP_RSS" 'BEGIN{print k/1024}')"
echo
for i in "${!WRK_RUNS[@]}"; do
  read -r wr wc _ <<< "${WRK_RUNS[$i]}"; read -r pr pc _ <<< "${PL_RUNS[$i]}"; read -r qr qc _ <<< "${PG_RUNS[$i]}"
  ratio() { awk -v a="$1" -v b="$(us "$wc" "$wr")" 'BEGIN { printf "%.2fx", a / b }'; }
  line="round $((i + 1)): wrk $(us "$wc" "$wr") us/req, perflab loop $(us "$pc" "$pr") ($(ratio "$(us "$pc" "$pr")")), perflab goroutines $(us "$qc" "$qr") ($(ratio "$(us "$qc" "$qr")"))"
  if [ "$FLOOR" = 1 ]; then
    read -r gr gc _ <<< "${GO_RUNS[$i]}"; read -r lr lc _ <<< "${LOOP_RUNS[$i]}"
    line+=", floor goroutines $(us "$gc" "$gr") ($(ratio "$(us "$gc" "$gr")")), floor loop $(us "$lc" "$lr") ($(ratio "$(us "$lc" "$lr")"))"
  fi
  echo "$line"
done
PL_US=$(us "$PL_CPU" "$PL_REQ")
PG_US=$(us "$PG_CPU" "$PG_REQ")
awk -v a="$PL_US" -v g="$PG_US" -v b="$WRK_US" 'BEGIN { printf "perflab / wrk CPU per request: %.2fx with http.event_loop, %.2fx with a goroutine per VU\n", a / b, g / b }'
awk -v k="$IDLE_RSS" -v l="$IDLE_LOOP_RSS" 'BEGIN { printf "10,000 VUs holding 10,000 connections in think time: %.0f MB peak RSS (%.0f MB with http.event_loop)\n", k / 1024, l / 1024 }'
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); generator on CPU $GEN_CPU, nginx on CPU $SRV_CPU"
