package engine

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"

	"github.com/perflab/perflab/metrics"
)

// A plan of http.version 2 runs on the event loop (event_loop: true is
// accepted with it): each step's count, errors and extracted values as
// the h2c server saw them, over HTTP/2 only.
func TestEventLoopHTTP2(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("http.event_loop needs Linux")
	}
	var mu sync.Mutex
	counts := map[string]int{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		counts[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/login":
			io.WriteString(w, `{"token": "t-`+r.URL.Query().Get("vu")+`"}`)
		case "/api":
			if r.URL.Query().Get("tok") != "t-"+r.URL.Query().Get("vu") {
				w.WriteHeader(403)
			}
			io.WriteString(w, "ok")
		default:
			w.WriteHeader(500)
		}
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true) // h2c only: an HTTP/1.1 request fails
	srv.Start()
	defer srv.Close()
	r := run(t, load(t, srv.URL, `target: TARGET
http: {version: "2", event_loop: true}
scenarios:
  - name: s
    vus: 4
    iterations: 10
    flow:
      - {name: login, url: "/login?vu=${vu}", extract: {tok: $.token}}
      - {name: api, url: "/api?vu=${vu}&tok=${tok}", check: {body_contains: ok}}
      - {name: bad, url: /bad}
`, nil))
	if l := r.Stages[0].Load[0]; l.Engine != EngineLoop {
		t.Errorf("ran on %s (%s), want the event loop", l.Engine, l.EngineWhy)
	}
	for _, c := range []struct {
		name string
		errs map[metrics.ErrKind]int64
	}{{"login", nil}, {"api", nil}, {"bad", map[metrics.ErrKind]int64{metrics.HTTP5xx: 40}}} {
		s := op(t, r.Stages[0], c.name)
		if s.Count != 40 || s.ErrorCount() != int64(len(c.errs))*40 {
			t.Errorf("%s: count %d, errors %v; want 40, %v", c.name, s.Count, s.Errors, c.errs)
		}
		for k, n := range c.errs {
			if s.Errors[k] != n {
				t.Errorf("%s: %d %s, want %d", c.name, s.Errors[k], k, n)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{"/login", "/api", "/bad"} {
		if counts[p] != 40 {
			t.Errorf("server saw %s %d times, want 40", p, counts[p])
		}
	}
}
