package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
)

// beforePeakVUs is the number of migrations of the schema that kept no
// interval's active VUs.
const beforePeakVUs = 11

// A history made before the intervals' active VUs were stored is
// migrated: its rows read back with none (-1); from then on a scenario's
// own rows of an interval keep theirs, also in an interval where VUs were
// busy though no iteration ended, and the other rows, and a stage's
// totals, none; Complete stores those it is given.
func TestPeakVUs(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { peakVUs(t, filepath.Join(t.TempDir(), "h.db")) })
	t.Run("postgres", func(t *testing.T) { peakVUs(t, postgres(t)) })
}

func peakVUs(t *testing.T, path string) {
	old := oldStore(t, path, beforePeakVUs)
	t0 := time.UnixMilli(1_700_000_000_000)
	if err := old.Begin("old", "shop", []byte("name: shop\n"), t0, nil); err != nil {
		t.Fatal(err)
	}
	// How that perflab stored an interval of a scenario.
	enc := string(metrics.Encode(metrics.NewHistogram()))
	if _, err := old.db.Exec(old.q(`INSERT INTO histograms (run_id, phase, phase_name, scenario, operation, kind, ivl, start_ms, end_ms, count, errors, hist, failed)
		VALUES (?, 1, 'all', 's', 's', 'scenario', 0, ?, ?, 3, 0, ?, '')`), "old", t0.UnixMilli(), t0.Add(time.Second).UnixMilli(), enc); err != nil {
		t.Fatal(err)
	}
	st := migrated(t, old, path)
	defer st.Close()
	hs, err := st.Histograms("old")
	if err != nil || len(hs) != 1 || hs[0].PeakVUs != -1 || hs[0].Count != 3 {
		t.Fatalf("the old row: %+v, %v", hs, err)
	}

	if err := st.Begin("new", "shop", []byte("name: shop\n"), t0, nil); err != nil {
		t.Fatal(err)
	}
	ph := &metrics.Phase{Index: 1, Name: "all", Start: t0, End: t0.Add(2 * time.Second),
		Ops: []metrics.Op{{Name: "s", Kind: metrics.KindScenario, Scenario: "s"}, {Name: "a", Kind: metrics.KindStep, Scenario: "s"}}}
	ops := func(n int) []*metrics.Stats {
		sc, step := metrics.NewStats(), metrics.NewStats()
		for range n {
			sc.Add(4*time.Millisecond, 0, metrics.OK, 0)
			step.Add(2*time.Millisecond, 0, metrics.OK, 0)
		}
		return []*metrics.Stats{sc, step}
	}
	// Interval 0: 5 iterations ended, 3 VUs at most; interval 1: 2 VUs
	// busy in an iteration that did not end in it.
	for i, iv := range []*metrics.Interval{
		{Index: 0, Start: t0, End: t0.Add(time.Second), Ops: ops(5), PeakVUs: map[string]int64{"s": 3}},
		{Index: 1, Start: t0.Add(time.Second), End: t0.Add(2 * time.Second), Ops: ops(0), PeakVUs: map[string]int64{"s": 2}},
	} {
		if err := st.Interval("new", ph, iv); err != nil {
			t.Fatalf("interval %d: %v", i, err)
		}
	}
	ph.Totals = ops(5)
	if err := st.Finish("new", "completed", "", ph.End, []byte(`{}`), nil, []*metrics.Phase{ph}); err != nil {
		t.Fatal(err)
	}
	hs, err = st.Histograms("new")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		kind       string
		ivl        int
		count, vus int64
	}
	var got []row
	for _, h := range hs {
		got = append(got, row{h.Kind, h.Interval, h.Count, h.PeakVUs})
	}
	want := []row{{"step", -1, 5, -1}, {"step", 0, 5, -1}, {"scenario", -1, 5, -1}, {"scenario", 0, 5, 3}, {"scenario", 1, 0, 2}}
	if len(got) != len(want) {
		t.Fatalf("rows %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}

	// Complete (an import, a distributed run) stores what it is given.
	if err := st.Begin("imported", "shop", []byte("name: shop\n"), t0, nil); err != nil {
		t.Fatal(err)
	}
	in := []Encoded{
		{Phase: 1, PhaseName: "all", Scenario: "s", Operation: "s", Kind: "scenario", Interval: 0, StartMs: t0.UnixMilli(), EndMs: t0.Add(time.Second).UnixMilli(), Count: 5, Hist: enc, PeakVUs: 7},
		{Phase: 1, PhaseName: "all", Scenario: "s", Operation: "s", Kind: "scenario", Interval: -1, StartMs: t0.UnixMilli(), EndMs: t0.Add(time.Second).UnixMilli(), Count: 5, Hist: enc, PeakVUs: -1},
	}
	if err := st.Complete("imported", "completed", "", t0.Add(time.Second), []byte(`{}`), nil, in); err != nil {
		t.Fatal(err)
	}
	hs, err = st.Histograms("imported")
	if err != nil || len(hs) != 2 || hs[0].Interval != -1 || hs[0].PeakVUs != -1 || hs[1].PeakVUs != 7 {
		t.Fatalf("imported rows %+v, %v", hs, err)
	}
}
