package analyze

import "math"

// ScalePoint is one stage of a sweep over parallelism: P workers did Work
// operations in Wall seconds.
type ScalePoint struct {
	P    float64
	Work float64
	Wall float64 // seconds
}

// ScaleRow is a point with its derived figures.
type ScaleRow struct {
	ScalePoint
	Throughput float64 // Work / Wall
	// Speedup is throughput relative to the first point's (for fixed work,
	// the first point's wall time over this one's).
	Speedup float64
	// Efficiency is Speedup divided by the growth in P since the first point
	// (1 = perfect scaling).
	Efficiency float64
}

// Scaling is the analysis of a parallelism sweep.
type Scaling struct {
	Rows []ScaleRow
	// Saturation is the smallest P whose throughput is within Tolerance of
	// the best throughput of the sweep: where adding workers stops paying.
	Saturation float64
	Tolerance  float64
}

// DefaultTolerance is how close to the best throughput counts as saturated.
const DefaultTolerance = 0.05

// Scale analyses points given in increasing P. Points with no wall time are
// skipped.
func Scale(points []ScalePoint, tolerance float64) Scaling {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	s := Scaling{Tolerance: tolerance}
	for _, p := range points {
		if p.Wall <= 0 || p.P <= 0 {
			continue
		}
		s.Rows = append(s.Rows, ScaleRow{ScalePoint: p, Throughput: p.Work / p.Wall})
	}
	if len(s.Rows) == 0 {
		return s
	}
	base := s.Rows[0]
	best := 0.0
	for i := range s.Rows {
		r := &s.Rows[i]
		if base.Throughput > 0 {
			r.Speedup = r.Throughput / base.Throughput
			r.Efficiency = r.Speedup / (r.P / base.P)
		}
		best = math.Max(best, r.Throughput)
	}
	for _, r := range s.Rows {
		if r.Throughput >= best*(1-tolerance) {
			s.Saturation = r.P
			break
		}
	}
	return s
}
