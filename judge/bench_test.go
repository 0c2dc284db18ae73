package judge

import (
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
)

// BenchmarkDrift24h is what perflab drift does with a 24-hour run of 20
// operations at 10 s intervals (runtest.LongRun): each operation's figures
// over four windows, and the longevity verdict over its 42 series of 8,640
// intervals.
func BenchmarkDrift24h(b *testing.B) {
	rd := runtest.LongRun(b, 20)
	windows := []Window{{Length: 2 * time.Hour}, {Length: 12 * time.Hour}, {Last: true, Length: 12 * time.Hour}, {}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Windows(rd, windows)
		if d := Longevity(rd, LongevityOptions{}); d == nil || !d.Degraded {
			b.Fatalf("the 24-hour run's latency more than doubles after 2 hours: %+v", d)
		}
	}
}
