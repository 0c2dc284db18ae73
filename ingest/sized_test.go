package ingest_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/perflab/perflab/ingest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// threads is samples of n threads of a scenario from t0 for d, each
// thread's samples one after another (1..maxMs ms, 5 ms apart), in the
// order they end, as JMeter writes them.
func threads(r *rand.Rand, scenario string, n int, t0 time.Time, d time.Duration, maxMs int64) []ingest.Sample {
	var in []ingest.Sample
	for th := range n {
		at := t0.Add(time.Duration(th) * time.Millisecond)
		for at.Before(t0.Add(d)) {
			s := ingest.Sample{Start: at, Elapsed: time.Duration(1+r.Int64N(maxMs)) * time.Millisecond, Scenario: scenario, Name: "GET /", Kind: metrics.KindStep, Thread: scenario + string(rune('a'+th))}
			in = append(in, s)
			at = at.Add(s.Elapsed + 5*time.Millisecond)
		}
	}
	slicesSortByEnd(in)
	return in
}

// Without --interval, an import's intervals are sized to its longest
// stage as a plan's are (at least 30 in it, a round value), learnt as
// the file is read: each interval holds exactly the samples that started
// in it, whatever the cells it was gathered in while the run's length
// was not known, and an interval cut short by its stage's edges is
// partial.
func TestImportSizesTheInterval(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 3, 0, 0, 437e6, time.UTC)
	op := results.Operation{Scenario: "users", Name: "GET /", Kind: metrics.KindStep}
	for _, c := range []struct {
		name string
		d    time.Duration
		lag  time.Duration
		want time.Duration
	}{
		{"6 s", 6 * time.Second, 0, 200 * time.Millisecond},
		{"20 s, its cells coarsened twice", 20 * time.Second, 0, 500 * time.Millisecond},
		{"20 s, a lag shorter than the run", 20 * time.Second, 2 * time.Second, 500 * time.Millisecond},
		{"a minute", time.Minute, 0, 2 * time.Second},
		{"6 minutes, sized before the end", 6 * time.Minute, 10 * time.Second, 10 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(c.d)))
			in := threads(r, "users", 4, t0, c.d, 400)
			dir, sum, err := ingest.Run(&samples{s: in}, "test", "x.jtl", ingest.Options{Out: t.TempDir(), Lag: c.lag}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if sum.IntervalLength() != c.want {
				t.Fatalf("interval %v, want %v", sum.IntervalLength(), c.want)
			}
			rd, err := results.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			ivs := rd.IntervalsOf(1, op)
			total := checkStarts(t, ivs, in)
			for i, iv := range ivs {
				// Intervals are aligned to the first sample read, which
				// JMeter wrote when it ended: the first interval, from
				// the earliest start, is cut short by the stage's start,
				// the last may be by its end, the others are whole.
				length := time.Duration(iv.EndMs-iv.StartMs) * time.Millisecond
				edge := i == 0 || i == len(ivs)-1
				if iv.Partial(c.want) != (length < c.want) || !edge && length != c.want {
					t.Errorf("interval %d of %d: %v, partial %v", i, len(ivs), length, iv.Partial(c.want))
				}
			}
			if total != int64(len(in)) || total != sum.Stages[0].Operations[0].Count {
				t.Errorf("the intervals hold %d samples, the file %d, the totals %d", total, len(in), sum.Stages[0].Operations[0].Count)
			}
			if n := len(ivs); n < metrics.SizedIntervals || n > int(c.d/c.want)+2 {
				t.Errorf("%d intervals of %v in %v", n, c.want, c.d)
			}
		})
	}
}

// A JMeter sweep of thread groups run one after another, after a setUp
// thread group of half a second: the interval is sized to the longest
// stage, not to the setUp's.
func TestImportSizesToTheLongestStage(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(1, 2))
	in := threads(r, "setUp", 1, t0, 500*time.Millisecond, 20)
	at := t0.Add(time.Second)
	for _, g := range []string{"users-2", "users-4", "users-8"} {
		in = append(in, threads(r, g, 2, at, time.Minute, 50)...)
		at = at.Add(time.Minute + time.Second)
	}
	_, sum, err := ingest.Run(&samples{s: in}, "test", "x.jtl", ingest.Options{Out: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Stages) != 4 || sum.IntervalLength() != 2*time.Second {
		t.Errorf("%d stages, intervals of %v; want 4 and 2s", len(sum.Stages), sum.IntervalLength())
	}
}
