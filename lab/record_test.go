package lab

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// pathCounter is a server on 127.0.0.1 that counts the requests of each
// path.
type pathCounter struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string]int
}

func newPathCounter(t *testing.T) *pathCounter {
	c := &pathCounter{seen: map[string]int{}}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.seen[r.URL.Path]++
		c.mu.Unlock()
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *pathCounter) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.seen)
}

// A run records its plan whole, the files it includes with it: a plan
// whose fragments come from a file in a directory of its own (which
// includes another) and from one above the plan's directory (which
// includes one below it) runs; its run directory, copied elsewhere with
// the plan's own files deleted, runs it again; so does the run exported
// from the history, which holds every file.
func TestRunRecordsItsIncludes(t *testing.T) {
	srv := newPathCounter(t)
	root := t.TempDir()
	runtest.WriteTree(t, root, runtest.IncludingPlan(srv.URL, 2))
	p, err := plan.Load(filepath.Join(root, runtest.IncludingPlanFile), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "runs")
	run := func(p *plan.Plan) *Result {
		t.Helper()
		res, err := Run(context.Background(), p, Config{Out: out, Progress: "none"})
		if err != nil || res.Outcome != Completed {
			t.Fatalf("run: %+v %v", res, err)
		}
		return res
	}
	want := func(n int) {
		t.Helper()
		if got := srv.counts(); !maps.Equal(got, map[string]int{"/login": n, "/auth": n, "/token": n, "/logout": n}) {
			t.Fatalf("the server saw %v, want each path %d times", got, n)
		}
	}
	first := run(p)
	want(2)
	if s := first.Summary; s.Plan.Source != string(p.Source) || len(p.Included) != 4 || !slices.Equal(s.Plan.Includes, p.Included) {
		t.Errorf("the summary's plan: %+v", s.Plan)
	}

	// The run directory alone, elsewhere.
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.CopyFS(moved, os.DirFS(first.Dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "tests")); err != nil {
		t.Fatal(err)
	}
	again, err := plan.Load(filepath.Join(moved, "plan", "_", "plan.yaml"), plan.Options{})
	if err != nil {
		t.Fatalf("the run directory's plan: %v", err)
	}
	if string(again.Source) != string(p.Source) || !slices.Equal(again.Included, p.Included) {
		t.Errorf("the run directory's plan differs: %+v", again.Included)
	}
	run(again)
	want(4)

	// The history: every file, and the run exported from it runs.
	st, err := store.Open(filepath.Join(out, "perflab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if includes, err := st.PlanIncludes(first.RunID); err != nil || !slices.Equal(includes, p.Included) {
		t.Errorf("the history's files: %+v %v", includes, err)
	}
	exported := filepath.Join(t.TempDir(), "exported")
	if _, err := results.Export(st, first.RunID, exported); err != nil {
		t.Fatal(err)
	}
	st.Close()
	fromHistory, err := plan.Load(filepath.Join(exported, "plan", "_", "plan.yaml"), plan.Options{})
	if err != nil {
		t.Fatalf("the exported run's plan: %v", err)
	}
	run(fromHistory)
	want(6)
}

// The workers of a distributed run record the files the plan includes:
// the merged run's directory and history hold them, and a worker whose
// included file differs from the others' runs another plan, refused
// when it joins.
func TestWorkersRecordIncludes(t *testing.T) {
	srv := newPathCounter(t)
	dir := t.TempDir()
	runtest.WriteTree(t, dir, map[string]string{"frags/login.yaml": "fragments: {login: [{name: login, url: /login}]}\n"})
	src := `name: inc
target: ` + srv.URL + `
interval: 100ms
include: [frags/login.yaml]
scenarios:
  - {name: s, vus: 2, total_iterations: 6, flow: [{use: login}]}
`
	merged := runWorkers(t, dir, src, "inc-1", 2)
	if merged.Outcome != Completed || srv.counts()["/login"] != 6 {
		t.Fatalf("the merged run: %+v; the server saw %v", merged, srv.counts())
	}
	wantFiles := "frags/login.yaml"
	if inc := merged.Summary.Plan.Includes; len(inc) != 1 || inc[0].Path != wantFiles || inc[0].Source != "fragments: {login: [{name: login, url: /login}]}\n" {
		t.Errorf("the merged run's plan: %+v", merged.Summary.Plan)
	}
	if b, err := os.ReadFile(filepath.Join(merged.Dir, "plan", "frags", "login.yaml")); err != nil || !strings.Contains(string(b), "/login") {
		t.Errorf("the merged run's directory: %q %v", b, err)
	}
	st, err := store.Open(filepath.Join(dir, "runs", "perflab.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"inc-1", store.PartID("inc-1", 0), store.PartID("inc-1", 1)} {
		if inc, err := st.PlanIncludes(id); err != nil || len(inc) != 1 || inc[0].Path != wantFiles {
			t.Errorf("%s in the history: %+v %v", id, inc, err)
		}
	}
	st.Close()

	// Two workers, the same plan text, another fragment in one.
	var ps []*plan.Plan
	for i, path := range []string{"/login", "/signin"} {
		wdir := filepath.Join(dir, "worker", string(rune('a'+i)))
		runtest.WriteTree(t, wdir, map[string]string{"frags/login.yaml": "fragments: {login: [{name: login, url: " + path + "}]}\n"})
		p, err := plan.Parse([]byte(src), filepath.Join(wdir, "plan.yaml"), plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	oneRefused(t, filepath.Join(dir, "runs"), "inc-2", ps)
}
