package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// start parses yml and serves it on a free 127.0.0.1 port until the test ends.
func start(t *testing.T, yml string, opts ...Option) *Server {
	t.Helper()
	cfg, err := Parse([]byte(yml), "stubs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// client is a bounded client: its own connections, a timeout.
func client(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

type response struct {
	code   int
	body   string
	header http.Header
}

func do(t *testing.T, c *http.Client, method, url, body string, hdr ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, string(b), resp.Header}
}

func TestRoutesParamsQueryAndTemplates(t *testing.T) {
	s := start(t, `
routes:
  - name: create anchor
    method: POST
    path: /dataspaces/{dataspace}/anchors
    status: 201
    headers: {Content-Type: application/json, x-sim: "yes"}
    body: '{"ds":"${path.dataspace}","anchor":"${query.anchor-name}","trace":"${header.x-trace}","n":${count},"echo":"${body}","m":"${method}","p":"${path}","r":"${route}"}'
  - path: /files/{dir}/{rest...}
    body: '${path.dir}|${path.rest}|${query.v}|${query.limit:-10}|${query.none}|${header.X-None}|$${literal}'
  - path: /health
    body: UP
  - path: /health/{$}
    method: HEAD
`)
	c := client(t)

	r := do(t, c, "POST", s.URL()+"/dataspaces/my-ds/anchors?anchor-name=a%201&anchor-name=second", "hi", "X-Trace", "tr-1")
	want := `{"ds":"my-ds","anchor":"a 1","trace":"tr-1","n":1,"echo":"hi","m":"POST","p":"/dataspaces/my-ds/anchors","r":"create anchor"}`
	if r.code != 201 || r.body != want {
		t.Errorf("create anchor: %d %s\n want 201 %s", r.code, r.body, want)
	}
	if r.header.Get("Content-Type") != "application/json" || r.header.Get("X-Sim") != "yes" || r.header.Get("Content-Length") != strconv.Itoa(len(want)) {
		t.Errorf("headers %v", r.header)
	}
	if r := do(t, c, "POST", s.URL()+"/dataspaces/x/anchors", ""); !strings.Contains(r.body, `"anchor":"","trace":"","n":2,`) {
		t.Errorf("absent query and header: %s", r.body)
	}

	// {rest...} spans segments; an absent query gives its fallback or "".
	if r := do(t, c, "GET", s.URL()+"/files/etc/a/b.txt?v=%E2%82%AC&v=2", ""); r.code != 200 || r.body != "etc|a/b.txt|€|10|||${literal}" {
		t.Errorf("files: %d %q", r.code, r.body)
	}
	if r := do(t, c, "GET", s.URL()+"/files/etc/x?limit=3", ""); r.body != "etc|x||3|||${literal}" {
		t.Errorf("files with limit: %q", r.body)
	}
	// GET routes serve HEAD; a literal body gets its Content-Length.
	if r := do(t, c, "GET", s.URL()+"/health", ""); r.code != 200 || r.body != "UP" || r.header.Get("Content-Length") != "2" {
		t.Errorf("health: %d %q %v", r.code, r.body, r.header)
	}
	if r := do(t, c, "HEAD", s.URL()+"/health", ""); r.code != 200 || r.body != "" || r.header.Get("Content-Length") != "2" {
		t.Errorf("HEAD health: %d %q %v", r.code, r.body, r.header)
	}

	// Unmatched: unknown path, known path with another method, a POST to
	// the HEAD-only route; each a JSON 404.
	for _, u := range []struct{ method, path string }{
		{"GET", "/nope"}, {"DELETE", "/health"}, {"GET", "/dataspaces/x/anchors"}, {"POST", `/health/`}, {"GET", "/a%22b"},
	} {
		r := do(t, c, u.method, s.URL()+u.path, "")
		var body struct{ Error, Method, Path string }
		if err := json.Unmarshal([]byte(r.body), &body); err != nil || r.code != 404 || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %q %v", u.method, u.path, r.code, r.body, err)
			continue
		}
		if p, _ := url.PathUnescape(u.path); body.Method != u.method || body.Path != p || body.Error == "" {
			t.Errorf("%s %s: 404 body %+v", u.method, u.path, body)
		}
	}
	if got := s.Unmatched(); got != 5 {
		t.Errorf("Unmatched() = %d, want 5", got)
	}
	st := s.Stats()
	wantStats := []RouteStats{
		{Name: "create anchor", Method: "POST", Path: "/dataspaces/{dataspace}/anchors", Requests: 2},
		{Name: "GET /files/{dir}/{rest...}", Method: "GET", Path: "/files/{dir}/{rest...}", Requests: 2},
		{Name: "GET /health", Method: "GET", Path: "/health", Requests: 2},
		{Name: "HEAD /health/{$}", Method: "HEAD", Path: "/health/{$}", Requests: 0},
	}
	if !slices.Equal(st, wantStats) {
		t.Errorf("Stats() =\n %+v\nwant\n %+v", st, wantStats)
	}
}

// N requests in parallel give exactly N on the route, and ${count} numbers
// them 1..N with no gap or repeat.
func TestCountsUnderConcurrency(t *testing.T) {
	s := start(t, `
routes:
  - {path: '/items/{id}', body: '${count}'}
  - {path: /other, method: PUT}
`)
	c := client(t)
	const workers, perWorker = 8, 40
	var mu sync.Mutex
	var counts []int
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				r := do(t, c, "GET", fmt.Sprintf("%s/items/%d-%d", s.URL(), w, i), "")
				n, err := strconv.Atoi(r.body)
				if r.code != 200 || err != nil {
					t.Errorf("%d %q", r.code, r.body)
					return
				}
				mu.Lock()
				counts = append(counts, n)
				mu.Unlock()
			}
		}()
	}
	for range 7 {
		do(t, c, "PUT", s.URL()+"/other", "x")
	}
	for range 3 {
		do(t, c, "GET", s.URL()+"/other", "") // wrong method: unmatched
	}
	wg.Wait()
	const n = workers * perWorker
	slices.Sort(counts)
	for i, got := range counts {
		if got != i+1 {
			t.Fatalf("counts sorted[%d] = %d: not a permutation of 1..%d", i, got, n)
		}
	}
	st := s.Stats()
	if len(counts) != n || st[0].Requests != n || st[1].Requests != 7 || s.Unmatched() != 3 {
		t.Errorf("got %d bodies, stats %+v, unmatched %d; want %d, %d, 7, 3", len(counts), st, s.Unmatched(), n, n)
	}
}

