package engine

import (
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/perflab/perflab/internal/digesttest"
	"github.com/perflab/perflab/metrics"
)

// count is an operation's count in a phase, 0 when it has none.
func count(ph *metrics.Phase, name string) int64 {
	for i, o := range ph.Ops {
		if o.Name == name {
			return ph.Totals[i].Unpacked().Count
		}
	}
	return 0
}

// A step follows its redirects (another origin, http to https, a method
// and body kept by 307, dropped by 301), and the server counts exactly the
// step's requests and its hops: "chain (redirect)" counts each response
// followed, "chain" each exchange, timed from its first request to its
// final response. A loop past the step's limit is its failure (http_3xx),
// unless its check accepts the 302; a redirect without a Location fails
// it. A setup step's hops are counted in setup; a step that followed none
// has no hop operation.
func TestRedirectsCountAsTheServer(t *testing.T) {
	var a, b, c counter
	var mu sync.Mutex
	var bodies []string
	secure := httptest.NewTLSServer(c.handler(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/secure" {
			http.Redirect(w, r, "/done", http.StatusFound)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer secure.Close()
	other := httptest.NewServer(b.handler(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.Method+" "+string(body))
		mu.Unlock()
		http.Redirect(w, r, secure.URL+"/secure", http.StatusMovedPermanently)
	}))
	defer other.Close()
	srv := httptest.NewServer(a.handler(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/start":
			http.Redirect(w, r, other.URL+"/keep", http.StatusTemporaryRedirect)
		case "/loop":
			http.Redirect(w, r, "loop", http.StatusFound)
		case "/noloc":
			w.WriteHeader(http.StatusFound)
		case "/setup":
			http.Redirect(w, r, "/plain", http.StatusSeeOther)
		}
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
http: {insecure_skip_verify: true}
setup:
  - {name: prepare, method: POST, url: /setup}
scenarios:
  - name: s
    vus: 2
    iterations: 3
    flow:
      - {name: chain, method: POST, url: /start, body: "x=${vu}", check: {body_contains: "ok"}}
      - {name: loop, url: /loop, redirects: 2}
      - {name: accepted, url: /loop, redirects: 1, check: {status: [302]}}
      - {name: noloc, url: /noloc}
      - {name: plain, url: /plain}
`, nil)
	r := run(t, p)
	st := r.Stages[0]
	const n = 6
	want := map[string]int64{"chain": n, "chain (redirect)": 3 * n, "loop": n, "loop (redirect)": 2 * n, "accepted": n, "accepted (redirect)": n,
		"noloc": n, "plain": n}
	for name, w := range want {
		if got := count(st, name); got != w {
			t.Errorf("%s: %d, want %d", name, got, w)
		}
	}
	for name, kind := range map[string]metrics.ErrKind{"loop": metrics.HTTP3xx, "noloc": metrics.HTTP3xx, "chain": metrics.OK, "accepted": metrics.OK} {
		s := op(t, st, name)
		if kind == metrics.OK && s.ErrorCount() != 0 || kind != metrics.OK && s.Errors[kind] != n {
			t.Errorf("%s: errors %v, want all %s", name, s.Errors, kind)
		}
	}
	for _, o := range st.Ops {
		if o.Name == "plain (redirect)" || o.Name == "noloc (redirect)" {
			t.Errorf("%s: an operation without a count", o.Name)
		}
	}
	a.mu.Lock()
	b.mu.Lock()
	c.mu.Lock()
	server := map[string]int{"POST /start": a.counts["POST /start"], "GET /loop": a.counts["GET /loop"], "GET /noloc": a.counts["GET /noloc"],
		"GET /plain": a.counts["GET /plain"], "POST /keep": b.counts["POST /keep"], "GET /secure": c.counts["GET /secure"], "GET /done": c.counts["GET /done"]}
	a.mu.Unlock()
	b.mu.Unlock()
	c.mu.Unlock()
	// The server's count of each path is perflab's: chain's 4 requests, loop's
	// 3, accepted's 2, noloc's and plain's 1 (and setup's GET /plain).
	wantServer := map[string]int{"POST /start": n, "POST /keep": n, "GET /secure": n, "GET /done": n,
		"GET /loop":  int(count(st, "loop") + count(st, "loop (redirect)") + count(st, "accepted") + count(st, "accepted (redirect)")),
		"GET /noloc": n, "GET /plain": n + 1}
	for k, v := range wantServer {
		if server[k] != v {
			t.Errorf("the server counted %s %d times, perflab %d", k, server[k], v)
		}
	}
	if got := int(count(st, "chain") + count(st, "chain (redirect)")); got != server["POST /start"]+server["POST /keep"]+server["GET /secure"]+server["GET /done"] {
		t.Errorf("chain and its hops: %d, the server %v", got, server)
	}
	mu.Lock()
	slices.Sort(bodies)
	got := strings.Join(slices.Compact(bodies), ",")
	mu.Unlock()
	if got != "POST x=1,POST x=2" { // 307 kept the method and the body
		t.Errorf("the other origin got %s", got)
	}
	if s := r.Setup[0]; count(s, "prepare") != 1 || count(s, "prepare (redirect)") != 1 {
		t.Errorf("setup: %v", s.Ops)
	}
}

// Each VU keeps its own cookies (a cookie set on a redirect's response
// goes with the redirect's request): with http.cookies keep, a VU sends
// its cookie from its second iteration on; per_iteration empties its jar as
// each iteration starts; off keeps none. Every cookie the server sees is
// the VU's own.
func TestCookiesPerVU(t *testing.T) {
	for _, mode := range []string{"keep", "per_iteration", "off"} {
		t.Run(mode, func(t *testing.T) {
			var c counter
			var mu sync.Mutex
			seen := map[string]int{} // path: requests that carried their VU's cookie
			srv := httptest.NewServer(c.handler(func(w http.ResponseWriter, r *http.Request) {
				vu := r.URL.Query().Get("vu")
				switch r.URL.Path {
				case "/login":
					http.SetCookie(w, &http.Cookie{Name: "sid", Value: "vu" + vu, Path: "/"})
					http.Redirect(w, r, "/home?vu="+vu, http.StatusFound)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if ck, err := r.Cookie("sid"); err == nil {
					if ck.Value != "vu"+vu {
						t.Errorf("VU %s sent the cookie %s", vu, ck.Value)
					}
					seen[r.URL.Path]++
				}
			}))
			defer srv.Close()
			p := load(t, srv.URL, `target: TARGET
http: {cookies: `+mode+`}
scenarios:
  - name: s
    vus: 2
    iterations: 3
    flow:
      - {name: check, url: "/check?vu=${vu}"}
      - {name: login, url: "/login?vu=${vu}"}
`, nil)
			st := run(t, p).Stages[0]
			want := map[string]map[string]int{
				"keep":          {"/check": 4, "/home": 6},
				"per_iteration": {"/home": 6},
				"off":           {},
			}[mode]
			mu.Lock()
			defer mu.Unlock()
			if !maps.Equal(seen, want) {
				t.Errorf("requests with their VU's cookie: %v, want %v", seen, want)
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.counts["GET /login"] != 6 || c.counts["GET /home"] != 6 || count(st, "login") != 6 || count(st, "login (redirect)") != 6 {
				t.Errorf("the server counted %v; perflab login %d, its redirects %d", c.counts, count(st, "login"), count(st, "login (redirect)"))
			}
		})
	}
}

// Basic credentials go with every request (the server counts no 401);
// digest answers the server's challenge and reuses it until the server
// says its nonce is stale: the server's 401s are the "(auth)" operation's
// count, the requests it let through the step's. The plan's auth applies
// to every step that says none of its own; auth: none sends none.
func TestAuthCountsAsTheServer(t *testing.T) {
	ds := &digesttest.Server{Realm: "perf", User: "Mufasa", Password: "Circle of Life", Algorithm: "SHA-256", Uses: 2}
	var c counter
	guarded := ds.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "in") }))
	srv := httptest.NewServer(c.handler(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/digest":
			guarded.ServeHTTP(w, r)
		case "/basic":
			if u, p, ok := r.BasicAuth(); !ok || u != "ann" || p != "pw-"+r.URL.Query().Get("vu") {
				w.WriteHeader(http.StatusUnauthorized)
			}
		case "/open":
			if r.Header.Get("Authorization") != "" {
				w.WriteHeader(http.StatusBadRequest)
			}
		}
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
vars: {user: Mufasa}
http:
  auth: {type: digest, user: "${user}", password: Circle of Life}
scenarios:
  - name: s
    vus: 2
    iterations: 3
    flow:
      - {name: digest, method: POST, url: /digest, json: {a: "${vu}"}}
      - {name: basic, url: "/basic?vu=${vu}", auth: {type: basic, user: ann, password: "pw-${vu}"}}
      - {name: open, url: /open, auth: none}
`, nil)
	st := run(t, p).Stages[0]
	for _, name := range []string{"digest", "basic", "open"} {
		if s := op(t, st, name); s.Count != 6 || s.ErrorCount() != 0 {
			t.Errorf("%s: %d, errors %v", name, s.Count, s.Errors)
		}
	}
	// Each VU: challenged, then its nonce serves 2 requests, then stale.
	n := ds.Counts()
	if n.Challenges != 4 || n.Stale != 2 || n.Accepted != 6 || count(st, "digest (auth)") != int64(n.Challenges) {
		t.Errorf("the server sent %d challenges (%d stale), let %d through; perflab: digest (auth) %d", n.Challenges, n.Stale, n.Accepted, count(st, "digest (auth)"))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts["POST /digest"] != int(count(st, "digest")+count(st, "digest (auth)")) || c.counts["GET /basic"] != 6 {
		t.Errorf("the server counted %v", c.counts)
	}
	for _, o := range st.Ops {
		if strings.HasPrefix(o.Name, "basic (") || strings.HasPrefix(o.Name, "open (") {
			t.Errorf("%s: an operation without a count", o.Name)
		}
	}
}
