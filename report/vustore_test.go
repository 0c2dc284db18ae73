package report_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// runPlan runs the plan src in dir: its run directory under dir/runs,
// kept in the history dir/h.db.
func runPlan(t *testing.T, dir, src string, with ...func(*lab.Config)) *lab.Result {
	t.Helper()
	path := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load(path, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := lab.Config{Out: filepath.Join(dir, "runs"), Store: filepath.Join(dir, "h.db"), Progress: "none", Stdout: new(bytes.Buffer), Stderr: new(bytes.Buffer)}
	for _, f := range with {
		f(&cfg)
	}
	res, err := lab.Run(context.Background(), p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A run of 2 VUs kept in the history reads back its scenario's active
// VUs per interval: results.FromStore gives 2 in every whole interval,
// each interval as its run directory has it, and so do the run exported
// from the history and the run directory imported into another; the
// report of the stored run charts them (vus-over-time).
func TestStoredRunVUs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
	}))
	defer srv.Close()
	dir := t.TempDir()
	res := runPlan(t, dir, "name: vus\ntarget: "+srv.URL+"\ninterval: 250ms\nscenarios:\n"+
		"  - {name: buy, vus: 2, duration: 1500ms, flow: [{name: item, url: /item}]}\n")
	st, err := store.Open(filepath.Join(dir, "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fromDir, err := results.ReadDir(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	id := fromDir.Summary.RunID
	stored, err := results.FromStore(st, id)
	if err != nil {
		t.Fatal(err)
	}
	ph := stored.Summary.Stages[0]
	buy := results.Operation{Name: "buy", Kind: metrics.KindScenario, Scenario: "buy"}
	nominal := stored.Summary.IntervalLength()
	ivs := stored.IntervalsOf(ph.Index, buy)
	whole := 0
	for _, iv := range ivs {
		if !iv.Partial(nominal) {
			whole++
			if iv.PeakVUs != 2 {
				t.Errorf("stored interval at +%d ms: %d VUs, want the plan's 2", iv.StartMs-ph.Start.UnixMilli(), iv.PeakVUs)
			}
		}
	}
	if whole < 3 {
		t.Fatalf("%d whole intervals of buy stored, want 6 or so", whole)
	}
	vusOf := func(rd *results.Run) map[int64]int64 {
		out := map[int64]int64{}
		for _, iv := range rd.IntervalsOf(ph.Index, buy) {
			out[iv.StartMs] = iv.PeakVUs
		}
		return out
	}
	want := vusOf(fromDir)
	same := func(what string, rd *results.Run) {
		t.Helper()
		if got := vusOf(rd); len(got) != len(want) {
			t.Errorf("%s: VUs of %d intervals, the run directory's of %d", what, len(got), len(want))
		} else {
			for start, v := range want {
				if got[start] != v {
					t.Errorf("%s: interval at %d: %d VUs, the run directory's %d", what, start, got[start], v)
				}
			}
		}
	}
	same("the stored run", stored)
	exported := filepath.Join(dir, "exported")
	if _, err := results.Export(st, id, exported); err != nil {
		t.Fatal(err)
	}
	if rd, err := results.ReadDir(exported); err != nil {
		t.Fatal(err)
	} else {
		same("the run exported", rd)
	}
	other, err := store.Open(filepath.Join(dir, "other.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := results.Import(other, res.Dir, nil); err != nil {
		t.Fatal(err)
	}
	if rd, err := results.FromStore(other, id); err != nil {
		t.Fatal(err)
	} else {
		same("the run imported", rd)
	}

	plots := writeReport(t, stored, filepath.Join(dir, "report.html"))
	i := slices.IndexFunc(plots, func(p report.Plot) bool { return p.Slug == "vus-over-time" })
	if i < 0 || len(plots[i].Series) != 1 || plots[i].Series[0].Name != "buy" {
		t.Fatalf("the stored run's report has no active VUs chart of buy: %d charts", len(plots))
	}
	for _, iv := range ivs {
		if !iv.Partial(nominal) {
			if v := valueAt(t, plots[i], 0, float64(iv.StartMs-ph.Start.UnixMilli())/1000); v != 2 {
				t.Errorf("charted VUs %v at +%d ms, want 2", v, iv.StartMs-ph.Start.UnixMilli())
			}
		}
	}
}
