package results_test

import (
	"fmt"
	"os"
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

// A large summary.json (a sweep of many stages) is decoded as it is read:
// reading the run allocates, besides the summary it keeps, what the
// decoder needs as it goes, not the file's bytes held whole while they
// are decoded, nor io.ReadAll's growing copies of them. Read whole, a
// 15.6 MB summary.json made 3.3 times its size of garbage, decoded as it
// is read 1.0 (small pieces, taken back as it goes). By hand, ReadDir of
// a 283 MB summary.json of 61,760 stages (/usr/bin/time -v): 1,079 MB at
// the peak read whole, 298 MB decoded as it is read, of which the summary
// kept is 239 MB.
func TestReadDirStreamsSummary(t *testing.T) {
	dir := longRunDir(t, 10)
	rd, err := results.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := rd.Summary
	stage := s.Stages[0]
	for i := 1; len(s.Stages) < 4000; i++ {
		st := stage
		st.Index, st.Name = i, fmt.Sprintf("stage %d", i)
		s.Stages = append(s.Stages, st)
	}
	path := filepath.Join(dir, "summary.json")
	if err := results.WriteFile(path, s.WriteJSON); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	kept, garbage := readDirMemory(t, dir)
	ratio := float64(garbage) / float64(fi.Size())
	t.Logf("summary.json of %d stages, %.1f MB: reading the run kept %.1f MB and made %.1f MB of garbage (%.2f times the file)",
		len(s.Stages), float64(fi.Size())/1e6, float64(kept)/1e6, float64(garbage)/1e6, ratio)
	if fi.Size() < 4<<20 {
		t.Fatalf("summary.json is %d bytes, want a few MB", fi.Size())
	}
	if ratio > 1.5 {
		t.Errorf("reading the run made %.2f times summary.json's size of garbage besides what it keeps, want at most 1.5: the file is read whole", ratio)
	}
}
