package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigErrors(t *testing.T) {
	cases := []struct{ yml, want string }{
		// Decoding, with the line of the offending field.
		{"routes:\n  - path: /a\n    latncy: {fixed: 1ms}\n", "line 3: field latncy not found in type sim.Route"},
		{"lsten: 127.0.0.1:0\nroutes: [{path: /a}]", "line 1: field lsten not found"},
		{"routes:\n  - path: /a\n    latency: {fixed: 1ms, jitter: 1ms}\n", "line 3: field jitter not found"},
		{"routes:\n  - path: /a\n    latency:\n      fixed: soon\n", `line 4: "soon" is not a duration`},
		{"routes:\n  - path: /a\n    latency: {fixed: -1ms}\n", "line 3: duration -1ms is negative"},
		{"routes: {a: 1}", "cannot unmarshal"},
		{"routes: [{path: /a}\n", "line"},

		// Latency.
		{"routes:\n  - path: /a\n  - path: /b\n    latency: {fixed: 0s}\n", "line 3: route \"GET /b\": latency: set exactly one of"},
		{"routes: [{path: /a, latency: {}}]", "set exactly one of"},
		{"routes: [{path: /a, latency: {fixed: 1ms, uniform: {min: 1ms, max: 2ms}}}]", "set exactly one of"},
		{"routes: [{path: /a, latency: {uniform: {min: 3ms, max: 2ms}}}]", "uniform needs 0 <= min < max"},
		{"routes: [{path: /a, latency: {normal: {mean: 10ms}}}]", "normal needs a positive mean and stddev"},
		{"routes: [{path: /a, latency: {lognormal: {p50: 20ms, p99: 10ms}}}]", "lognormal needs 0 < p50 < p99, got p50 20ms, p99 10ms"},
		{"routes: [{path: /a, latency: {lognormal: {p50: 20ms, p99: 20ms}}}]", "lognormal needs 0 < p50 < p99"},
		{"routes: [{path: /a, latency: {lognormal: {p99: 20ms}}}]", "lognormal needs 0 < p50 < p99"},

		// Listen.
		{"listen: 10.0.0.1:80\nroutes: [{path: /a}]", `line 1: listen "10.0.0.1:80": the simulator serves on loopback only`},
		{"listen: 0.0.0.0:8080\nroutes: [{path: /a}]", "loopback only"},
		{"listen: ':8080'\nroutes: [{path: /a}]", "loopback only"},
		{"listen: example.com:80\nroutes: [{path: /a}]", "loopback only"},
		{"listen: '[::]:80'\nroutes: [{path: /a}]", "loopback only"},
		{"listen: 127.0.0.1\nroutes: [{path: /a}]", "want host:port"},
		{"listen: 127.0.0.1:99999\nroutes: [{path: /a}]", `port "99999" is not a number`},
		{"listen: 127.0.0.1:http\nroutes: [{path: /a}]", `port "http" is not a number`},

		// Routes and patterns.
		{"routes:\n  - path: /a\n  - path: /b\n  - {path: /a, method: get}\n", `line 4: route "GET /a": duplicate route: GET /a is also route 1 ("GET /a")`},
		{"routes:\n  - path: /a/{x}\n  - name: other\n    path: /a/{y}\n", `line 3: route "other" (GET /a/{y}) conflicts with route "GET /a/{x}": GET /a/{y} matches the same requests as GET /a/{x}`},
		{"routes: [{path: '/a/{x}/b'}, {path: '/a/c/{y}'}]", "neither is more specific"},
		{"routes: [{path: '/a/{'}]", `route "GET /a/{": path "/a/{": parsing "GET /a/{"`},
		{"routes: [{path: '/{x}/{x}'}]", "duplicate wildcard"},
		{"routes: [{path: /a, method: 'G@T'}]", `method "G@T" is not an HTTP method`},
		{"routes: [{path: a}]", `path "a" must start with /`},
		{"routes: [{path: ''}]", "must start with /"},
		{"routes: []", "routes: none defined"},
		{"", "routes: none defined"},
		{"listen: 127.0.0.1:0\n", "routes: none defined"},
		{"routes:\n  - path: /a\n  -\n", "line 3: route 2 is empty"},

		// Status, headers, errors.
		{"routes: [{path: /a, status: 99}]", "status 99 is not an HTTP status from 200 to 599"},
		{"routes: [{path: /a, status: 101}]", "status 101 is not an HTTP status"},
		{"routes: [{path: /a, status: 600}]", "status 600 is not"},
		{"routes: [{path: /a, status: 204, body: x}]", "status 204 cannot have a body"},
		{"routes: [{path: /a, headers: {'Bad Name': x}}]", `header "Bad Name" is not a valid header name`},
		{"routes: [{path: /a, headers: {X-A: \"a\\r\\nX-B: b\"}}]", "has control characters"},
		{"routes: [{path: /a, headers: {content-length: '3'}}]", "header Content-Length is set by the simulator"},
		{"routes: [{path: /a, errors: {ratio: 2}}]", "errors: ratio 2 is not between 0 and 1"},
		{"routes: [{path: /a, errors: {ratio: -0.1}}]", "errors: ratio -0.1 is not between 0 and 1"},
		{"routes: [{path: /a, errors: {ratio: .nan}}]", "errors: ratio NaN is not between 0 and 1"},
		{"routes: [{path: /a, errors: {ratio: 0.1, status: 42}}]", "errors: status 42 is not an HTTP status"},
		{"routes: [{path: /a, errors: {ratio: 0.1, status: 304, body: x}}]", "errors: status 304 cannot have a body"},

		// Body templates.
		{"routes: [{path: '/a/{id}', body: '${path.name}'}]", `body: undefined variable ${path.name}: path "/a/{id}" has no {name} wildcard`},
		{"routes: [{path: '/a/{id}', body: '${path.name:-x}'}]", "undefined variable ${path.name}"},
		{"routes: [{path: '/a/{$}', body: '${path.$}'}]", `invalid name "path.$"`},
		{"routes: [{path: /a, body: '${what}'}]", "undefined variable ${what} (use path.NAME, query.NAME"},
		{"routes: [{path: /a, body: '${qeury.x:-1}'}]", "undefined variable ${qeury.x}"},
		{"routes: [{path: /a, body: 'x ${query.x'}]", "body: offset 2: unterminated"},
		{"routes: [{path: /a, body: '${}'}]", "empty placeholder"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.yml), "stubs.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "stubs.yaml: ") {
			t.Errorf("%s\n  got  %v\n  want stubs.yaml: ...%s...", c.yml, err, c.want)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := Parse([]byte(`
routes:
  - path: /a
  - name: make
    method: post
    path: /b/{id}
    status: 201
    errors: {ratio: 0.5}
`), "stubs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg.Routes[0], cfg.Routes[1]
	if cfg.Listen != "127.0.0.1:0" || a.Name != "GET /a" || a.Method != "GET" || a.Status != 200 || a.Latency != nil || a.Errors != nil {
		t.Errorf("defaults: listen %q, route %+v", cfg.Listen, *a)
	}
	if b.Name != "make" || b.Method != "POST" || b.Status != 201 || b.Errors.Status != 500 || b.Errors.Ratio != 0.5 {
		t.Errorf("route %+v, errors %+v", *b, *b.Errors)
	}
	// Validation is idempotent: a parsed config validates again unchanged.
	if err := cfg.Validate(); err != nil || cfg.Routes[1].Name != "make" {
		t.Errorf("revalidate: %v", err)
	}
	for _, listen := range []string{"127.0.0.1:8080", "127.8.9.10:0", "localhost:0", "[::1]:0"} {
		if err := CheckLoopback(listen); err != nil {
			t.Errorf("%s: %v", listen, err)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("listen: localhost:0\nroutes:\n  - path: /health\n    body: UP\n"), 0o644)
	os.WriteFile(bad, []byte("routes:\n  - path: /a\n    stauts: 200\n"), 0o644)

	cfg, err := Load(good)
	if err != nil || cfg.Listen != "localhost:0" || len(cfg.Routes) != 1 || cfg.Routes[0].Body != "UP" {
		t.Fatalf("good: %+v %v", cfg, err)
	}
	if _, err := Load(bad); err == nil || err.Error() != bad+": line 3: field stauts not found in type sim.Route" {
		t.Errorf("bad: %v", err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	if _, err := Load(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing: %v", err)
	}
}

// The demo's stubs, which `perflab demo` serves, are valid.
func TestLoadDemoStubs(t *testing.T) {
	cfg, err := Load("../examples/demo/stubs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(cfg); err != nil {
		t.Fatal(err)
	}
}

// New validates a config built in code, and a parsed one changed since.
func TestNewValidates(t *testing.T) {
	if _, err := New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
	if _, err := New(&Config{Routes: []*Route{{Path: "/a", Status: 42}}}); err == nil || !strings.Contains(err.Error(), "status 42") {
		t.Errorf("bad status: %v", err)
	}
	cfg, err := Parse([]byte("routes: [{path: /a}]"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listen = "192.168.1.1:80" // as `perflab sim --listen` might
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "loopback only") {
		t.Errorf("non-loopback listen: %v", err)
	}
	cfg.Listen = ""
	cfg.Routes = append(cfg.Routes, &Route{Path: "/{x...}"}, &Route{Method: "GET", Path: "/{y...}"})
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "conflicts with") {
		t.Errorf("conflict: %v", err)
	}
}
