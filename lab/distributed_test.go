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
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.yaml")
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
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load(path, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "runs")
	res := make([]*Result, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := Run(context.Background(), p, Config{Out: out, Progress: "none",
				Worker: &Worker{RunID: "inproc-1", Segment: plan.Segment{Index: i, Count: 3}, JoinTimeout: time.Minute}})
			if err != nil {
				t.Error(err)
			}
			res[i] = r
		}()
	}
	wg.Wait()
	var merged *Result
	for _, r := range res {
		if r != nil && r.RunID == "inproc-1" {
			merged = r
		}
	}
	if merged == nil || merged.Outcome != Completed {
		t.Fatalf("no merged run: %+v", res)
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

// The workers of a distributed run agree on its interval: one whose plan
// sizes another (its stages' length read from its environment: 6 s in
// one, a minute in the other) is refused when it joins.
func TestWorkersAgreeOnTheInterval(t *testing.T) {
	dir := t.TempDir()
	src := []byte("name: sized\ntarget: http://127.0.0.1:1\nscenarios: [{vus: 1, duration: '${env.RUN_FOR}', flow: [{name: a, url: /a}]}]\n")
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, length := range []string{"6s", "1m"} {
		p, err := plan.Parse(src, filepath.Join(dir, "plan.yaml"), plan.Options{LookupEnv: func(string) (string, bool) { return length, true }})
		if err != nil {
			t.Fatal(err)
		}
		if want := []time.Duration{200 * time.Millisecond, 2 * time.Second}[i]; p.Interval.D != want {
			t.Fatalf("RUN_FOR=%s: intervals of %v, want %v", length, p.Interval.D, want)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Run(context.Background(), p, Config{Out: filepath.Join(dir, "runs"), Progress: "none", Stderr: io.Discard,
				Worker: &Worker{RunID: "sized-1", Segment: plan.Segment{Index: i, Count: 2}, JoinTimeout: time.Second}})
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
		t.Errorf("%d of 2 workers refused: %v", refused, errs)
	}
}
