package engine

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// load writes a plan with the given body (TARGET replaced by the server URL)
// and loads it.
func load(t testing.TB, target, body string, files map[string]string, set ...plan.Override) *plan.Plan {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "plan.yaml")
	src := strings.ReplaceAll(body, "TARGET", target)
	var ca []byte
	if overTLS {
		src, ca = tlsFront(t, src)
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load(path, plan.Options{Set: set})
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, src)
	}
	if forceEngine != nil && p.HTTP.EventLoop == nil {
		loop := *forceEngine
		p.HTTP.EventLoop = &loop
	}
	if ca != nil && p.HTTP.CAs == nil {
		p.HTTP.CAs = ca
	}
	return p
}

// forceEngine, when set, is the http.event_loop of load's plans that do not
// set it: TestGoroutineEngine runs the engine's tests again on goroutines
// (the default is the event loop, wherever it can run a scenario), and
// eachEngine runs benchmarks on each.
var forceEngine *bool

// eachEngine runs f as a sub-benchmark on each engine: a goroutine per VU,
// and (on Linux) event loops.
func eachEngine(b *testing.B, f func(b *testing.B)) {
	for _, loop := range []bool{false, true} {
		if loop && runtime.GOOS != "linux" {
			continue
		}
		name := map[bool]string{false: EngineGoroutines, true: EngineLoop}[loop]
		b.Run(name, func(b *testing.B) {
			forceEngine = &loop
			defer func() { forceEngine = nil }()
			f(b)
		})
	}
}

func run(t testing.TB, p *plan.Plan) *metrics.Run {
	t.Helper()
	r, err := Run(context.Background(), p, Options{RunID: "test", Seed: 1})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return r
}

// op finds an operation's totals in a phase.
func op(t testing.TB, ph *metrics.Phase, name string) *metrics.Stats {
	t.Helper()
	for i, o := range ph.Ops {
		if o.Name == name {
			return ph.Totals[i].Unpacked()
		}
	}
	t.Fatalf("no operation %q in %s (have %v)", name, ph.Name, ph.Ops)
	return nil
}

// counter is a server that counts requests per path.
type counter struct {
	mu     sync.Mutex
	counts map[string]int
	log    []string
}

func (c *counter) handler(inner http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		if c.counts == nil {
			c.counts = map[string]int{}
		}
		c.counts[r.Method+" "+r.URL.Path]++
		c.log = append(c.log, r.Method+" "+r.URL.RequestURI())
		c.mu.Unlock()
		if inner != nil {
			inner(w, r)
		}
	}
}

func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.counts {
		n += v
	}
	return n
}

func TestClosedModelsCountExactly(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(nil))
	defer srv.Close()
	cases := []struct {
		name, load string
		want       int64
	}{
		{"per-vu iterations", "vus: 7\n    iterations: 13", 7 * 13},
		{"shared iterations", "vus: 5\n    total_iterations: 1000", 1000},
		{"one vu", "vus: 1\n    iterations: 50", 50},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := c.total()
			p := load(t, srv.URL, "target: TARGET\nscenarios:\n  - name: s\n    "+tc.load+"\n    flow:\n      - {name: a, url: /a}\n      - {name: b, url: /b}\n", nil)
			r := run(t, p)
			ph := r.Stages[0]
			if got := op(t, ph, "a").Count; got != tc.want {
				t.Errorf("a: count %d, want %d", got, tc.want)
			}
			if got := op(t, ph, "s").Count; got != tc.want {
				t.Errorf("iterations: %d, want %d", got, tc.want)
			}
			if served := c.total() - before; int64(served) != 2*tc.want {
				t.Errorf("server saw %d requests, perflab counted %d", served, 2*tc.want)
			}
		})
	}
}

