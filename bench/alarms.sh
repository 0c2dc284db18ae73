#!/usr/bin/env bash
# False and missed alarms of the drift verdict on real runs with a busy
# host: for each KIND, N short runs (DURATION s at 100 ms intervals, 2 VUs,
# two steps /a and /b) of `perflab run` against `perflab sim`, one after
# the other, with a CPU burner on the last core for the whole of each run.
# Each run's summary.json is judged against what the run was made to be:
#
#   flat      2 ms lognormal routes (p99 6 ms): not degraded, no incident
#   starved   flat, and 3 busy loops (any core) from 60% of the run on: not
#             degraded (a suspect series or a suspect incident is fine)
#   notready  the simulator starts 1.5 s after perflab (connections
#             refused), then flat: an incident at 0 s with an error ratio,
#             not degraded
#   blip      /b ten times slower (20 ms) for 2 s from 60% of the run: an
#             incident starting within 0.5 s of the blip and lasting to its
#             end, no degraded series
#   burst     every third request to /b answers 503 from 40% to 60% of the
#             run: an incident starting and ending within 1 s of the
#             burst's, not degraded
#   leak      a monitored process (by pid) whose RSS grows 10 MB/s from a
#             third of the run: degraded, its memory degraded, the trend's
#             onset (or the change's time) within 5% of the run of the leak's
#
# The times expected are measured, not assumed: the simulator's and the
# leaker's start against the stage's start in summary.json. The kinds
# alternate, round by round. One line per run in OUT/alarms.tsv (kind,
# index, correct, wrong, why: the 1-minute load average at the run's end,
# the times expected, the verdict); wrong runs' summary.json are kept in
# OUT/wrong/. At the end, per kind: runs, correct, false alarms, false
# incidents, missed.
# Load goes only to 127.0.0.1, 2 VUs; every run is bounded in time and
# every background process is stopped on exit.
#
# Usage: bench/alarms.sh [N, default 30] [KINDS, default all six]
#   N=30 KINDS="flat burst"   the same, by environment
#   DURATION=20                seconds a run
#   PERFLAB=path               a perflab binary (default: built from this tree)
#   OUT=dir                    where it works (default bench/out/alarms)
#   PORT=18094                 the simulator's port
#   SUMMARY=OUT/alarms.tsv     only print the table of a finished run
#   KEEP=1                     keep each run whole (its histograms), for
#                              perflab drift RUN to judge it again
set -euo pipefail
cd "$(dirname "$0")/.."
USER_OUT=${OUT:-}
. bench/lib.sh
N=${1:-${N:-30}}
KINDS=${2:-${KINDS:-flat starved notready blip burst leak}}
D=${DURATION:-20}
PORT=${PORT:-18094}
need jq || { echo "bench: install jq (Debian: apt-get install jq)" >&2; exit 1; }
# summarize TSV: per kind, runs, correct and the wrong ones by what was
# wrong (in brackets: of those, how many the verdict said the generator's
# host could explain, "suspect").
summarize() {
  printf '%-9s %5s %8s %13s %16s %7s %11s\n' kind runs correct "false alarms" "false incidents" missed "no verdict"
  awk -F'\t' 'NR > 1 { runs[$1]++; if ($3 == "yes") ok[$1]++; w[$1, $4]++; if ($5 ~ /suspect/) s[$1, $4]++; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
    function f(k, x) { return w[k, x] + 0 (s[k, x] ? " (" s[k, x] " susp.)" : "") }
    END { for (i = 1; i <= n; i++) { k = order[i]; printf "%-9s %5d %8d %13s %16s %7s %11s\n", k, runs[k], ok[k], f(k, "false alarm"), f(k, "false incident"), f(k, "missed"), f(k, "no verdict") } }' "$1"
}
# SUMMARY=OUT/alarms.tsv: only the table of a finished run (nothing is
# run, nothing removed).
if [ -n "${SUMMARY:-}" ]; then summarize "$SUMMARY"; exit 0; fi
perflab_dir alarms "$USER_OUT"
BURN_CPU=$(( NCPU - 1 ))
TSV=$DIR/alarms.tsv
mkdir -p "$DIR/wrong"
printf 'kind\tindex\tcorrect\twrong\twhy\n' > "$TSV"

# Every background process of a run, stopped by stop_all (and on exit).
PIDS=()
stop_all() {
  local p
  for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  PIDS=()
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# burn SECONDS [CPU] [DELAY]: a busy loop from DELAY s on, for at most
# SECONDS s, pinned to CPU when given ("" for any).
burn() {
  local cmd=(timeout "$(calc "$1 + ${3:-0}")" bash -c "sleep ${3:-0}; while :; do :; done")
  if [ -n "${2:-}" ]; then cmd=(taskset -c "$2" "${cmd[@]}"); fi
  "${cmd[@]}" &
  PIDS+=($!)
}

now() { date +%s.%N; }
epoch() { date -d "$1" +%s.%N; }
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }

