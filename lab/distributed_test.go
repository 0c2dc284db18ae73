package lab

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// Three workers in one process (each its own store handle, as processes
// have) make one run: setup's value in every worker, teardown once, the
// merged count the server's, the merging worker's result the run's. Run
// under -race, it checks the coordinator's goroutines.
func TestWorkersInProcess(t *testing.T) {
	var gets, logins, logouts, bad atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			logins.Add(1)
			w.Header().Set("X-Token", "tok")
		case "/logout":
			logouts.Add(1)
		default:
			gets.Add(1)
			if r.URL.Query().Get("t") != "tok" {
				bad.Add(1)
			}
		}
	}))
	defer srv.Close()
	src := `name: inproc
target: ` + srv.URL + `
interval: 100ms
setup: [{name: login, url: /login, extract: {token: {header: X-Token}}}]
scenarios:
  - {name: s, vus: 4, total_iterations: 200, flow: [{name: get, url: "/get?t=${token}"}]}
  - {name: o, rate: 200, duration: 500ms, vus: 3, max_vus: 9, flow: [{name: open, url: "/open?t=${token}"}]}
teardown: [{name: logout, url: /logout}]
thresholds: ["errors < 50% abort"]
`
	merged := runWorkers(t, t.TempDir(), src, "inproc-1", 3)
	if merged.Outcome != Completed {
		t.Fatalf("the merged run: %+v", merged)
	}
	s := merged.Summary
	var get, open int64
	for _, op := range s.Stages[0].Operations {
		switch op.Name {
		case "get":
			get = op.Count
		case "open":
			open = op.Count
		}
	}
	if get != 200 || get+open != gets.Load() || logins.Load() != 1 || logouts.Load() != 1 || bad.Load() != 0 {
		t.Errorf("get %d (plan 200), get+open %d, the server %d; setup %d, teardown %d, without the token %d",
			get, get+open, gets.Load(), logins.Load(), logouts.Load(), bad.Load())
	}
	if s.Status != metrics.StatusCompleted || len(s.Workers) != 3 {
		t.Errorf("run %s, workers %+v", s.Status, s.Workers)
	}
}

// A threshold of dropped iterations marked abort is judged on the whole
// run as it goes, from the dropped iterations each worker stored with its
// intervals: two workers' open models at a rate their VUs cannot keep (a
// service answering in 50 ms) stop the run long before its 30 s.
func TestWorkersAbortOnDropped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond)
	}))
	defer srv.Close()
	src := `name: dropping
target: ` + srv.URL + `
interval: 200ms
scenarios:
  - {name: o, rate: 200, duration: 30s, vus: 2, max_vus: 2, flow: [{name: open, url: /open}]}
thresholds: ["dropped < 10% abort"]
`
	began := time.Now()
	merged := runWorkers(t, t.TempDir(), src, "dropping-1", 2)
	if took := time.Since(began); took > 20*time.Second {
		t.Errorf("the run took %s: not stopped", took)
	}
	s := merged.Summary
	want := `aborted: threshold "dropped < 10% abort" failed on o in all, judged on the whole run so far`
	if s.Status != metrics.StatusFailed || s.Error != want || merged.Outcome != ThresholdsFailed {
		t.Errorf("run %s (%q), outcome %v; want failed: %s", s.Status, s.Error, merged.Outcome, want)
	}
	var started int64
	for _, op := range s.Stages[0].Operations {
		if op.Kind == metrics.KindScenario {
			started = op.Count
		}
	}
	if s.Total.Dropped == 0 || s.Total.Due != s.Total.Dropped+started {
		t.Errorf("dropped %d of %d due, %d started", s.Total.Dropped, s.Total.Due, started)
	}
}

// runWorkers runs the plan src on n workers in this process, each its own
// store handle in dir, as the run of id, and returns the merged run's
// result.
func runWorkers(t *testing.T, dir, src, id string, n int) *Result {
	t.Helper()
	path := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load(path, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "runs")
	res := make([]*Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := Run(context.Background(), p, Config{Out: out, Progress: "none",
				Worker: &Worker{RunID: id, Segment: plan.Segment{Index: i, Count: n}, JoinTimeout: time.Minute}})
			if err != nil {
				t.Error(err)
			}
			res[i] = r
		}()
	}
	wg.Wait()
	for _, r := range res {
		if r != nil && r.RunID == id {
			return r
		}
	}
	t.Fatalf("no merged run: %+v", res)
	return nil
}

// The workers of a distributed run agree on its interval: one whose plan
// sizes another (its stages' length read from its environment: 6 s in
// one, a minute in the other) is refused when it joins.
func TestWorkersAgreeOnTheInterval(t *testing.T) {
	dir := t.TempDir()
	src := []byte("name: sized\ntarget: http://127.0.0.1:1\nscenarios: [{vus: 1, duration: '${env.RUN_FOR}', flow: [{name: a, url: /a}]}]\n")
	var ps []*plan.Plan
	for i, length := range []string{"6s", "1m"} {
		p, err := plan.Parse(src, filepath.Join(dir, "plan.yaml"), plan.Options{LookupEnv: func(string) (string, bool) { return length, true }})
		if err != nil {
			t.Fatal(err)
		}
		if want := []time.Duration{200 * time.Millisecond, 2 * time.Second}[i]; p.Interval.D != want {
			t.Fatalf("RUN_FOR=%s: intervals of %v, want %v", length, p.Interval.D, want)
		}
		ps = append(ps, p)
	}
	oneRefused(t, filepath.Join(dir, "runs"), "sized-1", ps)
}

// oneRefused runs each plan as a worker of run id, and checks that one of
// them is refused as running another plan than the first to join: they
// differ in what every worker must run alike.
func oneRefused(t *testing.T, out, id string, ps []*plan.Plan) {
	t.Helper()
	errs := make([]error, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Run(context.Background(), p, Config{Out: out, Progress: "none", Stderr: io.Discard,
				Worker: &Worker{RunID: id, Segment: plan.Segment{Index: i, Count: len(ps)}, JoinTimeout: time.Second}})
		}()
	}
	wg.Wait()
	refused := 0
	for _, err := range errs {
		if err != nil && strings.Contains(err.Error(), "runs another plan (or other --set values, or another interval)") {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d of %d workers refused: %v", refused, len(ps), errs)
	}
}