func TestDurationModelMatchesServerCount(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(func(w http.ResponseWriter, r *http.Request) { time.Sleep(2 * time.Millisecond) }))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - {name: s, vus: 4, duration: 600ms, flow: [{name: a, url: /a}]}
`, nil)
	start := time.Now()
	r := run(t, p)
	el := time.Since(start)
	got := op(t, r.Stages[0], "a").Count
	if int64(c.total()) != got || got < 50 {
		t.Errorf("server %d, perflab %d", c.total(), got)
	}
	if el < 600*time.Millisecond || el > 2*time.Second {
		t.Errorf("a 600ms stage took %v", el)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	// A port with nothing listening.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := l.Addr().String()
	l.Close()

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/500":
			w.WriteHeader(500)
		case "/404":
			w.WriteHeader(404)
		case "/slow":
			time.Sleep(300 * time.Millisecond)
		case "/reset":
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		case "/body":
			io.WriteString(w, `{"status":"DOWN"}`)
		}
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - name: s
    vus: 1
    iterations: 3
    flow:
      - {name: e500, url: /500}
      - {name: e404, url: /404}
      - {name: slow, url: /slow, timeout: 50ms}
      - {name: reset, url: /reset}
      - {name: refused, url: "http://`+closed+`/x"}
      - {name: check, url: /body, check: {json: {$.status: UP}}}
      - {name: contains, url: /body, check: {body_contains: UP}}
      - {name: extract, url: /body, extract: {x: $.missing}}
      - {name: status, url: /body, check: {status: 201}}
`, nil)
	r := run(t, p)
	want := map[string]metrics.ErrKind{
		"e500": metrics.HTTP5xx, "e404": metrics.HTTP4xx, "slow": metrics.Timeout, "reset": metrics.ConnReset,
		"refused": metrics.ConnRefused, "check": metrics.CheckFailed, "contains": metrics.CheckFailed,
		"extract": metrics.ExtractFailed, "status": metrics.HTTP2xx,
	}
	for name, kind := range want {
		s := op(t, r.Stages[0], name)
		if s.Count != 3 || s.Errors[kind] != 3 {
			t.Errorf("%s: count %d, errors %v; want 3 of %s", name, s.Count, s.Errors, kind)
		}
	}
	if r.Status != metrics.StatusCompleted {
		t.Errorf("a run whose requests fail still completes; got %s", r.Status)
	}
}