# stubs KIND: the simulator's file, its times from its own start (the run's
# stage starts a few hundred ms after it: the times found are measured).
LAG=0.4
stubs() {
  local b='{lognormal: {p50: 2ms, p99: 6ms}}' extra=''
  case $1 in
    blip) extra=", degrade: {after: $(calc "$D * 0.6 + $LAG")s, for: 2s, latency: {lognormal: {p50: 20ms, p99: 60ms}}}" ;;
    burst) extra=", errors: {every: 3, status: 503, after: $(calc "$D * 0.4 + $LAG")s, for: $(calc "$D * 0.2")s}" ;;
  esac
  cat <<STUBS
listen: 127.0.0.1:$PORT
routes:
  - {name: a, path: /a, latency: $b}
  - {name: b, path: /b, latency: $b$extra}
STUBS
}

plan() {
  cat <<PLAN
name: alarms-$1
target: http://127.0.0.1:$PORT
interval: 100ms
scenarios:
  - name: s
    vus: 2
    duration: ${D}s
    flow:
      - {name: a, url: /a}
      - {name: b, url: /b}
PLAN
  if [ -n "${2:-}" ]; then printf 'monitors:\n  - {name: leaker, kind: process, pid: %s}\n' "$2"; fi
}

start_sim() { # start_sim DIR [DELAY]: sets SIM_T, the time it was started
  if [ -n "${2:-}" ]; then
    bash -c "sleep $2; exec '$BIN' sim '$1/stubs.yaml'" > "$1/sim.log" 2>&1 &
    PIDS+=($!)
    SIM_T=$(calc "$(now) + $2")
    return
  fi
  SIM_T=$(now)
  "$BIN" sim "$1/stubs.yaml" > "$1/sim.log" 2>&1 &
  PIDS+=($!)
  local pid=$!
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/a" >/dev/null 2>&1 && break; sleep 0.02; done
  kill -0 "$pid" 2>/dev/null || { echo "bench: perflab sim did not start on port $PORT:" >&2; cat "$1/sim.log" >&2; exit 1; }
}

# judge KIND SUMMARY: sets OK (yes/no), WRONG (false alarm, false incident,
# missed, or -) and WHY.
judge() {
  local k=$1 s=$2 st deg incs
  st=$(epoch "$(jq -r '.stages[0].start' "$s")")
  deg=$(jq -r '.drift.degraded' "$s")
  incs=$(jq '.drift.incidents // [] | length' "$s")
  OK=no WRONG=-
  WHY=$(jq -r '.drift.verdict' "$s")
  case $k in
    flat)
      if [ "$deg" = true ]; then WRONG="false alarm"
      elif [ "$incs" -gt 0 ]; then WRONG="false incident"; WHY=$(jq -r '.drift.incidents[0].sentence' "$s")
      else OK=yes; fi ;;
    starved)
      local hog suspect
      hog=$(calc "$HOG_T - $st")
      suspect=$(jq '[.drift.series[] | select(.verdict == "suspect")] + [.drift.incidents // [] | .[] | select((.suspect // "") != "")] | length' "$s")
      if [ "$deg" = true ]; then WRONG="false alarm"; WHY="hog at ${hog} s; $WHY"
      else OK=yes; WHY="hog at ${hog} s; $suspect suspect series or incidents; $WHY"; fi ;;
    notready)
      local up
      up=$(calc "$SIM_T - $st")
      if [ "$deg" = true ]; then WRONG="false alarm"; WHY="refused for ${up} s; $WHY"
      elif [ "$(jq '[.drift.incidents // [] | .[] | select(.start_s == 0 and any(.effects[]; .kind == "errors"))] | length' "$s")" -gt 0 ]; then
        OK=yes; WHY="refused for ${up} s; $WHY"
      else WRONG=missed; WHY="refused for ${up} s; $WHY"; fi ;;
    blip)
      local a z found
      a=$(calc "$SIM_T + $D * 0.6 + $LAG - $st"); z=$(calc "$a + 2")
      found=$(jq --argjson a "$a" --argjson z "$z" '[.drift.incidents // [] | .[] | select((.start_s - $a) * (.start_s - $a) <= 0.25 and .end_s >= $z - 0.5)] | length' "$s")
      if [ "$deg" = true ] || [ "$(jq '[.drift.series[] | select(.verdict == "degraded")] | length' "$s")" -gt 0 ]; then WRONG="false alarm"
      elif [ "$found" -gt 0 ]; then OK=yes
      else WRONG=missed; fi
      WHY="blip ${a}-${z} s; $WHY" ;;
    burst)
      local a z found
      a=$(calc "$SIM_T + $D * 0.4 + $LAG - $st"); z=$(calc "$a + $D * 0.2")
      found=$(jq --argjson a "$a" --argjson z "$z" '[.drift.incidents // [] | .[] | select((.start_s - $a) * (.start_s - $a) <= 1 and (.end_s - $z) * (.end_s - $z) <= 1)] | length' "$s")
      if [ "$deg" = true ]; then WRONG="false alarm"
      elif [ "$found" -gt 0 ]; then OK=yes
      else WRONG=missed; fi
      WHY="burst ${a}-${z} s; $WHY" ;;
    leak)
      local a at
      a=$(calc "$(cat "$RUNDIR/leak.start") - $st")
      at=$(jq -r '[.drift.series[] | select(.kind == "memory" and (.name | contains("leaker")))][0] | if . == null then "none" elif .verdict != "degraded" then "not degraded: " + .sentence else (.trend.onset_s // .change.at_s // "no onset") end' "$s")
      if [ "$deg" = true ] && awk -v x="$at" -v a="$a" -v d="$D" 'BEGIN { exit !(x ~ /^[0-9.]+$/ && (x - a) ^ 2 <= (0.05 * d) ^ 2) }'; then OK=yes
      else WRONG=missed; fi
      WHY="leak from ${a} s, found: ${at}; $WHY" ;;
  esac
}

