#!/usr/bin/env bash
# 10,000 idle WebSocket connections: the most memory (max RSS) perflab
# holds with VUS VUs each keeping a connection open in think time, beside
# k6 doing the same in the same run (k6/ws, each VU connected and idle;
# when k6 is installed or PERFLAB_TEST_K6 names it). The server is the
# WebSocket tests' (Python's websockets), broadcasting one message every
# 10 s to every connection.
# Load goes only to 127.0.0.1 and every step is bounded in time.
#
# Usage: bench/ws-idle.sh [VUS, default 10000] [SECONDS idle, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
VUS=${1:-10000}
IDLE=${2:-20}
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
python3 -c "import websockets" 2>/dev/null || python3 -m pip install -q websockets==17.4
go build -o "$OUT/perflab" ./cmd/perflab
D=$(mktemp -d)
python3 protocol/ws/testdata/server.py $((IDLE * 3 + 120)) 0.1 > "$D/port" 2>"$D/server.err" &
SRV=$!
trap 'kill $SRV 2>/dev/null || true; rm -rf "$D"' EXIT
for _ in $(seq 50); do grep -q PORT "$D/port" && break; sleep 0.1; done
BASE="ws://127.0.0.1:$(awk '{print $2}' "$D/port")"
cat > "$D/plan.yaml" <<PLAN
name: ws-idle
scenarios:
  - name: idle
    vus: $VUS
    ramp_up: 10s
    iterations: 1
    flow:
      - name: open
        ws: {url: "$BASE/feed"}
      - think: ${IDLE}s
PLAN
/usr/bin/time -f "%M %U %S" -o "$D/time" "$OUT/perflab" run "$D/plan.yaml" --out "$D/runs" --store off --quiet > "$D/out" 2>&1 || { cat "$D/out" >&2; exit 1; }
grep -q "Err: 0 " "$D/out" || { echo "bench: perflab saw errors:" >&2; cat "$D/out" >&2; exit 1; }
read -r KB U S < "$D/time"
printf "%-16s %8s connections  max RSS %6d MB  (%.0f KB a connection)  cpu %.1f s\n" "perflab" "$VUS" $((KB / 1024)) "$(awk -v k="$KB" -v n="$VUS" 'BEGIN{print k/n}')" "$(awk -v u="$U" -v s="$S" 'BEGIN{print u+s}')"
K6=${PERFLAB_TEST_K6:-$(command -v k6 || true)}
if [ -n "$K6" ] && [ -x "$K6" ]; then
  cat > "$D/k6.js" <<JS
import ws from 'k6/ws';
export const options = { scenarios: { idle: { executor: 'per-vu-iterations', vus: $VUS, iterations: 1, maxDuration: '$((IDLE + 60))s' } } };
export default function () {
  ws.connect('$BASE/feed', {}, (socket) => { socket.setTimeout(() => socket.close(), $((IDLE * 1000))); });
}
JS
  /usr/bin/time -f "%M %U %S" -o "$D/time" env K6_NO_USAGE_REPORT=true "$K6" run --quiet "$D/k6.js" > "$D/k6out" 2>&1 || true
  read -r KB U S < "$D/time"
  printf "%-16s %8s connections  max RSS %6d MB  (%.0f KB a connection)  cpu %.1f s\n" "k6 $("$K6" version | awk '{print $2}')" "$VUS" $((KB / 1024)) "$(awk -v k="$KB" -v n="$VUS" 'BEGIN{print k/n}')" "$(awk -v u="$U" -v s="$S" 'BEGIN{print u+s}')"
  grep -E "ws_sessions|ws_connecting" "$D/k6out" || true
fi
