package web

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// hostile is in the plan's name, a step's name and a label: every page
// must show it as text.
const hostile = `<script>alert(1)</script>`

// target is a service whose requests take ?d= milliseconds.
func target(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := r.URL.Query().Get("d"); d != "" {
			ms, _ := time.ParseDuration(d + "ms")
			time.Sleep(ms)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// runPlan runs a plan of 2 VUs for length against url with a delay of d
// ms, recorded in the history at db, and returns its id. Its thresholds,
// a step's p50 under an hour and the stage's total rps, always pass but
// for the slower runs (d 6 ms), whose rps is not above 1,000,000: they
// fail 1 of 3.
func runPlan(t testing.TB, ctx context.Context, db, url, d, length string, labels map[string]string, started func(string)) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.yaml")
	least := "0"
	if d == "6" {
		least = "1000000"
	}
	src := "name: shop " + hostile + "\ntarget: " + url + "\ninterval: 250ms\nthresholds: [\"p50 < 1h\", \"total: rps > " + least + "\"]\nscenarios:\n" +
		"  - {name: buy, vus: 2, duration: " + length + ", flow: [{name: \"" + strings.ReplaceAll(hostile, `"`, `\"`) + " item\", url: \"/item?d=" + d + "\"}, {name: cart, url: \"/cart?d=" + d + "\"}]}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load(path, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := lab.Run(ctx, p, lab.Config{Out: filepath.Join(filepath.Dir(db), "runs"), Store: db, Labels: labels, Progress: "none", Started: started})
	if err != nil {
		t.Fatal(err)
	}
	return res.RunID
}

// seeded is a history of four runs: two labelled release=A, two slower
// ones labelled release=B, whose thresholds fail (and the hostile label).
type seeded struct {
	db     string
	st     *store.Store
	ids    []string
	target *httptest.Server
}

func seed(t testing.TB) *seeded {
	t.Helper()
	srv := target(t)
	db := filepath.Join(t.TempDir(), "h.db")
	s := &seeded{db: db, target: srv}
	for _, r := range []struct{ rel, d string }{{"A", "1"}, {"A", "1"}, {"B", "6"}, {"B", "6"}} {
		s.ids = append(s.ids, runPlan(t, context.Background(), db, srv.URL, r.d, "1500ms", map[string]string{"release": r.rel, "note": hostile}, nil))
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s.st = st
	return s
}

// newRequest is a request to the server on 127.0.0.1, as a browser that
// opened its address sends it.
func newRequest(method, target string, body io.Reader) *http.Request {
	req := httptest.NewRequest(method, target, body)
	req.Host = "127.0.0.1:5665"
	return req
}

func get(t testing.TB, h http.Handler, path string, header ...string) (*http.Response, string) {
	t.Helper()
	req := newRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	res := w.Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// Every page shows the history's figures, escapes what plans and labels
// say, and sends the security headers.
func TestPages(t *testing.T) {
	s := seed(t)
	app := New(Options{Store: s.st, Version: "test"})
	for _, path := range []string{"/", "/runs/" + s.ids[0], "/runs/" + s.ids[0] + "/drift", "/compare?base=release%3DA&candidate=release%3DB",
		"/history?plan=" + strings.ReplaceAll("shop "+hostile, " ", "+"), "/api/runs", "/api/runs/" + s.ids[0] + "/series"} {
		res, body := get(t, app, path)
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: %d\n%s", path, res.StatusCode, body)
			continue
		}
		if strings.Contains(body, hostile) {
			t.Errorf("%s: the page holds %s unescaped", path, hostile)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		if !strings.HasPrefix(path, "/api/") && strings.Contains(body, "<script>") {
			t.Errorf("%s: an inline script", path)
		}
	}
	_, runs := get(t, app, "/")
	for _, id := range s.ids {
		if !strings.Contains(runs, "/runs/"+id) {
			t.Errorf("the runs list lacks %s", id)
		}
	}
	if !strings.Contains(runs, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the runs list does not show the hostile label as text")
	}
	_, cmp := get(t, app, "/compare?base=release%3DA&candidate=release%3DB")
	if !strings.Contains(cmp, `id="verdicts"`) || !strings.Contains(cmp, `<span class="fail">worse</span>`) {
		t.Errorf("compare: no verdict saying worse:\n%s", cmp)
	}
	_, hist := get(t, app, "/history?plan="+strings.ReplaceAll("shop "+hostile, " ", "+"))
	if !strings.Contains(hist, "4 completed runs") || !strings.Contains(hist, "<svg") {
		t.Errorf("history:\n%s", hist)
	}
	var ser Series
	_, js := get(t, app, "/api/runs/"+s.ids[0]+"/series")
	if err := json.Unmarshal([]byte(js), &ser); err != nil || len(ser.T) < 4 || ser.Status != "completed" {
		t.Errorf("series: %v %s", err, js)
	}
	// The series' requests are the run's: each interval's rate times its length.
	var total float64
	for _, r := range ser.RPS {
		total += r * 0.25
	}
	_, sumJSON := get(t, app, "/api/runs")
	if !strings.Contains(sumJSON, `"requests"`) || total < 10 {
		t.Errorf("runs API %s, series total %.0f", sumJSON, total)
	}
	// The runs whose thresholds failed say so in the list, the API, the
	// run's page and its series; the others do not.
	if n := strings.Count(runs, `; <span class="fail">thresholds failed: 1 of 3</span>`); n != 2 {
		t.Errorf("the runs list says thresholds failed for %d runs, want the 2 of release B:\n%s", n, runs)
	}
	var listed []struct {
		ID      string
		Verdict *store.Verdict
	}
	if err := json.Unmarshal([]byte(sumJSON), &listed); err != nil || len(listed) != len(s.ids) {
		t.Fatalf("runs API: %v\n%s", err, sumJSON)
	}
	for _, r := range listed {
		failing := r.ID == s.ids[2] || r.ID == s.ids[3]
		if v := r.Verdict; v == nil || v.Thresholds != 3 || (v.ThresholdsFailed == 1) != failing || v.ThresholdsFailed > 1 {
			t.Errorf("runs API: %s's verdict %+v", r.ID, v)
		}
	}
	_, page := get(t, app, "/runs/"+s.ids[3])
	if !strings.Contains(page, `<p class="meta" id="live-status">completed; thresholds failed: 1 of 3</p>`) || !strings.Contains(page, "— completed; thresholds failed: 1 of 3 —") {
		t.Errorf("the failing run's page does not say its thresholds failed:\n%s", page)
	}
	_, js = get(t, app, "/api/runs/"+s.ids[3]+"/series")
	if err := json.Unmarshal([]byte(js), &ser); err != nil || ser.Status != "completed" || ser.Verdict != "thresholds failed: 1 of 3" {
		t.Errorf("the failing run's series: %v %s", err, js)
	}
}

// What is not there, or not allowed, gets a clear page and its status.
func TestErrors(t *testing.T) {
	s := seed(t)
	app := New(Options{Store: s.st})
	for _, tc := range []struct {
		method, path string
		status       int
		says         string
	}{
		{"GET", "/runs/no-such-run", 404, "no such run"},
		{"GET", "/api/runs/no-such-run/series", 404, "no such run"},
		{"GET", "/nowhere", 404, "no such page"},
		{"POST", "/", 405, "read-only"},
		{"DELETE", "/runs/" + s.ids[0], 405, "read-only"},
		{"GET", "/compare?base=x", 400, "base and a candidate"},
		{"GET", "/compare?base=release%3DZ&candidate=release%3DA", 404, "no stored run has the label release=Z"},
		{"GET", "/?label=nolabel", 400, "want name=value"},
		{"GET", "/history?plan=x&percentile=42", 400, "percentile"},
	} {
		w := httptest.NewRecorder()
		app.ServeHTTP(w, newRequest(tc.method, tc.path, nil))
		if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.says) || strings.Contains(w.Body.String(), "goroutine") {
			t.Errorf("%s %s: %d, want %d saying %q:\n%s", tc.method, tc.path, w.Code, tc.status, tc.says, w.Body.String())
		}
	}
	// A request naming another host, as a page of another site whose name
	// points at the server sends it (DNS rebinding): 421, said so, and
	// nothing of the history.
	for _, path := range []string{"/", "/api/runs", "/runs/" + s.ids[0], "/static/live.js"} {
		w := httptest.NewRecorder()
		app.ServeHTTP(w, httptest.NewRequest("GET", path, nil)) // Host: example.com
		if body := w.Body.String(); w.Code != http.StatusMisdirectedRequest || !strings.Contains(body, "DNS rebinding") || strings.Contains(body, "shop") {
			t.Errorf("GET %s, Host example.com: %d\n%.400s", path, w.Code, body)
		}
	}
	// A history that cannot be read: 503, said so.
	s.st.Close()
	w := httptest.NewRecorder()
	app.ServeHTTP(w, newRequest("GET", "/", nil))
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "the run history cannot be read") {
		t.Errorf("closed store: %d\n%s", w.Code, w.Body.String())
	}
}

// With a token, nothing is served without it; ?token= sets a cookie.
func TestToken(t *testing.T) {
	s := seed(t)
	app := New(Options{Store: s.st, Token: "s3cret"})
	if res, body := get(t, app, "/"); res.StatusCode != http.StatusUnauthorized || strings.Contains(body, s.ids[0]) {
		t.Errorf("no token: %d", res.StatusCode)
	}
	if res, _ := get(t, app, "/static/live.js"); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token, an asset: %d", res.StatusCode)
	}
	if res, _ := get(t, app, "/", "Authorization", "Bearer wrong"); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", res.StatusCode)
	}
	if res, body := get(t, app, "/", "Authorization", "Bearer s3cret"); res.StatusCode != http.StatusOK || !strings.Contains(body, s.ids[0]) {
		t.Errorf("the token: %d", res.StatusCode)
	}
	res, _ := get(t, app, "/runs/"+s.ids[0]+"?token=s3cret")
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == tokenCookie {
			cookie = c
		}
	}
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/runs/"+s.ids[0] || cookie == nil || !cookie.HttpOnly {
		t.Fatalf("?token=: %d to %q, cookie %+v", res.StatusCode, res.Header.Get("Location"), cookie)
	}
	if res, _ := get(t, app, "/runs/"+s.ids[0], "Cookie", tokenCookie+"="+cookie.Value); res.StatusCode != http.StatusOK {
		t.Errorf("the cookie: %d", res.StatusCode)
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:5665": true, "localhost:1": true, "[::1]:80": true, "0.0.0.0:5665": false, ":5665": false, "10.0.0.5:80": false} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v", addr, got)
		}
	}
}

