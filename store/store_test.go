package store

import (
	"path/filepath"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
)

// The tests run against SQLite, and against the PostgreSQL server named by
// PERFLAB_TEST_POSTGRES (which .ci/run starts; required in CI).

func TestRoundTrip(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { roundTrip(t, filepath.Join(t.TempDir(), "h.db")) })
	t.Run("postgres", func(t *testing.T) { roundTrip(t, postgres(t)) })
}

// postgres returns the DSN of PERFLAB_TEST_POSTGRES in a schema of this
// package's own, emptied first: other packages' tests use the same server at
// the same time.
func postgres(t *testing.T) string {
	dsn := testenv.Getenv(t, "PERFLAB_TEST_POSTGRES", ".ci/run starts PostgreSQL and sets it")
	resetSchema(t, dsn)
	return WithSearchPath(dsn, "store_test")
}

func roundTrip(t *testing.T, path string) {
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.UnixMilli(1_700_000_000_000)
	ph := &metrics.Phase{Index: 1, Name: "users=5", Start: t0, End: t0.Add(20 * time.Second),
		Ops: []metrics.Op{{Name: "check-out", Kind: metrics.KindTransaction, Scenario: "circ"}, {Name: "idle", Kind: metrics.KindStep, Scenario: "circ"}}}
	for _, run := range []struct {
		id, release string
	}{{"r1", "Goldenrod"}, {"r2", "Honeysuckle"}} {
		if err := st.Begin(run.id, "checkin-checkout", []byte("name: x\n"), t0, map[string]string{"release": run.release, "env": "lab"}); err != nil {
			t.Fatal(err)
		}
	}
	var want []*metrics.Stats
	for i := 0; i < 2; i++ {
		iv := &metrics.Interval{Index: i, Start: t0.Add(time.Duration(i) * 10 * time.Second), End: t0.Add(time.Duration(i+1) * 10 * time.Second),
			Ops: []*metrics.Stats{metrics.NewStats(), metrics.NewStats()}}
		for v := 1; v <= 100*(i+1); v++ {
			iv.Ops[0].Add(time.Duration(v)*time.Millisecond, 0, metrics.OK, 0)
		}
		iv.Ops[0].Add(time.Second, 0, metrics.Timeout, 0)
		want = append(want, iv.Ops[0])
		if err := st.Interval("r1", ph, iv); err != nil {
			t.Fatal(err)
		}
	}
	ph.Totals = []*metrics.Stats{metrics.NewStats(), metrics.NewStats()}
	for _, s := range want {
		ph.Totals[0].Merge(s)
	}
	if err := st.Finish("r1", "completed", "", ph.End, []byte(`{"format":"x"}`), []byte(`{"part":"stage"}`), []*metrics.Phase{ph}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	// Reopened: the schema is not migrated twice and the data is there.
	st, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hs, err := st.Histograms("r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 3 { // the idle op has no data: only check-out's 2 intervals and its total
		t.Fatalf("%d histograms, want 3", len(hs))
	}
	if b, err := st.Totals("r1"); err != nil || string(b) != `{"part":"stage"}` {
		t.Errorf("totals read back %q, %v", b, err)
	}
	decoded := func(h Histogram) *hdr.Histogram {
		d, err := h.Hist()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if hs[0].Interval != -1 || !decoded(hs[0]).Equals(ph.Totals[0].Hist) || hs[0].Count != 302 || hs[0].Errors != 2 {
		t.Errorf("total: interval %d, count %d, errors %d", hs[0].Interval, hs[0].Count, hs[0].Errors)
	}
	for i, h := range hs[1:] {
		if h.Interval != i || !decoded(h).Equals(want[i].Hist) || !h.Start.Equal(t0.Add(time.Duration(i)*10*time.Second)) {
			t.Errorf("interval %d: stored histogram differs", i)
		}
	}
	// The failed operations' latency beside the successful ones': the
	// stage's and each interval's one timeout.
	for i, h := range hs {
		ko := ph.Totals[0].FailHist
		if i > 0 {
			ko = want[i-1].FailHist
		}
		if d, err := hdr.Decode([]byte(h.Failed)); err != nil || !d.Equals(ko) || d.TotalCount() != h.Errors {
			t.Errorf("interval %d: the failed operations' histogram stored differs (%v)", h.Interval, err)
		}
	}
	for _, h := range hs { // stored beside each histogram: its quantiles
		if q := metrics.QuantilesOf(decoded(h)); h.Quantiles == nil || *h.Quantiles != q || q.N != h.Count-h.Errors {
			t.Errorf("interval %d: quantiles %+v, the histogram's %+v", h.Interval, h.Quantiles, q)
		}
	}
	runs, err := st.Runs(Filter{Labels: map[string]string{"release": "Honeysuckle"}})
	if err != nil || len(runs) != 1 || runs[0].ID != "r2" || runs[0].Labels["env"] != "lab" || runs[0].Status != "running" {
		t.Errorf("label filter: %+v, %v", runs, err)
	}
	if runs, _ := st.Runs(Filter{Plan: "checkin-checkout"}); len(runs) != 2 {
		t.Errorf("plan filter: %d runs", len(runs))
	}
	if b, err := st.Summary("r1"); err != nil || string(b) != `{"format":"x"}` {
		t.Errorf("summary %q, %v", b, err)
	}
	if _, err := st.Summary("nope"); err == nil {
		t.Error("unknown run found")
	}
	if _, err := st.Summary("r2"); err == nil {
		t.Error("an unfinished run has no summary")
	}
}

// An open model's service time and start delay are stored beside its
// latency, interval by interval and for the stage, and a closed model's
// operations have none.
func TestOpenModelDurations(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { openModelDurations(t, "sqlite", filepath.Join(t.TempDir(), "h.db")) })
	t.Run("postgres", func(t *testing.T) { openModelDurations(t, "postgres", postgres(t)) })
}

func openModelDurations(t *testing.T, name, dsn string) {
	st, err := Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.UnixMilli(1_700_000_000_000)
	id := "open-" + name
	if err := st.Begin(id, "open", []byte("name: open\n"), t0, nil); err != nil {
		t.Fatal(err)
	}
	ph := &metrics.Phase{Index: 1, Name: "all", Start: t0, End: t0.Add(time.Second),
		Ops: []metrics.Op{{Name: "a", Kind: metrics.KindStep, Scenario: "s"}, {Name: "c", Kind: metrics.KindStep, Scenario: "s"}}}
	open, closed := metrics.NewOpenStats(), metrics.NewStats()
	for v := 1; v <= 50; v++ {
		svc := time.Duration(v) * time.Millisecond
		open.Add(svc+time.Duration(v)*10*time.Microsecond, svc, metrics.OK, 0)
		closed.Add(svc, svc, metrics.OK, 0)
	}
	iv := &metrics.Interval{Start: t0, End: t0.Add(time.Second), Ops: []*metrics.Stats{open, closed}}
	if err := st.Interval(id, ph, iv); err != nil {
		t.Fatal(err)
	}
	ph.Totals = iv.Ops
	if err := st.Finish(id, "completed", "", ph.End, []byte(`{}`), nil, []*metrics.Phase{ph}); err != nil {
		t.Fatal(err)
	}
	hs, err := st.Histograms(id)
	if err != nil || len(hs) != 4 {
		t.Fatalf("%d histograms, %v; want a's and c's interval and total", len(hs), err)
	}
	for _, h := range hs {
		if h.Operation == "c" {
			if h.ServiceTime != "" || h.StartDelay != "" {
				t.Errorf("closed model operation c has a service time or start delay stored")
			}
			continue
		}
		for what, enc := range map[string]struct {
			got  string
			want *hdr.Histogram
		}{"service time": {h.ServiceTime, open.Svc}, "start delay": {h.StartDelay, open.Delay}} {
			d, err := hdr.Decode([]byte(enc.got))
			if err != nil || !d.Equals(enc.want) {
				t.Errorf("a, interval %d: %s stored differs (%v)", h.Interval, what, err)
			}
		}
	}
}