// A response of the system under test cannot inject headers or requests
// into later ones: a token with CR LF, extracted and sent in a header or
// through ${raw:...} into a URL, fails those steps as invalid_request and
// not a byte of them is sent; the steps around them run as ever, and a
// value with spaces and UTF-8 goes percent-encoded.
func TestInjectedValuesAreNotSent(t *testing.T) {
	var c counter
	var injected atomic.Int64
	var encoded atomic.Value
	srv := httptest.NewServer(c.handler(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Injected") != "" || strings.HasPrefix(r.RequestURI, "/smuggled") {
			injected.Add(1)
		}
		switch r.URL.Path {
		case "/login":
			io.WriteString(w, `{"token":"abc\r\nX-Injected: 1","path":"x HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET /smuggled","name":"café au lait"}`)
		case "/named/café au lait":
			encoded.Store(r.RequestURI)
		}
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - name: s
    vus: 2
    iterations: 3
    flow:
      - {name: login, url: /login, extract: {token: $.token, path: $.path, name: $.name}}
      - {name: header, url: /h, headers: {Authorization: "Bearer ${token}"}}
      - {name: raw, url: "/r/${raw:path}"}
      - {name: escaped, url: "/e/${path}"}
      - {name: named, url: "/named/${raw:name}"}
      - {name: after, url: /after}
`, nil)
	r := run(t, p)
	for name, kind := range map[string]metrics.ErrKind{"header": metrics.InvalidRequest, "raw": metrics.InvalidRequest} {
		if s := op(t, r.Stages[0], name); s.Count != 6 || s.Errors[kind] != 6 {
			t.Errorf("%s: count %d, errors %v; want 6 of %s", name, s.Count, s.Errors, kind)
		}
	}
	for _, name := range []string{"login", "escaped", "named", "after"} {
		if s := op(t, r.Stages[0], name); s.Count != 6 || s.ErrorCount() != 0 {
			t.Errorf("%s: count %d, errors %v; want 6 successes", name, s.Count, s.Errors)
		}
	}
	total := c.total()
	c.mu.Lock()
	defer c.mu.Unlock()
	if total != 24 || c.counts["GET /h"] != 0 || injected.Load() != 0 {
		t.Errorf("the server saw %v (%d injected); want 24 requests, none to /h or /r, none injected", c.counts, injected.Load())
	}
	if got, _ := encoded.Load().(string); got != "/named/caf%C3%A9%20au%20lait" {
		t.Errorf("a value with a space and UTF-8 went as %q", got)
	}
}

func TestTemplatingExtractionAndData(t *testing.T) {
	var mu sync.Mutex
	seen := map[string][]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		q, _ := url.QueryUnescape(r.URL.RawQuery) // loc's "/" is sent escaped, as %2F
		seen[r.URL.Path] = append(seen[r.URL.Path], q+"|"+string(body)+"|"+r.Header.Get("X-User"))
		mu.Unlock()
		if r.URL.Path == "/create" {
			w.Header().Set("Location", "/things/"+r.URL.Query().Get("name"))
			fmt.Fprintf(w, `{"id":"id-%s"}`, r.URL.Query().Get("name"))
		}
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
vars: {prefix: anchor}
data:
  users: {csv: users.csv, mode: per-vu}
  devices: {glob: "dev-[1-3]", mode: sequential}
scenarios:
  - name: s
    vus: 2
    iterations: 3
    flow:
      - name: create
        method: POST
        url: /create
        query: {name: "${prefix}-${vu}-${iteration}"}
        headers: {X-User: "${users.login}"}
        extract: {id: $.id, loc: {header: Location}}
      - name: use
        method: PUT
        url: /use?id=${id}&loc=${loc}&dev=${devices}
        json: {user: "${users.login}", dev: "${devices}"}
`, map[string]string{"users.csv": "login,pw\nann,1\nbob,2\n"})
	run(t, p)
	// The server wrote before it answered; the lock tells the race detector,
	// which does not see the socket (the event loop reads it with raw system
	// calls).
	mu.Lock()
	defer mu.Unlock()
	sort.Strings(seen["/use"])
	if len(seen["/use"]) != 6 {
		t.Fatalf("use saw %d requests", len(seen["/use"]))
	}
	devs := map[string]int{}
	for _, s := range seen["/use"] {
		parts := strings.Split(s, "|")
		q := parts[0]
		// id and Location came from this VU's own create response.
		var vu, it, dev string
		fmt.Sscanf(strings.NewReplacer("&", " ", "=", " ").Replace(q), "id id-anchor-%s", &vu)
		_ = it
		if !strings.Contains(q, "loc=/things/anchor-") {
			t.Errorf("location not extracted: %s", q)
		}
		idv := strings.TrimPrefix(strings.Split(q, "&")[0], "id=id-anchor-")
		locv := strings.TrimPrefix(strings.Split(q, "&")[1], "loc=/things/anchor-")
		if idv != locv {
			t.Errorf("id %s and location %s come from different responses", idv, locv)
		}
		user := "ann"
		if strings.HasPrefix(idv, "2-") {
			user = "bob"
		}
		if !strings.Contains(parts[1], `"user":"`+user+`"`) {
			t.Errorf("VU %s body %s: per-vu CSV row not used", idv, parts[1])
		}
		dev = strings.TrimPrefix(strings.Split(q, "&")[2], "dev=")
		if !strings.Contains(parts[1], `"dev":"`+dev+`"`) {
			t.Errorf("the same data row must serve a whole iteration: %s vs %s", q, parts[1])
		}
		devs[dev]++
	}
	// 6 iterations over 3 sequential values: each exactly twice.
	if devs["dev-1"] != 2 || devs["dev-2"] != 2 || devs["dev-3"] != 2 {
		t.Errorf("sequential data handed out %v", devs)
	}
	for _, s := range seen["/create"] {
		if !strings.HasSuffix(s, "|ann") && !strings.HasSuffix(s, "|bob") {
			t.Errorf("header template: %s", s)
		}
	}
}

