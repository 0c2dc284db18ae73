package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/results"
)

// slowStart is a service that answers nothing for its first 3 s (every
// request then waits for that moment) and in 5 ms after: a run's first
// tenth has no throughput at all, a level of 0. Its requests take time
// rather than CPU: answered at once, two VUs' throughput was as much as
// the machine's cores could give (16,600/s), and fell by 73% when other
// processes took them.
func slowStart(t *testing.T) *httptest.Server {
	var first atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().UnixNano()
		first.CompareAndSwap(0, now)
		ready := time.Unix(0, first.Load()).Add(3 * time.Second)
		select {
		case <-time.After(max(time.Until(ready), 5*time.Millisecond)):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The reproduction of runs lost to their own analysis: a service that
// answers only after 3 s for the first 3 s of a 20 s run at 100 ms
// intervals. Its throughput starts at 0, whose relative change is no
// number; the run once ended in "store: json: unsupported value: +Inf",
// exit 3, summary.json without its drift, no history and the run listed
// as killed. It is a completed run, its drift judged and stored, listed as
// completed, and perflab drift reads it.
func TestRunNotLostToItsAnalysis(t *testing.T) {
	if testing.Short() {
		t.Skip("a 20 s run")
	}
	srv := slowStart(t)
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\ninterval: 100ms\nhttp: {timeout: 10s}\nscenarios: [{name: s, vus: 2, duration: 20s, flow: [{name: get, url: /items}]}]\n")
	code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-*"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	b, err := os.ReadFile(filepath.Join(dirs[0], "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum results.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Drift == nil || len(sum.AnalysisErrors) > 0 || sum.Status != "completed" {
		t.Fatalf("status %s, analysis errors %v, drift %v", sum.Status, sum.AnalysisErrors, sum.Drift != nil)
	}
	// Nothing answered for the first 3 s: an incident at the start, its
	// throughput a tenth of its level or less.
	if len(sum.Drift.Incidents) == 0 || sum.Drift.Incidents[0].StartS != 0 || sum.Drift.Incidents[0].EndS < 2.5 {
		t.Errorf("incidents: %+v", sum.Drift.Incidents)
	}
	if tp := runtest.DriftSeries(t, sum.Drift, "throughput"); tp.End <= 0 || tp.Verdict == results.DriftDegraded {
		t.Errorf("throughput: %s", tp.Sentence)
	}
	for _, e := range sum.Drift.Timeline {
		if e.Before == 0 && !e.Points && e.Change != nil {
			t.Errorf("a relative change from 0: %+v", e)
		}
	}
	code, list, errs := runCLI(t, "runs", "--store", filepath.Join(out, "perflab.db"), "--json")
	if code != exitOK || !strings.Contains(list, `"completed"`) || strings.Contains(list, `"killed"`) {
		t.Fatalf("runs: exit %d\n%s%s", code, list, errs)
	}
	code, text, errs := runCLI(t, "drift", "--json", dirs[0])
	var js struct {
		Drift  *results.Drift `json:"drift"`
		Saved  []string       `json:"saved"`
		Errors []string       `json:"errors"`
	}
	// Judged with the defaults, the verdict is the run's own, stored
	// again with it: in its directory and in the history beside it.
	if code != exitOK || json.Unmarshal([]byte(text), &js) != nil || js.Drift == nil || len(js.Errors) > 0 || len(js.Saved) != 2 {
		t.Fatalf("drift: exit %d\n%s%s", code, text, errs)
	}
}
