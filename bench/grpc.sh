#!/usr/bin/env bash
# gRPC unary calls: CPU microseconds per call of perflab against ghz, paired
# in one run, each with 50 connections and 50 concurrent calls driving the
# same server (perflab sim's gRPC stubs of protocol/grpc/testdata/shop.proto,
# answering at once), the load generator pinned to one CPU with
# GOMAXPROCS=1 and the server to another. ROUNDS rounds of CALLS calls
# each; the median round by CPU per call is printed for each tool. Then
# each measures 800 calls (4 at a time) of a stub that answers after a
# fixed 20 ms, and prints its p50: the two measurements of one server.
# Load goes only to 127.0.0.1 and every step is bounded.
#
# Usage: bench/grpc.sh [CALLS, default 200000] [ROUNDS, default 3]
# ghz v0.93.0 (go install github.com/bojand/ghz/cmd/ghz@v0.93.0) is
# installed when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
CALLS=${1:-200000}
ROUNDS=${2:-3}
CONNS=${CONNS:-50}
GOBIN=$(go env GOPATH)/bin
[ -x "$GOBIN/ghz" ] || go install github.com/bojand/ghz/cmd/ghz@v0.93.0
go build -o "$OUT/perflab" ./cmd/perflab
as_installed "$OUT/perflab"
D=$(mktemp -d)
trap 'kill $SIMPID 2>/dev/null || true; rm -rf "$D"' EXIT
cp protocol/grpc/testdata/shop.proto "$D/"
PORT=${PORT:-18551}
cat > "$D/stubs.yaml" <<STUBS
routes: []
grpc:
  listen: 127.0.0.1:$PORT
  protos: [shop.proto]
  methods:
    - method: shop.Shop/GetItem
      response: '{"id": "x", "name": "item"}'
    - method: shop.Shop/AddToCart
      latency: {fixed: 20ms}
STUBS
GOMAXPROCS=1 taskset -c "$SRV_CPU" "$OUT/perflab" sim "$D/stubs.yaml" > "$D/sim.log" 2>&1 &
SIMPID=$!
sleep 1
cat > "$D/plan.yaml" <<PLAN
name: grpc-bench
grpc: {target: "127.0.0.1:$PORT", protos: [shop.proto], connections: $CONNS}
scenarios:
  - name: calls
    vus: $CONNS
    total_iterations: $CALLS
    flow:
      - name: get
        grpc: {service: shop.Shop, method: GetItem, message: {id: x}}
PLAN
ghz_runs=(); perflab_runs=()
for _ in $(seq "$ROUNDS"); do
  read -r C R < <(GOMAXPROCS=1 cputime "$GOBIN/ghz" --insecure --proto "$D/shop.proto" --call shop.Shop.GetItem -d '{"id":"x"}' \
    -c "$CONNS" --connections "$CONNS" -n "$CALLS" --format summary "127.0.0.1:$PORT")
  grep -q "\[OK\]" "$OUT/cmd.out" || { echo "bench: ghz saw no OK:" >&2; cat "$OUT/cmd.out" >&2; exit 1; }
  ok=$(grep -o '\[OK\] *[0-9]*' "$OUT/cmd.out" | awk '{print $2}')
  ghz_runs+=("$ok $C $R")
  read -r C R < <(GOMAXPROCS=1 cputime "$OUT/perflab" run "$D/plan.yaml" --out "$D/runs" --store off --quiet)
  grep -q "Err: 0 " "$OUT/cmd.out" || { echo "bench: perflab saw errors:" >&2; cat "$OUT/cmd.out" >&2; exit 1; }
  n=$(grep -o 'summary = [0-9]*' "$OUT/cmd.out" | awk '{print $3}')
  perflab_runs+=("$n $C $R")
done
read -r GN GC GR < <(median "${ghz_runs[@]}")
read -r PN PC PR < <(median "${perflab_runs[@]}")
printf "%-28s %10s %10s %12s %10s\n" tool calls "cpu s" "µs/call" "max RSS"
printf "%-28s %10s %10s %12s %8d MB\n" "ghz v0.93.0" "$GN" "$GC" "$(us "$GC" "$GN")" $((GR / 1024))
printf "%-28s %10s %10s %12s %8d MB\n" "perflab run" "$PN" "$PC" "$(us "$PC" "$PN")" $((PR / 1024))
awk -v p="$(us "$PC" "$PN")" -v g="$(us "$GC" "$GN")" 'BEGIN { printf "perflab/ghz CPU per call: %.2fx\n", p / g }'

# A fixed 20 ms: each tool's p50 of the same server.
cat > "$D/delay.yaml" <<PLAN
name: grpc-delay
grpc: {target: "127.0.0.1:$PORT", protos: [shop.proto]}
scenarios:
  - name: calls
    vus: 4
    iterations: 200
    flow:
      - name: delayed
        grpc: {service: shop.Shop, method: AddToCart, messages: [{qty: 1}]}
PLAN
for _ in 1 2; do
  p50=$("$OUT/perflab" run "$D/delay.yaml" --out "$D/runs" --store off 2>/dev/null | awk '$1 == "delayed" {print $9}')
  g50=$("$GOBIN/ghz" --insecure --proto "$D/shop.proto" --call shop.Shop.AddToCart -d '[{"qty":1}]' -c 4 -n 800 "127.0.0.1:$PORT" | awk '/50 % in/ {print $4}')
  echo "20 ms stub: p50 perflab $p50 ms, ghz $g50 ms"
done