func TestTransactionsAndParallelScenarios(t *testing.T) {
	var inA, inB, overlap atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cur, other := &inA, &inB
		if strings.HasPrefix(r.URL.Path, "/b") {
			cur, other = &inB, &inA
		}
		cur.Add(1)
		if other.Load() > 0 {
			overlap.Store(1)
		}
		time.Sleep(5 * time.Millisecond)
		cur.Add(-1)
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - name: checkout
    vus: 2
    iterations: 10
    flow:
      - transaction: check-out
        steps:
          - {name: a1, url: /a1}
          - {name: a2, url: /a2, think: 20ms}
          - {name: a3, url: /a3}
  - name: health
    vus: 2
    iterations: 20
    flow:
      - {name: b, url: /b}
`, nil)
	r := run(t, p)
	ph := r.Stages[0]
	tx := op(t, ph, "check-out")
	if tx.Count != 20 || op(t, ph, "a1").Count != 20 || op(t, ph, "b").Count != 40 {
		t.Fatalf("counts: tx %d a1 %d b %d", tx.Count, op(t, ph, "a1").Count, op(t, ph, "b").Count)
	}
	// A transaction lasts the sum of its steps, think time excluded.
	var stepSum int64
	for _, n := range []string{"a1", "a2", "a3"} {
		stepSum += op(t, ph, n).OK.Sum
	}
	if tx.OK.Sum != stepSum {
		t.Errorf("transaction time %d ns != sum of its steps %d ns", tx.OK.Sum, stepSum)
	}
	// Each transaction is its three steps of one iteration, each at least
	// the server's 5 ms: no shorter than the shortest steps added, no
	// longer than the longest.
	var minSum, maxSum int64
	for _, n := range []string{"a1", "a2", "a3"} {
		minSum, maxSum = minSum+op(t, ph, n).OK.Min, maxSum+op(t, ph, n).OK.Max
	}
	if tx.OK.Min < int64(15*time.Millisecond) || tx.OK.Min < minSum || tx.OK.Max > maxSum {
		t.Errorf("transaction min/max %v/%v, its steps' added %v/%v", time.Duration(tx.OK.Min), time.Duration(tx.OK.Max), time.Duration(minSum), time.Duration(maxSum))
	}
	if overlap.Load() == 0 {
		t.Error("the two scenarios never ran at the same time")
	}
	for _, o := range ph.Ops {
		if o.Name == "a2" && o.Transaction != "check-out" {
			t.Errorf("a2 not marked as part of its transaction: %+v", o)
		}
	}
}

func TestSweepStagesKeepStatisticsApart(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(nil))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
vars: {users: [1, 3, 5]}
scenarios:
  - {name: s, vus: "${users}", iterations: 4, flow: [{name: a, url: /a}]}
`, nil)
	r := run(t, p)
	if len(r.Stages) != 3 {
		t.Fatalf("%d stages", len(r.Stages))
	}
	for i, vus := range []int64{1, 3, 5} {
		ph := r.Stages[i]
		if got := op(t, ph, "a").Count; got != 4*vus {
			t.Errorf("stage %s: %d requests, want %d", ph.Name, got, 4*vus)
		}
		if ph.Values[0].Name != "users" || ph.Values[0].Value != fmt.Sprint(vus) {
			t.Errorf("stage values %+v", ph.Values)
		}
	}
	if c.total() != 36 {
		t.Errorf("server saw %d", c.total())
	}
}

func TestSetupTeardownOrder(t *testing.T) {
	var c counter
	fail := atomic.Bool{}
	srv := httptest.NewServer(c.handler(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/setup2" && fail.Load() {
			w.WriteHeader(500)
			return
		}
		if r.URL.Path == "/setup1" {
			io.WriteString(w, `{"token":"t-42"}`)
		}
	}))
	defer srv.Close()
	body := `target: TARGET
vars: {n: 3}
setup:
  - {name: s1, method: POST, url: /setup1, extract: {token: $.token}}
  - {name: s2, method: POST, url: /setup2, repeat: {count: "${n}"}, query: {i: "${index}", tok: "${token}"}}
scenarios:
  - {name: s, vus: 2, iterations: 2, flow: [{name: a, url: "/load?tok=${token}"}]}
teardown:
  - {name: t1, method: DELETE, url: "/teardown?tok=${token}"}
`
	p := load(t, srv.URL, body, nil)
	r := run(t, p)
	c.mu.Lock()
	got := append([]string(nil), c.log...)
	c.mu.Unlock()
	want := []string{"POST /setup1", "POST /setup2?i=0&tok=t-42", "POST /setup2?i=1&tok=t-42", "POST /setup2?i=2&tok=t-42"}
	if !reflect(got[:4], want) {
		t.Errorf("setup order: %v", got[:4])
	}
	for _, l := range got[4:8] {
		if l != "GET /load?tok=t-42" {
			t.Errorf("load: %s", l)
		}
	}
	if got[8] != "DELETE /teardown?tok=t-42" || len(got) != 9 {
		t.Errorf("teardown: %v", got[8:])
	}
	if op(t, r.Setup[0], "s2").Count != 3 {
		t.Error("setup repeat count not recorded")
	}

	// A failing setup skips the load but still runs teardown.
	fail.Store(true)
	c.mu.Lock()
	c.log = nil
	c.mu.Unlock()
	r2, err := Run(context.Background(), load(t, srv.URL, body, nil), Options{RunID: "t"})
	if err == nil || r2.Status != metrics.StatusFailed || len(r2.Stages) != 0 {
		t.Fatalf("setup failure: err %v status %s stages %d", err, r2.Status, len(r2.Stages))
	}
	c.mu.Lock()
	last := c.log[len(c.log)-1]
	c.mu.Unlock()
	if !strings.HasPrefix(last, "DELETE /teardown") {
		t.Errorf("teardown did not run after a failed setup: %v", c.log)
	}
}

