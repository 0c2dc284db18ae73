package results_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// generatorRun is one load generator's hour at 10 s intervals with 20
// operations, as a distributed run's part: its totals and 360 interval
// histograms an operation.
func generatorRun(b *testing.B, seed uint64) *results.Run {
	b.Helper()
	const ops, intervals = 20, 360
	r := rand.New(rand.NewPCG(seed, 1))
	run := &metrics.Run{ID: "part", PlanName: "bench", Interval: 10 * time.Second, Start: runtest.T0, End: runtest.T0.Add(time.Hour), Status: metrics.StatusCompleted}
	ph := &metrics.Phase{Index: 1, Name: "users=20", Start: runtest.T0, End: runtest.T0.Add(time.Hour), Spans: map[string]time.Duration{}}
	ivs := map[string][]*results.IntervalData{}
	for o := 0; o < ops; o++ {
		op := metrics.Op{Name: fmt.Sprintf("API %02d", o), Kind: metrics.KindStep, Scenario: "circ"}
		total := metrics.NewStats()
		tag := results.Tag("s1", op)
		for i := 0; i < intervals; i++ {
			st := metrics.NewStats()
			for k := 0; k < 200; k++ {
				d := time.Duration(2e6 * (0.5 + r.Float64()))
				st.Add(d, d, metrics.OK, 0)
			}
			start := runtest.T0.Add(time.Duration(i) * 10 * time.Second).UnixMilli()
			ivs[tag] = append(ivs[tag], results.NewIntervalData(start, start+10000, st.Count, 0, string(metrics.Encode(st.Hist))))
			total.Merge(st)
		}
		total.Pack()
		ph.Ops, ph.Totals = append(ph.Ops, op), append(ph.Totals, total)
	}
	run.Stages = []*metrics.Phase{ph}
	return &results.Run{Source: "part", Summary: results.Summarize(run, runtest.Host), Intervals: ivs, Totals: results.TotalsOf(run)}
}

// BenchmarkMerge32x1h merges 32 load generators' hour of 20 operations at
// 10 s intervals: 230,400 interval histograms into 7,200, and 640 totals
// into 20, what a report of a distributed run does first.
func BenchmarkMerge32x1h(b *testing.B) {
	var parts []*results.Run
	for i := 0; i < 32; i++ {
		parts = append(parts, generatorRun(b, uint64(i)))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := results.Merge(parts); err != nil {
			b.Fatal(err)
		}
	}
}
