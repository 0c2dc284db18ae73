package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// run --dump-failures=N writes the first N failed requests and their
// responses to the run directory, the token redacted; show --errors
// lists the failures by message, as often as the server answered each.
func TestDumpFailuresAndShowErrors(t *testing.T) {
	var served, unavailable atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1)%4 == 0 {
			unavailable.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "try again, request %d", 100000+served.Load())
		}
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "name: dumped\ntarget: "+srv.URL+"\nscenarios: [{name: s, vus: 2, iterations: 20, flow: [{name: buy, url: /buy, headers: {Authorization: Bearer sekret}}]}]\n")
	if code, _, errs := runCLI(t, "run", plan, "--out", out, "--quiet", "--dump-failures=3"); code != exitOK {
		t.Fatal(errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-dumped"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	b, err := os.ReadFile(filepath.Join(dirs[0], "failures.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 3 || strings.Contains(string(b), "sekret") || strings.Count(string(b), `Authorization: [redacted]`) != 3 ||
		strings.Count(string(b), `"message":"HTTP 503 Service Unavailable"`) != 3 || !strings.Contains(string(b), "try again, request 1000") {
		t.Errorf("failures.jsonl: %d lines\n%s", n, b)
	}
	code, shown, _ := runCLI(t, "show", "--store", filepath.Join(out, "perflab.db"), filepath.Base(dirs[0]), "--errors")
	want := fmt.Sprintf("buy http_5xx %d %.2f%% HTTP 503 Service Unavailable", unavailable.Load(), 100*float64(unavailable.Load())/40)
	if code != exitOK || served.Load() != 40 || !strings.Contains(strings.Join(strings.Fields(shown), " "), want) {
		t.Errorf("show --errors: %d, %d served; want %q in\n%s", code, served.Load(), want, shown)
	}
}