func reflect(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestInterruptRunsTeardownAndKeepsResults(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(func(w http.ResponseWriter, r *http.Request) { time.Sleep(5 * time.Millisecond) }))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - {name: s, vus: 4, duration: 1m, flow: [{name: a, url: /a}]}
teardown:
  - {name: cleanup, method: DELETE, url: /cleanup}
`, nil)
	r := runInterrupted(t, p, 300*time.Millisecond)
	if r.Status != metrics.StatusInterrupted {
		t.Errorf("status %s", r.Status)
	}
	got := op(t, r.Stages[0], "a").Count
	c.mu.Lock()
	served := c.counts["GET /a"]
	cleanup := c.counts["DELETE /cleanup"]
	c.mu.Unlock()
	if got == 0 || int64(served) != got {
		t.Errorf("interrupted run: server saw %d, perflab kept %d", served, got)
	}
	if cleanup != 1 {
		t.Errorf("teardown ran %d times", cleanup)
	}
}

// runInterrupted runs p, interrupted after d, and fails when the run
// takes more than 5 s in all: it stops at once, whatever it was doing.
func runInterrupted(t *testing.T, p *plan.Plan, d time.Duration) *metrics.Run {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(d, cancel)
	start := time.Now()
	r, err := Run(ctx, p, Options{RunID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("a run interrupted after %v took %v", d, el)
	}
	return r
}

func TestPerStageSetup(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(nil))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
vars: {devices: [2, 5]}
setup:
  - {name: add, method: POST, url: "/dev/${index}", repeat: {count: "${devices}"}}
scenarios:
  - {name: s, vus: 1, iterations: 1, flow: [{name: q, url: /q}]}
teardown:
  - {name: clear, method: DELETE, url: /dev}
`, nil)
	if !p.SetupPerStage {
		t.Fatal("setup uses a swept variable but is not per stage")
	}
	r := run(t, p)
	if len(r.Setup) != 2 || op(t, r.Setup[0], "add").Count != 2 || op(t, r.Setup[1], "add").Count != 5 {
		t.Errorf("per-stage setup counts wrong")
	}
	if len(r.Teardown) != 2 {
		t.Errorf("teardown ran %d times, want once per stage", len(r.Teardown))
	}
}

// A duration ends the load on time even when VUs are in long think times,
// and an iteration cut short is not counted as one.
func TestDurationCutsThinkTime(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(nil))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - {name: s, vus: 3, duration: 300ms, think: 10s, flow: [{name: a, url: /a}]}
`, nil)
	start := time.Now()
	r := run(t, p)
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("a 300ms scenario took %v", el)
	}
	if got := op(t, r.Stages[0], "a").Count; got != 3 || c.total() != 3 {
		t.Errorf("requests %d, server %d; want 3", got, c.total())
	}
	if got := op(t, r.Stages[0], "s").Count; got != 0 {
		t.Errorf("%d iterations counted; every one was cut short in its think time", got)
	}
}

// rampUpLateness runs 5 VUs with a 400 ms ramp-up, and returns how long
// after its due time (VU i at (i-1)*400/5 ms from the stage's start) each
// VU's first request reached the server, by the server's clock.
func rampUpLateness(t testing.TB) []time.Duration {
	var mu sync.Mutex
	first := map[string]time.Time{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if vu := r.URL.Query().Get("vu"); first[vu].IsZero() {
			first[vu] = now
		}
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - {name: s, vus: 5, iterations: 2, ramp_up: 400ms, flow: [{name: a, url: "/a?vu=${vu}"}]}
`, nil)
	r := run(t, p)
	mu.Lock() // see TestTemplatingExtractionAndData
	defer mu.Unlock()
	if len(first) != 5 {
		t.Fatalf("%d VUs started", len(first))
	}
	late := make([]time.Duration, 5)
	for i := range late {
		late[i] = first[fmt.Sprint(i+1)].Sub(r.Stages[0].Start.Add(time.Duration(i) * 80 * time.Millisecond))
	}
	return late
}

