package store

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
)

// beforeFailures is the number of migrations of the schema that kept no
// interval's bytes or failures.
const beforeFailures = 12

// A history made before the intervals' bytes and failures were stored is
// migrated: its rows read back with none (bytes -1, no failures); from
// then on each interval's row keeps its bytes received and its failures
// by kind and message, a stage's totals too; Complete stores those it is
// given.
func TestIntervalFailures(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { intervalFailures(t, filepath.Join(t.TempDir(), "h.db")) })
	t.Run("postgres", func(t *testing.T) { intervalFailures(t, postgres(t)) })
}

func intervalFailures(t *testing.T, path string) {
	old := oldStore(t, path, beforeFailures)
	t0 := time.UnixMilli(1_700_000_000_000)
	if err := old.Begin("old", "shop", []byte("name: shop\n"), t0, nil); err != nil {
		t.Fatal(err)
	}
	enc := string(metrics.Encode(metrics.NewHistogram()))
	if _, err := old.db.Exec(old.q(`INSERT INTO histograms (run_id, phase, phase_name, scenario, operation, kind, ivl, start_ms, end_ms, count, errors, hist, failed)
		VALUES (?, 1, 'all', 's', 'a', 'step', 0, ?, ?, 3, 1, ?, '')`), "old", t0.UnixMilli(), t0.Add(time.Second).UnixMilli(), enc); err != nil {
		t.Fatal(err)
	}
	st := migrated(t, old, path)
	defer st.Close()
	hs, err := st.Histograms("old")
	if err != nil || len(hs) != 1 || hs[0].Bytes != -1 || hs[0].Failures != nil || hs[0].Errors != 1 {
		t.Fatalf("the old row: %+v, %v", hs, err)
	}

	if err := st.Begin("new", "shop", []byte("name: shop\n"), t0, nil); err != nil {
		t.Fatal(err)
	}
	ph := &metrics.Phase{Index: 1, Name: "all", Start: t0, End: t0.Add(time.Second), Ops: []metrics.Op{{Name: "a", Kind: metrics.KindStep, Scenario: "s"}}}
	a := metrics.NewStats()
	a.Add(2*time.Millisecond, 0, metrics.OK, 100)
	for range 2 {
		a.AddResult(time.Millisecond, 0, metrics.HTTP5xx, 20, "status 503")
	}
	a.Add(time.Millisecond, 0, metrics.Timeout, 0) // counted without its words
	if err := st.Interval("new", ph, &metrics.Interval{Index: 0, Start: t0, End: t0.Add(time.Second), Ops: []*metrics.Stats{a}}); err != nil {
		t.Fatal(err)
	}
	hs, err = st.Histograms("new")
	if err != nil || len(hs) != 1 {
		t.Fatalf("%+v, %v", hs, err)
	}
	want := []metrics.ErrorMessage{{Kind: "http_5xx", Message: "HTTP 503 Service Unavailable", Count: 2}, {Kind: "timeout", Count: 1}}
	if hs[0].Bytes != 140 || !reflect.DeepEqual(hs[0].Failures, want) {
		t.Errorf("the interval: %d bytes, failures %+v; want 140, %+v", hs[0].Bytes, hs[0].Failures, want)
	}

	if err := st.Begin("imported", "shop", []byte("name: shop\n"), t0, nil); err != nil {
		t.Fatal(err)
	}
	in := []Encoded{{Phase: 1, PhaseName: "all", Scenario: "s", Operation: "a", Kind: "step", Interval: 0, StartMs: t0.UnixMilli(), EndMs: t0.Add(time.Second).UnixMilli(),
		Count: 5, Errors: 2, Hist: enc, PeakVUs: -1, Bytes: 700, Failures: want}}
	if err := st.Complete("imported", "completed", "", t0.Add(time.Second), []byte(`{}`), nil, in); err != nil {
		t.Fatal(err)
	}
	hs, err = st.Histograms("imported")
	if err != nil || len(hs) != 1 || hs[0].Bytes != 700 || !reflect.DeepEqual(hs[0].Failures, want) {
		t.Fatalf("imported rows %+v, %v", hs, err)
	}
}
