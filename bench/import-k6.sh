#!/usr/bin/env bash
# Importing k6 results: perflab import --from k6 against jq, the tool k6's
# own documentation reads its JSON output with, on the same file, each on
# one CPU: wall time, requests/s and the most memory each held. jq only
# counts each request name's requests and their mean http_req_duration
# (a streaming reduce); perflab writes the whole run and records it.
# The file: REQUESTS requests in k6 v1.1.0's --out json lines (9 points a
# request and 4 an iteration, 20 names, 1% 500s).
# Usage: bash bench/import-k6.sh [REQUESTS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
REQUESTS=${1:-500000}
ROUNDS=${2:-2}
command -v jq >/dev/null || { apt-get install -y -qq jq >/dev/null; }
go build -o "$OUT/perflab" ./cmd/perflab

json="$OUT/import-k6-$REQUESTS.json"
if [ ! -s "$json" ]; then
  awk -v n="$REQUESTS" 'BEGIN {
    srand(5); t = 1795672800.0
    split("http_reqs http_req_duration http_req_blocked http_req_connecting http_req_tls_handshaking http_req_sending http_req_waiting http_req_receiving http_req_failed", m, " ")
    for (i = 0; i < n; i++) {
      t += 0.0001 + rand() * 0.0001
      s = sprintf("2026-11-26T%02d:%02d:%09.6fZ", int((t % 86400) / 3600), int((t % 3600) / 60), t % 60)
      ok = (i % 100 != 0); status = ok ? "200" : "500"
      tags = sprintf("\"tags\":{%s\"expected_response\":\"%s\",\"group\":\"\",\"method\":\"GET\",\"name\":\"http://127.0.0.1:8080/items/%d\",\"proto\":\"HTTP/1.1\",\"scenario\":\"default\",\"status\":\"%s\",\"url\":\"http://127.0.0.1:8080/items/%d\"}", ok ? "" : "\"error_code\":\"1500\",", ok ? "true" : "false", i % 20, status, i % 20)
      for (j = 1; j <= 9; j++) {
        v = (j == 1) ? 1 : (j == 9) ? (ok ? 0 : 1) : 1 + rand() * 40
        printf "{\"metric\":\"%s\",\"type\":\"Point\",\"data\":{\"time\":\"%s\",\"value\":%.6f,%s}}\n", m[j], s, v, tags
      }
      printf "{\"metric\":\"data_sent\",\"type\":\"Point\",\"data\":{\"time\":\"%s\",\"value\":98,\"tags\":{\"group\":\"\",\"scenario\":\"default\"}}}\n", s
      printf "{\"metric\":\"data_received\",\"type\":\"Point\",\"data\":{\"time\":\"%s\",\"value\":213,\"tags\":{\"group\":\"\",\"scenario\":\"default\"}}}\n", s
      printf "{\"metric\":\"iteration_duration\",\"type\":\"Point\",\"data\":{\"time\":\"%s\",\"value\":%.6f,\"tags\":{\"group\":\"\",\"scenario\":\"default\"}}}\n", s, 2 + rand() * 40
      printf "{\"metric\":\"iterations\",\"type\":\"Point\",\"data\":{\"time\":\"%s\",\"value\":1,\"tags\":{\"group\":\"\",\"scenario\":\"default\"}}}\n", s
    } }' > "$json"
fi
echo "file: $json, $REQUESTS requests, $(du -m "$json" | cut -f1) MB"

timed() {
  local name=$1; shift
  local log="$OUT/import-time.log"
  /usr/bin/time -f '%e %M' -o "$log" taskset -c "$GEN_CPU" "$@" >/dev/null 2>&1
  read -r secs kb < "$log"
  awk -v n="$name" -v s="$secs" -v kb="$kb" -v c="$REQUESTS" 'BEGIN { printf "%-24s %7.2f s %10.0f requests/s %6.0f MB\n", n, s, c / s, kb / 1024 }'
}
for r in $(seq "$ROUNDS"); do
  rm -rf "$OUT/import-k6-runs"
  timed "perflab import --from k6" "$OUT/perflab" import --from k6 "$json" --store "$OUT/import-k6-runs/h.db" --out "$OUT/import-k6-runs"
  timed "jq (count, mean)" jq -n 'reduce (inputs | select(.metric == "http_req_duration")) as $p ({}; .[$p.data.tags.name] |= {n: (.n + 1), sum: (.sum + $p.data.value)}) | map_values(.sum / .n)' "$json"
done
