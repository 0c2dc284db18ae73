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

// --dump-failures=N has a bound (phttp.MaxFailures), and a value that is
// not a count is refused saying what the flag wants, not "invalid boolean
// value"; so is a count given after a space, which the flag does not take.
func TestDumpFailuresBounds(t *testing.T) {
	plan := writePlan(t, "target: http://127.0.0.1:9\nscenarios: [{name: s, vus: 1, iterations: 1, flow: [{url: /}]}]\n")
	for _, c := range []struct{ arg, want string }{
		{"--dump-failures=abc", `perflab: --dump-failures=abc: want a number of failed requests from 0 to 1000, or --dump-failures alone for the first 100`},
		{"--dump-failures=-1", `perflab: --dump-failures=-1: want a number of failed requests from 0 to 1000, or --dump-failures alone for the first 100`},
		{"--dump-failures=1e3", `perflab: --dump-failures=1e3: want a number of failed requests from 0 to 1000, or --dump-failures alone for the first 100`},
		{"--dump-failures=1001", `perflab: --dump-failures=1001: at most 1000 failed requests (8 KiB of each request and of its response: up to 16 MB of failures.jsonl, read whole by every report); the errors by kind and by message count every failure`},
		{"--dump-failures=99999999999999999999", `perflab: --dump-failures=99999999999999999999: at most 1000 failed requests`},
	} {
		for _, cmd := range []string{"run", "demo"} {
			args := []string{cmd, c.arg, "--out", t.TempDir(), "--quiet"}
			if cmd == "run" {
				args = append(args, plan)
			}
			code, _, errs := runCLI(t, args...)
			if code != exitUsage || !strings.HasPrefix(errs, c.want) || strings.Contains(errs, "boolean") {
				t.Errorf("%s %s: exit %d\n%s\nwant exit %d and %s", cmd, c.arg, code, errs, exitUsage, c.want)
			}
		}
	}
	code, _, errs := runCLI(t, "run", plan, "--dump-failures", "5", "--out", t.TempDir(), "--quiet")
	if want := "perflab: --dump-failures 5: give the count as --dump-failures=5 (alone, --dump-failures writes the first 100)"; code != exitUsage || strings.TrimSpace(errs) != want {
		t.Errorf("--dump-failures 5: exit %d\n%s\nwant %s", code, errs, want)
	}
}
