package report

import (
	"io"
	"testing"

	"github.com/perflab/perflab/internal/runtest"
)

// BenchmarkReport24h renders the HTML report of a 24-hour run of 20
// operations at 10 s intervals: 172,800 interval histograms (goal: under 5 s).
func BenchmarkReport24h(b *testing.B) {
	rd := runtest.LongRun(b, 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := WriteHTML(io.Discard, rd); err != nil {
			b.Fatal(err)
		}
	}
}