// The starts are spread over the ramp-up: no VU starts before its due time
// (all at once, VU 5 would be 320 ms early), and none as late as a ramp of
// twice the length would start it (VU 5, 320 ms). How late they are on an
// idle machine, BenchmarkRampUp measures.
func TestRampUpSpreadsStarts(t *testing.T) {
	for i, l := range rampUpLateness(t) {
		if l < 0 || l >= 250*time.Millisecond {
			t.Errorf("VU %d started %v after its due time, want 0 to 250ms", i+1, l)
		}
	}
}

// BenchmarkRampUp: how late the VUs of a 400 ms ramp-up start, at most and
// on average (bench/README.md).
//
//	go test -run '^$' -bench RampUp -benchtime 10x ./engine
func BenchmarkRampUp(b *testing.B) {
	eachEngine(b, func(b *testing.B) {
		var worst, sum time.Duration
		for range b.N {
			for _, l := range rampUpLateness(b) {
				worst, sum = max(worst, l), sum+l
			}
		}
		b.ReportMetric(float64(worst)/1e6, "max-late-ms")
		b.ReportMetric(float64(sum)/1e6/float64(5*b.N), "mean-late-ms")
		b.ReportMetric(0, "ns/op")
	})
}

func TestForEachSetupAndRandomThink(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(nil))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
data:
  devices: {glob: "dev-[1-4]"}
  users: {csv: users.csv}
setup:
  - {name: add, method: POST, url: "/dev/${item}", repeat: {for_each: devices}}
  - {name: user, method: POST, url: "/user/${item.login}", repeat: {for_each: users}}
scenarios:
  - {name: s, vus: 1, iterations: 5, flow: [{name: a, url: /a, think: {min: 20ms, max: 40ms}}]}
`, map[string]string{"users.csv": "login\nann\nbob\n"})
	start := time.Now()
	r := run(t, p)
	c.mu.Lock()
	got := strings.Join(c.log[:6], ",")
	c.mu.Unlock()
	if got != "POST /dev/dev-1,POST /dev/dev-2,POST /dev/dev-3,POST /dev/dev-4,POST /user/ann,POST /user/bob" {
		t.Errorf("setup requests: %s", got)
	}
	// 5 think times of 20..40 ms.
	if el := time.Since(start); el < 100*time.Millisecond || el > 2*time.Second {
		t.Errorf("run took %v", el)
	}
	if it := op(t, r.Stages[0], "s"); it.OK.Min < int64(20*time.Millisecond) || it.OK.Max > int64(300*time.Millisecond) {
		t.Errorf("iteration times %v..%v do not include a 20-40ms think", time.Duration(it.OK.Min), time.Duration(it.OK.Max))
	}
}

func TestTLSAndReadErrors(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer tlsSrv.Close()
	raw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, _ := w.(http.Hijacker).Hijack()
		if r.URL.Path == "/short" { // promises 100 bytes, sends 5
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello")
		} else {
			buf.WriteString("this is not HTTP\r\n\r\n")
		}
		buf.Flush()
		conn.Close()
	}))
	defer raw.Close()
	ca := pemCert(tlsSrv)
	flow := `    flow:
      - {name: tls, url: "` + tlsSrv.URL + `/"}
      - {name: short, url: "` + raw.URL + `/short"}
      - {name: garbage, url: "` + raw.URL + `/garbage"}
`
	// Without the server's CA: TLS errors.
	p := load(t, "", "scenarios:\n  - name: s\n    vus: 1\n    iterations: 2\n"+flow, nil)
	r := run(t, p)
	for name, kind := range map[string]metrics.ErrKind{"tls": metrics.TLS, "short": metrics.Read, "garbage": metrics.Read} {
		if s := op(t, r.Stages[0], name); s.Errors[kind] != 2 {
			t.Errorf("%s: errors %v, want 2 of %s", name, s.Errors, kind)
		}
	}
	// With it: success.
	p = load(t, "", "http: {ca_file: ca.pem}\nscenarios:\n  - name: s\n    vus: 1\n    iterations: 2\n"+flow, map[string]string{"ca.pem": ca})
	r = run(t, p)
	if s := op(t, r.Stages[0], "tls"); s.Count != 2 || s.ErrorCount() != 0 {
		t.Errorf("with ca_file: %d requests, %d errors", s.Count, s.ErrorCount())
	}
}

func pemCert(s *httptest.Server) string {
	var b strings.Builder
	pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	return b.String()
}

func TestHTTP2(t *testing.T) {
	var protos sync.Map
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos.Store(r.URL.Path, r.Proto)
		w.Header().Set("X-Id", "h2-"+r.URL.Query().Get("n"))
		io.WriteString(w, `{"ok":true}`)
	})
	tlsSrv := httptest.NewUnstartedServer(h)
	tlsSrv.EnableHTTP2 = true
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	h2c := httptest.NewUnstartedServer(h)
	h2c.Config.Protocols = new(http.Protocols)
	h2c.Config.Protocols.SetHTTP1(true)
	h2c.Config.Protocols.SetUnencryptedHTTP2(true)
	h2c.Start()
	defer h2c.Close()
	p := load(t, "", `http: {version: "2", ca_file: ca.pem}
