#!/usr/bin/env bash
# Importing JMeter results: perflab import --from jmeter against JMeter's
# own report generator (jmeter -g, the dashboard) on the same JTL file,
# each on one CPU: wall time, samples/s and the most memory each held.
# The file: SAMPLES samples of 20 labels from 50 threads, 1% failures, in
# JMeter 5's default CSV columns. JMeter 5.6.3 comes from Maven Central, as
# in the import tests. Usage: bash bench/import.sh [SAMPLES] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SAMPLES=${1:-3000000}
ROUNDS=${2:-2}
go build -o "$OUT/perflab" ./cmd/perflab

# JMeter: the jmeter-maven-plugin sets up a JMeter home under target/.
jm="$OUT/jmeter-home"
if [ ! -d "$jm/target" ]; then
  rm -rf "$jm" && mkdir -p "$jm" && cp -r ingest/testdata/jmeter/. "$jm"
  (cd "$jm" && mvn -q -B verify -Dtarget.port=9 >/dev/null)
fi
jar=$(find "$jm/target" -name 'ApacheJMeter-*.jar' -path '*/bin/*' | head -1)

jtl="$OUT/import-$SAMPLES.jtl"
if [ ! -s "$jtl" ]; then
  awk -v n="$SAMPLES" 'BEGIN {
    print "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect"
    t = 1795662000000; srand(5)
    for (i = 0; i < n; i++) {
      t += int(rand() * 3); ms = 5 + int(rand() * 295)
      ok = (i % 100 != 0)
      printf "%d,%d,GET item %d,%s,%s,users 1-%d,text,%s,,113,122,50,50,http://127.0.0.1/item,%d,0,1\n", t, ms, i % 20, ok ? "200" : "500", ok ? "OK" : "Internal Server Error", i % 50 + 1, ok ? "true" : "false", ms
    } }' > "$jtl"
fi
echo "file: $jtl, $SAMPLES samples, $(du -m "$jtl" | cut -f1) MB"

# timed NAME CMD...: runs CMD on CPU $GEN_CPU; prints NAME, seconds and max RSS (MB).
timed() {
  local name=$1; shift
  local log="$OUT/import-time.log"
  /usr/bin/time -f '%e %M' -o "$log" taskset -c "$GEN_CPU" "$@" >/dev/null 2>&1
  read -r secs kb < "$log"
  awk -v n="$name" -v s="$secs" -v kb="$kb" -v c="$SAMPLES" 'BEGIN { printf "%-22s %7.2f s %10.0f samples/s %6.0f MB\n", n, s, c / s, kb / 1024 }'
}
for r in $(seq "$ROUNDS"); do
  rm -rf "$OUT/import-runs" "$OUT/import-report"
  timed "perflab import" "$OUT/perflab" import --from jmeter "$jtl" --store "$OUT/import-runs/h.db" --out "$OUT/import-runs"
  timed "jmeter -g (5.6.3)" java -jar "$jar" -g "$jtl" -o "$OUT/import-report" -j "$OUT/import-jmeter.log"
done
