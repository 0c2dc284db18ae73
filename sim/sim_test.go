package sim

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

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

func get(t *testing.T, method, url, body string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("X-Trace", "tr-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestRoutesTemplatesAndCounts(t *testing.T) {
	s := start(t, `
routes:
  - name: create anchor
    method: POST
    path: /dataspaces/{ds}/anchors
    status: 201
    headers: {Content-Type: application/json}
    body: '{"ds":"${path.ds}","anchor":"${query.name}","trace":"${header.X-Trace}","n":${count},"echo":"${body}","m":"${method}"}'
  - path: /health
    body: UP
`)
	code, body, hdr := get(t, "POST", s.URL()+"/dataspaces/d1/anchors?name=a-1", "hi")
	if code != 201 || body != `{"ds":"d1","anchor":"a-1","trace":"tr-1","n":1,"echo":"hi","m":"POST"}` || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %s %v", code, body, hdr)
	}
	for i := 0; i < 9; i++ {
		get(t, "GET", s.URL()+"/health", "")
	}
	if code, _, _ := get(t, "GET", s.URL()+"/nope", ""); code != 404 {
		t.Errorf("unmatched: %d", code)
	}
	if code, _, _ := get(t, "GET", s.URL()+"/dataspaces/d1/anchors", ""); code != 405 && code != 404 {
		t.Errorf("wrong method: %d", code)
	}
	st := s.Stats()
	if st[0].Requests != 1 || st[1].Requests != 9 || st[1].Name != "GET /health" {
		t.Errorf("stats %+v", st)
	}
	if s.Unmatched() < 1 {
		t.Errorf("unmatched %d", s.Unmatched())
	}
}

func quantile(v []time.Duration, q float64) time.Duration {
	slices.Sort(v)
	return v[int(q*float64(len(v)-1))]
}

func TestLatencyDistributions(t *testing.T) {
	cfg, err := Parse([]byte(`
routes:
  - {path: /f, latency: {fixed: 20ms}}
  - {path: /u, latency: {uniform: {min: 10ms, max: 30ms}}}
  - {path: /n, latency: {normal: {mean: 50ms, stddev: 5ms}}}
  - {path: /l, latency: {lognormal: {p50: 20ms, p99: 120ms}}}
`), "x")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	sample := func(l *Latency) []time.Duration {
		v := make([]time.Duration, 20000)
		for i := range v {
			v[i] = l.Sample(r)
		}
		return v
	}
	within := func(name string, got, want time.Duration, tol float64) {
		if math.Abs(float64(got-want))/float64(want) > tol {
			t.Errorf("%s = %v, want %v within %.0f%%", name, got, want, tol*100)
		}
	}
	f := sample(cfg.Routes[0].Latency)
	if quantile(f, 0) != 20*time.Millisecond || quantile(f, 1) != 20*time.Millisecond {
		t.Error("fixed latency varies")
	}
	u := sample(cfg.Routes[1].Latency)
	if quantile(u, 0) < 10*time.Millisecond || quantile(u, 1) > 30*time.Millisecond {
		t.Errorf("uniform out of bounds: %v..%v", quantile(u, 0), quantile(u, 1))
	}
	within("uniform p50", quantile(u, 0.5), 20*time.Millisecond, 0.03)
	n := sample(cfg.Routes[2].Latency)
	within("normal p50", quantile(n, 0.5), 50*time.Millisecond, 0.01)
	within("normal p84", quantile(n, 0.8413), 55*time.Millisecond, 0.01)
	l := sample(cfg.Routes[3].Latency)
	within("lognormal p50", quantile(l, 0.5), 20*time.Millisecond, 0.03)
	within("lognormal p99", quantile(l, 0.99), 120*time.Millisecond, 0.06)
}

func TestFixedLatencyOnTheWire(t *testing.T) {
	s := start(t, "routes: [{path: /slow, latency: {fixed: 20ms}}]")
	for i := 0; i < 5; i++ {
		t0 := time.Now()
		get(t, "GET", s.URL()+"/slow", "")
		if d := time.Since(t0); d < 20*time.Millisecond || d > 200*time.Millisecond {
			t.Errorf("request took %v", d)
		}
	}
}

func TestInjectedErrors(t *testing.T) {
	s := start(t, "routes: [{path: /e, errors: {ratio: 0.2, status: 503, body: down}}]", WithSeed(42))
	const n = 2000
	seen := 0
	for i := 0; i < n; i++ {
		code, body, _ := get(t, "GET", s.URL()+"/e", "")
		if code == 503 {
			seen++
			if body != "down" {
				t.Fatalf("error body %q", body)
			}
		}
	}
	st := s.Stats()[0]
	if int64(seen) != st.InjectedErrors || st.Requests != n {
		t.Errorf("client saw %d errors, sim injected %d of %d", seen, st.InjectedErrors, st.Requests)
	}
	// Binomial(2000, 0.2): mean 400, sd 17.9; allow 5 sigma.
	if seen < 310 || seen > 490 {
		t.Errorf("%d errors in %d is not a 20%% ratio", seen, n)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct{ yml, want string }{
		{"routes: [{path: /a, latncy: {fixed: 1ms}}]", "field latncy not found"},
		{"routes: [{path: /a, latency: {fixed: soon}}]", "want a duration"},
		{"routes: [{path: /a, latency: {lognormal: {p50: 20ms, p99: 10ms}}}]", "0 < p50 < p99"},
		{"routes: [{path: /a, latency: {fixed: 1ms, uniform: {min: 1ms, max: 2ms}}}]", "one of fixed"},
		{"listen: 10.0.0.1:80\nroutes: [{path: /a}]", "loopback only"},
		{"listen: 0.0.0.0:80\nroutes: [{path: /a}]", "loopback only"},
		{"routes: [{path: /a}, {path: /a}]", "defined twice"},
		{"routes: [{path: /a, errors: {ratio: 2}}]", "not between 0 and 1"},
		{"routes: [{path: '/a/{id}', body: '${path.name}'}]", "path has no {name}"},
		{"routes: [{path: /a, body: '${what}'}]", "undefined ${what}"},
		{"routes: [{path: a}]", "must start with /"},
		{"routes: []", "none defined"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.yml), "stubs.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "stubs.yaml: ") {
			t.Errorf("%s\n  got %v, want %q", c.yml, err, c.want)
		}
	}
	// Conflicting patterns are an error, not a panic.
	cfg, err := Parse([]byte("routes: [{path: '/a/{x}'}, {path: '/a/{y}'}]"), "s")
	if err == nil {
		_, err = New(cfg)
	}
	if err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Errorf("conflicting routes: %v", err)
	}
}

func Example() {
	cfg, _ := Parse([]byte(`
routes:
  - path: /devices/{id}
    body: '{"device":"${path.id}"}'
`), "stubs.yaml")
	srv, _ := New(cfg)
	srv.Start()
	defer srv.Close()
	resp, _ := http.Get(srv.URL() + "/devices/C201-7-1A-1A1")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(b), srv.Stats()[0].Requests)
	// Output: 200 {"device":"C201-7-1A-1A1"} 1
}