// A run going: its events say when intervals are stored, then that it
// ended; its series grows.
func TestEventsOfARunGoing(t *testing.T) {
	srv := target(t)
	db := filepath.Join(t.TempDir(), "h.db")
	started := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runPlan(t, context.Background(), db, srv.URL, "1", "3s", nil, func(id string) { started <- id })
	}()
	id := <-started
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	web := httptest.NewServer(New(Options{Store: st, Poll: 100 * time.Millisecond}))
	defer web.Close()
	res, err := http.Get(web.URL + "/runs/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var intervals atomic.Int64
	b := make([]byte, 64<<10)
	var all strings.Builder
	for !strings.Contains(all.String(), "event: end") {
		n, err := res.Body.Read(b)
		all.Write(b[:n])
		if err != nil {
			break
		}
	}
	intervals.Store(int64(strings.Count(all.String(), "event: interval")))
	<-done
	if intervals.Load() < 3 || !strings.Contains(all.String(), `event: end`+"\n"+`data: {"status":"completed"`) {
		t.Errorf("%d interval events:\n%s", intervals.Load(), all.String())
	}
}

func TestCache(t *testing.T) {
	c := newCache(10)
	c.add("a", []byte("1234"))
	c.add("b", []byte("1234"))
	c.get("a") // b is now the least recently used
	c.add("c", []byte("1234"))
	if _, ok := c.get("b"); ok {
		t.Error("b was kept over its bound")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.get(k); !ok {
			t.Errorf("%s was dropped", k)
		}
	}
	c.add("big", make([]byte, 11))
	if _, ok := c.get("big"); ok || c.size != 8 {
		t.Errorf("an item over the bound: kept %v, size %d", ok, c.size)
	}
}

