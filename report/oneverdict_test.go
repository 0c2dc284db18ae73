package report

import (
	"testing"

	"github.com/perflab/perflab/monitor"
)

// The resources table's leak column says the drift's verdict of the same
// series where it judged it, whatever the window's length; the leak rule's
// where it did not.
func TestLeakColumnIsTheDrifts(t *testing.T) {
	slope := 57.8 * (1 << 20)
	for _, c := range []struct {
		mem        monitor.MemoryTrend
		slope, say string
	}{
		{monitor.MemoryTrend{SlopeBytesPerHour: &slope, LeakSuspected: true, Drift: "degraded"}, "+57.8", "SUSPECTED (drift: degraded)"},
		{monitor.MemoryTrend{SlopeBytesPerHour: &slope, Drift: "steady"}, "+57.8", "no (drift: steady)"},
		{monitor.MemoryTrend{LeakSuspected: true, Drift: "degraded"}, "-", "SUSPECTED (drift: degraded)"},
		{monitor.MemoryTrend{}, "-", "too short to judge"},
		{monitor.MemoryTrend{SlopeBytesPerHour: &slope, LeakSuspected: true}, "+57.8", "SUSPECTED"},
	} {
		cells := resourceCells("soak", monitor.MonitorFigures{Monitor: "api", Memory: []monitor.MemoryTrend{c.mem}})
		if cells[7] != c.slope || cells[8] != c.say {
			t.Errorf("%+v: %q %q, want %q %q", c.mem, cells[7], cells[8], c.slope, c.say)
		}
	}
}