func TestFixedLatencyOnTheWire(t *testing.T) {
	s := start(t, "routes: [{path: /slow, latency: {fixed: 20ms}}, {path: /fast}]")
	c := client(t)
	do(t, c, "GET", s.URL()+"/fast", "") // open the connection: time only the request
	const slack = 250 * time.Millisecond // a loaded 2-core machine
	for range 5 {
		t0 := time.Now()
		r := do(t, c, "GET", s.URL()+"/slow", "")
		d := time.Since(t0)
		if r.code != 200 || d < 20*time.Millisecond || d >= 20*time.Millisecond+slack {
			t.Errorf("%d after %v, want 200 after [20ms, %v)", r.code, d, 20*time.Millisecond+slack)
		}
	}
}

func TestInjectedErrors(t *testing.T) {
	s := start(t, `
routes:
  - path: /e
    body: fine
    latency: {uniform: {min: 0s, max: 100us}}
    errors: {ratio: 0.2, status: 503, body: down}
`, WithSeed(42))
	c := client(t)
	const n, p, workers = 2000, 0.2, 4
	var mu sync.Mutex
	seen, ok := 0, 0
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n / workers {
				r := do(t, c, "GET", s.URL()+"/e", "")
				mu.Lock()
				switch {
				case r.code == 503 && r.body == "down":
					seen++
				case r.code == 200 && r.body == "fine":
					ok++
				default:
					t.Errorf("unexpected %d %q", r.code, r.body)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	st := s.Stats()[0]
	if st.Requests != n || seen+ok != n || int64(seen) != st.InjectedErrors {
		t.Errorf("client saw %d failures and %d successes; sim counted %d injected of %d", seen, ok, st.InjectedErrors, st.Requests)
	}
	// Binomial(2000, 0.2): mean 400, sd 17.9; 5 sigma is ±89.
	mean, sd := n*p, math.Sqrt(n*p*(1-p))
	if math.Abs(float64(seen)-mean) > 5*sd {
		t.Errorf("%d failures in %d requests: outside %.0f ± %.0f", seen, n, mean, 5*sd)
	}
	t.Logf("%d injected failures in %d requests (expected %.0f ± %.1f)", seen, n, mean, sd)
}

func TestInjectedErrorsExtremes(t *testing.T) {
	s := start(t, `
routes:
  - {path: /never, errors: {ratio: 0}}
  - {path: /always, errors: {ratio: 1}}
`)
	c := client(t)
	for range 50 {
		if r := do(t, c, "GET", s.URL()+"/never", ""); r.code != 200 {
			t.Fatalf("ratio 0 failed: %d", r.code)
		}
		if r := do(t, c, "GET", s.URL()+"/always", ""); r.code != 500 || r.body != "" {
			t.Fatalf("ratio 1 gave %d %q", r.code, r.body)
		}
	}
	if st := s.Stats(); st[0].InjectedErrors != 0 || st[1].InjectedErrors != 50 || st[1].Requests != 50 {
		t.Errorf("stats %+v", st)
	}
}

// A client that gives up during the latency frees the handler at once.
func TestCancellationEndsTheSleep(t *testing.T) {
	s := start(t, "routes: [{path: /stuck, latency: {fixed: 30s}}]")
	c := client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL()+"/stuck", nil)
	if _, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a client timeout, got %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Stats()[0].Canceled != 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	t0 := time.Now()
	if err := s.Close(); err != nil {
		t.Error(err)
	}
	if st := s.Stats()[0]; st.Canceled != 1 || st.Requests != 1 || time.Since(t0) > 2*time.Second {
		t.Errorf("stats %+v; Close took %v", st, time.Since(t0))
	}
}

// Close lets a request in progress finish, then refuses new connections.
func TestCloseIsGraceful(t *testing.T) {
	s := start(t, "routes: [{path: /slow, latency: {fixed: 300ms}, body: done}]")
	c := client(t)
	got := make(chan response, 1)
	go func() { got <- do(t, c, "GET", s.URL()+"/slow", "") }()
	for s.Stats()[0].Requests == 0 {
		time.Sleep(2 * time.Millisecond)
	}
	t0 := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waited := time.Since(t0)
	if r := <-got; r.code != 200 || r.body != "done" {
		t.Errorf("in-flight request got %d %q", r.code, r.body)
	}
	if waited < 100*time.Millisecond {
		t.Errorf("Close returned after %v, before the request finished", waited)
	}
	if _, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
		t.Error("still accepting after Close")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Start(); err == nil {
		t.Error("Start after Close succeeded")
	}
}

// When the grace period runs out, Close cuts what remains.
func TestCloseGraceExpires(t *testing.T) {
	s := start(t, "routes: [{path: /stuck, latency: {fixed: 30s}}]", WithGrace(50*time.Millisecond))
	c := client(t)
	failed := make(chan error, 1)
	go func() {
		resp, err := c.Get(s.URL() + "/stuck")
		if err == nil {
			resp.Body.Close()
		}
		failed <- err
	}()
	for s.Stats()[0].Requests == 0 {
		time.Sleep(2 * time.Millisecond)
	}
	t0 := time.Now()
	err := s.Close()
	if err == nil || !strings.Contains(err.Error(), "deadline exceeded") || time.Since(t0) > 2*time.Second {
		t.Errorf("Close: %v after %v", err, time.Since(t0))
	}
	select {
	case err := <-failed:
		if err == nil {
			t.Error("the cut request succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Error("the cut request is still waiting")
	}
}

func TestStartAddrAndLog(t *testing.T) {
	var log bytes.Buffer
	cfg, err := Parse([]byte(`
routes:
  - name: health
    path: /health
  - method: POST
    path: /things/{id}
    status: 201
    latency: {lognormal: {p50: 2ms, p99: 12ms}}
    errors: {ratio: 0.01, status: 503}
`), "stubs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, WithLog(&log))
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr() != "127.0.0.1:0" || s.Close() != nil {
		t.Errorf("before Start: Addr %q", s.Addr())
	}
	s, _ = New(cfg, WithLog(&log))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	host, port, _ := net.SplitHostPort(s.Addr())
	if host != "127.0.0.1" || port == "0" || s.URL() != "http://"+s.Addr() {
		t.Errorf("Addr %q URL %q", s.Addr(), s.URL())
	}
	if err := s.Start(); err == nil || !strings.Contains(err.Error(), "already started") {
		t.Errorf("second Start: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	want := []string{
		"sim: serving 2 routes on " + s.URL(),
		"sim: GET /health 200 latency none (health)",
		"sim: POST /things/{id} 201 latency lognormal p50=2ms p99=12ms errors 1% -> 503 (POST /things/{id})",
	}
	for i := range lines {
		lines[i] = strings.Join(strings.Fields(lines[i]), " ") // ignore the column padding
	}
	if !slices.Equal(lines, want) {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	// The same port again: Start reports the listen error.
	cfg.Listen = s.Addr()
	busy, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := busy.Start(); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("busy port: %v", err)
	}
}

func TestRequestBodyLimit(t *testing.T) {
	s := start(t, "routes: [{method: POST, path: /echo, body: '${body}'}]")
	c := client(t)
	if r := do(t, c, "POST", s.URL()+"/echo", strings.Repeat("a", MaxRequestBody)); r.code != 200 || len(r.body) != MaxRequestBody {
		t.Errorf("1 MiB body: %d, %d bytes", r.code, len(r.body))
	}
	if r := do(t, c, "POST", s.URL()+"/echo", strings.Repeat("a", MaxRequestBody+1)); r.code != 413 {
		t.Errorf("1 MiB + 1 body: %d", r.code)
	}
}

// A degrading route answers with its latency first and its degraded one
// once the server has served for the given time.
func TestDegrade(t *testing.T) {
	s := start(t, "listen: 127.0.0.1:0\nroutes:\n  - path: /x\n    latency: {fixed: 1ms}\n    degrade: {after: 300ms, latency: {fixed: 200ms}}\n")
	c := client(t)
	timed := func() time.Duration {
		t0 := time.Now()
		if r := do(t, c, "GET", s.URL()+"/x", ""); r.code != 200 {
			t.Fatalf("status %d", r.code)
		}
		return time.Since(t0)
	}
	// The first request also connects: a loaded machine may take tens of
	// milliseconds over it, never 150.
	if d := timed(); d >= 150*time.Millisecond {
		t.Errorf("before: %v, want about 1 ms", d)
	}
	time.Sleep(350 * time.Millisecond)
	if d := timed(); d < 200*time.Millisecond {
		t.Errorf("after: %v, want at least 200 ms", d)
	}
	for _, bad := range []string{"degrade: {after: 0s, latency: {fixed: 1ms}}", "degrade: {after: 1s}"} {
		if _, err := Parse([]byte("routes:\n  - path: /x\n    "+bad+"\n"), "stubs.yaml"); err == nil {
			if cfg, _ := Parse([]byte("routes:\n  - path: /x\n    "+bad+"\n"), "stubs.yaml"); cfg != nil {
				if _, err := New(cfg); err == nil {
					t.Errorf("%s: no error", bad)
				}
			}
		}
	}
}

// A route that degrades over a while moves its latency in a straight line
// from its own to the degraded one: halfway through, halfway between.
func TestDegradeOver(t *testing.T) {
	cfg, err := Parse([]byte("routes:\n  - path: /x\n    latency: {fixed: 1ms}\n    degrade: {after: 0s, over: 400ms, latency: {fixed: 201ms}}\n"), "stubs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := compileRoute(cfg.Routes[0])
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := rt.draw(1); d != time.Millisecond {
		t.Errorf("before the server starts: %v, want 1ms", d)
	}
	// The server started 200 ms ago: halfway.
	rt.degradeAt.Store(time.Now().Add(-200 * time.Millisecond).UnixNano())
	if d, _ := rt.draw(2); d < 100*time.Millisecond || d > 140*time.Millisecond {
		t.Errorf("halfway: %v, want about 101ms", d)
	}
	rt.degradeAt.Store(time.Now().Add(-time.Second).UnixNano())
	if d, _ := rt.draw(3); d != 201*time.Millisecond {
		t.Errorf("after: %v, want 201ms", d)
	}
}

// A stalling route holds a request that arrives while it is frozen until
// the freeze ends, and answers at once outside it; the server's own clock
// decides, so the test reads it rather than guessing the phase.
func TestStall(t *testing.T) {
	s := start(t, "listen: 127.0.0.1:0\nroutes:\n  - path: /x\n    stall: {every: 600ms, for: 300ms}\n")
	c := client(t)
	var held, quick int
	deadline := time.Now().Add(10 * time.Second)
	for (held < 2 || quick < 2) && time.Now().Before(deadline) {
		t0 := time.Now()
		if r := do(t, c, "GET", s.URL()+"/x", ""); r.code != 200 {
			t.Fatalf("status %d", r.code)
		}
		switch d := time.Since(t0); {
		case d > 2*time.Second:
			t.Fatalf("a request took %v: a freeze lasts 300 ms", d)
		case d > 150*time.Millisecond: // held for most of a freeze
			held++
		default:
			quick++
		}
	}
	if held < 2 || quick < 2 {
		t.Errorf("%d requests held by the freeze, %d answered at once: want both", held, quick)
	}
	for _, bad := range []string{"stall: {every: 1s, for: 1s}", "stall: {every: 1s}", "stall: {for: 1s}"} {
		cfg, err := Parse([]byte("routes:\n  - path: /x\n    "+bad+"\n"), "stubs.yaml")
		if err == nil {
			_, err = New(cfg)
		}
		if err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// A degradation with for is a blip: the degraded latency from after to
// after + for, the route's own before and after it.
func TestDegradeFor(t *testing.T) {
	cfg, err := Parse([]byte("routes:\n  - path: /x\n    latency: {fixed: 1ms}\n    degrade: {after: 1s, for: 2s, latency: {fixed: 10ms}}\n"), "stubs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := compileRoute(cfg.Routes[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		since time.Duration // the degradation began this long ago
		want  time.Duration
	}{{-500 * time.Millisecond, time.Millisecond}, {time.Second, 10 * time.Millisecond}, {2500 * time.Millisecond, time.Millisecond}} {
		rt.degradeAt.Store(time.Now().Add(-c.since).UnixNano())
		if d, _ := rt.draw(1); d != c.want {
			t.Errorf("%v into the degradation: %v, want %v", c.since, d, c.want)
		}
	}
	for _, bad := range []string{"degrade: {after: 1s, over: 2s, for: 1s, latency: {fixed: 1ms}}", "degrade: {after: 1s, for: -1s, latency: {fixed: 1ms}}"} {
		if _, err := Parse([]byte("routes:\n  - path: /x\n    "+bad+"\n"), "stubs.yaml"); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// errors: {every: 3} fails the 3rd, 6th, 9th ... request, and only within
// its window of after and for from the server's start.
func TestErrorsEveryWindow(t *testing.T) {
	cfg, err := Parse([]byte("routes:\n  - path: /x\n    errors: {every: 3, status: 503, after: 1s, for: 2s}\n"), "stubs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := compileRoute(cfg.Routes[0])
	if err != nil {
		t.Fatal(err)
	}
	failed := func(from time.Duration) []int64 { // the server started from ago
		rt.errFrom.Store(time.Now().Add(time.Second - from).UnixNano())
		var out []int64
		for n := int64(1); n <= 9; n++ {
			if _, fail := rt.draw(n); fail {
				out = append(out, n)
			}
		}
		return out
	}
	if got := failed(500 * time.Millisecond); len(got) != 0 {
		t.Errorf("before the window: %v failed", got)
	}
	if got := failed(2 * time.Second); !slices.Equal(got, []int64{3, 6, 9}) {
		t.Errorf("in the window: %v failed, want [3 6 9]", got)
	}
	if got := failed(3500 * time.Millisecond); len(got) != 0 {
		t.Errorf("after the window: %v failed", got)
	}
	// Served: every third request answers 503 from the start, no window.
	s := start(t, "listen: 127.0.0.1:0\nroutes:\n  - path: /x\n    errors: {every: 3, status: 503}\n")
	c := client(t)
	var codes []int
	for range 6 {
		codes = append(codes, do(t, c, "GET", s.URL()+"/x", "").code)
	}
	if want := []int{200, 200, 503, 200, 200, 503}; !slices.Equal(codes, want) {
		t.Errorf("statuses %v, want %v", codes, want)
	}
	for _, bad := range []string{"errors: {every: 3, ratio: 0.1}", "errors: {every: -1}", "errors: {every: 3, after: -1s}"} {
		if _, err := Parse([]byte("routes:\n  - path: /x\n    "+bad+"\n"), "stubs.yaml"); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
