package results_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// An interval's quantiles, read from intervals.csv or from the history
// (where they are stored beside its histogram), are the histogram's own;
// without either they are taken from the histogram.
func TestIntervalQuantilesAsStored(t *testing.T) {
	for _, run := range []*metrics.Run{runtest.Fixture(), runtest.OpenRun()} {
		dir := runtest.WriteRunDir(t, run)
		st, err := store.Open(filepath.Join(t.TempDir(), "h.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		id, err := results.Import(st, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		hs, err := st.Histograms(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			d, err := h.Hist()
			if err != nil {
				t.Fatal(err)
			}
			if h.Quantiles == nil || *h.Quantiles != metrics.QuantilesOf(d) || d.TotalCount() == 0 {
				t.Errorf("%s %s interval %d: stored quantiles %+v, histogram's %+v", id, h.Operation, h.Interval, h.Quantiles, metrics.QuantilesOf(d))
			}
		}
		fromStore, err := results.FromStore(st, id)
		if err != nil {
			t.Fatal(err)
		}
		fromDir, err := results.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, results.IntervalsCSV)); err != nil {
			t.Fatal(err)
		}
		bare, err := results.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for tag, ivs := range fromDir.Intervals {
			for i, iv := range ivs {
				h, err := iv.Histogram()
				if err != nil {
					t.Fatal(err)
				}
				want := metrics.QuantilesOf(h)
				for name, rd := range map[string]*results.Run{"directory": fromDir, "history": fromStore, "log only": bare} {
					if got, err := rd.Intervals[tag][i].Quantiles(); err != nil || got != want {
						t.Errorf("%s: %s interval %d: quantiles %+v, %v; the histogram's %+v", name, tag, i, got, err, want)
					}
				}
				n++
			}
		}
		if n < 2 {
			t.Fatalf("%s: %d intervals compared", id, n)
		}
	}
}

// intervals.csv's percentiles are what a run directory's charts read: a
// row's p50 changed by hand is the p50 read back.
func TestIntervalQuantilesFromCSV(t *testing.T) {
	dir := runtest.WriteRunDir(t, runtest.Fixture())
	path := filepath.Join(dir, results.IntervalsCSV)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var edited bool
	for i, l := range lines {
		f := strings.Split(l, ",")
		if len(f) == len(results.IntervalsHeader) && f[2] == "CREATE ANCHOR" {
			f[10] = "7.5" // p50_ms
			lines[i], edited = strings.Join(f, ","), true
		}
	}
	if !edited {
		t.Fatalf("no row of CREATE ANCHOR in\n%s", b)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	rd, err := results.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ivs := rd.IntervalsOf(1, results.Operation{Scenario: "flow", Name: "CREATE ANCHOR", Kind: metrics.KindStep})
	if len(ivs) != 1 {
		t.Fatalf("%d intervals", len(ivs))
	}
	h, err := ivs[0].Histogram()
	if err != nil {
		t.Fatal(err)
	}
	want := metrics.QuantilesOf(h)
	want.P50 = 7500
	if q, err := ivs[0].Quantiles(); err != nil || q != want || q.N != 100 {
		t.Errorf("quantiles %+v, %v: want %+v (p50 7500 µs from the file, 100 successes)", q, err, want)
	}
}