// A slow query's text, as a database monitor reports it, is shown as text.
func TestSlowQueryIsEscaped(t *testing.T) {
	s := seed(t)
	dir := filepath.Join(t.TempDir(), "q")
	if _, err := results.Export(s.st, s.ids[0], dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum results.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	sum.RunID += "-q"
	sum.Resources = &monitor.Analysis{Windows: []monitor.WindowFigures{}, SlowQueries: []monitor.SlowQuery{
		{Monitor: "db", Database: "shop", Query: "SELECT '" + hostile + "' FROM items", Calls: 3, MeanMS: 150, TotalMS: 450}}}
	moved := filepath.Join(filepath.Dir(dir), sum.RunID)
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(moved, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sum.WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	id, err := results.Import(s.st, moved, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, page := get(t, New(Options{Store: s.st}), "/runs/"+id)
	if res.StatusCode != http.StatusOK || strings.Contains(page, hostile) || !strings.Contains(page, "SELECT &#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39; FROM items") {
		t.Errorf("%d: the slow query is not shown escaped:\n%s", res.StatusCode, page)
	}
}

// The live charts' series read from the traffic the history keeps of each
// interval is the one drawn from the intervals' histograms, for a run
// stored as it went and for the same run imported from its directory;
// its requests are the run's.
func TestSeriesFromTraffic(t *testing.T) {
	s := seed(t)
	dir := filepath.Join(t.TempDir(), "exported")
	if _, err := results.Export(s.st, s.ids[2], dir); err != nil {
		t.Fatal(err)
	}
	imported, err := store.Open(filepath.Join(t.TempDir(), "imported.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer imported.Close()
	if _, err := results.Import(imported, dir, nil); err != nil {
		t.Fatal(err)
	}
	for name, st := range map[string]*store.Store{"stored live": s.st, "imported": imported} {
		tr, err := st.TrafficOf(s.ids[2])
		if err != nil || len(tr) < 4 {
			t.Fatalf("%s: %d intervals of traffic, %v", name, len(tr), err)
		}
		rd, err := results.FromStore(st, s.ids[2])
		if err != nil {
			t.Fatal(err)
		}
		want, err := SeriesOf(rd)
		if err != nil {
			t.Fatal(err)
		}
		got := SeriesOfTraffic(tr, rd.Summary.Status, rd.Summary.IntervalLength())
		same := func(a, b []float64) bool {
			return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
		}
		if !same(got.T, want.T) || !same(got.RPS, want.RPS) || !same(got.Errors, want.Errors) || !same(got.P95, want.P95) || !slices.Equal(got.Partial, want.Partial) || got.Status != want.Status {
			t.Errorf("%s: series of the traffic\n%+v\nof the histograms\n%+v", name, got, want)
		}
		var requests, steps int64
		for _, x := range tr {
			requests += x.Count
		}
		for _, op := range rd.Summary.Stages[0].Operations {
			if op.Kind == metrics.KindStep {
				steps += op.Count
			}
		}
		if requests != steps || requests == 0 {
			t.Errorf("%s: %d requests in the traffic, the summary's steps %d", name, requests, steps)
		}
	}
}

// CheckToken takes what openssl rand -hex and -base64 make and refuses
// the short, the repeated and what a header, a cookie or a URL would
// change.
func TestCheckToken(t *testing.T) {
	for token, ok := range map[string]bool{
		"9c2f6e0b1d4a7388e5f1c0b2a6d94e7f": true,  // openssl rand -hex 16
		"3q2+7w/ZkX1bLq0Vn8yH4A==":         true,  // openssl rand -base64 16
		"Kx_9-pQ.2~mZr7Tw":                 true,  // 16, of the unreserved characters
		"0123456789abcde":                  false, // 15
		"":                                 false,
		"zzzzzzzzzzzzzzzzzzzzzzzz":         false,
		"12341234123412341234":             false, // 4 different
		"0123456789abcdef\n":               false,
		"0123456789abcdef\"":               false,
		"0123456789,abcdef":                false,
	} {
		if err := CheckToken(token); (err == nil) != ok {
			t.Errorf("%q: %v, want ok %v", token, err, ok)
		}
	}
}

// /static/ serves the pages' assets, each by its name, and lists none: a
// directory of them is 404, as any page that is not there, and says
// nothing of the files in it.
func TestStaticListsNoDirectory(t *testing.T) {
	app := New(Options{Store: seed(t).st})
	for _, path := range []string{"/static/", "/static/.", "/static/./", "/static//", "/static/%2e/"} {
		res, body := get(t, app, path)
		redirect := res.StatusCode == http.StatusMovedPermanently || res.StatusCode == http.StatusTemporaryRedirect // to the cleaned path
		if res.StatusCode != http.StatusNotFound && !redirect || strings.Contains(body, "live.js") || strings.Contains(body, "uPlot") {
			t.Errorf("%s: %d\n%.300s", path, res.StatusCode, body)
		}
		if loc := res.Header.Get("Location"); redirect {
			if res, body := get(t, app, loc); res.StatusCode != http.StatusNotFound || strings.Contains(body, "live.js") {
				t.Errorf("%s, redirected to %s: %d\n%.300s", path, loc, res.StatusCode, body)
			}
		}
	}
	for _, path := range []string{"/static/live.js", "/static/uPlot.iife.min.js", "/static/charts.js"} {
		if res, _ := get(t, app, path); res.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", path, res.StatusCode)
		}
	}
}
