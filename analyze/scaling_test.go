package analyze

import (
	"math"
	"testing"
)

// The CPS query-performance report (examples/cps-datasize): 1,000 requests
// with curl --parallel-max P on a 12-core machine. Its table gives time and
// speedup per P and says scaling stops at 12.
func TestScaleCPSParallelQueries(t *testing.T) {
	times := map[float64]float64{1: 140.4, 2: 71.6, 3: 48.5, 4: 37.2, 5: 31.0, 6: 26.6, 7: 23.8, 8: 21.6, 9: 20.0, 10: 18.7,
		11: 17.7, 12: 16.8, 13: 16.7, 14: 16.7, 15: 16.8, 20: 16.8, 30: 16.7, 40: 16.8, 50: 16.7}
	var pts []ScalePoint
	for _, p := range []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 20, 30, 40, 50} {
		pts = append(pts, ScalePoint{P: p, Work: 1000, Wall: times[p]})
	}
	s := Scale(pts, 0)
	// The report's speedup column, rounded to one decimal.
	want := map[float64]float64{2: 2.0, 3: 2.9, 4: 3.8, 5: 4.5, 6: 5.3, 7: 5.9, 8: 6.5, 9: 7.0, 10: 7.5, 11: 7.9, 12: 8.4, 13: 8.4, 50: 8.4}
	for _, r := range s.Rows {
		if w, ok := want[r.P]; ok && math.Abs(math.Round(r.Speedup*10)/10-w) > 1e-9 {
			t.Errorf("P=%v: speedup %.2f, the report says %.1f", r.P, r.Speedup, w)
		}
	}
	if s.Saturation != 12 {
		t.Errorf("saturation at P=%v, want 12 (the core count)", s.Saturation)
	}
	if r := s.Rows[1]; math.Abs(r.Efficiency-140.4/71.6/2) > 1e-12 {
		t.Errorf("efficiency at P=2: %v", r.Efficiency)
	}
	if r := s.Rows[0]; r.Speedup != 1 || r.Efficiency != 1 || math.Abs(r.Throughput-1000/140.4) > 1e-12 {
		t.Errorf("first row %+v", r)
	}
}

func TestScaleEdgeCases(t *testing.T) {
	if s := Scale(nil, 0); len(s.Rows) != 0 || s.Saturation != 0 {
		t.Errorf("empty: %+v", s)
	}
	// Linear scaling never saturates before the last point.
	s := Scale([]ScalePoint{{1, 100, 10}, {2, 100, 5}, {4, 100, 2.5}}, 0)
	if s.Saturation != 4 || s.Rows[2].Efficiency != 1 {
		t.Errorf("linear: %+v", s)
	}
	// Zero wall time is skipped rather than dividing by zero.
	if s := Scale([]ScalePoint{{1, 100, 0}, {2, 100, 5}}, 0); len(s.Rows) != 1 || s.Rows[0].Speedup != 1 {
		t.Errorf("zero wall: %+v", s)
	}
}
