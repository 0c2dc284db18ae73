package results_test

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// longRunDir writes a run directory of n intervals of the fixture's
// operations, every one with a few latencies, some failed.
func longRunDir(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	t0 := runtest.T0
	rd, err := results.CreateDir(dir, "long-run", "long", t0, []byte("name: long\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	run := runtest.Fixture()
	ph := run.Stages[0]
	ph.Start, ph.End = t0, t0.Add(time.Duration(n)*100*time.Millisecond)
	run.Start, run.End = ph.Start, ph.End
	sink := rd.Sink(ph)
	iv := &metrics.Interval{}
	for range ph.Ops {
		iv.Ops = append(iv.Ops, metrics.NewStats())
	}
	for i := range n {
		iv.Index, iv.Start, iv.End = i, t0.Add(time.Duration(i)*100*time.Millisecond), t0.Add(time.Duration(i+1)*100*time.Millisecond)
		for j, st := range iv.Ops {
			st.Reset()
			for v := range 5 {
				st.Add(time.Duration(1+v+i%7+j)*time.Millisecond, time.Millisecond, metrics.OK, 2)
			}
			if i%10 == 0 {
				st.AddResult(3*time.Millisecond, time.Millisecond, metrics.HTTP5xx, 0, "503 Service Unavailable")
			}
		}
		if err := sink.Interval(iv); err != nil {
			t.Fatal(err)
		}
	}
	if err := rd.Finish(results.Summarize(run, runtest.Host), run); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readDirMemory is what reading a run directory back (ReadDir) keeps,
// and what it allocates that it does not keep, in bytes.
func readDirMemory(t *testing.T, dir string) (kept, garbage int64) {
	t.Helper()
	var before, read, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rd, err := results.ReadDir(dir)
	runtime.ReadMemStats(&read)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(rd)
	kept = int64(after.HeapAlloc) - int64(before.HeapAlloc)
	return kept, int64(read.TotalAlloc-before.TotalAlloc) - kept
}

// The end of a run reads its directory back to judge its drift: a long
// run's intervals are streamed from its files, each kept once, as a
// compact encoding, never held whole a second time (intervals.csv and
// interval_errors.csv as rows of strings, a map of every interval to join
// them, every line of the log as text). What it allocates besides what it
// keeps grows by a few bytes an interval; what it keeps, by the encoding
// and its counts. Reading a file whole made 1.2 KB of garbage an interval
// and operation.
func TestReadDirStreamsIntervals(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10,000 intervals")
	}
	const small, large = 2000, 10000
	keptS, garbageS := readDirMemory(t, longRunDir(t, small))
	keptL, garbageL := readDirMemory(t, longRunDir(t, large))
	lines := int64(large-small) * int64(len(runtest.Fixture().Stages[0].Ops))
	perKept, perGarbage := (keptL-keptS)/lines, (garbageL-garbageS)/lines
	t.Logf("per interval and operation: %d bytes kept, %d of garbage (%d and %d intervals: kept %d and %d KB, garbage %d and %d KB)",
		perKept, perGarbage, small, large, keptS>>10, keptL>>10, garbageS>>10, garbageL>>10)
	if perGarbage > 300 {
		t.Errorf("reading a run back made %d bytes of garbage an interval and operation, want at most 300", perGarbage)
	}
	if perKept > 400 {
		t.Errorf("reading a run back kept %d bytes an interval and operation, want at most 400", perKept)
	}
}