# The leaker: from its start time on, 1 MB more (touched) every 100 ms;
# it writes the time of its first allocation to its file.
LEAKER='
import sys, time
start, out = float(sys.argv[1]), sys.argv[2]
time.sleep(max(0, start - time.time()))
open(out, "w").write("%.3f\n" % time.time())
keep = []
while True:
    keep.append(b"\x01" * (1 << 20))
    time.sleep(0.1)
'

for k in $KINDS; do
  case $k in flat|starved|notready|blip|burst|leak) ;; *) echo "bench: unknown kind $k" >&2; exit 2 ;; esac
done
# Round by round, each kind once a round: a machine that gets busier over
# the hour weighs on every kind alike, and a run cut short has as many of
# each.
for i in $(seq "$N"); do
  for k in $KINDS; do
    RUNDIR=$DIR/$k/$i
    mkdir -p "$RUNDIR"
    stubs "$k" > "$RUNDIR/stubs.yaml"
    burn $(( D + 15 )) "$BURN_CPU"
    leaker=
    if [ "$k" = leak ]; then
      python3 -c "$LEAKER" "$(calc "$(now) + $LAG + $D / 3")" "$RUNDIR/leak.start" &
      leaker=$!; PIDS+=($leaker)
    fi
    plan "$k" "$leaker" > "$RUNDIR/plan.yaml"
    if [ "$k" != notready ]; then start_sim "$RUNDIR"; fi
    if [ "$k" = starved ]; then
      HOG_T=$(calc "$(now) + $LAG + $D * 0.6")
      for _ in 1 2 3; do burn $(( D / 2 + 10 )) "" "$(calc "$D * 0.6 + $LAG")"; done
    fi
    if [ "$k" = notready ]; then
      # perflab first, the simulator 1.5 s after it
      timeout $(( D + 60 )) "$BIN" run "$RUNDIR/plan.yaml" --out "$RUNDIR/runs" --store off --progress none > "$RUNDIR/run.log" 2>&1 &
      run=$!; PIDS+=($run)
      start_sim "$RUNDIR" 1.5
      wait "$run" || true
    else
      timeout $(( D + 60 )) "$BIN" run "$RUNDIR/plan.yaml" --out "$RUNDIR/runs" --store off --progress none > "$RUNDIR/run.log" 2>&1 || true
    fi
    load=$(cut -d' ' -f1 /proc/loadavg)
    stop_all
    sum=$(ls -d "$RUNDIR"/runs/*/summary.json 2>/dev/null | head -1 || true)
    if [ -z "$sum" ] || [ "$(jq '.drift != null' "$sum")" != true ]; then
      OK=no WRONG="no verdict" WHY="no summary.json or no drift: $(tail -1 "$RUNDIR/run.log")"
    else
      judge "$k" "$sum"
    fi
    if [ "$OK" = no ] && [ -n "$sum" ]; then cp "$sum" "$DIR/wrong/$k-$i.summary.json"; fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$k" "$i" "$OK" "$WRONG" "load $load; $(tr '\t\n' '  ' <<< "$WHY")" | tee -a "$TSV" | cut -c1-300
    # The runs' histograms are large; KEEP=1 keeps them, to judge again.
    [ -n "${KEEP:-}" ] || rm -rf "$RUNDIR/runs"/*/latency.hlog "$RUNDIR/runs"/*/totals.jsonl
  done
done

echo
summarize "$TSV"
echo "one line a run: $TSV; wrong runs' summary.json: $DIR/wrong/"
