# What bench/run.sh and bench/tls.sh share: sourced by both from the
# repository's root. Load goes only to 127.0.0.1 and every step is bounded
# in time.

OUT=bench/out
mkdir -p "$OUT"

need() { command -v "$1" >/dev/null 2>&1; }

# need_wrk_nginx installs wrk and nginx from Debian when missing (as root).
need_wrk_nginx() {
  need wrk && need nginx && return 0
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk nginx-light >/dev/null
    nginx -s stop 2>/dev/null || true   # the package starts one on :80; we run our own
  else
    echo "bench: install wrk and nginx (Debian: apt-get install wrk nginx-light)" >&2; exit 1
  fi
}

# as_installed BIN...: writes BIN out and drops it from the page cache, so
# that its first run reads it from the disk as an installed binary is. A
# file just written (go build's output) stays in the page cache in large
# pieces, which the kernel maps whole around the pages a process touches:
# the same perflab binary, at 50 VUs, peaked at 42.6 MB just built and at
# 37.6 MB read from the disk (2026-12-07), and the peers measured beside it
# are installed binaries.
as_installed() {
  local f
  for f in "$@"; do
    sync "$f" && dd if="$f" iflag=nocache count=0 status=none 2>/dev/null || true
  done
}

# need_deb CMD PACKAGE: installs Debian's PACKAGE when CMD is missing (as
# root), else says what to install.
need_deb() {
  need "$1" && return 0
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
  else
    echo "bench: install $1 (Debian: apt-get install $2)" >&2; exit 1
  fi
}

# one_step_plan NAME HTTP_OPTIONS: the 1-step plan of the request-path
# benchmarks (CONNS VUs for SECS seconds, a GET of / at
# http://127.0.0.1:PORT), with http: {HTTP_OPTIONS}.
one_step_plan() {
  cat <<PLAN
name: $1
target: http://127.0.0.1:$PORT
http: {$2}
scenarios:
  - name: get
    vus: $CONNS
    duration: ${SECS}s
    flow:
      - {name: GET /, url: /}
PLAN
}

NCPU=$(nproc)
GEN_CPU=0; SRV_CPU=$(( NCPU > 1 ? 1 : 0 ))

# nginx_dir makes NGX, the directory of a test nginx (removed on exit),
# with its 2-byte body.
nginx_dir() {
  NGX=$(mktemp -d)
  chmod 755 "$NGX"   # nginx's workers run as www-data: a 0700 directory gives 403s
  mkdir -p "$NGX/html" "$NGX/logs"
  printf 'ok' > "$NGX/html/index.html"
  trap '[ -z "${NGX_PID:-}" ] || { kill "$NGX_PID" 2>/dev/null; wait "$NGX_PID" 2>/dev/null; }; rm -rf "$NGX"' EXIT
}

# start_nginx URL [LISTEN_OPTIONS [DIRECTIVES]]: nginx serving NGX's body at
# URL (http or https://127.0.0.1:PORT/), one worker on its own CPU, no
# logging, connections kept alive; LISTEN_OPTIONS follow the port (ssl,
# http2), DIRECTIVES go in the server block. CURL_OPTS are curl's, for the
# check that it answers (--http2-prior-knowledge for h2c).
start_nginx() {
  local port=${1##*:}; port=${port%/}
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
  server { listen 127.0.0.1:$port ${2:-}; ${3:-} root $NGX/html; location / { } }
}
CONF
  ulimit -n 65536 2>/dev/null || true
  taskset -c "$SRV_CPU" nginx -p "$NGX" -c "$NGX/nginx.conf" &
  NGX_PID=$!
  for _ in $(seq 50); do curl -kfs ${CURL_OPTS:-} "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "bench: nginx does not answer at $1:" >&2; cat "$NGX/logs/error.log" >&2; exit 1
}

# cputime CMD...: runs CMD pinned to the generator CPU; prints "user+sys_seconds max_rss_kb".
cputime() {
  /usr/bin/time -f "%U %S %M" -o "$OUT/time.txt" taskset -c "$GEN_CPU" "$@" > "$OUT/cmd.out" 2> "$OUT/cmd.err"
  awk '{printf "%.3f %d\n", $1+$2, $3}' "$OUT/time.txt"
}

# wrk_run ARGS...: one wrk run; sets RUN to "requests cpu rss".
wrk_run() {
  read -r C R < <(cputime wrk "$@")
  if grep -q "Non-2xx" "$OUT/cmd.out"; then echo "bench: wrk saw errors:" >&2; cat "$OUT/cmd.out" >&2; exit 1; fi
  RUN="$(awk '/requests in/ {print $1}' "$OUT/cmd.out") $C $R"
}

# perflab_run PLAN: one run of OUT/perflab with GOMAXPROCS=1; sets RUN to
# "requests cpu rss", and fails on any error.
perflab_run() {
  read -r C R < <(GOMAXPROCS=1 cputime "$OUT/perflab" run "$1" --out "$OUT/runs" --store off --quiet)
  if ! grep -q "Err: 0 " "$OUT/cmd.out"; then echo "bench: perflab saw errors:" >&2; cat "$OUT/cmd.out" >&2; exit 1; fi
  RUN="$(grep -o 'summary = [0-9]*' "$OUT/cmd.out" | awk '{print $3}') $C $R"
}

# median "requests cpu rss" of a list of runs, by CPU per request (sorted
# on microseconds to 4 places: seconds to 6 places made most runs equal and
# the median the line that sorted first among them)
median() { printf '%s\n' "$@" | awk '{printf "%.4f %s\n", $2 * 1e6 / $1, $0}' | sort -n | awk '{a[NR]=$0} END {split(a[int((NR+1)/2)], f, " "); print f[2], f[3], f[4]}'; }

# us CPU_SECONDS REQUESTS: microseconds per request
us() { awk -v c="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.2f", c * 1e6 / n; else print "n/a" }'; }

# start_sim BIN DIR PORT: `BIN sim` answering "ok" at once at
# http://127.0.0.1:PORT/ (its stubs and log in DIR), stopped on exit; a
# port already taken is an error.
start_sim() {
  cat > "$2/stubs.yaml" <<STUBS
listen: 127.0.0.1:$3
routes: [{name: ok, path: /, body: ok}]
STUBS
  "$1" sim "$2/stubs.yaml" > "$2/sim.log" 2>&1 &
  SIM=$!
  trap 'kill -INT $SIM 2>/dev/null; wait $SIM 2>/dev/null || true' EXIT
  for _ in $(seq 50); do curl -fs "http://127.0.0.1:$3/" >/dev/null 2>&1 && break; sleep 0.1; done
  # Another's server on the port would answer, and go away in the middle.
  kill -0 "$SIM" 2>/dev/null || { echo "bench: perflab sim did not start on port $3:" >&2; cat "$2/sim.log" >&2; exit 1; }
}

# perflab_dir NAME: DIR (the caller's OUT, else bench/out/NAME) made anew,
# and BIN, the perflab to measure (PERFLAB, else built from this tree into
# DIR). Call it before sourcing this file sets OUT: pass "$OUT" as $2.
perflab_dir() {
  DIR=${2:-bench/out/$1}
  rm -rf "$DIR"; mkdir -p "$DIR"
  BIN=${PERFLAB:-$DIR/perflab}
  [ -n "${PERFLAB:-}" ] || go build -o "$BIN" ./cmd/perflab
}
