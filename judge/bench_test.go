package judge

import (
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
)

// BenchmarkDrift24h is the drift analysis of the same run.
func BenchmarkDrift24h(b *testing.B) {
	rd := runtest.LongRun(b, 20)
	windows := []Window{{Length: 2 * time.Hour}, {Length: 12 * time.Hour}, {Last: true, Length: 12 * time.Hour}, {}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Drift(rd, 95, windows)
	}
}
