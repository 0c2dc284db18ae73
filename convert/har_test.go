package convert_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/convert"
	"github.com/perflab/perflab/plan"
)

// A browser recording becomes a flow of its requests with the pause
// between them. testdata/har/shop.har is a real recording: Playwright
// 1.64.1 driving Chromium 156 through testdata/har/site, served by
// testdata/har/server.py (python3 server.py 18771 & node record.js
// http://127.0.0.1:18771/ shop.har). Its static assets are left out unless
// asked for; the plan makes the page's and the API's requests, with the
// same bodies.
func TestConvertHAR(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "har", "shop.har"))
	if err != nil {
		t.Fatal(err)
	}
	all, err := convert.HAR(strings.NewReader(string(src)), "shop.har", convert.HAROptions{Static: true})
	if err != nil || len(all.Skipped) != 0 || strings.Count(string(all.Plan), "check:") != 6 {
		t.Fatalf("with static assets: %v %q\n%s", err, all.Skipped, all.Plan)
	}
	res, err := convert.HAR(strings.NewReader(string(src)), "shop.har", convert.HAROptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 3 || !strings.Contains(res.Skipped[2], "entry 4 (GET http://127.0.0.1:18771/static/logo.png): a static asset") {
		t.Errorf("skipped %q", res.Skipped)
	}
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	t0 := time.Now()
	runConverted(t, res.Plan, plan.Options{Set: []plan.Override{{Name: "base", Value: srv.URL}}})
	want := []string{
		`GET / "" `,
		`GET /api/items?limit=2 "" `,
		`POST /api/cart "{\"item\":\"i-1\",\"qty\":2}" application/json`,
	}
	if got := rec.sorted(); !slices.Equal(got, want) {
		t.Errorf("requests:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if took := time.Since(t0); took < 1900*time.Millisecond {
		t.Errorf("the run took %v: the recording's 1.9 s pause was not kept", took)
	}
}

// A redirect the browser followed is two entries of its recording: the
// 302 is a step that does not follow it (redirects: 0), and the request to
// its Location the next step, so that the server sees the requests the
// browser made, no more.
func TestConvertHARRedirect(t *testing.T) {
	const rec = `{"log": {"creator": {"name": "test", "version": "1"}, "entries": [
  {"startedDateTime": "2026-11-26T10:00:00.000Z", "time": 5, "request": {"method": "POST", "url": "http://127.0.0.1:1/login", "headers": []},
   "response": {"status": 302, "content": {"mimeType": "text/html"}}},
  {"startedDateTime": "2026-11-26T10:00:00.005Z", "time": 5, "request": {"method": "GET", "url": "http://127.0.0.1:1/home", "headers": []},
   "response": {"status": 200, "content": {"mimeType": "text/html"}}}]}}`
	res, err := convert.HAR(strings.NewReader(rec), "login.har", convert.HAROptions{})
	if err != nil || !strings.Contains(string(res.Plan), "redirects: 0") {
		t.Fatalf("%v\n%s", err, res.Plan)
	}
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/login" {
			http.Redirect(w, r, "/home", http.StatusFound)
		}
	}))
	defer srv.Close()
	runConverted(t, res.Plan, plan.Options{Set: []plan.Override{{Name: "base", Value: srv.URL}}})
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, ",") != "POST /login,GET /home" {
		t.Errorf("the server saw %v, want the recording's two requests", got)
	}
}

func TestConvertHARRefuses(t *testing.T) {
	for src, want := range map[string]string{
		"":                             "x.har: EOF",
		"{\"log\": {\"entries\": []}}": "no log.entries",
		"[1, 2]":                       "x.har: json: cannot unmarshal array",
		`{"log":{"entries":[{"request":{"method":"GET","url":"/relative"}}]}}`: `entry 1: the URL "/relative"`,
	} {
		if _, err := convert.HAR(strings.NewReader(src), "x.har", convert.HAROptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}
