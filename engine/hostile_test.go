package engine

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
)

// A plan's body_limit, its escaped URL values and its timeouts against an
// endless body behave the same on both engines, from plan to wire.
func TestHostileServerOnEachEngine(t *testing.T) {
	var mu sync.Mutex
	var uris []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/p/"):
			mu.Lock()
			uris = append(uris, r.RequestURI) // the request-target as sent
			mu.Unlock()
		case r.URL.Path == "/big":
			io.WriteString(w, strings.Repeat("a", 2000)+"needle")
		case r.URL.Path == "/endless":
			b := []byte(strings.Repeat("x", 32<<10))
			for {
				if _, err := w.Write(b); err != nil {
					return
				}
			}
		}
	}))
	defer srv.Close()
	for _, loop := range []bool{false, true} {
		if loop && runtime.GOOS != "linux" {
			continue
		}
		t.Run(map[bool]string{false: EngineGoroutines, true: EngineLoop}[loop], func(t *testing.T) {
			forceEngine = &loop
			defer func() { forceEngine = nil }()
			mu.Lock()
			uris = nil
			mu.Unlock()
			p := load(t, srv.URL, `target: TARGET
http: {body_limit: 1KiB}
vars: {v: 'a b"c<d>%#?/é', r: "x%41/y"}
scenarios:
  - name: s
    vus: 2
    iterations: 2
    flow:
      - {name: url, url: "/p/${v}?q=${v}&raw=${raw:r}"}
      - {name: limited, url: /big, check: {body_contains: needle}}
      - {name: unchecked, url: /big}
      - {name: own limit, url: /big, body_limit: 1MiB, check: {body_contains: needle}}
      - {name: endless, url: /endless, timeout: 1s}
`, nil)
			start := time.Now()
			r := run(t, p)
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("the run took %v", d)
			}
			ph := r.Stages[0]
			want := map[string]metrics.ErrKind{"url": metrics.OK, "limited": metrics.CheckFailed, "unchecked": metrics.OK,
				"own limit": metrics.OK, "endless": metrics.Timeout}
			for name, kind := range want {
				s := op(t, ph, name)
				if s.Count != 4 || kind != metrics.OK && s.Errors[kind] != 4 || kind == metrics.OK && s.OK.N != 4 {
					t.Errorf("%s: count %d, ok %d, errors %v; want 4 of %v", name, s.Count, s.OK.N, s.Errors, kind)
				}
			}
			if s := op(t, ph, "unchecked"); s.Bytes != 4*2006 {
				t.Errorf("unchecked: %d bytes, want all of them counted: %d", s.Bytes, 4*2006)
			}
			// Generous: the loop used to read an endless body for up to
			// twice its timeout.
			if s := op(t, ph, "endless"); s.Failed.N > 0 && (s.Failed.Min < int64(time.Second) || s.Failed.Max > int64(4*time.Second)) {
				t.Errorf("endless: a 1 s timeout fired after %v to %v", time.Duration(s.Failed.Min), time.Duration(s.Failed.Max))
			}
			const wantURI = `/p/a%20b%22c%3Cd%3E%25%23%3F%2F%C3%A9?q=a+b%22c%3Cd%3E%25%23%3F%2F%C3%A9&raw=x%41/y`
			mu.Lock()
			defer mu.Unlock()
			if len(uris) != 4 {
				t.Fatalf("the server saw %d requests of step url, want 4", len(uris))
			}
			for _, u := range uris {
				if u != wantURI {
					t.Errorf("sent %s, want %s", u, wantURI)
				}
			}
		})
	}
}
