package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// slowServer answers each request after 50 ms and counts them.
func slowServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond)
		served.Add(1)
	}))
	t.Cleanup(srv.Close)
	return srv, &served
}

// An open model at a rate its VUs cannot keep (200 iterations a second
// for 1 s, 2 VUs at most, a service answering in 50 ms: about 40 can
// start) drops most of its iterations. Its errors are 0%, and the run says
// so everywhere its figures are: the thresholds of dropped iterations are
// judged on the server's count (started: what it served; dropped: the
// rest of the 200 due), the summary line, the stage's table, the Markdown
// and HTML reports, the run's last line, and the history's status of it
// (perflab runs, --json, show). A run of the same plan without thresholds
// is not failed for it, but its status says it all the same.
func TestDroppedIterations(t *testing.T) {
	srv, served := slowServer(t)
	out := t.TempDir()
	load := "scenarios: [{name: buy, rate: 200, vus: 2, max_vus: 2, duration: 1s, flow: [{name: GET /buy, url: /buy}]}]\n"
	plan := writePlan(t, "name: dropping\ntarget: "+srv.URL+"\n"+
		`thresholds: ["errors < 1%", "dropped < 1%", "dropped < 99%", "total: dropped == 0", "buy: dropped <= 200"]`+"\n"+load)
	code, stdout, stderr := runCLI(t, "run", plan, "--out", out, "--quiet")
	if code != exitThresholds {
		t.Fatalf("exit %d, want %d (thresholds failed)\n%s%s", code, exitThresholds, stdout, stderr)
	}
	s := readSummary(t, out)
	var it results.Operation
	for _, op := range s.Stages[0].Operations {
		if op.Kind == metrics.KindScenario {
			it = op
		}
	}
	started, dropped := served.Load(), it.Dropped
	// Every iteration due ran, as the server saw, or was dropped.
	if it.Count != started || it.Count+dropped != 200 || dropped == 0 {
		t.Fatalf("started %d (the server served %d), dropped %d: want the server's count, and the rest of 200 due dropped", it.Count, started, dropped)
	}
	t.Logf("200 due: %d started, %d dropped", started, dropped)
	share := float64(dropped) / 200
	type result struct {
		actual float64
		pass   bool
	}
	want := map[string]result{
		"errors < 1% GET /buy": {0, true},
		"dropped < 1% buy":     {share, false}, "dropped < 99% buy": {share, true},
		"total: dropped == 0 total": {float64(dropped), false}, "buy: dropped <= 200 buy": {float64(dropped), true},
	}
	got := map[string]result{}
	for _, r := range s.Thresholds {
		got[r.Threshold+" "+r.Operation] = result{r.Actual, r.Pass}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("thresholds %v, want %v", got, want)
	}
	ofDue := fmt.Sprintf("%d of 200 due (%.2f%%)", dropped, 100*share)
	if line := "Err: 0 (0.00%) Dropped: " + ofDue; !strings.HasSuffix(s.Total.Line, line) || s.Total.Dropped != dropped || s.Total.Due != 200 {
		t.Errorf("summary line %q (dropped %d of %d), want it to end %q", s.Total.Line, s.Total.Dropped, s.Total.Due, line)
	}
	for _, w := range []string{s.Total.Line, "dropped iterations: buy " + ofDue + ": every VU was busy", "thresholds: 3 passed, 2 failed",
		fmt.Sprintf("FAIL %-24s %-20s %-14s %.3f%%", "dropped < 1%", "buy", "all", 100*share)} {
		if !strings.Contains(stdout, w) {
			t.Errorf("the run's tables lack %q:\n%s", w, stdout)
		}
	}
	status := fmt.Sprintf("completed; thresholds failed: 2 of 5; dropped %d of 200 iterations due (%.2f%%)", dropped, 100*share)
	if !strings.Contains(stderr, "run "+s.RunID+" "+status+"; results in ") {
		t.Errorf("the run's last line does not say %q:\n%s", status, stderr)
	}
	dir := filepath.Join(out, s.RunID)
	for _, format := range []string{"md", "html"} {
		code, page, _ := runCLI(t, "report", "--format", format, dir)
		if code != exitOK || !strings.Contains(page, s.Total.Line) || !strings.Contains(page, ofDue) || !strings.Contains(page, status) {
			t.Errorf("report --format %s (exit %d) lacks the summary line, %q or the status", format, code, ofDue)
		}
	}

	// The same load without thresholds: a pass, with a warning.
	plain := writePlan(t, "name: dropping\ntarget: "+srv.URL+"\n"+load)
	code, _, stderr = runCLI(t, "run", plain, "--out", out, "--quiet")
	if code != exitOK || !strings.Contains(stderr, "completed; dropped ") || strings.Contains(stderr, "thresholds failed") {
		t.Errorf("exit %d, want %d, the run's status saying its dropped iterations:\n%s", code, exitOK, stderr)
	}

	// The history's status of both.
	db := filepath.Join(out, "perflab.db")
	code, list, _ := runCLI(t, "runs", "--store", db)
	if code != exitOK || !strings.Contains(list, s.RunID) || !strings.Contains(list, status) || strings.Count(list, "completed; dropped ") != 1 {
		t.Errorf("perflab runs (exit %d) does not say %q, and the other run's dropped iterations:\n%s", code, status, list)
	}
	code, js, _ := runCLI(t, "runs", "--store", db, "--json")
	var runs []store.Run
	if err := json.Unmarshal([]byte(js), &runs); code != exitOK || err != nil || len(runs) != 2 {
		t.Fatalf("perflab runs --json (exit %d): %v\n%s", code, err, js)
	}
	for _, r := range runs {
		v := r.Verdict
		if v == nil || r.ID == s.RunID && (v.Thresholds != 5 || v.ThresholdsFailed != 2 || v.Dropped != dropped || v.Due != 200 || v.Requests != started) ||
			r.ID != s.RunID && (v.Thresholds != 0 || v.Dropped == 0 || v.Due != 200) {
			t.Errorf("perflab runs --json: run %s's verdict %+v", r.ID, v)
		}
	}
	code, shown, _ := runCLI(t, "show", "--store", db, s.RunID)
	if code != exitOK || !strings.Contains(shown, "run "+s.RunID+" of plan dropping: "+status+", ") || !strings.Contains(shown, "thresholds: 3 passed, 2 failed") || !strings.Contains(shown, s.Total.Line) {
		t.Errorf("perflab show (exit %d) lacks the status, the thresholds or the summary line:\n%s", code, shown)
	}
}

// A threshold of dropped iterations marked abort stops the run once they
// pass it, on the stage's data so far.
func TestDroppedAbort(t *testing.T) {
	srv, _ := slowServer(t)
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\ninterval: 200ms\nthresholds: [\"dropped < 10% abort\"]\n"+
		"scenarios: [{name: buy, rate: 200, vus: 2, max_vus: 2, duration: 20s, flow: [{name: GET /buy, url: /buy}]}]\n")
	runAborted(t, plan, out, `threshold "dropped < 10% abort" failed on buy in all after`)
}
