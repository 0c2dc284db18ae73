package monitor

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// A sample that is not a number (a scraped gauge's NaN, +Inf) is no
// sample: the analysis of a window holding some encodes, and its figures
// are those of the other samples.
func TestAnalyzeSkipsNaN(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	var pts []Point
	for i := 0; i <= 100; i++ {
		v := 60.0 * (1 << 20)
		switch i % 7 {
		case 0:
			v = math.NaN()
		case 3:
			v = math.Inf(1)
		}
		pts = append(pts, Point{Time: t0.Add(time.Duration(i) * 100 * time.Millisecond), Monitor: "api", Metric: MetricRSS, Value: v})
	}
	a := Analyze(pts, nil, []Window{{Name: "s", Start: t0, End: t0.Add(10 * time.Second)}})
	if _, err := json.Marshal(a); err != nil {
		t.Fatal(err)
	}
	if m := a.Windows[0].Monitors[0].Memory[0]; m.AvgBytes != 60*(1<<20) || m.PeakBytes != 60*(1<<20) {
		t.Errorf("memory %+v", m)
	}
	s := StartSampler(context.Background(), time.Hour, nil, nil)
	s.keep(0, pts)
	res := s.Stop(context.Background())
	if n := res.Len(); n != 101-15-14 {
		t.Errorf("%d samples kept of 101, 29 not numbers", n)
	}
}
