package report

import (
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/metrics"
)

// longRun is a 24-hour run at 10 s intervals with ops operations: the
// shape of the check-in/check-out report's longevity test.
func longRun(b *testing.B, ops int) *RunData {
	b.Helper()
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	const intervals = 8640
	ph := PhaseSummary{Index: 1, Name: "users=20", Start: t0, End: t0.Add(24 * time.Hour), Duration: 86400}
	rd := &RunData{Summary: &Summary{Format: Format, RunID: "long", Stages: []PhaseSummary{ph}}, Intervals: map[string][]*IntervalData{}}
	r := rand.New(rand.NewPCG(1, 2))
	h := metrics.NewHistogram()
	for o := 0; o < ops; o++ {
		name := fmt.Sprintf("API %02d", o)
		rd.Summary.Stages[0].Operations = append(rd.Summary.Stages[0].Operations, Operation{Name: name, Kind: metrics.KindStep, Scenario: "circ"})
		tag := Tag("s1", metrics.Op{Scenario: "circ", Name: name})
		for i := 0; i < intervals; i++ {
			h.Reset()
			level := 2000.0
			if i > 720 {
				level = 4600
			}
			for k := 0; k < 200; k++ { // 20 users x 10 s at ~1 request/s
				h.RecordValue(int64(level * (0.5 + r.Float64())))
			}
			enc, _ := h.Encode(hdr.V2CompressedEncodingCookieBase)
			start := t0.Add(time.Duration(i) * 10 * time.Second).UnixMilli()
			rd.Intervals[tag] = append(rd.Intervals[tag], NewIntervalData(start, start+10000, h.TotalCount(), 0, string(enc)))
		}
	}
	return rd
}

// BenchmarkReport24h renders the HTML report of a 24-hour run of 20
// operations at 10 s intervals: 172,800 interval histograms (goal: under 5 s).
func BenchmarkReport24h(b *testing.B) {
	rd := longRun(b, 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := WriteHTML(io.Discard, rd); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDrift24h is the drift analysis of the same run.
func BenchmarkDrift24h(b *testing.B) {
	rd := longRun(b, 20)
	windows := []Window{{Length: 2 * time.Hour}, {Length: 12 * time.Hour}, {Last: true, Length: 12 * time.Hour}, {}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Drift(rd, 95, windows)
	}
}
