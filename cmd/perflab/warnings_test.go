package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A plan's warnings (a while loop without max) are said by perflab
// validate and perflab run, at their place, on stderr, and change no exit
// code.
func TestPlanWarningsSaid(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) >= 3 {
			w.Write([]byte(`{"state": "done"}`))
			return
		}
		w.Write([]byte(`{"state": "running"}`))
	}))
	defer srv.Close()
	path := writePlan(t, `target: `+srv.URL+`
scenarios:
  - name: s
    vus: 1
    iterations: 1
    flow:
      - {name: job, url: /job, loop: {while: 'json("$.state") != "done"'}}
`)
	want := path + `:7:38: warning: step job: loop: while has no max: should its condition never turn false, the VU stays in the loop and the run never ends (its scenario is bounded by iterations); give max: N to bound the passes (max: 0 says there is no bound)` + "\n"
	code, out, errs := runCLI(t, "validate", path)
	if code != exitOK || errs != want || !strings.Contains(out, "is valid") {
		t.Errorf("validate: exit %d\nstdout %s\nstderr %s\nwant   %s", code, out, errs, want)
	}
	code, out, errs = runCLI(t, "run", path, "--out", t.TempDir(), "--store", "off", "--quiet")
	if code != exitOK || !strings.HasPrefix(errs, want) || n.Load() != 3 {
		t.Errorf("run: exit %d, the server saw %d requests (want 3)\nstdout %s\nstderr %s", code, n.Load(), out, errs)
	}
}