scenarios:
  - name: s
    vus: 3
    iterations: 4
    flow:
      - {name: tls, url: "`+tlsSrv.URL+`/tls?n=${vu}", extract: {id: {header: X-Id}}, check: {json: {$.ok: "true"}}}
      - {name: h2c, method: POST, url: "`+h2c.URL+`/h2c?id=${id}", json: {a: 1}}
`, map[string]string{"ca.pem": pemCert(tlsSrv)})
	r := run(t, p)
	for _, name := range []string{"tls", "h2c"} {
		if s := op(t, r.Stages[0], name); s.Count != 12 || s.ErrorCount() != 0 || s.Bytes != 12*11 {
			t.Errorf("%s: %d requests, %d errors, %d bytes", name, s.Count, s.ErrorCount(), s.Bytes)
		}
	}
	for _, path := range []string{"/tls", "/h2c"} {
		if v, _ := protos.Load(path); v != "HTTP/2.0" {
			t.Errorf("%s served as %v", path, v)
		}
	}
}

func TestPerVUConnections(t *testing.T) {
	for _, mode := range []string{"per-vu", "shared"} {
		var mu sync.Mutex
		addrs := map[string]map[string]bool{} // VU -> remote addresses
		conns := map[string]bool{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			vu := r.URL.Query().Get("vu")
			if addrs[vu] == nil {
				addrs[vu] = map[string]bool{}
			}
			addrs[vu][r.RemoteAddr] = true
			conns[r.RemoteAddr] = true
		}))
		p := load(t, srv.URL, `target: TARGET
http: {connections: `+mode+`}
scenarios:
  - {name: s, vus: 4, iterations: 25, think: {min: 0s, max: 2ms}, flow: [{name: a, url: "/a?vu=${vu}"}]}
