package store

import (
	"path/filepath"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/metrics"
)

// A history made before the failed operations' histograms were stored
// (schema 10) is migrated: its rows read back without one, and the
// intervals stored from then on keep theirs.
func TestFailedHistogramMigration(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { failedMigration(t, filepath.Join(t.TempDir(), "h.db")) })
	t.Run("postgres", func(t *testing.T) { failedMigration(t, postgres(t)) })
}

func failedMigration(t *testing.T, path string) {
	old := oldStore(t, path, 10)
	t0 := time.UnixMilli(1_700_000_000_000)
	if err := old.Begin("old", "shop", []byte("name: shop\n"), t0, nil); err != nil {
		t.Fatal(err)
	}
	// How that perflab stored an interval.
	enc := string(metrics.Encode(metrics.NewHistogram()))
	if _, err := old.db.Exec(old.q(`INSERT INTO histograms (run_id, phase, phase_name, scenario, operation, kind, ivl, start_ms, end_ms, count, errors, hist)
		VALUES (?, 1, 'all', 's', 'a', 'step', 0, ?, ?, 3, 3, ?)`), "old", t0.UnixMilli(), t0.Add(time.Second).UnixMilli(), enc); err != nil {
		t.Fatal(err)
	}
	st := migrated(t, old, path)
	defer st.Close()
	hs, err := st.Histograms("old")
	if err != nil || len(hs) != 1 || hs[0].Failed != "" || hs[0].Errors != 3 {
		t.Fatalf("the old row: %+v, %v", hs, err)
	}
	if err := st.Begin("new", "shop", []byte("name: shop\n"), t0, nil); err != nil {
		t.Fatal(err)
	}
	ph := &metrics.Phase{Index: 1, Name: "all", Ops: []metrics.Op{{Name: "a", Kind: metrics.KindStep, Scenario: "s"}}}
	s := metrics.NewStats()
	s.Add(2*time.Millisecond, 0, metrics.OK, 0)
	s.Add(20*time.Millisecond, 0, metrics.HTTP5xx, 0)
	if err := st.Interval("new", ph, &metrics.Interval{Start: t0, End: t0.Add(time.Second), Ops: []*metrics.Stats{s}}); err != nil {
		t.Fatal(err)
	}
	hs, err = st.Histograms("new")
	if err != nil || len(hs) != 1 {
		t.Fatalf("%+v, %v", hs, err)
	}
	if d, err := hdr.Decode([]byte(hs[0].Failed)); err != nil || !d.Equals(s.FailHist) || d.TotalCount() != 1 {
		t.Errorf("the failed operation's histogram, stored after the migration: %v", err)
	}
}
