package ingest_test

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/ingest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// samples is a Source of a slice, failing with err after it if set.
type samples struct {
	s   []ingest.Sample
	err error
}

func (l *samples) Next() (ingest.Sample, error) {
	if len(l.s) == 0 {
		if l.err != nil {
			return ingest.Sample{}, l.err
		}
		return ingest.Sample{}, io.EOF
	}
	s := l.s[0]
	l.s = l.s[1:]
	return s, nil
}

// A minute of samples from 8 threads, written as they end (out of start
// order, as JMeter writes them): the run's totals are the samples'
// exactly, and each interval holds the samples that started in it.
func TestIntervalsAndTotalsAreExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	t0 := time.Date(2026, 11, 26, 3, 0, 0, 437e6, time.UTC)
	var in []ingest.Sample
	for th := range 8 {
		at := t0.Add(time.Duration(th) * time.Millisecond)
		for at.Before(t0.Add(time.Minute)) {
			ms := 1 + r.Int64N(400)
			s := ingest.Sample{Start: at, Elapsed: time.Duration(ms) * time.Millisecond, Scenario: "users", Name: "GET /", Kind: metrics.KindStep, Thread: "users 1-" + string(rune('1'+th))}
			if r.IntN(20) == 0 {
				s.Err = metrics.HTTP5xx
			}
			in = append(in, s)
			at = at.Add(s.Elapsed + 5*time.Millisecond)
		}
	}
	// In order of their ends.
	ordered := append([]ingest.Sample(nil), in...)
	slicesSortByEnd(ordered)
	out := t.TempDir()
	dir, sum, err := ingest.Run(&samples{s: ordered}, "test", "x.jtl", ingest.Options{Out: out, Interval: time.Second, Lag: 2 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := metrics.NewStats()
	for _, s := range in {
		want.Add(s.Elapsed, s.Elapsed, s.Err, 0)
	}
	op := sum.Stages[0].Operations[0]
	if op.Count != want.Count || op.Errors.Total != want.Errors[metrics.HTTP5xx] || sum.Origin.Samples != int64(len(in)) || len(sum.Origin.NotCarried) != 0 {
		t.Errorf("count %d errors %d, want %d, %d; origin %+v", op.Count, op.Errors.Total, want.Count, want.Errors[metrics.HTTP5xx], sum.Origin)
	}
	rd, err := results.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := rd.Totals.Stages[0].Totals[0].Unpacked()
	if !got.Hist.Equals(want.Hist) || got.OK != want.OK || got.Failed != want.Failed {
		t.Errorf("totals differ from the samples': %+v / %+v", got.OK, want.OK)
	}
	if sum.Stages[0].Load[0].VUs != 8 || !sum.Stages[0].Start.Equal(t0) {
		t.Errorf("load %+v, start %v", sum.Stages[0].Load, sum.Stages[0].Start)
	}
	ivs := rd.IntervalsOf(1, results.Operation{Scenario: "users", Name: "GET /", Kind: metrics.KindStep})
	if total := checkStarts(t, ivs, in); total != op.Count || len(ivs) < 59 {
		t.Errorf("%d intervals hold %d samples of %d", len(ivs), total, op.Count)
	}
}

// checkStarts checks that each interval holds the samples of in that
// started in it, and returns how many they hold.
func checkStarts(t *testing.T, ivs []*results.IntervalData, in []ingest.Sample) (total int64) {
	t.Helper()
	for i, iv := range ivs {
		var n int64
		for _, s := range in {
			if ms := s.Start.UnixMilli(); ms >= iv.StartMs && ms < iv.EndMs {
				n++
			}
		}
		if iv.Count != n || n == 0 {
			t.Errorf("interval %d (%d..%d): %d samples, %d started in it", i, iv.StartMs, iv.EndMs, iv.Count, n)
		}
		total += iv.Count
	}
	return total
}

func slicesSortByEnd(s []ingest.Sample) {
	for i := 1; i < len(s); i++ { // insertion sort: nearly sorted already
		for j := i; j > 0 && s[j].Start.Add(s[j].Elapsed).Before(s[j-1].Start.Add(s[j-1].Elapsed)); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// A sample that comes later than the lag allows is still counted, in the
// first interval not yet written, and the run says so.
func TestLateSample(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	var in []ingest.Sample
	for i := range 30 {
		in = append(in, ingest.Sample{Start: t0.Add(time.Duration(i) * time.Second), Elapsed: time.Millisecond, Scenario: "s", Name: "a", Kind: metrics.KindStep})
	}
	in = append(in, ingest.Sample{Start: t0.Add(2 * time.Second), Elapsed: time.Millisecond, Scenario: "s", Name: "a", Kind: metrics.KindStep})
	_, sum, err := ingest.Run(&samples{s: in}, "test", "x.jtl", ingest.Options{Out: t.TempDir(), Interval: time.Second, Lag: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stages[0].Operations[0].Count != 31 || len(sum.Origin.NotCarried) != 1 || !strings.Contains(sum.Origin.NotCarried[0], "1 samples started more than 5s before") {
		t.Errorf("count %d, notes %q", sum.Stages[0].Operations[0].Count, sum.Origin.NotCarried)
	}
}

// A file that fails part way leaves nothing behind; one without samples
// is refused.
func TestNothingHalfImported(t *testing.T) {
	out := t.TempDir()
	in := []ingest.Sample{{Start: time.Now(), Elapsed: time.Millisecond, Scenario: "s", Name: "a", Kind: metrics.KindStep}}
	bad := errors.New("results.jtl:2: elapsed \"x\" is not a number of milliseconds")
	if _, _, err := ingest.Run(&samples{s: in, err: bad}, "jmeter", "results.jtl", ingest.Options{Out: out}, nil); !errors.Is(err, bad) {
		t.Errorf("error %v", err)
	}
	if _, _, err := ingest.Run(&samples{}, "jmeter", "results.jtl", ingest.Options{Out: out}, nil); err == nil || !strings.Contains(err.Error(), "no samples") {
		t.Errorf("an empty file: %v", err)
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