`, nil)
		run(t, p)
		srv.Close()
		mu.Lock()
		moved := 0
		for _, a := range addrs {
			if len(a) != 1 {
				moved++
			}
		}
		mu.Unlock()
		if mode == "per-vu" && (len(conns) != 4 || moved != 0) {
			t.Errorf("per-vu: %d connections, %d VUs changed connection; want 4 and 0", len(conns), moved)
		}
		if mode == "shared" && len(conns) > 4 {
			t.Errorf("shared: %d connections for 4 VUs", len(conns))
		}
		t.Logf("%s: %d connections, %d of 4 VUs used more than one", mode, len(conns), moved)
	}
}

// A finished stage keeps its totals packed (metrics.Stats.Pack): after a
// sweep no stage, setup or teardown holds a histogram of its own, and the
// figures read from the packed totals are the stage's.
func TestFinishedStagesKeepNoHistograms(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(nil))
	defer srv.Close()
	const stages = 40
	values := make([]string, stages)
	for i := range values {
		values[i] = fmt.Sprint(i + 1)
	}
	p := load(t, srv.URL, "target: TARGET\nvars: {n: ["+strings.Join(values, ", ")+"]}\n"+
		"setup: [{name: up, url: \"/up/${n}\"}]\nteardown: [{name: down, url: /down}]\n"+
		"scenarios:\n  - {name: s, vus: 1, iterations: 2, flow: [{name: a, url: /a}, {name: b, url: /b}]}\n", nil)
	r := run(t, p)
	if len(r.Stages) != stages || len(r.Setup) != stages || len(r.Teardown) != stages {
		t.Fatalf("%d stages, %d setups, %d teardowns", len(r.Stages), len(r.Setup), len(r.Teardown))
	}
	kept := 0
	for _, ph := range slices.Concat(r.Setup, r.Stages, r.Teardown) {
		for _, st := range ph.Totals {
			for _, h := range []*hdr.Histogram{st.Hist, st.Svc, st.Delay, st.Server} {
				if h != nil {
					kept++
				}
			}
		}
	}
	if kept != 0 {
		t.Errorf("finished phases keep %d histograms", kept)
	}
	for _, ph := range r.Stages {
		if s := op(t, ph, "a").Summarize(time.Second); s.Count != 2 || s.Latency.P50 <= 0 {
			t.Errorf("%s: a counted %d, p50 %v ms", ph.Name, s.Count, s.Latency.P50)
		}
	}
}

// A step that cannot be built for want of a variable says which, and why
// it is unset: the extract that failed to set it in this iteration (or
// was not reached, an earlier extract of its step having failed), or
// where values come from when no extract of it ran; an HTTP request, a
// message, a WebSocket send and a gRPC call say it alike, and none of
// them is sent.
func TestUnsetVariableSaysWhy(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			io.WriteString(w, `{"user":"u"}`)
		case "/broken":
			w.WriteHeader(503)
		}
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
grpc: {target: "127.0.0.1:1", protos: [shop.proto]}
buses: [{name: b, url: "mem://unset-variable"}]
scenarios:
  - name: s
    vus: 2
    iterations: 3
    flow:
      - {name: login, url: /login, extract: {token: $.token, id: $.id}}
      - {name: use, url: "/use?token=${token}"}
      - {name: show, url: /show, headers: {X-Id: "${id}"}}
      - {name: broken, url: /broken, extract: {code: $.code}}
      - {name: after, method: POST, url: /after, body: "${code}"}
      - {name: refused, url: "http://127.0.0.1:1/x", extract: {gone: $.x}}
      - {name: after refused, method: POST, url: /after, body: "${gone}"}
  - name: others
    vus: 1
    iterations: 2
    flow:
      - {name: login2, url: /login, extract: {token: $.token}}
      - {name: publish, publish: {bus: b, topic: t, body: "${token}"}}
      - {name: ws, ws: {url: "ws://127.0.0.1:1/${token}", send: hi}}
      - {name: get, grpc: {service: shop.Shop, method: GetItem, message: {id: "${token}"}}}
`, map[string]string{"shop.proto": "syntax = \"proto3\";\npackage shop;\nservice Shop { rpc GetItem(Item) returns (Item); }\nmessage Item { string id = 1; }\n"})
	r := run(t, p)
	const where = "nothing has set it for this VU: a value comes from the plan's vars and data, setup's extracts, or the extract of an earlier step, which sets nothing when the step fails before it"
	for _, c := range []struct {
		step   string
		count  int64
		detail string
	}{
		{"use", 6, "${token} is not set (step login's extract of token failed in this iteration)"},
		{"show", 6, "${id} is not set (step login's extract of id was not reached: its extract of token failed in this iteration)"},
		// A status not accepted: the extraction ran (as JMeter's do) and missed.
		{"after", 6, "${code} is not set (step broken's extract of code failed in this iteration)"},
		// No response: the extraction never ran.
		{"after refused", 6, "${gone} is not set (" + where + ")"},
		{"publish", 2, "${token} is not set (step login2's extract of token failed in this iteration)"},
		{"ws", 2, "${token} is not set (step login2's extract of token failed in this iteration)"},
		{"get", 2, "${token} is not set (step login2's extract of token failed in this iteration)"},
	} {
		s := op(t, r.Stages[0], c.step)
		if s.Count != c.count || s.Errors[metrics.NotSent] != c.count || !strings.Contains(s.Details[metrics.NotSent], c.detail) {
			t.Errorf("%s: count %d, errors %v, detail %q; want %d not sent saying %q", c.step, s.Count, s.Errors, s.Details[metrics.NotSent], c.count, c.detail)
		}
	}
	if s := op(t, r.Stages[0], "login"); s.Errors[metrics.ExtractFailed] != 6 || s.Details[metrics.ExtractFailed] != "nothing to extract for token" {
		t.Errorf("login: errors %v, details %q", s.Errors, s.Details)
	}
	total := c.total()
	c.mu.Lock()
	defer c.mu.Unlock()
	if total != 6+6+2 || c.counts["GET /use"]+c.counts["GET /show"]+c.counts["POST /after"] != 0 {
		t.Errorf("the server saw %v; want 14 requests, to /login and /broken only", c.counts)
	}
}
