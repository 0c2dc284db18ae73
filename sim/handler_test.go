package sim

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var queries = []string{
	"", "a=1", "a=1&a=2", "b=2&a=1", "a", "a=", "a=&a=2", "&&a=3", "a=1;b=2", "x=1;a=2&a=3",
	"a%3D=1&a=2", "%61=4", "a+b=5&a=6", "a=%E2%82%AC", "a=%zz&a=7", "%zz=1&a=8", "a=1+2", "A=1", "aa=1&a=9",
	"a==b", "=x&a=10",
}

// queryFirst agrees with url.ParseQuery for every key of every query.
func TestQueryFirst(t *testing.T) {
	for _, raw := range queries {
		checkQueryFirst(t, raw)
	}
}

func checkQueryFirst(t *testing.T, raw string) {
	vals, _ := url.ParseQuery(raw)
	keys := []string{"a", "b", "a b", "a=", "A", "x", ""}
	for k := range vals {
		keys = append(keys, k)
	}
	for _, k := range keys {
		got, found := queryFirst(raw, k)
		if want := vals.Get(k); got != want || found != vals.Has(k) {
			t.Errorf("query %q key %q: got %q %v, want %q %v", raw, k, got, found, want, vals.Has(k))
		}
	}
}

func FuzzQueryFirst(f *testing.F) {
	for _, q := range queries {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if strings.Count(raw, "&") < 1000 {
			checkQueryFirst(t, raw)
		}
	})
}

// countingBody records whether the handler read the request body.
type countingBody struct {
	io.Reader
	reads int
}

func (b *countingBody) Read(p []byte) (int, error) { b.reads++; return b.Reader.Read(p) }
func (b *countingBody) Close() error               { return nil }

func newServer(t testing.TB, yml string, opts ...Option) *Server {
	t.Helper()
	cfg, err := Parse([]byte(yml), "stubs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The request body is read only by routes whose template uses ${body}.
func TestBodyReadOnlyWhenUsed(t *testing.T) {
	s := newServer(t, `
routes:
  - {method: POST, path: /echo, body: 'got ${body}'}
  - {method: POST, path: /ignore, body: 'n=${count}'}
  - {method: POST, path: /static, body: 'ok'}
`)
	for path, want := range map[string]string{"/echo": "got payload", "/ignore": "n=1", "/static": "ok"} {
		body := &countingBody{Reader: strings.NewReader("payload")}
		req := httptest.NewRequest("POST", path, nil)
		req.Body = body
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != 200 || rec.Body.String() != want {
			t.Errorf("%s: %d %q, want %q", path, rec.Code, rec.Body, want)
		}
		if read := body.reads > 0; read != (path == "/echo") {
			t.Errorf("%s: body read %d times", path, body.reads)
		}
	}
}

// With a seed, the injected failures of a route's first N requests are the
// same whether the requests come one by one or from 8 goroutines, and the
// same in another server with that seed; another seed gives others.
func TestSeedIsReproducible(t *testing.T) {
	const yml = "routes: [{path: '/r/{i}', body: 'ok ${count}', errors: {ratio: 0.5, status: 503}, latency: {uniform: {min: 0s, max: 1us}}}]"
	const n = 400
	failures := func(s *Server, workers int) (failed map[int]bool, count int64) {
		var mu sync.Mutex
		failed = map[int]bool{}
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += workers {
					rec := httptest.NewRecorder()
					s.ServeHTTP(rec, httptest.NewRequest("GET", "/r/"+strconv.Itoa(i), nil))
					mu.Lock()
					failed[i] = rec.Code == 503
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return failed, s.Stats()[0].InjectedErrors
	}
	serial, serialCount := failures(newServer(t, yml, WithSeed(7)), 1)
	again, _ := failures(newServer(t, yml, WithSeed(7)), 1)
	_, parallelCount := failures(newServer(t, yml, WithSeed(7)), 8)
	other, otherCount := failures(newServer(t, yml, WithSeed(8)), 1)
	same, differ := true, false
	for i := range n {
		same = same && serial[i] == again[i]
		differ = differ || serial[i] != other[i]
	}
	if !same || serialCount != parallelCount || !differ {
		t.Errorf("seed 7 twice: same sequence %v; serial vs parallel: %d vs %d injected; seed 8 differs: %v (%d)",
			same, serialCount, parallelCount, differ, otherCount)
	}
	if serialCount < 150 || serialCount > 250 { // Binomial(400, 0.5): 200 ± 5 x 10
		t.Errorf("%d of %d failed at ratio 0.5", serialCount, n)
	}
}

// nopWriter is a ResponseWriter that allocates nothing once warm.
type nopWriter struct {
	h    http.Header
	code int
	n    int
}

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }
func (w *nopWriter) WriteHeader(code int)        { w.code = code }

// The hot path's own allocations: none for a literal body or an injected
// failure (pooled generator), and at most two for a template (the
// Content-Length value, and ${count} past 99).
func TestHandlerAllocations(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("allocation counts need the pools, which the race detector disturbs")
	}
	s := newServer(t, `
routes:
  - {path: /static, body: '{"status":"UP"}', headers: {Content-Type: application/json}}
  - {path: /random, body: ok, errors: {ratio: 0.5}}
  - {path: '/t/{id}', body: '{"id":"${path.id}","q":"${query.q}","h":"${header.X-Id}","n":${count}}'}
`)
	for i, c := range []struct {
		path   string
		max    float64
		expect string
	}{
		{"/static", 0, `{"status":"UP"}`},
		{"/random", 0, ""},
		{"/t/abc?q=1", 2, `{"id":"","q":"1","h":"h","n":`},
	} {
		rt := s.routes[i]
		req := httptest.NewRequest("GET", c.path, nil)
		req.Header.Set("X-Id", "h")
		w := &nopWriter{h: http.Header{}}
		allocs := testing.AllocsPerRun(1000, func() {
			clear(w.h)
			rt.ServeHTTP(w, req)
		})
		if allocs > c.max || w.code == 0 || w.n == 0 && w.code == 200 {
			t.Errorf("%s: %.1f allocations per request (want <= %.0f), status %d, %d bytes", c.path, allocs, c.max, w.code, w.n)
		}
		if c.expect != "" {
			rec := httptest.NewRecorder()
			rt.ServeHTTP(rec, req) // not via the mux: no path value
			if !strings.HasPrefix(rec.Body.String(), c.expect) {
				t.Errorf("%s: body %q", c.path, rec.Body)
			}
		}
	}
}

func BenchmarkServe(b *testing.B) {
	s := newServer(b, `
routes:
  - {path: /static, body: '{"status":"UP"}', headers: {Content-Type: application/json}}
  - {path: /random, body: ok, errors: {ratio: 0.01}}
  - {path: '/t/{id}', body: '{"id":"${path.id}","q":"${query.q}","n":${count}}'}
`)
	for _, path := range []string{"/static", "/random", "/t/abc?q=1"} {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req := httptest.NewRequest("GET", path, nil)
				w := &nopWriter{h: http.Header{}}
				for pb.Next() {
					clear(w.h)
					s.ServeHTTP(w, req)
				}
			})
		})
	}
}
